"""Leaf pairs' spreads read from their twins' (analysis/twin_spreads.py): the same arrays as working
each pair out, whichever worked-out pair they are read from, in any order of asking."""

import random

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.analysis.twin_spreads import twin_number, twin_spread
from dgxstudio.model.fabrics import build_fat_tree


def _h100():
    """40 rail-optimized DGX H100 systems: every leaf a twin of every other."""
    return build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8)


def _three_tiers():
    """60 DGX A100 on three tiers: leaves twins within their pod, spreads through the cores."""
    return build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3)


def _routers(make=_h100):
    """Two routers of one topology: one reading spreads from twins, one working every pair out."""
    topo = make()
    twins, own = Router(topo), Router(topo)
    own._twin_spread = lambda a, b: None
    leaves = sorted(d for d in twins.fabric.adj if d.startswith("leaf"))
    return twins, own, leaves


def _same(x: tuple, y: tuple) -> bool:
    return x[0] == y[0] and x[5] == y[5] and all(x[i].tolist() == y[i].tolist() for i in (1, 2, 3, 4))


def test_a_pair_sharing_an_end_with_the_first_worked_out_is_read_from_another():
    twins, own, leaves = _routers()
    l1, l2, l3 = leaves[:3]
    assert len({twin_number(twins, x) for x in leaves}) == 1  # (one class: every leaf under every spine)
    twins._leaf_spread(l1, l2)  # worked out: the class pair's first
    twins._leaf_spread(l3, l1)  # ends at l1, where the first starts: worked out too
    # l2 to l1 shares both ends with the first; the second (l3 to l1) fits
    got = twin_spread(twins, l2, l1)
    assert got is not None
    assert _same(got, own._leaf_spread(l2, l1))


@pytest.mark.parametrize("make", [_h100, _three_tiers])
def test_every_leaf_pair_read_from_twins_in_any_order_is_its_own_spread(make):
    twins, own, leaves = _routers(make)
    pairs = [(a, b) for a in leaves[:12] for b in leaves[:12] if a != b]
    random.Random(7).shuffle(pairs)
    read = 0
    for a, b in pairs:
        read += twin_spread(twins, a, b) is not None
        assert _same(twins._leaf_spread(a, b), own._leaf_spread(a, b)), (a, b)
    # all but a few read from twins (the first of each pair of classes, and pairs that meet every
    # kept one at an end)
    assert read >= len(pairs) // 2


def test_twin_numbers_follow_the_twin_classes():
    router = Router(_three_tiers())
    router._uniform_outside()
    switches = sorted(d for d in router.fabric.adj if router._system.get(d) is None and d not in router._gpus)
    for a in switches[::7]:
        for b in switches[::5]:
            assert (twin_number(router, a) == twin_number(router, b)) == (router._twin_class(a) == router._twin_class(b))


def test_renamed_channels_follow_each_worked_out_pairs_own_order_of_neighbours():
    """A leaf's renamed channels are kept per order of the other ends: a worked-out pair that lists
    the same neighbours in another order gets them in its own order."""
    from dgxstudio.analysis import twin_spreads

    twins, _, leaves = _routers()
    l1, l2, l3, l4 = leaves[:4]
    twins._leaf_spread(l1, l2)
    assert twin_spread(twins, l3, l4) is not None
    patch = twins._spread_patches[(l1, l2)]
    # the same ways with the leaving ones listed backwards: another order, numbered apart
    leave = patch.leave.tolist()
    ways = list(patch.ways)
    for i, j in zip(leave, leave[::-1]):
        ways[i] = patch.ways[j]
    key = twins._spread_orders.setdefault((True, *(ways[i][1] for i in leave)), len(twins._spread_orders))
    turned = patch._replace(ways=ways, leave_key=key)
    index = twins.channel_index
    for p in (patch, turned, patch):
        got = twin_spreads._renamed(twins, p, l3, l4)
        assert got.tolist() == [index[(l3, o)] if out else index[(o, l4)] for out, o in p.ways]
