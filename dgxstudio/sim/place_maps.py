"""Maps between trees guessed where the trees share some devices and not others (sim/tree_orbits.py).

CollNet's rails: every rail's tree joins every GPU (its chains run through each system) and its own
rail's leaves (the SHARP tree's first level), so the devices do not fall in domains that one tree
each joins, and ``tree_orbits._DeviceMaps`` refuses them. Here a tree's devices are named by
*places* instead: tree 0's devices, tree t's device in place p the one its transfers have where
tree 0's have p (each tree a renaming of tree 0's, place for place). Tree t's map sends tree s's
device in place p to tree u's device in place p, for the tree u that agrees with what tree t's map
says on the devices tree s shares with tree 0 (tree 0's device in place p goes to tree t's in
place p); every device some tree joins is given one image, the same from every tree that joins it.
On CollNet's rails: GPU i of every system to GPU i + 1, rail k's leaves to rail k + 1's.

Only a guess, as ``_DeviceMaps``'s: ``tree_orbits.orbits`` checks it outright against every slot
and route entry, and any guess this cannot make (a tree sharing nothing with tree 0, or two
images for one device) leaves tree_fold to its colour refinement.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def tree0_places(flat: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
    """The devices' count, tree 0's devices' count (the places), each device's place in tree 0
    (-1 off it) and tree 0's transfers' ends as places, for trees whose transfers' ends are
    ``flat`` (a row a tree)."""
    n_dev = int(flat.max()) + 1
    domain = np.unique(flat[0])
    where = np.full(n_dev, -1, dtype=np.int64)
    where[domain] = np.arange(len(domain))
    return n_dev, len(domain), where, where[flat[0]]


def renaming(row: np.ndarray, place0: np.ndarray, n_p: int) -> np.ndarray | None:
    """A tree's device in each place (its transfers' ends ``row`` set against tree 0's, ``place0``),
    or None where one place would hold two devices."""
    base = np.full(n_p, -1, dtype=np.int64)
    base[place0] = row
    return base if (base[place0] == row).all() else None


@dataclass
class PlaceMaps:
    """Each tree's device in each place (``base``, trees x places) and each device's place in
    each tree (``inv``, trees x devices, -1 where the tree does not join it)."""

    base: np.ndarray
    inv: np.ndarray

    @classmethod
    def of(cls, flat: np.ndarray) -> "PlaceMaps | None":
        """The places of the trees whose transfers' ends are ``flat`` (a row a tree), or None where
        a tree is not a renaming of tree 0's devices, one to one, place for place."""
        n_trees = len(flat)
        n_dev, n_p, _where, place0 = tree0_places(flat)
        base = np.full((n_trees, n_p), -1, dtype=np.int64)
        inv = np.full((n_trees, n_dev), -1, dtype=np.int64)
        for t, row in enumerate(flat):
            named = renaming(row, place0, n_p)
            if named is None or len(np.unique(named)) != n_p:
                return None  # two devices in one place, or one device in two
            base[t] = named
            inv[t, named] = np.arange(n_p)
        return cls(base, inv)

    def generator(self, t: int) -> np.ndarray | None:
        """Tree t's guessed map (device -> device, -1 where no tree joins it), or None."""
        base, inv = self.base, self.inv
        dev = np.full(inv.shape[1], -1, dtype=np.int64)
        for s in range(len(base)):
            # the devices tree s shares with tree 0, and where tree t's map sends them
            shared = np.flatnonzero((inv[s] >= 0) & (inv[0] >= 0))
            if not len(shared):
                return None
            want = base[t, inv[0, shared]]
            fits = np.flatnonzero((base[:, inv[s, shared]] == want).all(axis=1))
            if not len(fits):
                return None
            img = base[int(fits[0])]
            known = dev[base[s]]
            if not ((known < 0) | (known == img)).all():
                return None  # one device, two images
            dev[base[s]] = img
        return dev
