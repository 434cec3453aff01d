"""How far a few groups' lanes stay alike, read along the ids where builders lay lanes out at a stride.

A steady-state skip asks, for the few groups of its window, how many alike links follow each along
its lane (``_Periods.reach_all``) and which groups lie k links on (``_Periods.image``). The whole
lane order answers that (``periods.lane_order``), at a cost that follows the schedule's groups:
about 6 ms for the 104,448 groups of a 16 GiB NVLS tree on two DGX H100, for a window of 151.

Builders lay a lane's pieces out at a constant stride s (a ring's pieces one after the other, an NVLS
tree's a piece's worth apart). Where every group x has its successor at x + s and is alike to it (the
same bytes, delays and template: compared as slices, x against x + s), every lane is the progression
g, g + s, g + 2s, ... So the ids where that fails (``_breaks``, found once per stride) say how far
each lane goes: to its first break at or after g with g's residue modulo s. At a break the lane
either ends (no successor, or not alike: the reach stops there, as the lane order's does) or goes on
at another stride (then None: the whole lane order answers). The answers equal the lane order's
(tests/sim/test_lane_strides.py compares them on every group of several schedules).
"""

from __future__ import annotations

import numpy as np

ENABLED = True  # False: the whole lane order answers every time (the reference, in tests)
# schedules of fewer groups than this are ordered whole: that costs less than a skip's many small
# questions read along strides (about 30 us each that is not asked again; a hierarchical
# all-reduce's looks ask tens of them). From 8,192 groups on, the strides cost less (on two
# systems, CPU best of 9, A/B twice at load 6.5-7: ring at 16 GiB, 15,361 groups, 6.1-6.6 ->
# 5.9-6.2 ms; hierarchical at 4 and 8 GiB 18.0-18.1 -> 17.5-17.7 and 21.6-21.8 -> 20.6-21.2 ms;
# NVLS tree at 2 GiB, 13,056 groups, 15.9-16.9 -> 15.6 ms; below 8,192 within the noise)
MIN_GROUPS = 8_192


class StrideLanes:
    """Reach and images of groups whose lanes run at one stride (see the module's docstring)."""

    def __init__(self, succ: np.ndarray, alike_at, columns: tuple[np.ndarray, ...]):
        self.succ = succ
        self.alike_at = alike_at  # the full test of the link from each of some groups to its successor
        self.columns = columns  # the columns an alike successor repeats (bytes, delays, template)
        self._breaks: dict[int, tuple[np.ndarray, np.ndarray] | None] = {}
        self._known: dict[int, int] = {}  # reach found so far, per group (a skip's looks ask again and again)

    def _find_breaks(self, s: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The ids where a lane at stride s stops being one (sorted by residue mod s, then id, as
        keys residue * n + id), and whether there it goes on at another stride."""
        succ = self.succ
        n = len(succ)
        if s <= 0 or s >= n:
            return None
        ok = succ[:n - s] == np.arange(s, n, dtype=np.int64)
        for col in self.columns:
            ok &= col[:n - s] == col[s:]
        at = np.concatenate([np.flatnonzero(~ok), np.arange(n - s, n, dtype=np.int64)])
        # the full test where the slices failed: equal templates of two patterns are alike too
        alike = self.alike_at(at)
        same = succ[at] == at + s
        keep = ~(alike & same)
        at, moves_on = at[keep], (alike & ~same)[keep]
        order = np.lexsort((at, at % s))
        return (at % s * n + at)[order], moves_on[order]

    def reach(self, gs: np.ndarray) -> np.ndarray | None:
        """The alike links in a row from each of ``gs``, or None when they cannot be read this way
        (groups without a successor or at different strides, or a lane that changes stride)."""
        gs = np.asarray(gs, dtype=np.int64)
        if not ENABLED or not len(gs) or len(self.succ) < MIN_GROUPS:
            return None
        if len(gs) <= 64:  # a look's few groups, most of them asked before: read back (each is exact)
            known = self._known
            got = [known.get(g) for g in gs.tolist()]
            if None not in got:
                return np.asarray(got, dtype=np.int64)
        nxt = self.succ[gs]
        if (nxt < 0).any():
            return None
        steps = nxt - gs
        s = int(steps[0])
        if not (steps == s).all():
            return None
        if s not in self._breaks:
            self._breaks[s] = self._find_breaks(s)
        found = self._breaks[s]
        if found is None:
            return None
        keys, moves_on = found
        n = len(self.succ)
        i = np.searchsorted(keys, gs % s * n + gs)
        if (i >= len(keys)).any():
            return None
        hit = keys[i]
        if (hit // n != gs % s).any() or moves_on[i].any():
            return None
        reach = (hit % n - gs) // s
        if len(gs) <= 64:
            self._known.update(zip(gs.tolist(), reach.tolist()))
        return reach

    def stride(self, gs: np.ndarray) -> int | None:
        """The one stride of ``gs``'s lanes, when they share one (as ``reach`` required)."""
        steps = self.succ[gs] - gs
        return int(steps[0]) if len(steps) and (steps == steps[0]).all() and steps[0] > 0 else None
