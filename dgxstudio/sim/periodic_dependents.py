"""Who waits for each group (``periods.Dependents``) when a schedule's last rows repeat a piece: read
from the rows before the repeat and one period, rather than sorted over every group.

A piece-by-piece builder adds its later pieces as images of the last one it built
(``Schedule.repeat_piece``: a 16 GiB NVLS tree on two DGX H100 is 104,448 groups, all but 306 of
them such copies). The engine needs, per group, the groups that wait for it in group order: the
transpose of the dependency lists, a stable sort of 180,000 ids that costs about a millisecond (two
of them a run, a tenth of a 16 GiB run's setup). Where the rows repeat, so does the transpose.

Why it is exact. Let the rows g >= B repeat the row m before them: the same number of dependencies,
each one that of row g - m moved on by m. Let the rows before B wait only for rows before them, at
most W ids back (then so does every row: a moved entry keeps its distance, and stays at or above 0).
Then for a group y >= B, a row g that waits for y lies after y (so g >= B), and row g - m waits
for y - m at the same place; conversely a row h that waits for y - m (h > y - m >= B - m) has y at
that place in row h + m. So the dependents of y are those of y - m moved on by m, in the same
order, less those past the last row. The dependents of the groups before B lie within W rows of
them, so they are read (sorted as ever) from the rows before B + W. Both conditions are checked on
the arrays (two passes over the repeated rows' ids, and the rows before B), without a sort; a
schedule that does not hold them (a group every copy waits for, whose id does not move; a row that
waits for a later one), or names no repeat, is transposed in full, as is one whose lists are wrong
(the full transpose says which group names an unknown one). Where the lists are thereby known to
repeat (``Repeats``), a steady-state skip's release check (``periodic_releases``) does not read them.
"""

from __future__ import annotations

import numpy as np

uses = [0]  # transposes built this way (tests read it: the path they compare must have been taken)


