"""What a large max-min solve starts from, read from columns of its route table worked out once.

``maxmin._filling_start`` gathers the solve's route entries, numbers the channels they load
(ascending), bounds every route by its tightest channel alone and drops the entries of channels
that cannot bind. A folded tree run (sim/tree_fold.py) does that about 1,100 times over 2,048
DGX H100 systems, each time for some 2,400 routes and 15,000 entries, and the start was over half
of each solve. Much of it is the same for every solve of a run: each entry's channel capacity over
its weight, whether its channel can never bind (``table.never_binds``), and its channel's place
among the channels the table loads (a few thousand on that run, of the network's 299,008: the
numbering then scatters over those, not over every channel). Those are kept per table as columns,
and a solve gathers them.

The answer is the same arrays, bit for bit: the same quotients of the same numbers (a weight times
one flow is the weight), the same minima and sums in the same order (``test_filling_start.py``).
"""

from __future__ import annotations

import numpy as np

# the numbering is done over the table's own channels when the network has at least this many
# times as many
SPARSE = 4


class _Columns:
    """Per entry of a route table: its channel's place among the channels numbered (the table's
    own, or every channel), its channel's capacity over its weight, and whether the channel can
    never bind (None: no such channels given)."""

    def __init__(self, table, capacity: np.ndarray, nb):
        self.key = (table.ch, capacity, nb)
        n_ch = len(capacity)
        seen = np.zeros(n_ch, dtype=bool)
        seen[table.ch] = True
        chans = np.flatnonzero(seen)
        if SPARSE * len(chans) <= n_ch:
            place = np.zeros(n_ch, dtype=np.int64)
            place[chans] = np.arange(len(chans))
            self.chans, self.place = chans, place[table.ch]
        else:
            self.chans, self.place = None, table.ch
        # each route's bound alone with one flow: its entries' least capacity over weight
        # (routes without entries: never read, the filling takes another branch for them)
        cap_w = np.asarray(capacity, dtype=float)[table.ch] / table.w
        some = np.flatnonzero(table.lens > 0)
        self.bound_one = np.full(len(table.lens), np.inf)
        if len(some):
            self.bound_one[some] = np.minimum.reduceat(cap_w, table.offsets[some])
        self.nb = None if nb is None else nb[table.ch]


def _columns(table, capacity: np.ndarray) -> _Columns:
    nb = getattr(table, "never_binds", None)
    cols = getattr(table, "_filling_columns", None)
    if cols is None or cols.key[0] is not table.ch or cols.key[1] is not capacity or cols.key[2] is not nb:
        cols = table._filling_columns = _Columns(table, capacity, nb)
    return cols


def filling_start(route_ids: np.ndarray, mult: np.ndarray, table, capacity: np.ndarray, route_cap: np.ndarray | None):
    """``maxmin._filling_start``'s answer (see there), from the table's columns."""
    cols = _columns(table, capacity)
    n = len(route_ids)
    lens = table.lens[route_ids]
    ends = np.cumsum(lens)
    starts = ends - lens
    pos = np.arange(ends[-1] if n else 0) + np.repeat(table.offsets[route_ids] - starts, lens)
    w = table.w[pos]
    ridx = np.repeat(np.arange(n), lens)
    one_each = bool((mult == 1).all())  # (a weight times one flow is the weight)
    if not one_each:
        w = w * mult[ridx]
    # the channels in use, ascending, and each entry's among them
    n_num = len(capacity) if cols.chans is None else len(cols.chans)
    at = cols.place[pos]
    seen = np.zeros(n_num, dtype=bool)
    seen[at] = True
    used = np.flatnonzero(seen)
    local = np.empty(n_num, dtype=np.int64)
    local[used] = np.arange(len(used))
    ch_local = local[at]
    uch = used if cols.chans is None else cols.chans[used]
    cap = capacity[uch].astype(float)
    nloc = len(uch)
    caps = route_cap[route_ids] if route_cap is not None else None
    full = (ch_local, ridx, w)
    if n and (lens > 0).all():
        # (maxmin._filling_start's filter of the channels that cannot fill)
        ub = cols.bound_one[route_ids] if one_each else np.minimum.reduceat(cap[ch_local] / w, starts)
        if caps is not None:
            ub = np.minimum(ub, caps)
        bound = np.bincount(ch_local, weights=w * ub[ridx], minlength=nloc)
        binding = (bound > cap * (1 - 1e-9))[ch_local]
        if cols.nb is not None:
            binding &= ~cols.nb[pos]
        if not binding.all():
            keep = np.flatnonzero(binding)
            ch_local, ridx, w = ch_local[keep], ridx[keep], w[keep]
    cnt = np.bincount(ch_local, weights=w, minlength=nloc)
    return uch, full, caps, ch_local, ridx, w, cap, cnt
