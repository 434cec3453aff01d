"""The skip's release check read from a few periods, when the skipped periods are one period's images.

A steady-state skip (sim/steady.py) fills in k periods of groups and must check what their sends and
finishes release (``Shortcut._releases``): every group it starts is released exactly as often as it
waits, last at the time it starts; no count goes below zero; nothing becomes ready that it does not
start. Read group by group, that check costs as much as the k periods have groups (104,448 in a
16 GiB NVLS tree on two DGX H100: about 13 ms, a quarter of the run).

When the periods are images of the first by a constant id shift d (every group the window starts,
sends or finishes is d ids on from its part one period before: builders lay a lane's pieces out
at a constant stride), and the groups' dependents move with them (the dependents of x + d are those
of x, moved by d), the releases of period j are those of period 1 moved by (j - 1) d in ids and
(j - 1) T in time. A group's count is then a sum over periods of one fixed table (what period 1
releases, moved): past the ids period 1 reaches (``C`` below) it is the same for u and u + d, as
long as no period is cut off by the window's end. So the check over k periods equals the check over
a few (k' whose window covers two whole periods of ids past ``C`` uncut), with the ids in [C, C + d) repeated
k - k' more times and those after them moved on by (k - k') d; provided the groups there still wait
for what groups d before them wait for and none of them has started (checked on the arrays, as
slices). A barrier that every period releases alike (a stage's join, waiting for every piece of
the stage's last hop) is not stretched but counted: (k - k') periods more release it as often as
each of the few did, and it must still wait after them. Releases that lie far apart in ids (a
hierarchical all-reduce's hops, a stage's worth of ids apart) are stretched cluster by cluster.
``stretched`` does that, or answers None and the full check runs (the answer is the same; only its
cost differs). Times drift from period to period by rounding only (about 1e-17 s against a
tolerance of about 1e-13 s): the few periods are checked with the tolerance of the whole window less
a margin that covers that drift.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ENABLED = True  # False: every skip's releases are checked group by group (the reference, in tests)
# windows of fewer groups than this are checked group by group: the few-period check's own steps cost
# about 0.4 ms, more than the full check of a small window (a ring's 27 periods at 16 MiB)
MIN_GROUPS = 20_000
uses = [0]  # skips checked this way (tests read it: the path they compare must have been taken)


def constant_shift(parts) -> int | None:
    """The id shift d > 0 by which every table of ``parts`` (groups per period, one row each) moves
    from each period to the next, or None."""
    shift, seen = None, []
    for gs, _ in parts:
        if gs.shape[1] == 0 or any(gs is x for x in seen):
            continue
        seen.append(gs)
        d = int(gs[1, 0] - gs[0, 0])
        if d <= 0 or (shift is not None and d != shift) or not np.array_equal(gs[1:], gs[:-1] + d):
            return None
        shift = d
    return shift


def first_shift(parts) -> int | None:
    """The id shift from the first period to the second of the first table of ``parts`` that has
    groups, when positive: the only shift ``constant_shift`` can answer; else None."""
    for gs, _ in parts:
        if gs.shape[1]:
            d = int(gs[1, 0] - gs[0, 0]) if gs.shape[0] > 1 else 0
            return d if d > 0 else None
    return None


def _alike_lists(before: np.ndarray, after: np.ndarray, d: int) -> np.ndarray | None:
    """Two groups' dependents, entry by entry (the second's a period on): None unless each entry is
    the first's moved by d or the same group (a barrier that every period releases); those groups."""
    if np.array_equal(before + d, after):  # every entry moves (no barrier): the usual case, two passes
        return np.zeros(0, dtype=np.int64)
    delta = after - before
    same = delta == 0
    if not ((delta == d) | same).all():
        return None
    return before[same]


def _known_from(deps, first: int, last: int, d: int) -> int:
    """From which x on (up to ``last``) the dependents of x + d are known to be those of x moved on
    by d, without reading them (the lists were built by period: ``periodic_dependents``); ``last``
    + 1 when none is known. The ids from ``first`` to that one less are read."""
    repeats = deps.repeats
    if repeats is None:
        return last + 1
    at = max(first, repeats.lo)
    return at if at > last or repeats.moved(at, last, d) else last + 1


