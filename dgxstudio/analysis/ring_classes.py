"""A ring direction's loads system by system: ``ring_segments.ring_loads_by_template``'s loop for
clusters of systems wired alike, with each system's checks made on numbers.

The hop-by-hop loop asks, for each of 16,384 systems and each ring direction, the same questions of
names (does every id start with the system's prefix, is the pair a route the router keeps, what is
the rest of each id) and looks up the same templates. Here the router's own tables answer them:
each device's number, its system's number, the number of its system's prefix when its id starts with
it and the number of the rest of its id (``Router._renaming_tables``). A run of hops through a system,
and each GPU-to-NIC leg of a hop between systems, is then keyed by its system's builder signature and
the rest of its ids as numbers: the first of a key is asked of the router exactly as the loop asks
it, and every other takes the template that answer read, moved by its own system's channel offset,
once the conditions under which the router's answer would be that template are checked for it:
- every id starts with its system's prefix, and the system's offset is known (``offsets_in_bulk``);
- no hop of it is a route the router already keeps (``Router._cache``: then it answers with that);
- for a hop between systems: the waypoints' route is not kept, both NICs plug into one switch, the
  two systems differ, the NIC pair is not kept, and no channel comes twice.
Anything else (a system wired differently, a hop spread over the spines, a kept route) goes to the
loop's own code for that one piece. The segments are added in the loop's order, the same templates
and offsets, so ``assemble`` gives the same arrays, element by element, and ``ring_rates`` the same
sums in the same order.
"""

from __future__ import annotations

from itertools import islice, repeat
from typing import NamedTuple

import numpy as np

from ..cancel import check_cancelled
from .ring_segments import hop_piece, run_piece

_NET = ("infiniband", "ethernet")


