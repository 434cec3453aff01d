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
tree at 4/3 of NCCL's network bound."""

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
