"""A leaf pair's spread over the spines read from a pair of its twins (``Router._twin_spread``).

``Router._leaf_spread`` works out the spread of a pair of leaves from every least-cost path between
them; a pair whose two leaves are twins of an already worked-out pair's (same neighbours at the same
costs, see ``Router._twin_class``) has the same paths with the two ends renamed, when none of those
paths passes through either new end, so its spread is the worked-out one with each channel leaving
the first leaf (or entering the last) renamed. On 2,048 rail-optimized DGX H100 systems 3,300 of the
3,440 leaf pairs a tree's hops cross are read so.

What this module adds to reading them one by one:
- twin classes are numbered (``twin_number``): a class is a tuple of some 32 (neighbour, cost)
  pairs, hashed anew on every look-up of a pair of classes;
- the renamed channels are looked up once per leaf and worked-out pair's order of neighbours
  (``_renamed``), not once per channel and leaf pair;
- a class pair keeps a few worked-out pairs (``MAX_REPS``): a pair that shares an end with the
  first one, or an end of which lies on its paths, is read from another instead of worked out.

Every answer is the same arrays as working the pair out (tests/analysis/test_twin_spreads.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

MAX_REPS = 4  # worked-out leaf pairs kept per pair of twin classes


class Patch(NamedTuple):
    """Where a worked-out spread is renamed: the positions in its first and later channels of those
    that leave its first leaf or enter its last; each such channel once, as (leaves the first leaf,
    its other end) (``ways``); which of them each position and each member of its set is; the set
    of the channels that stay; the ways that leave (positions, their other ends numbered as one
    tuple) and those that enter."""

    at_first: np.ndarray
    at_later: np.ndarray
    ways: list
    in_first: np.ndarray
    in_later: np.ndarray
    in_set: np.ndarray
    stay: set
    leave: np.ndarray
    leave_key: int
    enter: np.ndarray
    enter_key: int


def twin_number(router, node: str) -> int:
    """``router._twin_class(node)`` as a number: equal classes, equal numbers."""
    got = router._twin_nums.get(node)
    if got is None:
        ids = router._twin_ids
        got = router._twin_nums[node] = ids.setdefault(router._twin_class(node), len(ids))
    return got


def add_rep(router, a: str, b: str) -> None:
    """Leaves ``a`` to ``b``, just worked out from every least-cost path, kept to read their
    twins' spreads from (after those kept before it: the first that fits is read)."""
    reps = router._spread_reps.setdefault((twin_number(router, a), twin_number(router, b)), [])
    if len(reps) < MAX_REPS:
        reps.append((a, b))


def twin_spread(router, a: str, b: str) -> tuple | None:
    """The spread of leaves ``a`` to ``b`` read from that of a pair of their twins already worked
    out from every least-cost path (``_twin_paths``: the same paths with the two ends renamed,
    when none passes through ``a`` or ``b``), or None. Sorting and thinning keep the paths' order
    (every path starts and ends alike), so each path's channels are the twins' with the first
    channel leaving ``a`` instead of its twin and the last entering ``b``: the same arrays as
    working the route out, channel for channel."""
    if router.spread != "even" or router._system.get(a) is not None or router._system.get(b) is not None:
        return None
    if not router._uniform_outside():
        return None
    reps = router._spread_reps.get((twin_number(router, a), twin_number(router, b)))
    if reps is None:
        return None
    for rep in reps:
        s0, d0 = rep
        if rep == (a, b) or s0 == b or d0 == a:
            continue
        inner = router._route_inner[rep]
        if a not in inner and b not in inner:
            break
    else:
        return None
    base = router._spreads[rep]
    patch = router._spread_patches.get(rep)
    if patch is None:
        patch = router._spread_patches[rep] = _patch(router, s0, d0, base)
    whole, first, first_w, later, later_w, _ = base
    # each channel leaving s0 now leaves a, each entering d0 enters b; the others stay
    renamed = _renamed(router, patch, a, b)
    new_first, new_later = first.copy(), later.copy()
    new_first[patch.at_first] = renamed[patch.in_first]
    new_later[patch.at_later] = renamed[patch.in_later]
    renamed_set = patch.stay.copy()
    renamed_set.update(renamed[patch.in_set].tolist())
    return whole, new_first, first_w, new_later, later_w, renamed_set


def _renamed(router, patch: Patch, a: str, b: str) -> np.ndarray:
    """The channel of each of ``patch.ways`` renamed: from ``a`` to the way's other end where it
    leaves, from the other end into ``b`` where it enters (each leaf's row looked up once per
    order of other ends)."""
    rows = router._spread_ends
    index = router.channel_index
    out_a = rows.get((True, a, patch.leave_key))
    if out_a is None:
        others = [patch.ways[i][1] for i in patch.leave.tolist()]
        out_a = rows[(True, a, patch.leave_key)] = np.fromiter(
            (index[(a, other)] for other in others), dtype=np.int64, count=len(others))
    in_b = rows.get((False, b, patch.enter_key))
    if in_b is None:
        others = [patch.ways[i][1] for i in patch.enter.tolist()]
        in_b = rows[(False, b, patch.enter_key)] = np.fromiter(
            (index[(other, b)] for other in others), dtype=np.int64, count=len(others))
    renamed = np.empty(len(patch.ways), dtype=np.int64)
    renamed[patch.leave] = out_a
    renamed[patch.enter] = in_b
    return renamed


def _patch(router, s0: str, d0: str, base: tuple) -> Patch:
    """Where ``twin_spread`` renames the spread of ``s0`` to ``d0`` (``Patch``)."""
    ends = router.channel_ends
    _, first, _, later, _, channels = base
    ways: dict[tuple[bool, str], int] = {}

    def moved(cs) -> tuple[np.ndarray, np.ndarray]:
        at, which = [], []
        for i, c in enumerate(cs):
            u, v = ends[c]
            if u == s0 or v == d0:
                at.append(i)
                which.append(ways.setdefault((True, v) if u == s0 else (False, u), len(ways)))
        return np.asarray(at, dtype=np.int64), np.asarray(which, dtype=np.int64)

    at_first, in_first = moved(first.tolist())
    at_later, in_later = moved(later.tolist())
    _, in_set = moved(list(channels))
    stay = {c for c in channels if ends[c][0] != s0 and ends[c][1] != d0}
    listed = list(ways)
    orders = router._spread_orders  # (each order of other ends numbered, leaving and entering apart)
    leave = [i for i, (leaves, _) in enumerate(listed) if leaves]
    enter = [i for i, (leaves, _) in enumerate(listed) if not leaves]
    leave_key = orders.setdefault((True, *(listed[i][1] for i in leave)), len(orders))
    enter_key = orders.setdefault((False, *(listed[i][1] for i in enter)), len(orders))
    return Patch(at_first, at_later, listed, in_first, in_later, in_set, stay,
                 np.asarray(leave, dtype=np.int64), leave_key, np.asarray(enter, dtype=np.int64), enter_key)
