"""Steady states of a pipelined schedule: where the run repeats itself, and how far it may skip."""

from __future__ import annotations

import numpy as np

from . import periodic_dependents
from .lane_strides import StrideLanes


class _Periods:
    """Finds where a schedule's run repeats itself and skips the repeats, exactly.

    Groups chained by their first send dependency form a *lane* (one connection's pieces in order, as
    NCCL's FIFO sends them); the next group of a lane is its group's *successor*. A successor is
    *alike* when it moves the same bytes over the same routes with the same delays. If the network's
    state at time t2 (every active flow's remaining bytes, every pending arrival and finish) is the
    successor-image of its state at t1, the run from t2 on is the image of the run from t1, shifted
    by T = t2 - t1, for as long as the groups involved stay alike and start when their images would:
    the shortcut (steady.py) counts the releases of the periods it would skip to check the latter
    (what a group waits for need not correspond: a stage's end waits for all pieces, a step's queue
    grows), fills in those periods' times and moves the state ahead in one step.
    A pipelined ring or tree in its steady state thus costs the same for 16 MiB and 16 GiB.
    """

    REL = 1e-9  # two states match when their pending times agree to this (relative to the period)
    # ... and every flow's remaining bytes to this (relative to its size): a difference of d bytes
    # moves a flow's end by d over its rate at the end, which can be a small share of its link, and
    # the skip copies that end into every period it fills in (test_engine_periods_adversarial)
    REL_BYTES = 1e-12

    def __init__(self, cols, tpl_id: np.ndarray, tpls: list, on_done, on_sent):
        n = cols.n
        self.cols = cols
        self.tpl_id = tpl_id  # each group's template (index into tpls), -1 for none
        self.tpls = tpls
        self.on_done = on_done
        self.on_sent = on_sent
        # a group's lane predecessor is its first send dependency (a connection's previous piece; a
        # second one is a buffer it waits for), when no other group names the same one first
        if on_sent.repeats is not None:  # (send lists that repeat a piece: by period)
            succ = periodic_dependents.successors(cols.sent_ptr, cols.sent_flat, on_sent.waits, on_sent.repeats)
        else:
            has = np.flatnonzero(on_sent.waits > 0)
            named = cols.sent_flat[cols.sent_ptr[has]]  # each one's first send dependency
            claims = np.bincount(named, minlength=n)
            succ = np.full(n, -1, dtype=np.int64)
            succ[named] = has
            succ[claims != 1] = -1
        self.succ = succ
        self._pred: np.ndarray | None = None  # each group's lane predecessor (once the lane order needs it)
        self._reach: np.ndarray | None = None  # alike links that follow each group (once needed)
        self._strides: StrideLanes | None = None  # the same for lanes at one stride, read along the ids
        self.jumps = 0
        self.skipped_periods = 0
        self.enabled = bool((succ >= 0).any())

    @property
    def pred(self) -> np.ndarray:
        """Each group's lane predecessor, -1 for none (one at most: a successor has one claim)."""
        if self._pred is None:
            linked = np.flatnonzero(self.succ >= 0)
            self._pred = np.full(len(self.succ), -1, dtype=np.int64)
            self._pred[self.succ[linked]] = linked
        return self._pred

    def step(self, gs: np.ndarray, m: int) -> np.ndarray:
        """The m-th successors of ``gs`` along their lanes (-1 past a lane's end), without checks."""
        x = np.asarray(gs, dtype=np.int64)
        for _ in range(m):
            x = np.where(x >= 0, self.succ[np.maximum(x, 0)], -1)
        return x

    def image(self, gs: np.ndarray, k: int) -> np.ndarray:
        """The k-th successors of ``gs`` (within the reach checked before)."""
        return self.images(gs, 1, k)[0]

    def images(self, gs: np.ndarray, k: int, every: int = 1) -> np.ndarray:
        """Row j-1: the (j ``every``)-th successors of ``gs``, for j = 1..k (a period of two lane
        steps reads every second row only)."""
        gs = np.asarray(gs, dtype=np.int64)
        if self._reach is None:
            # lanes at one stride, read along the ids (sim/lane_strides.py), else the whole lane order
            reach = self.strides.reach(gs) if len(gs) else None
            s = self.strides.stride(gs) if reach is not None and (reach >= k * every).all() else None
            if s is not None:
                return gs[None, :] + (np.arange(every, k * every + 1, every, dtype=np.int64) * s)[:, None]
            self._prepare()
        return self._order[self._idx[gs][None, :] + np.arange(every, k * every + 1, every)[:, None]]

    @property
    def strides(self) -> StrideLanes:
        if self._strides is None:
            cols = self.cols
            self._strides = StrideLanes(self.succ, self.alike_at,
                                        (cols.bytes_each, cols.duration_s, cols.post_delay_s, self.tpl_id))
        return self._strides

    @property
    def reach_known(self) -> bool:
        """Has a skip asked how far lanes reach (and is asking again cheap)?"""
        return self._reach is not None or self._strides is not None

    def _prepare(self) -> None:
        """Decide every successor link at once (vectorized: same bytes, delays and template; equal
        templates of different patterns compared once per pair of patterns), then count the alike
        links that follow each group by pointer jumping."""
        self._order, self._idx, self._reach = lane_order(self.succ, self.alike_at(slice(None)), self.pred)

    def alike_at(self, at) -> np.ndarray:
        """Is the link from each group ``at`` (ids, or a slice) to its successor alike?"""
        cols, tpl, succ = self.cols, self.tpl_id[at], self.succ[at]
        # every group against its successor (group 0 stands in where there is none: masked out), a
        # column at a time: an (n, 3) table's .all(axis=1) costs ten times as much, and reading the
        # groups that have a successor first costs a gather per column
        s_ = np.maximum(succ, 0)
        alike = succ >= 0  # the link from each group to its successor
        for col in (cols.bytes_each, cols.duration_s, cols.post_delay_s):
            alike &= col[at] == col[s_]
        t_s = self.tpl_id[s_]
        same_t = tpl == t_s
        other = alike & ~same_t
        alike &= same_t
        if other.any():  # two patterns with the same routes and latencies
            other &= (tpl >= 0) & (t_s >= 0)
            m = len(self.tpls)
            keys = tpl[other] * m + t_s[other]
            same = []
            for key in np.unique(keys).tolist():
                x, y = self.tpls[key // m], self.tpls[key % m]
                if np.array_equal(x["route"], y["route"]) and np.array_equal(x["latency"], y["latency"]):
                    same.append(key)
            alike[np.flatnonzero(other)[np.isin(keys, same)]] = True
        return alike

    def dependents(self, gs: np.ndarray, sent: bool) -> tuple[np.ndarray, np.ndarray]:
        """What the sends (or the finishes) of ``gs`` release: the dependents, those of ``gs[0]`` first,
        and how many each group of ``gs`` releases (``np.repeat(x, counts)`` spreads a value per
        group over its dependents: cheaper than an index per dependent)."""
        deps = self.on_sent if sent else self.on_done
        gs = np.asarray(gs, dtype=np.int64)
        a = deps.ptr[gs]
        cnt = deps.ptr[gs + 1] - a
        # each dependent's place in the flat list: its group's first, plus its rank among them
        at = np.repeat(a - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))
        return deps.flat[at], cnt

    def released(self, gs: np.ndarray, when: np.ndarray, sent: bool) -> tuple[np.ndarray, np.ndarray]:
        """What the sends (or the finishes) of the groups ``gs`` at the times ``when`` (same shape)
        release: every dependent and the time it is released, in no particular order (a skip counts
        them and takes maxima). A skip's groups fill most of the ids between the first and the last
        (its lanes' pieces over many periods): their dependents are then read as one slice of the
        flat list, each entry timed by its group, rather than gathered group by group."""
        deps = self.on_sent if sent else self.on_done
        g, w = gs.ravel(), when.ravel()
        if not len(g):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        a, b = int(g.min()), int(g.max()) + 1
        if b - a <= 2 * len(g):
            tab = np.full(b - a, np.nan)  # each group's time; NaN: not one of gs
            tab[g - a] = w
            # every group of gs found once (not twice: each release counts; not at a NaN time; ``x == x``:
            # not NaN, in one pass)
            if np.count_nonzero(tab == tab) == len(g):
                t = np.repeat(tab, np.diff(deps.ptr[a:b + 1]))
                keep = t == t
                return deps.flat[deps.ptr[a]:deps.ptr[b]][keep], t[keep]
        got, cnt = self.dependents(g, sent)
        return got, np.repeat(w, cnt)

    def reach_all(self, gs) -> int:
        """The fewest alike links that follow any of ``gs``."""
        gs = np.asarray(gs, dtype=np.int64)
        if not len(gs):
            return 0
        if self._reach is None:
            reach = self.strides.reach(gs)  # lanes at one stride (sim/lane_strides.py)
            if reach is not None:
                return int(reach.min())
            self._prepare()
        return int(self._reach[gs].min())