class ClassTables:
    """The router's numbering read once per ring bound, and the templates found per class."""

    def __init__(self, router, loads, at, owner, pfx, rel, systems, uplinks):
        self.router = router
        self.loads = loads
        self.cache = router._cache
        self.at = at                  # device -> its number
        self.owner = owner            # per device: its system's number (-1: none)
        self.pfx = pfx                # per device: its prefix's number when its id starts with its system's prefix
        self.rel = rel                # per device: the number of the rest of its id
        self.rel_list = rel.tolist()
        self.systems = systems        # per system number: (id, builder key, prefix number, offset) or None
        builders: dict[tuple, int] = {}
        self.builder = np.asarray([-1 if s is None else builders.setdefault(s[1], len(builders)) for s in systems]
                                  or [-1], dtype=np.int64)
        self.pid = np.asarray([-2 if s is None else s[2] for s in systems] or [-2], dtype=np.int64)
        self.offset = np.asarray([0 if s is None else s[3] for s in systems] or [0], dtype=np.int64)
        self.up, self.up_out, self.up_in = uplinks  # per NIC: its one network switch, the channels to and from it
        self.runs: dict[tuple, tuple] = {}   # (builder key, rest of the ids) -> (channels, weights) of the run
        self.legs: dict[int, tuple] = {}     # leg key (see _via_checks) -> (template route, its system's offset, unit list)
        self._kept: list[int] = []
        self._kept_len = 0
        self._kept_array = np.zeros(0, dtype=np.int64)
        self._via_keys = 0
        self.n_rel = max(self.rel_list, default=0) + 2  # (a leg's key: rest of an id + 1 in base n_rel)

    @staticmethod
    def of(plan, router, loads) -> "ClassTables | None":
        """The tables, or None where the loop hop by hop is all there is (spreading by hash, a few
        systems whose offsets were not worked out together)."""
        if router.spread != "even" or len(plan.systems) < 8:
            return None
        devices, at, ends, owner, names = router._bundle_ends()
        _, _, pfx, rel = router._renaming_tables()
        prefix_ids = router._prefix_ids
        signatures, offsets = router._signatures, router._offsets
        systems = []
        for sid in names:
            sig = signatures.get(sid)
            offset = offsets.get(sid)
            pid = prefix_ids.get(sig[2], -1) if sig else -1
            systems.append((sid, (sig[0], sig[1]), pid, offset) if sig and offset is not None and pid >= 0 else None)
        return ClassTables(router, loads, at, owner, pfx, rel, systems, _uplinks(router, devices, ends))

    def kept_codes(self) -> np.ndarray:
        """The (source, destination) pairs the router keeps a route for, as source * n + destination
        device numbers: read again only for the routes kept since (a kept route is never dropped,
        and the router's dict keeps them in the order they came)."""
        cache = self.cache
        if self._kept_len != len(cache):
            for key in islice(cache, self._kept_len, None):
                code = self._code(key)
                if code is not None:
                    self._kept.append(code)
                elif key and key[0] == "via":
                    self._via_keys += 1
            self._kept_len = len(cache)
            self._kept_array = np.asarray(self._kept, dtype=np.int64)
        return self._kept_array

    def _code(self, key) -> int | None:
        if len(key) != 2:
            return None
        a, b = self.at.get(key[0]), self.at.get(key[1])
        return None if a is None or b is None else a * len(self.at) + b

    def direction(self, order: list[str], via, seg) -> bool:
        """One ring direction's hops added to ``seg``, piece by piece in the loop's order (True);
        False (nothing added) where a GPU is not a device of the router's fabric."""
        n = len(order)
        at, n_dev = self.at, len(self.at)
        idx_l = [at.get(g, -1) for g in order]
        if -1 in idx_l:
            return False
        idx = np.asarray(idx_l, dtype=np.int64)
        sysn = self.owner[idx]
        has_via = (np.fromiter((w is not None for w in via), dtype=bool, count=n) if via is not None
                   else np.zeros(n, dtype=bool))
        # hop k stays inside one system (the loop's test); the loop's run from k ends where that stops
        inside = (sysn >= 0) & (sysn == np.roll(sysn, -1)) & ~has_via
        leaves = np.flatnonzero(~inside)
        nxt = np.searchsorted(leaves, np.arange(n))  # the first hop at or after k that does not
        stop_l = np.where(nxt < len(leaves), leaves[np.minimum(nxt, max(len(leaves) - 1, 0))], n).tolist()
        # per GPU position (n: the first again): its id lacks its system's prefix, or the hop from it is kept
        idx_a = np.r_[idx, idx[:1]]
        sys_a = np.r_[sysn, sysn[:1]]
        bad = (sys_a < 0) | (self.pfx[idx_a] != self.pid[np.maximum(sys_a, 0)])
        hop_codes = idx_a[:-1] * n_dev + idx_a[1:]
        kept = self.kept_codes()
        if len(kept):
            bad[:-1] |= np.isin(hop_codes, kept)
        bad_before = np.r_[0, np.cumsum(bad)].tolist()
        rel_a = [self.rel_list[i] for i in idx_a.tolist()]
        checks = self._via_checks(via, has_via)
        if checks is None:
            vias, pending = {}, None
            watch_pos = watch_codes = np.zeros(0, dtype=np.int64)
        else:
            vias, pending = self._vouch(checks, checks.ok, seg)
            watch_pos, watch_codes = checks.read_at, checks.read
        # every pair these checks read, with the last position reading it: a route the router keeps
        # from now on for one read later sends the rest of the direction to the loop's own code
        pos = np.r_[np.arange(n), watch_pos]
        codes = np.r_[hop_codes, watch_codes]
        at_order = np.argsort(pos, kind="stable")
        watch = dict(zip(codes[at_order].tolist(), pos[at_order].tolist()))
        seen = len(self.cache)
        dirty = False
        retries = 8
        sys_l = sysn.tolist()
        systems, runs, loads, router = self.systems, self.runs, self.loads, self.router
        k = 0
        while k < n:
            if k % 64 == 63:
                check_cancelled()
            end = stop_l[k]
            done = False
            if end - k > 1:
                info = systems[sys_l[k]]
                if not dirty and info is not None and bad_before[end + 1] == bad_before[k]:
                    key = (info[1], tuple(rel_a[k:end + 1]))
                    hit = runs.get(key)
                    if hit is None:
                        run = loads.run(order, k, end, info[0])
                        if run is not None:
                            hit = runs[key] = (run[0], run[1])
                    if hit is not None:
                        seg.add(seg.template(hit[0], hit[1]), info[3])
                        done = True
                if not done:
                    done = run_piece(loads, seg, order, k, end, router._system[order[k]])
            if done:
                k_next = end
            else:
                row = None if dirty else vias.get(k)
                if row is not None:
                    seg.add(row[0], row[1])
                    seg.pair(row[2], row[3])
                    seg.add(row[4], row[5])
                else:
                    hop_piece(loads, seg, order, None, via, k)
                    if has_via[k] and pending is not None and not dirty and retries and pending.any():
                        # the hops after this one that waited for a leg's template: it may exist now
                        retries -= 1
                        more, pending = self._vouch(checks, pending & (checks.vpos > k), seg)
                        vias.update(more)
                k_next = k + 1
            if len(self.cache) != seen:
                for key in islice(self.cache, seen, None):
                    code = self._code(key)
                    if (code is not None and watch.get(code, -1) >= k_next) or key[0] == "via":
                        dirty = True
                seen = len(self.cache)
            k = k_next
        return True

    def _via_checks(self, via, has_via) -> "_ViaChecks | None":
        """The GPU-NIC-NIC-GPU hops of a direction and what can be checked of them at once: a hop is
        vouched for (``_vouch``) where ``_Loads.via_legs`` would give its parts: both NICs plug into
        one switch, of two systems of a class, each leg inside its system with its ids carrying the
        system's prefix, no pair of it a kept route, each leg a template of one path crossing each
        channel once, and no channel twice. None without such hops."""
        if via is None:
            return None
        at = self.at
        vpos = np.flatnonzero(has_via)
        ways = [via[k] for k in vpos.tolist()]
        four = np.fromiter((len(w) == 4 for w in ways), dtype=bool, count=len(ways))
        if not four.all():
            vpos, ways = vpos[four], [w for w, ok in zip(ways, four.tolist()) if ok]
        if not len(vpos):
            return None
        num = np.asarray([at.get(d, -1) for w in ways for d in w], dtype=np.int64).reshape(-1, 4)
        ok = (num >= 0).all(axis=1)
        g0, n0, n1, g1 = (np.maximum(x, 0) for x in num.T)
        n_dev = len(at)
        owner, pfx, pid, up = self.owner, self.pfx, self.pid, self.up
        u0 = up[n0]
        ok &= (u0 >= 0) & (u0 == up[n1])
        s0, s1 = owner[n0], owner[n1]
        ok &= (s0 >= 0) & (s1 >= 0) & (s0 != s1)
        s0, s1 = np.maximum(s0, 0), np.maximum(s1, 0)
        ok &= (self.builder[s0] >= 0) & (self.builder[s1] >= 0)
        ok &= (owner[g0] == s0) & (owner[g1] == s1)
        ok &= (pfx[g0] == pid[s0]) & (pfx[n0] == pid[s0]) & (pfx[n1] == pid[s1]) & (pfx[g1] == pid[s1])
        codes = np.concatenate([g0 * n_dev + n0, n0 * n_dev + n1, n1 * n_dev + g1])
        kept = self.kept_codes()
        if len(kept):
            ok &= ~np.isin(codes, kept).reshape(3, -1).any(axis=0)
        if self._via_keys:
            cache = self.cache
            ok &= np.fromiter((("via", *w) not in cache for w in ways), dtype=bool, count=len(ways))
        n_rel, rel = self.n_rel, self.rel
        key0 = (self.builder[s0] * n_rel + rel[g0] + 1) * n_rel + rel[n0] + 1
        key1 = (self.builder[s1] * n_rel + rel[n1] + 1) * n_rel + rel[g1] + 1
        return _ViaChecks(vpos, ways, ok, s0, s1, key0, key1, self.up_out[n0], self.up_in[n1],
                          np.tile(vpos, 3), codes)

    def _vouch(self, c: "_ViaChecks", mask: np.ndarray, seg) -> tuple[dict[int, tuple], np.ndarray]:
        """Of the hops ``mask`` picks among those that passed ``c.ok``, those vouched for, as position
        -> (first leg's template, its offset, the channel from the NIC to the leaf, the one from the
        leaf into the next NIC, last leg's template, its offset); and which hops wait for a leg's
        template (the loop's own code for the first of a class searches it, then ask again)."""
        rows: dict[int, tuple] = {}
        pending = np.zeros(len(c.vpos), dtype=bool)
        pick = np.flatnonzero(mask & c.ok)
        if not len(pick):
            return rows, pending
        known = self.legs
        vouched = np.ones(len(pick), dtype=bool)
        for keys, src, dst, s in ((c.key0, 0, 1, c.s0), (c.key1, 2, 3, c.s1)):
            distinct, first, inverse = np.unique(keys[pick], return_index=True, return_inverse=True)
            for key, j in zip(distinct.tolist(), pick[first].tolist()):
                if key not in known:  # asked of the first of its key, as the loop meets them
                    leg = self.loads.leg(c.ways[j][src], c.ways[j][dst])
                    if leg is not None:
                        known[key] = (leg[0], int(self.offset[s[j]]) - leg[1], self.loads.unit_list(leg[0]))
            usable = np.fromiter((key in known and known[key][2] is not None for key in distinct.tolist()),
                                 dtype=bool, count=len(distinct))
            vouched &= usable[inverse.reshape(-1)]
        pending[pick[~vouched]] = True
        pick = pick[vouched]
        if not len(pick):
            return rows, pending
        pairs, inverse = np.unique(np.column_stack([c.key0[pick], c.key1[pick]]), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for g, (a, b) in enumerate(pairs.tolist()):
            js = pick[inverse == g]
            first, base0, l0 = known[a]
            last, base1, l1 = known[b]
            o0 = self.offset[c.s0[js]] - base0
            o1 = self.offset[c.s1[js]] - base1
            out, into = c.out[js], c.into[js]
            every = np.column_stack([np.asarray(l0, dtype=np.int64)[None, :] + o0[:, None], out, into,
                                     np.asarray(l1, dtype=np.int64)[None, :] + o1[:, None]])
            every.sort(axis=1)
            once = ~(every[:, 1:] == every[:, :-1]).any(axis=1)  # (else the router's arrays, hop by hop)
            t0, t1 = seg.template(first.channels, first.weights), seg.template(last.channels, last.weights)
            rows.update(zip(c.vpos[js[once]].tolist(), zip(repeat(t0), o0[once].tolist(), out[once].tolist(),
                                                           into[once].tolist(), repeat(t1), o1[once].tolist())))
        return rows, pending


class _ViaChecks(NamedTuple):
    vpos: np.ndarray      # the hops' positions
    ways: list            # their waypoints
    ok: np.ndarray        # passed the checks made at once
    s0: np.ndarray        # the two systems' numbers
    s1: np.ndarray
    key0: np.ndarray      # each leg's key: builder, rest of its two ids
    key1: np.ndarray
    out: np.ndarray       # the channel from the first NIC to its switch, and from it into the second
    into: np.ndarray
    read_at: np.ndarray   # the pairs the checks read: positions and codes
    read: np.ndarray


def _uplinks(router, devices: list[str], ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``Router._uplink`` of every device at once, as numbers: a NIC with exactly one network bundle
    has that bundle's other end (else -1), with the channel from it (2i or 2i + 1 of bundle i, as
    the bundle's key runs) and the one back."""
    kind = router.fabric.kind
    local = router._local  # (``_local_tables``: its bundles' network flags, when the channel plan made them)
    is_net = local[3] if local is not None else np.fromiter(
        (b.family in _NET for b in router.fabric.bundles.values()), dtype=bool, count=len(ends))
    nic = np.fromiter((kind.get(d) == "nic" for d in devices), dtype=bool, count=len(devices))
    net = np.flatnonzero(is_net)
    count = np.bincount(ends[net].reshape(-1), minlength=len(devices))
    single = nic & (count == 1)
    up = np.full(len(devices), -1, dtype=np.int64)
    up_out, up_in = up.copy(), up.copy()
    u, v = ends[net, 0], ends[net, 1]
    for this, other, forward in ((u, v, 0), (v, u, 1)):
        m = single[this]
        up[this[m]] = other[m]
        up_out[this[m]] = 2 * net[m] + forward
        up_in[this[m]] = 2 * net[m] + 1 - forward
    # the router keeps them too, as ``_uplink`` would have found them one by one (the loop did,
    # and the tree's hops over the spines read them next)
    kept = router._uplinks
    for d, x in zip(np.flatnonzero(nic).tolist(), up[nic].tolist()):
        name = devices[d]
        if name not in kept:
            kept[name] = devices[x] if x >= 0 else None
    return up, up_out, up_in
