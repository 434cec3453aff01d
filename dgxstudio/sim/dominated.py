"""Channels that can never bind a max-min fair solve, found once per run from the routes' shape.

Why it matters. A route between two DGX-1s on a fat tree loads 16 spine planes each way, the PCIe
links on both sides and the two NIC links; every event of a tree all-reduce over 124 systems
re-solves about 1,500 such routes. The solver's own filter (sim/maxmin.py) drops a channel only if
its routes, each at its bound alone, cannot fill it; a leaf's uplinks carry a share of every flow of
the leaf's 16 NICs, each of them bounded alone by the per-channel cap, so that filter keeps them
although the NICs feeding them can never push more than the uplinks take.

The rule (a cover). Take channel c from device T to device H. Every route through c enters T over
some of its channels (unless it starts at T). If route r puts weight w_rc on c and W_rT on the
channels it enters T by, its load on c is w_rc / W_rT times its load there. So for any rates,
load(c) <= sum over channels e into T of M_e * load(e) <= sum_e M_e * cap(e), with M_e the largest
ratio w_rc / W_rT over the routes through both c and e. When that bound is at most cap(c), c never
holds more than its capacity (the same from H's side: the channels routes leave H by). Leaving such
a channel out of the filling leaves the max-min fair rates as they are: a flow whose only
bottleneck were c would, at equality, fill every channel it entered T by, which then carry only
flows through c, so it is a bottleneck there as well. (The same argument holds for routes' caps and
any number of flows per route, since only channel capacities bound the loads.)

A channel counted as covered must be left out while its covers are still in the filling; so a
channel is accepted only when its covers are binding channels or channels accepted before it (they
leave the filling after it). Channels that cover each other (a NIC link whose routes all go up, and
the spine planes it feeds) are decided by which fills first: that one stays in. The answer is a
boolean per channel; the solver still reports every channel's load.
"""

from __future__ import annotations

import numpy as np

# slack for the bound's own rounding (16 planes of 1/16 add up to the NIC's capacity)
TOLERANCE = 1e-12


def never_binding(lens: np.ndarray, ch: np.ndarray, w: np.ndarray, capacity: np.ndarray,
                  channel_ends: list[tuple[str, str]], numbered=None) -> np.ndarray:
    """Per channel, whether no allocation of rates to the routes (``lens``/``ch``/``w``: each route's
    channels and weights, flat) can load it past its capacity, as the module's note argues.
    ``numbered``: the ends as numbers where they are known (``Router.channel_devices``: worked out
    once on a large fabric), else numbered here."""
    n_ch = len(capacity)
    out = np.zeros(n_ch, dtype=bool)
    if not len(ch) or len(channel_ends) != n_ch:
        return out
    tail, head, n_dev = _numbered(channel_ends) if numbered is None else numbered
    # one entry per (route, channel): a route's weights on a channel summed
    route = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
    key, inv = np.unique(route * n_ch + ch, return_inverse=True)
    w_sum = np.bincount(inv.ravel(), weights=w)
    e_route, e_ch = np.divmod(key, n_ch)
    cap = np.asarray(capacity, dtype=float)
    ok_up, cov_up = _rule(e_route, e_ch, w_sum, tail, head, cap, n_ch, n_dev)    # channels into the tail
    ok_dn, cov_dn = _rule(e_route, e_ch, w_sum, head, tail, cap, n_ch, n_dev)    # channels out of the head
    candidate = ok_up | ok_dn
    # each candidate's covers by the rule it passes (the upstream one first), as (channel, cover) pairs
    pc_up, pe_up = cov_up
    pc_dn, pe_dn = cov_dn
    mine_up = candidate[pc_up] & ok_up[pc_up]
    mine_dn = candidate[pc_dn] & ~ok_up[pc_dn]
    pc = np.concatenate([pc_up[mine_up], pc_dn[mine_dn]])
    pe = np.concatenate([pe_up[mine_up], pe_dn[mine_dn]])
    # how soon a channel fills: its capacity over its heaviest route's weight on it (a NIC link
    # before the 16 spine planes it feeds)
    tight = np.full(n_ch, np.inf)
    np.minimum.at(tight, e_ch, cap[e_ch] / w_sum)
    accepted = np.zeros(n_ch, dtype=bool)
    pending = candidate.copy()
    while pending.any():
        waits = pending[pe]  # a cover still undecided
        blocked = np.bincount(pc[waits], minlength=n_ch) > 0
        now = pending & ~blocked
        if now.any():
            accepted |= now
            pending &= ~now
            continue
        # covers that cover each other (a NIC link all of whose routes go up, and the uplinks it
        # feeds): the channels that fill first stay in, so the others' covers are decided
        worse = np.zeros(n_ch, dtype=bool)  # has an undecided cover that fills sooner
        sooner = waits & (tight[pe] < tight[pc])
        worse[pc[sooner]] = True
        stay = pending & ~worse
        if not stay.any():
            stay = pending
        pending &= ~stay
    out[accepted] = True
    return out


