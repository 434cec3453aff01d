"""NCCL's chained tree (sim/collectives.py): each node's depth worked out from its chain and its
system's place, against ``_tree``'s walk up the parents, value for value and in the same order
(the order of a level's members is the order of its pattern's pairs)."""

import pytest

from dgxstudio.sim import collectives as C
from dgxstudio.sim.nccl_btree import btree_parent, second_tree_order


def _walked(chains):
    parent = {}
    heads = [c[0] for c in chains]
    for i, chain in enumerate(chains):
        up = btree_parent(len(heads), i)
        parent[chain[0]] = heads[up] if up >= 0 else None
        for k in range(1, len(chain)):
            parent[chain[k]] = chain[k - 1]
    return C._tree(parent)


@pytest.mark.parametrize("systems", [1, 2, 3, 6, 7, 8, 33])
@pytest.mark.parametrize("per_system", [1, 2, 8])
def test_depths_are_the_walk_up_the_parents_in_its_order(systems, per_system):
    chains = [[f"s{i}g{(k * 3 + i) % per_system}" for k in range(per_system)] for i in range(systems)]
    got, want = C.chained_tree(chains), _walked(chains)
    assert got["parent"] == want["parent"]
    assert list(got["depth"].items()) == list(want["depth"].items())


def test_a_gpu_in_two_chains_is_walked():
    chains = [["a", "b"], ["c", "b"], ["d"]]
    got, want = C.chained_tree(chains), _walked(chains)
    assert list(got["depth"].items()) == list(want["depth"].items())
    assert got["depth"]["b"] == 3  # (its last parent, "c", at depth 2: under "d", the root's one child)


def test_the_levels_of_double_trees_over_300_systems():
    """Both trees of 300 systems of 8: every level's members in the walk's order; NCCL's root has one
    child (system 256 in the first tree), the deepest heads are 1 + 8 down (their lowest set bit is
    1, 256's is 2 ** 8) and chains 7 deeper."""
    chains = [[f"s{i}g{k}" for k in range(8)] for i in range(300)]
    for tree in C.double_trees(chains, keep_heads=True):
        want = C._tree(tree["parent"])
        assert list(tree["depth"].items()) == list(want["depth"].items())
        levels = C._levels(tree)
        assert max(levels) == 9 + 7 and len(levels[1]) == 1 + 1  # (one head and the root's chain)


def test_ncclGetBtree_shape_of_14_ranks():
    """trees.cc's illustration of 14 ranks: 0 -> 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13; 2 -> 1, 3 ..."""
    assert [btree_parent(14, r) for r in range(14)] == [-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12]
    assert [btree_parent(4, r) for r in range(4)] == [-1, 2, 0, 2]  # (the root's one child: 2)


@pytest.mark.parametrize("n, root, child, order", [(4, "s3", "s1", [3, 2, 1, 0]), (5, "s1", "s0", [1, 2, 3, 4, 0])])
def test_the_second_tree_mirrors_an_even_count_and_shifts_an_odd_one(n, root, child, order):
    """ncclGetDtreeRoots: the second tree's root is rank n - 1 (even n) or 1 (odd); its one child is
    the mirror of rank 2 (4 ranks: 1) or the shift of rank 4 (5 ranks: 0)."""
    assert second_tree_order(n) == order
    second = C.double_trees([[f"s{i}"] for i in range(n)])[1]
    assert [c for c, p in second["parent"].items() if p is None] == [root]
    assert [c for c, p in second["parent"].items() if p == root] == [child]
