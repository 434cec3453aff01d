"""NCCL's double binary tree over the systems (NVIDIA/nccl src/graph/trees.cc, ncclGetBtree,
ncclGetDtree and ncclGetDtreeRoots, https://github.com/NVIDIA/nccl/blob/master/src/graph/trees.cc;
src/graph/connect.cc calls ncclGetDtree with the node count and the node's index, so the ranks here
are systems, each system's chain hanging from its place; read at NVIDIA/nccl 18a07ee, its 14-rank
illustration is a test of ``btree_parent``): the first tree puts
rank 0 at the root with a single child (the highest power of two below the count), and every other
rank's parent comes from its lowest set bit (xx01[0] -> xx10[0], or xx00[0] when xx10[0] is out of
bounds; xx11[0] -> xx10[0]), so that leaves and inner nodes alternate; the second tree is its
mirror (rank r plays rank n - 1 - r) for an even count, or the first shifted by one (rank r plays
r - 1) for an odd one. So no rank is inside both trees, and the root's one child makes an inner
rank send (and receive) four halves' worth: up to its parent, down to two children, and up once
more as a leaf of the other tree. A heap layout (node i under (i - 1) // 2, two children at the
root) did the same except on four systems, where no rank passed three: 4 DGX H100 ran their NVLS
tree at 4/3 of NCCL's network bound.

What the shift costs a run (measured on 3 and 5 rail-optimized DGX H100, 1 GiB; issue #17). The
mirror is its own inverse, so on systems wired alike it swaps the two trees and tree_fold.py runs
one tree for both. No map of the systems swaps a tree and its shift (none on 3, 5, 7 or 9 systems;
the shift itself sends the second tree to a third), so an odd count runs both trees, and they do not
keep time: each piece of the second tree ends a fixed offset after the first's (-0.081 of the period
on 3 systems, +0.149 on 5), an offset the run reaches geometrically (its error shrinks about 4x per
piece on 3 systems, 2x on 5) and, in floating point, exactly after about 27 pieces (3) or 40 (5).
The steady shortcut (steady.py) skips only a state that repeats to 1e-12 of each flow, and finds it
within a period of that point (at 1.03 ms of simulated time on 3 systems, 1.89 ms on 5): the NVLS
tree's 1 GiB takes 732 events on 3 systems and 1,470 on 5 (176 and 162 with the folded heap pair),
the tree's 1,541 and 1,780 (719 and 874: its 16-piece lanes end before the offset settles, and the
two trees' pieces end at different times, twice the events). No earlier skip can be exact: until
then the state is not its own image one period on."""

from __future__ import annotations


def btree_parent(n: int, rank: int) -> int:
    """The parent of ``rank`` in ncclGetBtree's tree of ``n`` ranks (-1 at the root, rank 0)."""
    if rank == 0:
        return -1
    bit = 1
    while bit < n and not bit & rank:
        bit <<= 1
    up = (rank ^ bit) | (bit << 1)
    return up if up < n else rank ^ bit


def second_tree_order(n: int) -> list[int]:
    """For each position of the second tree, the rank there (ncclGetDtree): the mirror for an even
    ``n`` (position k holds rank n - 1 - k), the shift by one for an odd one (position k, rank k + 1)."""
    return [n - 1 - k for k in range(n)] if n % 2 == 0 else [(k + 1) % n for k in range(n)]