def _numbered(channel_ends) -> tuple[np.ndarray, np.ndarray, int]:
    """Each channel's tail and head as device numbers in order of appearance, and how many numbers.
    Only which ends are the same device matters below."""
    dev: dict[str, int] = {}
    n_ch = len(channel_ends)
    tail = np.fromiter((dev.setdefault(a, len(dev)) for a, _ in channel_ends), dtype=np.int64, count=n_ch)
    head = np.fromiter((dev.setdefault(b, len(dev)) for _, b in channel_ends), dtype=np.int64, count=n_ch)
    return tail, head, max(len(dev), 1)


def _rule(e_route, e_ch, e_w, near, far, cap, n_ch, n_dev):
    """For each channel c, whether every route through it enters ``near[c]`` by some channel whose
    ``far`` end is ``near[c]``, and the bound over those channels fits c's capacity; and the channels
    of each channel's bound as (channel, cover) pairs (``near``/``far`` = tail/head: the
    channels into c's tail; head/tail: out of its head)."""
    n_e = len(e_ch)
    # entries that reach device d on route r (their far end), keyed by (r, d)
    k_in = e_route * n_dev + far[e_ch]
    order = np.argsort(k_in, kind="stable")
    k_sorted = k_in[order]
    want = e_route * n_dev + near[e_ch]
    lo = np.searchsorted(k_sorted, want, side="left")
    hi = np.searchsorted(k_sorted, want, side="right")
    cnt = hi - lo
    # each (route, device)'s weight in, summed group by group (not as differences of a running sum,
    # whose rounding grows with the table)
    group = np.cumsum(np.concatenate([[True], k_sorted[1:] != k_sorted[:-1]])) - 1 if n_e else np.zeros(0, np.int64)
    W_group = np.bincount(group, weights=e_w[order])
    W = np.zeros(n_e)
    has = cnt > 0
    W[has] = W_group[group[lo[has]]]
    # a channel with a route that starts (or ends) at its end: no cover by this rule
    bad = np.zeros(n_ch, dtype=bool)
    bad[e_ch[~has | (W <= 0)]] = True
    i = np.repeat(np.flatnonzero(has), cnt[has])
    within = np.arange(len(i)) - np.repeat(np.cumsum(cnt[has]) - cnt[has], cnt[has])
    j = order[lo[i] + within]
    c, e = e_ch[i], e_ch[j]
    ratio = e_w[i] / W[i]
    pair, pinv = np.unique(c * n_ch + e, return_inverse=True)
    m = np.zeros(len(pair))
    np.maximum.at(m, pinv.ravel(), ratio)
    pc, pe = np.divmod(pair, n_ch)
    bound = np.bincount(pc, weights=m * cap[pe], minlength=n_ch)
    used = np.zeros(n_ch, dtype=bool)
    used[e_ch] = True
    ok = used & ~bad & (bound <= cap * (1 + TOLERANCE))
    return ok, (pc, pe)
