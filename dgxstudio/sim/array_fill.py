"""``maxmin_arrays``'s filling with less work per solve (one flow per route: the engine's solves).

Why. The folded NVLS tree over 2,048 DGX H100 solves one component of 2,000-4,000 routes about
6,000 times in its transient (1 GiB: 3.8 s of the engine's 7.2 s), each a few dozen numpy calls
over 7,000-15,000 route entries: what each call does, not how many numbers it reads, is the cost.
Three things were done that the answer does not need:

- the start gathered every entry of the solve's routes, numbered the channels they load, dropped
  the entries of channels that can never bind (``table.never_binds``), then the channels that
  cannot fill, then (``maxmin_arrays``) those left with no count, renumbering twice. Here the
  entries of channels that can never bind are left out of a copy of the table made once
  (``_Binding``), the channels are those of the table's own numbering (``filling_start._Columns``),
  and the two filters are applied before the one renumbering;
- every round compressed the routes' weights with their entries and summed them, also when every
  weight is 1 (a route on one path: all of the NVLS tree's) - then a count is a count of entries;
- the last round (the routes still open all frozen, most often by the protocol's cap) updated the
  channels' capacities and counts no later round reads.

Why it is exact. The rates are the same rounds (``rounds``, which ``maxmin_arrays`` runs too) on
the same arrays: the same entries in the same order (a route's entries on channels that can bind, route by route),
the same capacities, counts and caps; a channel's count and bound are sums over its own entries in
that order, and which other channels are numbered does not enter them. A count of entries of
weight 1 is the sum of those weights in floating point, exactly (an integer far below 2**53). The
loads are the reference's sum over every entry, channel by channel in the same order. So rates,
channels and loads are the same bits (``tests/sim/test_array_fill.py`` against ``maxmin_arrays``
as it was and ``maxmin_reference``).
"""

from __future__ import annotations

import math

import numpy as np

from .filling_start import _columns

_EPS = 1e-12
_TOL = 1 + 1e-12


class _Binding:
    """A route table's entries on channels that may bind (all of them without ``never_binds``), route
    by route as in the table, with each one's place among the numbered channels (``_Columns``), and
    those channels' capacities."""

    def __init__(self, table, cols, capacity: np.ndarray):
        self.cols = cols
        n_routes = len(table.lens)
        keep = np.ones(len(table.ch), dtype=bool) if cols.nb is None else ~cols.nb
        route_of = np.repeat(np.arange(n_routes, dtype=np.int64), table.lens)
        self.lens = np.bincount(route_of[keep], minlength=n_routes).astype(np.int64)
        self.offsets = (np.cumsum(self.lens) - self.lens).astype(np.int64)
        self.place = cols.place[keep]
        self.w = table.w[keep]
        cap = np.asarray(capacity, dtype=float)
        self.cap = cap if cols.chans is None else cap[cols.chans]
        self.n_num = len(self.cap)
        self.near_full = self.cap * (1 - 1e-9)  # (the reference's test of a channel that can fill)


def _binding(table, capacity: np.ndarray) -> _Binding:
    cols = _columns(table, capacity)
    got = getattr(table, "_binding_entries", None)
    if got is None or got.cols is not cols:
        got = table._binding_entries = _Binding(table, cols, capacity)
    return got


