"""The rounds of ``maxmin_arrays``' progressive filling, with less work per round.

Why. The folded NVLS tree over 2,048 DGX H100 solves one component of 2,000-4,000 routes about
6,000 times in its transient (1 GiB: 3.8 s of the engine's 7.2 s), each a few dozen numpy calls
over 7,000-15,000 route entries in 3-4 rounds: what each call does, not how many numbers it
reads, is the cost. Two things were done that the answer does not need: every round compressed
the routes' weights with their entries and summed them, also when every weight is 1 (a route on
one path: all of the NVLS tree's), where a count of entries is the sum; and the last round (the
routes still open all frozen, most often by the protocol's cap) updated the channels' capacities
and counts, which no later round reads. About 5% of such a solve (min of 5 over 1,500 of its
solves: 576-593 -> 553-557 us).

Why it is exact. A count of entries of weight 1 is the sum of those weights in floating point,
exactly (an integer far below 2**53); the rates are set before the filling ends. Rates, channels
and loads are ``maxmin_reference``'s, bit for bit (``tests/sim/test_fill_rounds.py``).
"""

from __future__ import annotations

import math

import numpy as np

_EPS = 1e-12
_TOL = 1 + 1e-12


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
