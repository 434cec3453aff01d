"""Exact max-min fair rates for small problems: the progressive filling of ``maxmin_reference`` done
over *channel classes* in plain Python, with the same float operations in the same order.

Why it is exact. Two channels that every route of a table loads alike (the same routes, each once,
with the same weight) and that have the same capacity go through the filling in lockstep: their
counts are the same sums taken in the same order, their shares the same quotients, they are
bottlenecks in the same rounds and freeze the same routes. So one channel per class is enough for
the filling (a DGX A100 route over six NVSwitches loads 12 channels and 2 classes), and every
channel of a class carries its class's load. Nothing sums across channels (the filling takes minima
and a maximum), so merging changes no bit of any rate or load.

Why it is faster. A two-system tree all-reduce re-solves about 50 routes on every event (its pieces
fill and drain, so network states rarely repeat); the numpy filling spent its time in the overhead
of about a hundred small array calls. Here a solve is a few hundred Python operations over the
classes that can bind, and ``maxmin_reference`` (kept, and tested against) still serves large
problems, where arrays win.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from . import fill_rounds
from .filling_start import filling_start

if TYPE_CHECKING:
    from .rates import RouteTable

# A solve whose routes load more than this many (route, class) entries runs on arrays
# (maxmin_reference), below in plain Python: the crossover measured on tree all-reduces of 2 and
# 16 DGX A100 and 2 DGX H100 (Python 1.5-2x faster below 200 entries, slower above 300).
SMALL_ENTRIES = 250

_INF = math.inf


def _filling_start(route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
                   route_cap: np.ndarray | None):
    """What the filling starts from: the channels in use (ascending), every entry (channel in use,
    route, weight times flows), the routes' caps, and the entries and counts of the channels that
    can bind, with their capacities."""
    lens, ch, w = table.gather(route_ids)
    ridx = np.repeat(np.arange(len(route_ids)), lens)
    w = w * mult[ridx]
    # compact the channels in use (ids are small integers: a scatter, not a sort)
    seen = np.zeros(len(capacity), dtype=bool)
    seen[ch] = True
    uch = np.flatnonzero(seen)
    local = np.empty(len(capacity), dtype=np.int64)
    local[uch] = np.arange(len(uch))
    ch_local = local[ch]
    cap = capacity[uch].astype(float)
    nloc = len(uch)
    caps = route_cap[route_ids] if route_cap is not None else None
    full = (ch_local, ridx, w)
    if len(lens) and (lens > 0).all():
        # Channels that cannot fill whatever the rates leave the filling: a route's flows get at most
        # what its tightest channel (or its cap) gives them alone, and a channel whose routes' bounds
        # add up to less than its capacity never freezes a route (spine links of a non-blocking fabric,
        # as a rule). Leaving them out changes no rate; their load is still reported below.
        ub = np.minimum.reduceat(cap[ch_local] / w, np.cumsum(lens) - lens)
        if caps is not None:
            ub = np.minimum(ub, caps)
        bound = np.bincount(ch_local, weights=w * ub[ridx], minlength=nloc)
        binding = (bound > cap * (1 - 1e-9))[ch_local]
        nb = getattr(table, "never_binds", None)  # channels no rates can overfill (sim/dominated.py)
        if nb is not None:
            binding &= ~nb[ch]
        if not binding.all():
            ch_local, ridx, w = ch_local[binding], ridx[binding], w[binding]
    cnt = np.bincount(ch_local, weights=w, minlength=nloc)
    return uch, full, caps, ch_local, ridx, w, cap, cnt


def maxmin_reference(route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
                     route_cap: np.ndarray | None = None):
    """Progressive filling over unique routes, each shared by ``mult`` flows.

    A route loads each of its channels with a weight (1 on a single path, 1/k per path of k tied
    paths), so a channel fills when the weighted rates on it reach its capacity. A route with a cap
    (a protocol's per-channel ceiling) freezes when the filling level reaches it.
    """
    if not len(route_ids):
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
    uch, full, caps, ch_local, ridx, w, cap, cnt = _filling_start(route_ids, mult, table, capacity, route_cap)
    nloc = len(uch)
    rate = np.zeros(len(route_ids))
    frozen = np.zeros(len(route_ids), dtype=bool)
    eps = 1e-12
    # ``share`` is the level every open route could reach on a channel (all open routes share one level).
    while not frozen.all():
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(cnt > eps, cap / np.where(cnt > eps, cnt, 1.0), np.inf)
        m = share.min()
        newly = np.zeros(len(route_ids), dtype=bool)
        if caps is not None:
            open_caps = np.where(frozen, np.inf, caps)
            mc = open_caps.min()
            if mc <= m * (1 + 1e-12):
                m = mc
                newly |= open_caps <= m * (1 + 1e-12)
        if not np.isfinite(m):
            break
        bott = share <= m * (1 + 1e-12)
        newly[ridx[bott[ch_local]]] = True
        rate[newly] = m
        frozen |= newly
        sel = newly[ridx]
        used = np.bincount(ch_local[sel], weights=w[sel], minlength=nloc)
        cap = np.maximum(cap - m * used, 0.0)
        cnt = cnt - used
        cnt[cnt < eps * np.maximum(1.0, cnt.max(initial=0.0))] = 0.0
        cap[bott & (cnt <= 0.0)] = 0.0
        # the entries of frozen routes are done with: the next round looks only at open ones
        keep = ~sel
        ch_local, ridx, w = ch_local[keep], ridx[keep], w[keep]
    ch_local, ridx, w = full
    load = np.bincount(ch_local, weights=rate[ridx] * w, minlength=nloc)
    return rate, uch, load


def maxmin_arrays(route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
                  route_cap: np.ndarray | None = None):
    """``maxmin_reference``'s answer, bit for bit, with less work per round for large solves.

    The same quotients, minima, tolerances and sums; what changes is what the rounds look at. A
    channel whose count is at most ``eps`` (the non-binding ones from the start, the filled ones
    after their round) has an infinite share for good: counts only decrease. Such channels leave
    the round's arrays (the reference keeps all of them, about 2,000 on a 992-GPU tree where 1,400
    can bind and fewer with every round), and with them their entries. They cannot move the largest
    count either: at most ``eps``, it stays under the floor of 1 the zeroing threshold takes. The
    routes' caps, when all equal (a protocol's), need no array per round.
    """
    if not len(route_ids):
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
    n = len(route_ids)
    # (the start read from the table's columns kept for its solves: sim/filling_start.py)
    uch, full, caps, ch_local, ridx, w, cap, cnt = filling_start(route_ids, mult, table, capacity, route_cap)
    nloc = len(uch)
    eps = 1e-12
    # the live channels (count above eps) and the entries on them, renumbered
    live = cnt > eps
    if not live.all():
        keep = live[ch_local]
        ch_local, ridx, w = ch_local[keep], ridx[keep], w[keep]
        renum = np.cumsum(live) - 1
        ch_local = renum[ch_local]
        cap, cnt = cap[live], cnt[live]
    rate = np.zeros(n)
    one_cap = None  # the routes' cap when all have the same
    if caps is not None and (caps == caps[0]).all():
        one_cap = float(caps[0])
    with np.errstate(divide="ignore", invalid="ignore"):  # (a filled channel's 0 / 0: masked)
        fill_rounds.rounds(n, ridx, ch_local, w, cap, cnt, caps, one_cap, rate)
    ch_local, ridx, w = full
    load = np.bincount(ch_local, weights=rate[ridx] * w, minlength=nloc)
    return rate, uch, load


class _ChannelClasses:
    """A route table's channels grouped into classes of channels that every route loads alike.

    Two channels share a class when the same routes load them, each route once and with the same
    weight, and their capacities are equal (bit for bit). A channel that some route loads twice
    stays alone (the order of a route's two entries would then matter). Grouping is by hash, then
    checked entry by entry, so a collision only leaves a channel alone. ``entry(r)``: route r's
    (class, weight) pairs, one per class it loads (the first of its channels in each merged class,
    every entry of a lone one), in the route's order.
    """

    def __init__(self, table: RouteTable, capacity: np.ndarray):
        self.capacity = capacity
        n_ch = len(capacity)
        lens = np.asarray(table.lens, dtype=np.int64)
        ch = np.asarray(table.ch, dtype=np.int64)
        w = np.ascontiguousarray(table.w, dtype=float)
        # plain Python arithmetic matches numpy's only for ordinary numbers and no division by zero
        self.usable = bool(((w > 0) & np.isfinite(w)).all() and not np.isnan(capacity).any())
        self._ch, self._w = ch, w
        self._offsets = np.asarray(table.offsets, dtype=np.int64).tolist()
        self._lens = lens.tolist()
        self.no_empty_route = bool((lens > 0).all())
        route_of = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
        order = np.lexsort((route_of, ch))  # by channel, then route (then the route's own order)
        ch_s, r_s, bits = ch[order], route_of[order], w[order].view(np.int64)
        n_e = len(ch_s)
        cls_of = np.full(n_ch, -1, dtype=np.int64)
        if n_e:
            first = np.concatenate([[True], ch_s[1:] != ch_s[:-1]])
            starts = np.flatnonzero(first)
            chans = ch_s[starts]
            counts = np.diff(np.append(starts, n_e))
            block = np.cumsum(first) - 1
            twice = np.zeros(len(starts), dtype=bool)  # some route loads the channel twice
            twice[block[1:][(~first[1:]) & (r_s[1:] == r_s[:-1])]] = True
            rng = np.random.default_rng(0x5eed)
            h1 = rng.integers(0, 2**62, size=len(lens), dtype=np.int64)
            h2 = rng.integers(0, 2**62, size=len(lens), dtype=np.int64)
            with np.errstate(over="ignore"):  # hash sums wrap around, as intended
                k1 = np.add.reduceat(h1[r_s] ^ (bits * np.int64(0x9E3779B97F4A7C1)), starts)
                k2 = np.add.reduceat(h2[r_s] + (bits * np.int64(0x3C6EF372FE94F82B)), starts)
            capbits = np.ascontiguousarray(capacity[chans], dtype=float).view(np.int64)
            k1 = np.where(twice, chans, k1)
            k2 = np.where(twice, -1 - chans, k2)
            by_key = np.lexsort((chans, capbits, counts, k2, k1, twice))
            keys = np.stack([twice, k1, k2, counts, capbits])[:, by_key]
            new = np.concatenate([[True], (keys[:, 1:] != keys[:, :-1]).any(axis=0) | twice[by_key][1:]])
            gid = np.empty(len(chans), dtype=np.int64)
            gid[by_key] = np.cumsum(new) - 1
            rep = np.empty(len(chans), dtype=np.int64)
            rep[by_key] = by_key[np.flatnonzero(new)][np.cumsum(new) - 1]
            # check every member's (route, weight) list against its representative's, entry by entry
            mem = np.flatnonzero(rep != np.arange(len(chans)))
            if len(mem):
                cm = counts[mem]
                within = np.arange(cm.sum()) - np.repeat(np.cumsum(cm) - cm, cm)
                a = np.repeat(starts[mem], cm) + within
                b = np.repeat(starts[rep[mem]], cm) + within
                bad = (r_s[a] != r_s[b]) | (bits[a] != bits[b])
                if bad.any():
                    alone = np.unique(np.repeat(mem, cm)[bad])
                    gid[alone] = gid.max() + 1 + np.arange(len(alone))
            _, gid = np.unique(gid, return_inverse=True)
            cls_of[chans] = gid
            n_cls = int(gid.max()) + 1
            by_cls = np.argsort(gid, kind="stable")
            self.members = chans[by_cls]  # each class's channels, ascending, class after class
            self.member_bounds = np.searchsorted(gid[by_cls], np.arange(n_cls + 1))
            self.sizes = np.diff(self.member_bounds)
            self.cls_cap = capacity[self.members[self.member_bounds[:-1]]].tolist()
            self._merged = (self.sizes > 1).tolist()
            self.merges = bool((self.sizes > 1).any())
        else:
            self.merges = False
            self.members = np.zeros(0, np.int64)
            self.member_bounds = np.zeros(1, np.int64)
            self.sizes = np.zeros(0, np.int64)
            self.cls_cap, self._merged = [], []
        self.cls_of = cls_of
        # classes every member of which no rates can overfill (the table's ``never_binds``, if given)
        nb = getattr(table, "never_binds", None)
        self.never_binds = None
        if nb is not None and n_e:
            self.never_binds = np.bincount(gid, weights=~nb[chans], minlength=n_cls) == 0
        self._table = table
        self._class_table = None
        self._entries: dict[int, tuple] = {}
        self.rows: dict[tuple, tuple] = {}        # (route, flows) -> (bound alone, ((class, weight x flows), ...))
        self.layouts: dict[tuple, tuple] = {}     # classes in use -> their channels, ascending, and each one's class
        self._in_class: tuple[np.ndarray, np.ndarray] | None = None
        self.route_cap: np.ndarray | None = None  # the last route caps seen, as a list
        self.route_cap_list: list[float] = []

    def class_table(self) -> tuple[RouteTable, np.ndarray]:
        """The route table in class terms (what ``entry`` gives every route, as flat arrays) and each
        class's capacity: the array filling over it is ``maxmin_reference``'s over channels, bit for
        bit (see the module's note), with a fat tree's spine planes (16 parallel channels a route
        spreads over) counted once."""
        if self._class_table is None:
            from .rates import RouteTable  # (rates imports this module)

            lens = np.asarray(self._lens, dtype=np.int64)
            route_of = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
            cls = self.cls_of[self._ch]
            keep = np.ones(len(cls), dtype=bool)
            merged = np.flatnonzero(np.asarray(self._merged, dtype=bool)[cls]) if len(cls) else np.zeros(0, np.int64)
            if len(merged):
                # a merged class: only the route's first entry on it (the route loads every member once)
                key = route_of[merged] * max(1, len(self.cls_cap)) + cls[merged]
                _, first = np.unique(key, return_index=True)
                keep[merged] = False
                keep[merged[first]] = True
            t = RouteTable.__new__(RouteTable)
            t.lens = np.bincount(route_of[keep], minlength=len(lens)).astype(np.int64)
            t.offsets = np.concatenate([[0], np.cumsum(t.lens)[:-1]]).astype(np.int64) if len(lens) else \
                np.zeros(0, np.int64)
            t.ch = cls[keep]
            t.w = self._w[keep]
            t.never_binds = self.never_binds
            self._class_table = (t, np.asarray(self.cls_cap, dtype=float))
        return self._class_table

    def expand(self, classes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-class ``values`` given to every member channel: (channels ascending, their values).
        The layout of a set of classes is kept (a run comes back to the same classes in use)."""
        key = classes.tobytes()
        layout = self.layouts.get(key)
        if layout is None:
            if len(self.layouts) > 4096 or len(classes) > 256 and len(self.layouts) > 256:
                self.layouts.clear()  # (a few hundred large layouts at most: a few MB each at 16,384 GPUs)
            # every channel in some class, ascending, and its class: those of the given classes are
            # already in order (no sort of the 4,000 channels a 992-GPU tree's solve loads)
            if self._in_class is None:
                chans = np.flatnonzero(self.cls_of >= 0)
                self._in_class = (chans, self.cls_of[chans])
            chans, cls = self._in_class
            n_cls = len(self.sizes)
            pos = np.full(n_cls, -1, dtype=np.int64)
            pos[classes] = np.arange(len(classes))
            which = pos[cls]
            mine = which >= 0
            layout = self.layouts[key] = (chans[mine], which[mine])
        uch, which = layout
        return uch, values[which]

    def entry(self, r: int) -> tuple:
        got = self._entries.get(r)
        if got is not None:
            return got
        off, ln = self._offsets[r], self._lens[r]
        out, seen = [], set()
        for k, x in zip(self.cls_of[self._ch[off:off + ln]].tolist(), self._w[off:off + ln].tolist()):
            if self._merged[k]:
                if k in seen:
                    continue
                seen.add(k)
            out.append((k, x))
        got = self._entries[r] = tuple(out)
        return got


def _channel_classes(table: RouteTable, capacity: np.ndarray) -> _ChannelClasses:
    """The table's channel classes, built once per table (and capacity array) and kept on it."""
    cc = getattr(table, "_channel_classes", None)
    if cc is None or cc.capacity is not capacity:
        cc = _ChannelClasses(table, capacity)
        table._channel_classes = cc
    return cc


def _rows(cc: _ChannelClasses, ids: list[int], mult: list) -> tuple[list[tuple], int]:
    """Each route's (rate bound on its own, ((class, weight times its flows), ...)), cached; and how
    many entries they have together."""
    rows = cc.rows
    out = []
    n_e = 0
    for r, f in zip(ids, mult):
        row = rows.get((r, f))
        if row is None:
            ccap = cc.cls_cap
            xs = tuple((k, x * f) for k, x in cc.entry(r))
            u = _INF
            for k, x in xs:
                v = ccap[k] / x
                if v < u:
                    u = v
            row = rows[(r, f)] = (u, xs)
        out.append(row)
        n_e += len(row[1])
    return out, n_e


def maxmin(route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
           route_cap: np.ndarray | None = None):
    """``maxmin_reference``'s answer, bit for bit: over channel classes in plain Python for up to
    SMALL_ENTRIES (route, class) entries, on arrays above."""
    n = len(route_ids)
    if not n:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
    cc = _channel_classes(table, capacity)
    if not cc.usable:
        return maxmin_reference(route_ids, mult, table, capacity, route_cap)
    if n > SMALL_ENTRIES:
        return _maxmin_large(route_ids, mult, cc, route_cap)
    ids = route_ids.tolist()
    try:
        rows, n_e = _rows(cc, ids, mult.tolist())
    except ZeroDivisionError:  # a route with no flows: the reference's arrays give it an infinite bound
        return maxmin_reference(route_ids, mult, table, capacity, route_cap)
    if n_e > SMALL_ENTRIES:
        return _maxmin_large(route_ids, mult, cc, route_cap)
    if route_cap is not None:
        if cc.route_cap is not route_cap:
            cc.route_cap, cc.route_cap_list = route_cap, route_cap.tolist()
        rcl = cc.route_cap_list
        caps = [rcl[r] for r in ids]
    else:
        caps = None
    ccap = cc.cls_cap
    if cc.no_empty_route or all(row[1] for row in rows):
        # the reference's filter: classes whose routes, each at its bound alone, cannot fill them
        # never freeze a route and are left out of the filling
        ub = [u if c is None or u <= c else c for (u, _), c in zip(rows, caps or [None] * n)]
        bound: dict[int, float] = {}
        for (_, xs), b in zip(rows, ub):
            for k, x in xs:
                bound[k] = bound.get(k, 0.0) + x * b
        lim = 1 - 1e-9
        nb = cc.never_binds
        binding = {k for k, b in bound.items() if b > ccap[k] * lim and (nb is None or not nb[k])}
    else:
        binding = {k for _, xs in rows for k, _ in xs}
    rate = _fill(rows, binding, ccap, n, caps)
    load: dict[int, float] = {}
    for (_, xs), r in zip(rows, rate):
        for k, x in xs:
            load[k] = load.get(k, 0.0) + r * x
    # every channel of a class carries its class's load
    used = tuple(sorted(load))
    if not used:  # only routes without channels
        return np.array(rate), np.zeros(0, np.int64), np.zeros(0)
    layout = cc.layouts.get(used)
    if layout is None:
        if len(cc.layouts) > 4096:
            cc.layouts.clear()
        mb, members = cc.member_bounds, cc.members
        chans = np.concatenate([members[mb[k]:mb[k + 1]] for k in used])
        which = np.repeat(np.arange(len(used)), cc.sizes[list(used)])
        order = np.argsort(chans, kind="stable")
        layout = cc.layouts[used] = (chans[order], which[order])
    uch, which = layout
    return np.array(rate), uch, np.array([load[k] for k in used])[which]


def _maxmin_large(route_ids: np.ndarray, mult: np.ndarray, cc: _ChannelClasses, route_cap: np.ndarray | None):
    """A large problem: ``maxmin_reference``'s filling on arrays, over channel classes (a route over
    a fat tree's 16 spine planes has 8 class entries instead of 38 channel entries), then every
    member channel takes its class's load."""
    if not cc.merges:  # no parallel channels to count once: the class table would be the table itself
        return maxmin_arrays(route_ids, mult, cc._table, cc.capacity, route_cap)
    ct, ccap = cc.class_table()
    if not ct.lens[route_ids].all():
        # a route without channels: the reference's filter and filling then take another branch
        return maxmin_reference(route_ids, mult, cc._table, cc.capacity, route_cap)
    rate, ucls, load = maxmin_arrays(route_ids, mult, ct, ccap, route_cap)
    uch, ch_load = cc.expand(ucls, load)
    return rate, uch, ch_load


def _fill(rows: list[tuple], binding: set, ccap: list[float], n: int, caps: list[float] | None) -> list[float]:
    """``maxmin_reference``'s progressive filling over the classes that can bind, round by round:
    the same quotients, minima, tolerances and sums (route by route, in order), in plain Python."""
    eps = 1e-12
    tol = 1 + 1e-12
    cap: dict[int, float] = {}
    cnt: dict[int, float] = {}
    on: dict[int, list[int]] = {}   # class -> the routes loading it
    ent: list[list[tuple]] = []     # route -> its binding (class, weight) entries
    for i, (_, xs) in enumerate(rows):
        mine = []
        for k, x in xs:
            if k in binding:
                c = cnt.get(k)
                if c is None:
                    cnt[k] = x
                    cap[k] = ccap[k]
                    on[k] = [i]
                else:
                    cnt[k] = c + x
                    on[k].append(i)
                mine.append((k, x))
        ent.append(mine)
    live = [k for k, c in cnt.items() if c > eps]
    rate = [0.0] * n
    is_open = [True] * n
    n_open = n
    if caps is not None:
        by_cap = sorted(range(n), key=caps.__getitem__)
        p = 0
    while n_open:
        shares = [cap[k] / cnt[k] for k in live]
        m = min(shares) if shares else _INF
        newly = set()
        if caps is not None:
            while not is_open[by_cap[p]]:
                p += 1
            mc = caps[by_cap[p]]
            if mc <= m * tol:
                m = mc
                mt = m * tol
                q = p
                while q < n and caps[by_cap[q]] <= mt:
                    if is_open[by_cap[q]]:
                        newly.add(by_cap[q])
                    q += 1
        if not math.isfinite(m):
            break
        mt = m * tol
        for k, s in zip(live, shares):
            if s <= mt:
                newly.update([i for i in on[k] if is_open[i]])
        used: dict[int, float] = {}
        for i in sorted(newly):
            rate[i] = m
            is_open[i] = False
            for k, x in ent[i]:
                used[k] = used.get(k, 0.0) + x
        n_open -= len(newly)
        for k, u in used.items():
            v = cap[k] - m * u
            cap[k] = v if v > 0.0 else 0.0
            cnt[k] = cnt[k] - u
        # the reference zeroes counts below 1e-12 of the largest (rounding left-overs); a class
        # whose count is zero or tiny is no longer a bottleneck
        cmax = max([cnt[k] for k in live], default=0.0)
        thr = eps * (cmax if cmax > 1.0 else 1.0)
        live = [k for k in live if cnt[k] >= thr and cnt[k] > eps]
    return rate
