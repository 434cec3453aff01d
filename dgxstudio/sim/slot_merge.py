"""Slots of one class inside a representative tree, run as one flow standing for all of them.

tree_fold runs one tree per class of trees, each of its flows standing for its class's m trees.
Inside that tree, slots fall into classes too: the same colour refinement (or ``tree_orbits.
coarsened`` on tree 0) gives every slot a class, and the partition it checks exactly is
equitable over all slots, not only across trees. Slots of one class have one role (their
pattern's place in the tree), latency and rate cap, load every class of channels alike, and every
channel of a class carries each class of slots alike; the active flows at any instant are whole
groups, so a class's slots in one group are all active or none, and the partition restricted to
them is still equitable. The progressive filling then keeps every class at one rate (tree_fold's
note), so slots of a class in one group start, move and finish together, and one flow can stand for
them: the class's first slot in the role, its class route's weights times the k slots it stands
for (k m flows in all). On 2,048 DGX H100 systems tree 0's 32,766 slots fall into 4,344 classes, and
the folded run's network solves are about 7 times smaller.

Each slot's end time is its class flow's (``role``'s ``inner``). What can move: a class of k slots
loads a channel class with one weight k m load / size where the run with a flow per slot added k
such weights (the rates are the filling's levels, so the last bits of the sums), and the events
where flows finishing within the engine's tolerance ended one event apart.
"""

from __future__ import annotations

import numpy as np


class SlotMerge:
    """The flows of each representative tree's roles: ``slot_cls`` each slot's class (tree after
    tree, ``per_tree`` slots each; only the representatives' are read), ``role_start`` where each
    role's slots start in a tree."""

    def __init__(self, slot_cls: np.ndarray, per_tree: int, role_start: np.ndarray):
        self.slot_cls, self.per_tree, self.role_start = slot_cls, per_tree, role_start
        self._roles: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def role(self, t: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Tree t's role k: the slots its flows start from (each class's first, ascending, as places
        in the role), how many slots each stands for, and each slot's flow."""
        got = self._roles.get((t, k))
        if got is None:
            a, b = int(self.role_start[k]), int(self.role_start[k + 1])
            cls = self.slot_cls[t * self.per_tree + a:t * self.per_tree + b]
            _, first, inv = np.unique(cls, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")  # (flows in the order of their first slots)
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            count = np.bincount(inv.ravel(), minlength=len(first))[order]
            got = self._roles[(t, k)] = (first[order], count, rank[inv.ravel()])
        return got