def transposed(ptr: np.ndarray, src: np.ndarray, waits: np.ndarray, period: tuple[int, int] | None
               ) -> "tuple[np.ndarray, np.ndarray, Repeats] | None":
    """``Dependents``' (flat, ptr) for the dependency lists ``ptr``/``src`` (``waits``: each row's
    count), built from one period when the rows from B on repeat the m before them with every id
    moved on (``period`` = (B, m), a hint that is checked) and every row waits only for rows before
    it, and where the dependents are known to repeat (``Repeats``); None otherwise (the full
    transpose then runs, and says what is wrong with a list)."""
    if period is None or not len(src):
        return None
    n = len(ptr) - 1
    B, m = period
    if not (m >= 1 and m <= B < n):
        return None
    # the rows from B on: row g - m's dependencies, each moved on by m (so each waits as far back,
    # for a group as far into the schedule, as the row it repeats)
    if not np.array_equal(waits[B:], waits[B - m:n - m]) or \
            not np.array_equal(src[ptr[B - m]:ptr[n - m]] + m, src[ptr[B]:ptr[n]]):
        return None
    # the rows before B wait for known groups before them (then so do the rest), at most W ids back
    h_src = src[:ptr[B]]
    h_dep = np.repeat(np.arange(B, dtype=np.int64), waits[:B])
    back = h_dep - h_src
    if not len(back) or int(h_src.min()) < 0 or int(back.min()) < 1:
        return None
    W = int(back.max())
    # the dependents of the groups before B: in the rows before B + W, sorted as ever
    end = min(n, B + W)
    s = np.concatenate([h_src, src[ptr[B]:ptr[end]]])
    d = np.concatenate([h_dep, np.repeat(np.arange(B, end, dtype=np.int64), waits[B:end])])
    keep = s < B
    s, d = s[keep], d[keep]
    head = d if (s[1:] >= s[:-1]).all() else d[np.argsort(s, kind="stable")]
    head_n = np.bincount(s, minlength=B)
    # then one period's (those of groups B - m .. B - 1), moved on by m per period, less those past
    # the last row (in the last periods only: the dependents of B - m + i lie within W of it)
    at = len(head) - int(head_n[B - m:].sum())
    base, base_n = head[at:], head_n[B - m:]
    K = len(base)
    copies = -(-(n - B) // m)
    whole = min(copies, max(0, (n - (B + W)) // m))  # periods none of whose dependents pass the last row
    out_ptr = np.empty(n + 1, dtype=np.int64)
    out_ptr[0] = 0
    np.cumsum(head_n, out=out_ptr[1:B + 1])
    steps = np.arange(1, whole + 1, dtype=np.int64)
    base_end = np.cumsum(base_n)
    np.add((len(head) + (steps - 1) * K)[:, None], base_end[None, :], out=out_ptr[B + 1:B + 1 + whole * m].reshape(whole, m))
    rest_first = B + whole * m  # the rows from here on lose what lies past the last row
    extra = (np.arange(whole + 1, copies + 1, dtype=np.int64) * m)[:, None] + base[None, :]
    row_of = np.broadcast_to(np.repeat(np.arange(m, dtype=np.int64), base_n), extra.shape)
    ok = extra < n
    rest_rows = ((np.arange(copies - whole, dtype=np.int64) * m)[:, None] + row_of)[ok]
    rest_n = np.bincount(rest_rows, minlength=n - rest_first)[:n - rest_first]
    flat = np.empty(len(head) + whole * K + len(rest_rows), dtype=np.int64)
    flat[:len(head)] = head
    np.add(base[None, :], (steps * m)[:, None], out=flat[len(head):len(head) + whole * K].reshape(whole, K))
    flat[len(head) + whole * K:] = extra[ok]
    np.cumsum(rest_n, out=out_ptr[rest_first + 1:])
    out_ptr[rest_first + 1:] += out_ptr[rest_first]
    uses[0] += 1
    return flat, out_ptr, Repeats(B - m, n - m - W, m)


class Repeats:
    """Where a transpose built by period is known to repeat: for every group y in [lo, hi), the
    dependents of y + m are those of y moved on by m (y + m is past B; every dependent of y lies
    within W of it, so none is cut off at the last row when y < n - m - W). Then for d a multiple
    of m and y in [lo, hi + m - d), those of y + d are those of y moved on by d (step by step)."""

    __slots__ = ("lo", "hi", "m")

    def __init__(self, lo: int, hi: int, m: int):
        self.lo, self.hi, self.m = lo, hi, m

    def moved(self, first: int, last: int, d: int) -> bool:
        """Are the dependents of every x + d those of x moved on by d, for x from ``first`` to
        ``last`` (inclusive)? True when known so; False says nothing (read them)."""
        return d > 0 and d % self.m == 0 and first >= self.lo and last < self.hi + self.m - d


def successors(ptr: np.ndarray, src: np.ndarray, waits: np.ndarray, repeats: Repeats) -> np.ndarray:
    """``_Periods.succ`` (each group's lane successor: the one group that names it as its first
    send dependency, else -1) for send lists whose transpose was built by period (``repeats``,
    whose checks hold here too): the groups a group's first send dependency names lie within W
    rows after it, so the successors of the groups before B are read from the rows before B + W,
    those of the last W groups from the last W rows, and those between are the period before
    B's, moved on by m per period (nothing is cut off at the last row there)."""
    n, m = len(ptr) - 1, repeats.m
    B, W = repeats.lo + m, n - m - repeats.hi
    out = np.empty(n, dtype=np.int64)
    tail = max(B, n - W)
    for r0, r1, t0, t1 in ((0, min(n, B + W), 0, B), (tail, n, tail, n)):
        out[t0:t1] = _successors(ptr, src, waits, r0, r1, t0, t1)
    base = out[B - m:B]
    copies = -(-(tail - B) // m)
    table = base[None, :] + (np.arange(1, copies + 1, dtype=np.int64) * m)[:, None]
    table[:, base < 0] = -1
    out[B:tail] = table.reshape(-1)[:tail - B]
    return out


def _successors(ptr, src, waits, r0: int, r1: int, t0: int, t1: int) -> np.ndarray:
    """The successors of groups t0 .. t1 - 1, from rows r0 .. r1 - 1 (every row that names one of
    them as its first send dependency), as ``_Periods`` finds them over all rows."""
    has = np.flatnonzero(waits[r0:r1] > 0) + r0
    named = src[ptr[has]]
    keep = (named >= t0) & (named < t1)
    has, named = has[keep], named[keep] - t0
    claims = np.bincount(named, minlength=t1 - t0)
    succ = np.full(t1 - t0, -1, dtype=np.int64)
    succ[named] = has
    succ[claims != 1] = -1
    return succ
