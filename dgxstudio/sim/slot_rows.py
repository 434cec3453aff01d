"""Every slot's pair numbered once, and the pairs asked once, for tree_parts.py and tree_fold.py.

``TreeParts.of`` asks each distinct pair of the trees' patterns once (98,000 of 524,000 slots on
2,048 DGX H100 systems), in the order they first come, among patterns alike in what the engine's
template reads besides the pair; and ``Fold._slot_ends`` numbers every slot's two devices in the
order they first come. Both walked the slots in Python, one with a dict of name pairs per pattern,
the other with a dict of names. Here the names are numbered once (the only walk over the slots) and
the pairs' first slots are found with one sort of their numbers: the same rows, in the same order.
"""

from __future__ import annotations

import numpy as np


def slot_ends(patterns: list) -> np.ndarray:
    """Each slot's source and destination (``patterns``' pairs, pattern after pattern) as device
    numbers, numbered in the order they first come: (slots, 2)."""
    names = [x for p in patterns for pair in p.pairs for x in pair]
    ids = dict.fromkeys(names)  # (numbered in the order they first come)
    for i, x in enumerate(ids):
        ids[x] = i
    return np.fromiter(map(ids.__getitem__, names), dtype=np.int64, count=len(names)).reshape(-1, 2)


def first_slots(ends: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which slots ask their pair (the first slot of each pair within its group; every slot of a
    group -1), and each slot's row: the number of the slot that asks for it among those that ask,
    in slot order. ``ends``: (slots, 2) device numbers; ``group``: each slot's group."""
    n = len(ends)
    asks = np.ones(n, dtype=bool)
    at = np.arange(n, dtype=np.int64)
    alike = np.flatnonzero(group >= 0)
    if len(alike):
        n_dev = int(ends.max()) + 1
        key = (group[alike] * n_dev + ends[alike, 0]) * n_dev + ends[alike, 1]
        order = np.argsort(key, kind="stable")  # (equal keys in slot order: a block's first is its first slot)
        ks = key[order]
        new = np.empty(len(ks), dtype=bool)
        new[:1] = True
        np.not_equal(ks[1:], ks[:-1], out=new[1:])
        first = alike[order][new][np.cumsum(new) - 1]
        at[alike[order]] = first
        asks[alike] = at[alike] == alike
    row = np.cumsum(asks) - 1
    return asks, row[at]
