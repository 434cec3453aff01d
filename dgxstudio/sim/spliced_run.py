"""A run whose later pieces are images of one piece, played on a shorter schedule that leaves a block
of those pieces out, and given back as the run of the whole one (issue #17: a 16 GiB NVLS tree on two
DGX H100 is 104,448 groups, 2,048 pieces of 51, of which the engine plays 81 events and skips
2,040 pieces in one steady-state jump; building, transposing and filling in every group was most
of its time).

The schedule keeps its copies of the piece as virtual rows (``virtual_rows.RepeatedLanes``). The
short schedule builds ``built`` of its ``copies`` copies (``nvls_virtual.shorter``): it is the long
one with D = (``copies`` - ``built``) m ids left out at X, a piece's first group among the copies
(m groups a piece), its groups from X on standing for the long one's D ids further on. Every row of
the short schedule is that of the long one under this renumbering: the copies are images of one
another (a copy's dependencies that move with it are m on from the copy before's, the others the
same groups), and the groups after the block wait only for those before it or for the last copies;
only the rows within W of X (how far back a row's moving dependencies reach) differ, and no event
may read them (below). Any piece boundary among the copies stands for the block, so X is chosen
amid the first skip wide enough to hold it.

Why the run is the long one's. The engine runs the short schedule as it would the long one (its
events, rate solves and the steady-state watcher's looks read the same states, in the same order:
the renumbering keeps the order of ids) until the watcher skips a window of k periods whose groups
cross X. Before it nothing within W of X has started (checked), so the long run got there the same
way. The long run's skip from the same state is k + D' periods long (D' = D / P, P ids a period):
its length comes from how far the lanes reach (D' periods further in the long one; D is even, a
period spans one or two pieces) and from checks that read the periods as images of one another
(the same answer on either side of the block). Where the window is longer than every group allows
one more period of, the few-period check chooses its length (``Shortcut._length``): it must then
apply to the short window as it does to the long one (checked; else a short schedule as long as it
needs is played). The skip fills in the same groups below X at the same times, the groups past X
(renumbered) D' periods later, and between them the left-out copies, period by period, each column
of the window a period (P ids) on from its last before the cut; the times are written as the long
run writes them (``t + j T`` with j the long period number; the clock moved on by (k + D') T, and
the segments, bytes delivered and pattern times by k + D' periods). Every group within W of X is
filled in by this skip (checked), so the events after it read the same rows renumbered. Per-flow
end times (groups whose flows end apart: four and five systems) are given back renumbered, the
crossing skip's block as long as the long run's. Where a check fails (a short schedule without a
skip wide enough is played again, twice as long, at most three in all), or where a second skip
crosses X, the long schedule runs as before (``Engine.run``). The long run's per-group times are
built when first read. Tests compare every group's times and end times and every figure with the
long schedule run with its skip (bit for bit) and event by event (to rounding):
tests/sim/test_spliced_run.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np

from . import limits, periodic_releases
from .engine import Engine
from .nvls_virtual import block, reach_back, shorter
from .periods import FlowEnds
from .schedule import Schedule, SimResult
from .virtual_rows import Gathered

# copies the short schedule keeps besides four times its rows' reach: the pieces played before and
# after the skip (about six each on two DGX H100), with the cut between them
MARGIN_COPIES = 32
# Whether the few-period check chooses the skip's length depends on the run's dynamics: on two
# systems it did not until NVLS-tree network pairs were capped at NCCL's per-head ceiling, then it
# did (a period a piece, the window one period longer than every group allows). The short schedule
# is given that window at once, whatever the system count (``_window``: 2 DGX H100 at 16 GiB played
# a 48-copy one turned down, then a 140-copy one; 4 and 5 at 16 GiB: a second short run cost
# 20-40% more). The copies past the window cost little (2 DGX H100 at 16 GiB: 140-190 copies alike).
ENABLED = True  # False: the long schedule runs as before (tests of what it takes: its lanes' strides)
uses = [0]  # runs given back this way (tests read it: the path they compare must have been taken)


class _NoSplice(Exception):
    """Why the short schedule's run does not stand for the long one's (the long one then runs, or
    a short one ``more`` copies longer)."""

    def __init__(self, why: str, more: int = 0):
        super().__init__(why)
        self.more = more


class Splice:
    """The short schedule's renumbering (ids from ``cut`` on stand for ``removed`` ids further on,
    D' periods later) and the one skip that crosses ``cut``, handed to the watcher
    (``Shortcut.splice``): ``jumped`` is asked for each skip."""

    def __init__(self, first: int, removed: int, reach: int, m: int, built: int):
        self.first, self.removed, self.reach, self.m, self.built = first, removed, reach, m, built
        self.cut: int | None = None  # X: chosen at the first skip wide enough to hold it
        self.owner = None  # the watcher of the run the record below is from (a run restarted anew: a new one)
        self.middle: list | None = None  # per kind: where its columns lie in a period, their times, periods before the cut
        self.T = 0.0  # the period
        self.extra = 0  # D': the periods the crossing skip stands for more
        self.ends: _LoggedEnds | None = None  # the short run's per-flow end times

    def flow_ends(self) -> FlowEnds:
        """The short run's per-flow end times, kept as the long run's are and noted to be given back
        renumbered (``_LoggedEnds``)."""
        self.ends = _LoggedEnds()
        return self.ends

    def jumped(self, shortcut, parts, times, k: int, T: float, k_sure: int):
        """(the periods of time a skip of k periods stands for, and the tables of ids and times it
        fills in: ``parts``, with the times past the cut written as the long run writes them).
        ``k_sure``: the length every group of the window allows one more period of (``Shortcut._periods_ahead``)."""
        if shortcut is not self.owner:
            self.owner, self.middle, self.cut = shortcut, None, None
        W, m = self.reach, self.m
        tables = [gs for gs, _ in parts if gs.size]
        if not tables:
            return k, parts
        lo, hi = min(int(gs.min()) for gs in tables), max(int(gs.max()) for gs in tables)
        if self.cut is not None:
            if hi < self.cut or lo >= self.cut:
                return k, parts  # (wholly on one side of the cut: the same skip in the long run)
            raise _NoSplice("a second skip crosses the cut")
        if hi - lo < 4 * W + 4 * m:
            return k, parts  # (too narrow to hold the cut: before it, the same skip in the long run)
        # the cut: a piece's first group amid the skip's (the copies are alike: any place among them
        # stands for the left-out ones; nothing within W of it must have started, checked below)
        X = self.first + ((lo + hi) // 2 - self.first) // m * m
        if not self.first < X < self.first + self.built * m:
            raise _NoSplice("the skip's groups are not amid the copies")
        self.cut = X
        # the long window is D' periods longer. A window longer than every group allows one more
        # period of chooses its length by the few-period check (``Shortcut._length``), which must
        # then apply to the short one as it does to the long one, also one period shorter
        if k > k_sure and not periodic_releases.applies(parts, k - 1):
            need = _window(sum(gs.shape[1] for gs in tables))
            pieces = -(-int(tables[0][1, 0] - tables[0][0, 0]) // self.m) if k > 1 else 2  # (a period's)
            raise _NoSplice("the short window is too small for the few-period check", max(0, need - k) * pieces)
        if not np.isnan(shortcut.start[max(0, X - W):self.first + self.built * m]).all():  # (those after the copies may have: a launch)
            raise _NoSplice("groups near the cut started before the skip", self.built)  # (twice the copies)
        extra = None
        out, middle = [], []
        rows = np.arange(1, k + 1, dtype=np.int64)[:, None]
        lo = max(0, X - W)
        for (gs, _), vals in zip(parts, times):
            if not gs.size:
                out.append((gs, vals[None, :] + rows * T))
                middle.append(None)
                continue
            above = gs >= X
            if above[0].any() or not above[-1].all() or (above[:-1] & ~above[1:]).any():
                raise _NoSplice("a column of the skip does not cross the cut once")
            near = np.zeros(X + W - lo, dtype=bool)
            near[gs[(gs >= lo) & (gs < X + W)] - lo] = True
            if not near.all():
                raise _NoSplice("a group near the cut is not filled in by the skip", self.built)
            jc = np.count_nonzero(~above, axis=0)  # each column's periods before the cut
            col = np.arange(gs.shape[1])
            before, after = gs[jc - 1, col], gs[jc, col]
            step = int(after[0] - before[0])
            if not (after - before == step).all() or step <= 0 or self.removed % step or gs.shape[1] != step:
                raise _NoSplice("the skip's periods do not tile the left-out copies")
            d = self.removed // step
            if extra is not None and d != extra:
                raise _NoSplice("the skip's kinds move by different periods")
            extra = d
            # as the long run writes them: vals + j T, j the long period number
            out.append((gs, vals[None, :] + (rows + extra * above) * T))
            # the left-out copies: column c's ids from its last before the cut on, a period (step ids) apart
            middle.append((before - (X - step), vals, jc))
        self.middle, self.T, self.extra = middle, T, extra
        return k + extra, out


def run(router, sched: Schedule, capacity_scale, progress=None, cancel=None) -> SimResult:
    """The run of ``sched`` (see the module's note): through a short schedule where its virtual rows
    allow, else as ``Engine.run`` runs it."""
    wall0 = time.perf_counter()
    at = block(sched)
    if ENABLED and at is not None and len(sched.groups) <= limits.MAX_SCHEDULED_GROUPS:
        k, first = at
        chunk = sched.groups._chunks[k]
        m = chunk.image.m
        reach = reach_back(chunk, first)
        # the copies around the cut, and a window of one piece a period (its groups start, send and
        # end: 3 m columns a period) as long as the few-period check needs, should it choose the
        # skip's length (see ``jumped``), as far as a third of the copies allows (a longer short
        # schedule is not worth it: below)
        built = MARGIN_COPIES + 4 * reach
        built = max(built, min(built + _window_copies(m), chunk.copies // 3 - 1))
        # (a window too short for the few-period check, or a cut too near the pieces played before
        # or after the skip: again, as long as it needs; at most twice)
        for _ in range(3):
            built += (chunk.copies - built) % 2  # (an even number left out: a period may span two pieces)
            if chunk.copies - built < 2 * built:
                break
            short = _short(sched, k, first, built)
            if short is None:
                break
            splice = Splice(first, (chunk.copies - built) * m, reach * m, m, built)
            engine = Engine(router, capacity_scale, splice=splice)
            try:
                return _long(engine.run(short, progress, cancel), sched, splice, wall0)
            except _NoSplice as exc:
                if not exc.more:
                    break
                built += exc.more
    return Engine(router, capacity_scale).run(sched, progress, cancel)


def _window(width: int) -> int:
    """The periods a skip's window of ``width`` columns a period needs for the few-period check
    (``periodic_releases.applies``) to hold one period shorter, and two to spare."""
    return max(9, -(-periodic_releases.MIN_GROUPS // width) + 1) + 2


def _window_copies(m: int) -> int:
    """The copies a window of one piece a period (m groups a piece) needs for the few-period check."""
    return _window(3 * m)


def _short(sched: Schedule, k: int, first: int, built: int) -> Schedule | None:
    """``nvls_virtual.shorter``: where the copies are the schedule's last chunk and only Group objects
    come before them (an NVLS tree's first pieces), those are shared as they are (none waits for a
    copy not built: checked), without adding them one by one."""
    table = sched.groups
    chunks = table._chunks
    if k != len(chunks) - 1 or not all(type(c) is list for c in chunks[:k]):
        return shorter(sched, k, first, built)
    unbuilt = first + built * chunks[k].image.m
    for item in chunks[:k]:
        for deps in (itertools.chain.from_iterable(g.deps_done for g in item),
                     itertools.chain.from_iterable(g.deps_sent for g in item)):
            if max(deps, default=-1) >= unbuilt:
                return None
    out = Schedule([], sched.payload_bytes, sched.description, dict(sched.meta))
    out.groups._chunks, out.groups._starts, out.groups._n = [list(c) for c in chunks[:k]], list(table._starts[:k]), first
    out.add_lanes(chunks[k].materialized(built))
    spans = sched.meta.get("tree_spans")
    if spans is not None:
        out.meta["tree_spans"] = (spans[0], (spans[1][0], built))
    return out


def _long(sim: SimResult, sched: Schedule, splice: Splice, wall0: float) -> SimResult:
    """The long schedule's result from the short one's run (its per-group times renumbered, the
    left-out groups' times from the crossing skip)."""
    if splice.middle is None or splice.owner is None:
        raise _NoSplice("no skip held the cut", splice.built)  # (a short schedule too short for a wide one)
    out = []
    for short, mid in zip((sim.group_start, sim.group_sent, sim.group_done), splice.middle):
        if mid is None:
            raise _NoSplice("a kind of the skip fills in no group")
        if not np.array_equal(np.sort(mid[0]), np.arange(len(mid[0]))):
            raise _NoSplice("the skip's left-out groups are not the left-out copies")
        out.append(_Renumbered(short, len(sched.groups), splice, mid))
    ends = long_ends(splice) if len(sim.flow_ends) else FlowEnds()
    uses[0] += 1
    return dataclasses.replace(sim, group_start=out[0], group_sent=out[1], group_done=out[2], groups=sched.groups,
                               flow_ends=ends, wall_s=time.perf_counter() - wall0)


class _LoggedEnds(FlowEnds):
    """A short run's per-flow end times, each record also noted in order (``log``), to be given
    back renumbered as the long run keeps them (``long_ends``)."""

    def __init__(self):
        super().__init__()
        self.log: list[tuple] = []

    def store(self, g: int, ends: np.ndarray) -> None:
        super().store(g, ends)
        self.log.append((g, ends))

    def repeat_block(self, gs: np.ndarray, of: np.ndarray, shifts: np.ndarray) -> None:
        super().repeat_block(gs, of, shifts)
        self.log.append((np.array(gs, dtype=np.int64), np.array(of, dtype=np.int64), np.array(shifts, dtype=float)))


def long_ends(splice: Splice) -> FlowEnds:
    """The long run's per-flow end times from the short run's records: its groups renumbered; the
    crossing skip's block k + D' periods long (the left-out copies' rows a period apart, the rows
    past the cut D ids on), each row's shift j T as the long run's skip writes it."""
    out = FlowEnds()
    X, D = splice.cut, splice.removed

    def moved(ids):
        return ids + D * (ids >= X)

    for rec in splice.ends.log:
        if len(rec) == 2:
            out.store(int(moved(rec[0])), rec[1])
            continue
        gs, of, shifts = rec
        if not (gs.min() < X <= gs.max()):
            out.repeat_block(moved(gs), moved(of), shifts)
            continue
        k, extra = len(gs), splice.extra
        jc = np.count_nonzero(gs < X, axis=0)
        if (jc < 1).any() or (jc >= k).any():
            raise _NoSplice("a skip's per-flow end times do not cross the cut once")
        step = gs[jc, np.arange(gs.shape[1])] - gs[jc - 1, np.arange(gs.shape[1])]
        if not (step * extra == D).all():
            raise _NoSplice("a skip's per-flow end times do not tile the left-out copies")
        r = np.arange(k + extra, dtype=np.int64)[:, None]
        row = np.where(r < jc, r, np.where(r < jc + extra, jc - 1, r - extra))
        add = np.where(r < jc, 0, np.where(r < jc + extra, step * (r - jc + 1), D))
        out.repeat_block(np.take_along_axis(gs, row, axis=0) + add, moved(of),
                         np.arange(1, k + extra + 1, dtype=float) * splice.T)
    return out


class _Renumbered(Gathered):
    """A per-group time of the long schedule: the short run's, renumbered, and the left-out copies'
    from the crossing skip. Built whole when first read (a replay reads it; a report does not)."""

    def __init__(self, short: np.ndarray, n: int, splice: Splice, middle):
        self.short, self.n, self.splice, self.middle = short, n, splice, middle
        self._whole = None

    def __len__(self) -> int:
        return self.n

    @property
    def shape(self) -> tuple[int]:
        return (self.n,)

    def __getitem__(self, key):
        return np.asarray(self)[key]

    def __array__(self, dtype=None, copy=None):
        if self._whole is None:
            X, D, T = self.splice.cut, self.splice.removed, self.splice.T
            at, vals, jc = self.middle  # (each column's place in the period before the cut, checked)
            full = np.empty(self.n)
            full[:X] = self.short[:X]
            full[X + D:] = self.short[X:]
            inv = np.empty(len(at), dtype=np.int64)
            inv[at] = np.arange(len(at))
            rows = full[X:X + D].reshape(-1, len(at))
            # vals + j T, j the long period number, as the long run writes them
            np.multiply(jc[inv][None, :] + np.arange(1, len(rows) + 1, dtype=np.int64)[:, None], T, out=rows)
            rows += vals[inv][None, :]
            self._whole = full
        return self._whole if dtype is None else self._whole.astype(dtype)
