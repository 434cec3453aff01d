"""NCCL's chained tree (sim/collectives.py): each node's depth worked out from its chain and its
system's place, against ``_tree``'s walk up the parents, value for value and in the same order
(the order of a level's members is the order of its pattern's pairs)."""

import pytest

from dgxstudio.sim import collectives as C


def _walked(chains):
    parent = {}
    heads = [c[0] for c in chains]
    for i, chain in enumerate(chains):
        parent[chain[0]] = heads[(i - 1) // 2] if i > 0 else None
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
    assert got["depth"]["b"] == 2  # (its last parent, "c", at depth 1)


def test_the_levels_of_double_trees_over_300_systems():
    """Both trees of 300 systems of 8: every level's members in the walk's order, heads as deep as
    ``floor(log2(i + 1))`` and chains 7 deeper."""
    chains = [[f"s{i}g{k}" for k in range(8)] for i in range(300)]
    for tree in C.double_trees(chains, keep_heads=True):
        want = C._tree(tree["parent"])
        assert list(tree["depth"].items()) == list(want["depth"].items())
        levels = C._levels(tree)
        assert max(levels) == 8 + 7 and len(levels[1]) == 2 + 1  # (heads 1, 2 and the root's chain)
