"""The route search's pruned queue (``SwitchRoutes._dag``) gives the plain search's predecessor map,
key for key and list for list, in the same order (issue 16: the 59 MB file's cross-pod searches)."""

import random

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.topology import Link


def _three_tiers():
    return build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3)


def _uneven_links():
    """Three tiers where a few switch links run at other rates: one at half (other paths win), one
    within the search's tie tolerance of the rest (a tie kept), one a hair outside it."""
    topo = _three_tiers()
    router = Router(topo)
    up = sorted((lk for lk in topo.links.values() if router._system.get(lk.a) is None
                 and router._system.get(lk.b) is None), key=lambda lk: lk.id)
    for k, factor in ((3, 0.5), (40, 1 + 1e-11), (77, 1 + 1e-7), (120, 2.0)):
        lk = up[k]
        lk.bandwidth_per_direction_Bps = topo.link_bandwidth_per_direction_Bps(lk) / lk.count * factor
    return topo


def _cross_links(seed):
    """Two tiers with extra switch-to-switch links of a few rates (ties and shortcuts): a first
    path is found early and cheaper ones later, so the pruned queue has work to get wrong."""
    def make():
        topo = build_fat_tree(24, "dgx-a100")
        router = Router(topo)
        switches = sorted(d for d, k in router.fabric.kind.items() if k in ("ib_switch", "eth_switch"))
        kind = next(lk.type for lk in topo.links.values() if lk.a in switches and lk.b in switches)
        rnd = random.Random(seed)
        for k in range(40):
            a, b = rnd.sample(switches, 2)
            topo.add_link(Link(f"extra{k}", a, b, kind, bandwidth_per_direction_Bps=rnd.choice((5e9, 1e10, 2.5e10, 1e11))))
        return topo
    return make


@pytest.mark.parametrize("make", [_three_tiers, _uneven_links, _cross_links(1), _cross_links(2),
                                  lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
                                  lambda: build_fat_tree(24, "dgx-a100")])
def test_pruned_search_equals_the_plain_search(make):
    topo = make()
    router = Router(topo)
    kind = router.fabric.kind
    switches = [d for d, k in kind.items() if k in ("ib_switch", "eth_switch")]
    nics = [d for d, k in kind.items() if k == "nic"]
    gpus = [d.id for d in topo.gpus()]
    rnd = random.Random(16)
    pairs = ([tuple(rnd.sample(switches, 2)) for _ in range(40)] + [tuple(rnd.sample(nics, 2)) for _ in range(15)]
             + [tuple(rnd.sample(gpus, 2)) for _ in range(10)])
    searched = 0
    for src, dst in pairs:
        plain = router._dag(src, dst, prune=False)
        pruned = router._dag(src, dst)
        assert (None if plain is None else list(plain.items())) == (None if pruned is None else list(pruned.items())), (src, dst)
        searched += plain is not None
    assert searched > 50