def periodic_lists(deps, lo: int, hi: int, d: int, counted: bool = False) -> np.ndarray | None:
    """Are the dependents of every group x + d (x and x + d in [lo, hi]) those of x, moved by d, in
    the same order, or the same groups (barriers)? The barriers (ids, repeated), or None when not.
    ``deps``: a periods.Dependents (flat lists and their pointers). ``counted``: each x is known to
    have as many dependents as x + d (``counts_move``)."""
    if hi - d < lo:
        return np.zeros(0, dtype=np.int64)
    hi = min(hi, _known_from(deps, lo, hi - d, d) - 1 + d)  # (every entry moves past it: no barrier)
    if hi - d < lo:
        return np.zeros(0, dtype=np.int64)
    ptr = deps.ptr
    if not counted:
        counts = np.diff(ptr[lo:hi + 2])
        if not np.array_equal(counts[:-d], counts[d:]):
            return None
    return _alike_lists(deps.flat[ptr[lo]:ptr[hi + 1 - d]], deps.flat[ptr[lo + d]:ptr[hi + 1]], d)


def _spans(gs: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
    """The ids the columns of ``gs`` span (first row to last), overlapping spans merged, and each
    column's span."""
    lo, hi = gs[0], gs[-1]
    order = np.argsort(lo, kind="stable")
    spans: list[list[int]] = []
    span_of = np.empty(len(lo), dtype=np.int64)
    for i, a, b in zip(order.tolist(), lo[order].tolist(), hi[order].tolist()):
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
        span_of[i] = len(spans) - 1
    return spans, span_of


def _last_periods(gs: np.ndarray, spans: list[list[int]], span_of: np.ndarray, d: int, tail: int) -> np.ndarray:
    """The groups of ``gs`` but its last row (a period per row, each d on from the one before) in the
    last ``tail`` periods of the ids their columns' lanes span, row by row. Only the last tail + 1
    rows can hold them (a span ends at or past its columns' last row): read there."""
    last = np.asarray([b for _, b in spans], dtype=np.int64)[span_of] - tail * d - d
    rows = gs[-(tail + 2):-1]
    return rows[rows > last[None, :]]


def moving_at_end(per, gs: np.ndarray, sent: bool, d: int, tail: int = 3) -> np.ndarray | None:
    """Are the dependents of each group of ``gs`` (a period per row) a period on those of its group a
    period before, moved by d, or the same groups (barriers)? Here for the groups of the last
    ``tail`` periods of the ids the columns' lanes span, whose spans hold groups past the window (a
    lane's last pieces, which release nothing after them): group by group. A window that ends its
    lanes fails here, so this is asked before ``moving_before_end`` (a window one period too long
    for the few-period check is turned down before its slices are read). The barriers (ids,
    repeated), or None when not."""
    x = _last_periods(gs, *_spans(gs), d, tail)
    got, n = per.dependents(x, sent)
    moved, m = per.dependents(x + d, sent)
    if not np.array_equal(n, m):
        return None
    return _alike_lists(got, moved, d)


def counts_move(per, gs: np.ndarray, sent: bool, d: int, tail: int = 3) -> bool:
    """Does each group ``moving_at_end`` and ``moving_before_end`` compare have as many dependents as
    its group a period before? Their first question, read from the list pointers alone (no list is
    compared), asked for every table before either: a window whose groups' dependents change in
    number is turned down for the cost of a few slices (a ring's lane runs through its steps, and
    its last step's pieces release nothing: every long window of a 16 GiB ring on two systems
    crosses into it, and the lists were compared before that was seen). The window's last periods
    first, as there."""
    ptr = (per.on_sent if sent else per.on_done).ptr
    spans, span_of = _spans(gs)
    x = _last_periods(gs, spans, span_of, d, tail)
    if not np.array_equal(ptr[x + 1] - ptr[x], ptr[x + d + 1] - ptr[x + d]):
        return False
    # every id x of each span but its last tail periods against x + d, all spans at once: the ids x
    # whose count differs, then any of them in a span's [a, b - (tail + 1) d]
    a = np.asarray([a for a, _ in spans], dtype=np.int64)
    hi = np.asarray([b for _, b in spans], dtype=np.int64) - tail * d - d
    a, hi = a[hi >= a], hi[hi >= a]
    if not len(a):
        return True
    lo = int(a[0])
    top = min(int(hi.max()), _known_from(per.on_sent if sent else per.on_done, lo, int(hi.max()), d) - 1)
    if top < lo:
        return True
    counts = np.diff(ptr[lo:top + d + 2])
    differ = np.flatnonzero(counts[:-d] != counts[d:]) + lo
    if not len(differ):
        return True
    at = np.searchsorted(differ, a)  # each span's first such id at or after its start
    return not (differ[np.minimum(at, len(differ) - 1)] <= hi)[at < len(differ)].any()


def moving_before_end(per, gs: np.ndarray, sent: bool, d: int, tail: int = 3,
                      counted: bool = False) -> np.ndarray | None:
    """The same question for the rest (``moving_at_end``): read as slices over each span (columns whose
    spans overlap, as one span) but its last ``tail`` periods. ``counted``: see ``periodic_lists``."""
    deps = per.on_sent if sent else per.on_done
    fixed = []
    for a, b in _spans(gs)[0]:
        fixed.append(periodic_lists(deps, a, b - tail * d, d, counted))
        if fixed[-1] is None:
            return None
    return np.concatenate(fixed)


def applies(parts, k: int) -> bool:
    """Is the window large enough for ``stretched`` to be tried (it is not switched off)?"""
    return k >= 8 and k * sum(gs.shape[1] for gs, _ in parts) >= MIN_GROUPS


def stretched(per, deps_left: np.ndarray, start: np.ndarray, parts, T: float, k: int, tol: float,
              check: Callable, count: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """What ``check(parts, T, k, tol)`` answers when the window holds, read from a few periods: the
    released groups (ascending) and their counts left; or None when the periods are not images of
    one another as above, or the few periods do not hold (then the full check decides).
    ``count``: False asks whether it holds (a skip choosing its length: see ``Shortcut.jump``),
    also with ``ENABLED`` off, and does not count it in ``uses``."""
    if (count and not ENABLED) or not applies(parts, k):
        return None
    # the dependents' counts, then their lists: at the window's end first (a window that ends its lanes
    # fails there), then every period's. The counts first of all (the finishes' first), under the
    # shift the first table shows (the only one ``constant_shift`` can find): a ring's long windows
    # fail there (its last step's pieces finish releasing nothing), and asking them before every table
    # is compared whole turns such a window down for a third of the cost
    moving = [(gs, sent) for (gs, _), sent in ((parts[1], True), (parts[2], False)) if gs.shape[1]]
    d = first_shift(parts)
    if d is None:
        return None
    if all(int(gs.max()) + d < len(deps_left) for gs, _ in moving):  # (the ids a period on exist)
        if not all(counts_move(per, gs, sent, d) for gs, sent in moving[::-1]) or constant_shift(parts) != d:
            return None
    elif constant_shift(parts) != d or not all(counts_move(per, gs, sent, d) for gs, sent in moving):
        return None
    fixed = []
    for gs, sent in moving:
        fixed.append(moving_at_end(per, gs, sent, d))
        if fixed[-1] is None:
            return None
    for gs, sent in moving:
        fixed.append(moving_before_end(per, gs, sent, d, counted=True))
        if fixed[-1] is None:
            return None
    # barriers: groups that every period releases alike (a stage's join); the jump starts none
    barriers = np.unique(np.concatenate(fixed)) if fixed else np.zeros(0, dtype=np.int64)
    if np.isin(barriers, parts[0][0][0]).any():
        return None
    # what the first period reaches: the groups its sends and finishes release, and those it starts,
    # in clusters whose windows cannot meet (k periods on, a cluster's last id stays below the next's
    # first): each is stretched on its own (a hierarchical all-reduce's hops lie a stage apart)
    rows01 = [np.concatenate([per.released(gs[j:j + 1], w[j:j + 1], sent=sent)[0]
                              for (gs, w), sent in ((parts[1], True), (parts[2], False))]) for j in (0, 1)]
    if len(barriers):
        # a barrier is released by every period alike, and is no other release's image: the second
        # period's other releases are the first's moved by d
        hit = [np.isin(r, barriers) for r in rows01]
        if not (np.array_equal(np.sort(rows01[0][hit[0]]), np.sort(rows01[1][hit[1]]))
                and np.array_equal(np.sort(rows01[0][~hit[0]]) + d, np.sort(rows01[1][~hit[1]]))):
            return None
        per_period = np.searchsorted(np.sort(rows01[0][hit[0]]), barriers, side="right") \
            - np.searchsorted(np.sort(rows01[0][hit[0]]), barriers)
        rows01[0] = rows01[0][~hit[0]]
    reached = np.unique(np.concatenate([rows01[0], parts[0][0][0]]))
    if not len(reached):
        return None
    cuts = np.flatnonzero(np.diff(reached) > (k - 1) * d)
    a = reached[np.concatenate([[0], cuts + 1])]
    c = reached[np.append(cuts, len(reached) - 1)] + 1  # past each cluster's ids
    few = int((-(-(c + 2 * d - a) // d)).max())  # periods whose window covers every [c, c + 2d) uncut
    if k < few + 2:
        return None
    # a barrier lies outside every cluster's reach (its count is not stretched but multiplied)
    for b_ in barriers.tolist():
        if ((a <= b_) & (b_ < c + (k - 1) * d)).any():
            return None
    for c_i in c.tolist():
        end = c_i + (k - 1) * d  # past every group the whole window reaches from this cluster
        if end > len(deps_left) or not np.array_equal(deps_left[c_i:end - d], deps_left[c_i + d:end]) \
                or not np.isnan(start[c_i:end]).all():
            return None
    times = [w for _, w in parts if w.size]
    # (times grow down each column: the largest is in the first or the last period)
    margin = 16 * float(np.spacing(max(float(np.abs(w[[0, -1]]).max()) for w in times))) if times else 0.0
    got = check([(gs[:few], w[:few]) for gs, w in parts], T, few, tol - margin)
    if not isinstance(got, tuple):
        return None
    u, left = got
    more = k - few
    # each barrier: released as often in every period, so (k - few) periods' more releases
    at_b = np.searchsorted(u, barriers)
    if len(barriers):
        if not np.array_equal(u[np.minimum(at_b, len(u) - 1)], barriers):
            return None
        left_b = left[at_b] - more * per_period
        if (per_period * few != deps_left[barriers] - left[at_b]).any() or (left_b <= 0).any():
            return None  # a barrier that the window completes (or overfills): the full check decides
        keep = np.ones(len(u), dtype=bool)
        keep[at_b] = False
        u, left = u[keep], left[keep]
    rows = np.arange(more + 1, dtype=np.int64)[:, None] * d
    us, lefts, at = [], [], 0
    for c_i, nxt in zip(c.tolist(), a[1:].tolist() + [None]):
        lo, mid, hi = np.searchsorted(u, [c_i, c_i + d, c_i + 2 * d]).tolist()
        stop = len(u) if nxt is None else int(np.searchsorted(u, nxt))
        if not (np.array_equal(u[lo:mid] + d, u[mid:hi]) and np.array_equal(left[lo:mid], left[mid:hi])):
            return None  # the few periods do not repeat past c as they must: leave it to the full check
        us += [u[at:lo], (u[lo:mid][None, :] + rows).ravel(), u[mid:stop] + more * d]
        lefts += [left[at:lo], np.tile(left[lo:mid], more + 1), left[mid:stop]]
        at = stop
    u, left = np.concatenate(us), np.concatenate(lefts)
    if len(barriers):
        at_b = np.searchsorted(u, barriers)
        u, left = np.insert(u, at_b, barriers), np.insert(left, at_b, left_b)
    if count:
        uses[0] += 1
    return u, left