def _spans(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The places ``starts[i]`` .. ``starts[i] + counts[i] - 1``, one span after the other."""
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(starts - (ends - counts), counts)


def solve(route_ids: np.ndarray, mult: np.ndarray, table, capacity: np.ndarray, route_cap: np.ndarray | None):
    """``maxmin_arrays(route_ids, mult, ...)`` (and ``maxmin_reference``'s), bit for bit, or None
    where this does not apply (a route with more than one flow, or without channels: the
    reference's other branches)."""
    n = len(route_ids)
    lens = table.lens[route_ids]
    if not n or not (mult == 1).all() or not lens.all():
        return None
    b = _binding(table, capacity)
    cols = b.cols
    # the entries that may bind: every route's bound alone (or its cap), the channels those can fill
    blens = b.lens[route_ids]
    bpos = _spans(b.offsets[route_ids], blens)
    at = b.place[bpos]
    w = b.w[bpos]
    ridx = np.repeat(np.arange(n), blens)
    caps = route_cap[route_ids] if route_cap is not None else None
    ub = cols.bound_one[route_ids]
    if caps is not None:
        ub = np.minimum(ub, caps)
    bound = np.bincount(at, weights=w * ub[ridx], minlength=b.n_num)
    keep = (bound > b.near_full)[at]
    at, ridx, w = at[keep], ridx[keep], w[keep]
    cnt = np.bincount(at, weights=w, minlength=b.n_num)
    live = cnt > _EPS
    keep = live[at]
    if not keep.all():
        at, ridx, w = at[keep], ridx[keep], w[keep]
    ch_local = (np.cumsum(live) - 1)[at]
    rate = np.zeros(n)
    one_cap = float(caps[0]) if caps is not None and (caps == caps[0]).all() else None
    with np.errstate(divide="ignore", invalid="ignore"):  # (a filled channel's 0 / 0: masked)
        rounds(n, ridx, ch_local, w, b.cap[live], cnt[live], caps, one_cap, rate)
    # every entry: the channels in use, ascending, and their loads
    pos = _spans(table.offsets[route_ids], lens)
    at = cols.place[pos]
    load = np.bincount(at, weights=rate[np.repeat(np.arange(n), lens)] * table.w[pos], minlength=b.n_num)
    used = np.flatnonzero(np.bincount(at, minlength=b.n_num))
    return rate, (used if cols.chans is None else cols.chans[used]), load[used]


def rounds(n, ridx, ch_local, w, cap, cnt, caps, one_cap, rate) -> None:
    """``maxmin_reference``'s rounds on the arrays of its channels that can fill (the same
    quotients, minima, tolerances and sums), ``rate`` filled in. A channel whose count is at most
    eps (the non-binding ones from the start, the filled ones after their round) has an infinite
    share for good, counts only decrease: such channels are masked, and the arrays cut down to the
    live ones once most are filled (the reference keeps them all). With every weight 1 a round counts
    entries instead of summing their weights; the round that freezes the last open routes ends the
    filling (the capacities and counts it would update are read by no later round)."""
    frozen = np.zeros(n, dtype=bool)
    unit = bool((w == 1.0).all())
    dead = np.zeros(len(cap), dtype=bool)  # filled since the arrays were last cut down
    n_open = n
    while n_open:
        share = cap / cnt
        share[dead] = np.inf
        m = share.min() if len(share) else np.inf
        newly = np.zeros(n, dtype=bool)
        if caps is not None:
            if one_cap is not None:
                if one_cap <= m * _TOL:  # (every open route has this cap)
                    m = one_cap
                    newly |= ~frozen
            else:
                open_caps = np.where(frozen, np.inf, caps)
                mc = open_caps.min()
                if mc <= m * _TOL:
                    m = mc
                    newly |= open_caps <= m * _TOL
        if not math.isfinite(m):
            break
        bott = share <= m * _TOL
        newly[ridx[bott[ch_local]]] = True  # (open routes only: a frozen one's entries are gone)
        rate[newly] = m
        frozen |= newly
        n_open -= int(np.count_nonzero(newly))
        if not n_open:
            break
        sel = newly[ridx]
        if unit:
            used = np.bincount(ch_local[sel], minlength=len(cap)).astype(float)
        else:
            used = np.bincount(ch_local[sel], weights=w[sel], minlength=len(cap))
        cap = np.maximum(cap - m * used, 0.0)
        cnt = cnt - used
        cnt[cnt < _EPS * max(1.0, float(cnt.max(initial=0.0)))] = 0.0
        keep = ~sel
        ch_local, ridx = ch_local[keep], ridx[keep]
        if not unit:
            w = w[keep]
        dead = cnt <= _EPS
        if 2 * np.count_nonzero(dead) > len(cnt):
            # most channels filled: the arrays cut down to the live ones, entries renumbered
            live = ~dead
            ch_local = (np.cumsum(live) - 1)[ch_local]
            cap, cnt, dead = cap[live], cnt[live], dead[live]