def lane_order(succ: np.ndarray, alike: np.ndarray, pred: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                                             np.ndarray]:
    """Groups in lane order (``order``: lanes one after the other, each from its head), each group's
    place in it (``idx``), and the alike links in a row from each group (``reach``).

    Builders add a lane's pieces at ids a constant step apart: one after the other (a ring's pieces,
    step 1), or a piece's worth apart (an NVLS tree's lanes, one group in each of its pieces). Such
    runs are found without following the links (:func:`_runs`) and ranked as one, by pointer
    jumping over the runs only."""
    n = len(succ)
    ids = np.arange(n, dtype=np.int64)
    starts, run_of, k, lens, step = _runs(succ, pred)
    # the run after each run in its lane: a lane's next group starts a run (it has one predecessor)
    after = succ[starts + step * (lens - 1)]
    R = len(starts)
    pred = np.full(R, -1, dtype=np.int64)
    has = after >= 0
    pred[run_of[after[has]]] = np.flatnonzero(has)
    # each run's offset in its lane (the lengths of the runs before it) and its lane's first run, by
    # pointer jumping over the runs (those still jumping: a run stops once it reaches its head)
    off = np.where(pred >= 0, lens[np.maximum(pred, 0)], 0)
    ptr = pred.copy()
    head = np.arange(R)
    act = np.flatnonzero(ptr >= 0)
    while len(act):
        p = ptr[act]
        q = ptr[p]
        off[act] += off[p]  # read before written: p may jump in this round too
        end = q < 0
        head[act[end]] = head[p[end]]  # p stopped in an earlier round: its head is known
        ptr[act] = q
        act = act[~end]
    # a lane's runs one after the other by their offsets, lanes in the order of their first ids (a
    # lane's head run is its first: runs are numbered in id order); each run's groups in id order
    lane_len = np.bincount(head, weights=lens, minlength=R).astype(np.int64)  # whole numbers below 2**53: exact
    base = np.cumsum(lane_len) - lane_len  # where each head's lane begins
    at = base[head] + off  # each run's first place
    idx = at[run_of] + k
    order = np.empty(n, dtype=np.int64)
    order[idx] = ids
    # along the order, the alike links in a row from each group (an alike link joins a lane's next group)
    stop = np.where(alike[order], n, np.arange(n))
    stop = np.minimum.accumulate(stop[::-1])[::-1]
    reach = np.empty(n, dtype=np.int64)
    reach[order] = stop - np.arange(n)
    return order, idx, reach


def _runs(succ: np.ndarray, pred: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                       np.ndarray]:
    """The lanes cut in runs of groups a constant step apart: each run's first group (``starts``, in
    id order), each group's run (``run_of``) and place in it (``k``), each run's length and step.

    A group continues its predecessor's run when it follows it by the step its predecessor followed
    its own by. A run's groups are then g0, g0 + d, g0 + 2d ...: for each step d that many groups
    take, the ids laid out in rows of d (one column per residue modulo d, so a run lies down one
    column) give every group its run's first group, the last run start above it in its column,
    without following the links. Groups that follow by other steps (few: a lane's first pieces, a
    tree's irregular levels) start runs of their own. When the runs of consecutive ids are already
    few (rings, hierarchical), they are taken as they are. ``pred``: each group's predecessor (-1:
    none), when the caller has it (else found from ``succ``)."""
    n = len(succ)
    ids = np.arange(n, dtype=np.int64)
    first = np.ones(n, dtype=bool)
    first[1:] = succ[:-1] != ids[1:]  # a run of step 1 starts where g - 1 does not lead to g
    starts = np.flatnonzero(first)
    if len(starts) * 64 <= n:  # few: a ring's or a hierarchical all-reduce's lanes (no table needed)
        run_of = np.cumsum(first) - 1
        return starts, run_of, ids - starts[run_of], np.diff(np.append(starts, n)), np.ones(len(starts), np.int64)
    if pred is None:
        has = succ >= 0
        pred = np.full(n, -1, dtype=np.int64)
        pred[succ[has]] = ids[has]
    d = np.where(pred >= 0, ids - pred, 0)  # the step from the predecessor (0: a lane's head)
    # the steps worth a table: forward, and taken by at least 1/64 of the groups (or every group)
    # (d > 0 only where there is a predecessor; a head's d[0] read for it is never used)
    dd = np.where((d > 0) & (d == d[np.maximum(pred, 0)]), d, 0)
    good = np.bincount(dd, minlength=1) * 64 >= max(n, 64)
    good[0] = False
    cont = good[dd]
    first = ~cont
    start_of = ids
    k = np.zeros(n, dtype=np.int64)  # the place in the run (0 at a run's start)
    for step in np.flatnonzero(good).tolist():
        # ids laid out q rows of ``step``: group g sits at row g // step, column g % step, so a column
        # is one residue's groups in id order, and a run of this step lies down one column (a group's
        # place in its run is its row less its run start's row)
        q = n // step + 1
        table = np.full(q * step, -1, dtype=np.int64)
        mine = np.flatnonzero(first & (d == step))  # run starts reached by this step (their runs go on by it)
        table[mine] = mine
        table = np.maximum.accumulate(table.reshape(q, step), axis=0)
        on = cont & (d == step)
        start_of = np.where(on, table.ravel()[:n], start_of)
        rows = (np.arange(q, dtype=np.int64)[:, None] - table // step).ravel()[:n]
        k = np.where(on, rows, k)
    rank = np.cumsum(first) - 1
    run_of = rank[start_of]
    starts = np.flatnonzero(first)
    lens = np.bincount(run_of, minlength=len(starts))
    step = np.where(lens > 1, d[starts], 1)
    return starts, run_of, k, lens, step


class Dependents:
    """Who waits for each group (for its finish, or for its send), as flat arrays built with numpy
    rather than a Python list per group: ``[g]`` lists group g's dependents in group order, and
    ``waits`` counts what each group waits for this way."""

    def __init__(self, ptr: np.ndarray, flat: np.ndarray, name_of=lambda g: str(g), period=None):
        n = len(ptr) - 1
        self.waits = np.diff(ptr)
        # rows that repeat a piece (``period``: the schedule's hint, checked there): from one period
        fast = periodic_dependents.transposed(ptr, flat, self.waits, period)
        self.repeats = None  # where the lists are known to repeat (``periodic_dependents.Repeats``)
        if fast is not None:
            self.flat, self.ptr, self.repeats = fast
            return
        src = flat
        dep = np.repeat(np.arange(n, dtype=np.int64), self.waits)
        if len(src) and (int(src.min()) < 0 or int(src.max()) >= n or (src == dep).any()):
            bad = (src < 0) | (src >= n) | (src == dep)
            i = int(np.argmax(bad))
            raise ValueError(f"group {dep[i]} ({name_of(int(dep[i]))}) depends on unknown group {src[i]}")
        # (builders list most dependencies in id order: a ring's or a hierarchical all-reduce's all,
        # and the stable order of sorted ids is theirs)
        self.flat = dep if not len(src) or (src[1:] >= src[:-1]).all() else dep[np.argsort(src, kind="stable")]
        self.ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=self.ptr[1:])

    def __getitem__(self, g: int) -> list[int]:
        ptr = self.ptr
        return self.flat[ptr.item(g):ptr.item(g + 1)].tolist()

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def any_of(self, g: int) -> bool:
        return bool(self.ptr[g + 1] > self.ptr[g])


class FlowEnds:
    """When each flow of a group sent its last byte, for groups whose flows did not all end at once.

    Flows that share a rate end together, so a group's record is its few distinct end times and, per
    flow, which of them is its own; that per-flow map is the same for every group of a pattern in
    the same state and is stored once. Groups a steady state skipped point at the group they repeat,
    shifted by a whole number of periods. Memory follows groups and rate classes, not transfers.
    """

    def __init__(self):
        self._own: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._maps: dict[tuple[int, bytes], np.ndarray] = {}
        # groups the skips filled in (a skipped group is in the past and is never stored again), a
        # block per skip as ``repeat_block`` got it (its ids, the index into ``_of`` of its first
        # column's origin, the shifts per period and per origin): spread into arrays of each group's
        # id, origin and shift only when one is asked for (``_aliased``), not by the skip
        self._blocks: list[tuple[np.ndarray, int, np.ndarray, np.ndarray]] = []
        self._of: list[int] = []
        self._n_blocked = 0
        self._index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def store(self, g: int, ends: np.ndarray) -> None:
        if len(ends) <= 256 and not (np.isnan(ends).any() or (ends == 0).any()):
            # a group of a few hundred flows at most (a tree level): its distinct ends sorted on Python
            # floats, the values np.unique gives, without its sort's overhead on every finished group
            vals = ends.tolist()
            distinct = sorted(set(vals))
            at = {x: i for i, x in enumerate(distinct)}
            u = np.array(distinct, dtype=float)
            inv = np.array([at[x] for x in vals], dtype=np.int32)
        else:
            u, inv = np.unique(ends, return_inverse=True)
            inv = inv.astype(np.int32 if len(u) < 2**31 else np.int64)
        raw = inv.tobytes()
        key = (hash(raw), len(raw))
        shared = self._maps.get(key)
        if shared is None or not np.array_equal(shared, inv):
            self._maps[key] = shared = inv
        self._own[g] = (u, shared)

    def repeat_block(self, gs: np.ndarray, of: np.ndarray, shifts: np.ndarray) -> None:
        """A skip's groups: ``gs[j, i]``'s flows ended as those of ``of[i]`` did, ``shifts[j]`` seconds
        later. Kept as arrays, not an entry per group."""
        gs = np.asarray(gs, dtype=np.int64)
        if not gs.size:
            return
        origins = [self._origin(o) for o in np.asarray(of, dtype=np.int64).tolist()]
        base = len(self._of)
        self._of.extend(o for o, _ in origins)
        self._blocks.append((gs, base, np.asarray(shifts, dtype=float), np.asarray([b for _, b in origins], dtype=float)))
        self._n_blocked += gs.size
        self._index = None

    def _origin(self, of: int) -> tuple[int, float]:
        """The stored group that ``of`` repeats, and the shift from it."""
        found = self._aliased(of)
        return found if found is not None else (of, 0.0)

    def _aliased(self, g: int) -> tuple[int, float] | None:
        if not self._n_blocked:
            return None
        if self._index is None:  # the skips' groups sorted once, until the next skip
            blocks = self._blocks
            keys = np.concatenate([gs.ravel() for gs, _, _, _ in blocks])
            order = np.argsort(keys, kind="stable")
            which = np.concatenate([np.broadcast_to(np.arange(base, base + gs.shape[1]), gs.shape).ravel()
                                    for gs, base, _, _ in blocks])
            shift = np.concatenate([(per_period[:, None] + per_origin[None, :]).ravel()
                                    for _, _, per_period, per_origin in blocks])
            self._index = (keys[order], which[order], shift[order])
        keys, which, shift = self._index
        i = int(np.searchsorted(keys, g))
        if i < len(keys) and keys[i] == g:
            return self._of[int(which[i])], float(shift[i])
        return None

    def __contains__(self, g: int) -> bool:
        return g in self._own or self._aliased(g) is not None

    def get(self, g: int, default=None):
        if g in self._own:
            u, inv = self._own[g]
            return u[inv]
        found = self._aliased(g)
        if found is not None:
            u, inv = self._own[found[0]]
            return u[inv] + found[1]
        return default

    def __getitem__(self, g: int) -> np.ndarray:
        out = self.get(g)
        if out is None:
            raise KeyError(g)
        return out

    def __len__(self) -> int:
        return len(self._own) + self._n_blocked
