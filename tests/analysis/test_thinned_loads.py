"""A route keeps a sample of its tied paths past ``max_paths``, but loads every one of them.

On 2,048 rail-optimized DGX H100 (16 pods, 8 core switches a plane) a route between leaves of two
pods ties over 256 paths; the router kept 64 evenly spaced of the sorted list, which are the same
two core switches of each plane (.1 and .5) for every pair of leaves, so the NVLS tree ran at a
quarter of its bandwidth over 512 systems while the other six cores idled. The same thinning on a
64-system fabric (two scalable units under 8 spines) with ``max_paths`` below 8 shows it: the
route's loads must not depend on how many of its paths it keeps. (Not below 4 in a whole run: a
GPU's traffic to a peer spreads over its 4 NVSwitch planes by weight, a sample of its own.)
"""

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.results import SimOptions
from dgxstudio.sim.run import Simulator


@pytest.fixture(scope="module")
def topo():
    return build_fat_tree(64, system="dgx-h100", rail_optimized=True)


def _loads(route) -> dict[int, float]:
    return dict(zip(route.channels.tolist(), route.weights.tolist()))


def _spines(topo):
    return sorted(d for d in topo.devices if d.startswith("spine"))


def test_the_fabric_is_two_units_under_eight_spines(topo):
    assert len(_spines(topo)) == 8
    assert len(Router(topo).routes("leaf1", "leaf9").paths) == 8


@pytest.mark.parametrize("max_paths", [2, 3, 5])
def test_a_thinned_route_loads_every_spine_evenly(topo, max_paths):
    router = Router(topo, max_paths=max_paths)
    route = router.routes("leaf1", "leaf9")
    assert len(route.paths) == max_paths
    loads = _loads(route)
    up = [loads.get(router.channel_index[("leaf1", s)], 0.0) for s in _spines(topo)]
    down = [loads.get(router.channel_index[(s, "leaf9")], 0.0) for s in _spines(topo)]
    assert up == pytest.approx([1 / 8] * 8) and down == pytest.approx([1 / 8] * 8)
    whole = _loads(Router(topo).routes("leaf1", "leaf9"))
    assert loads == pytest.approx(whole)


@pytest.mark.parametrize("max_paths", [2, 5])
def test_gpu_hops_across_units_load_what_the_whole_route_does(topo, max_paths):
    """The hop NCCL's rings and trees make (GPU, its NIC, the other system's NIC, its GPU), through
    ``routes``, ``via`` and ``via_loads`` (the leaf pair's spread), with and without a sample."""
    whole = Router(topo)
    g0, g1 = "s01.gpu0", "s33.gpu0"
    nic0, nic1 = whole._rails()[g0][0], whole._rails()[g1][0]
    way = [g0, nic0, nic1, g1]
    want = _loads(whole.via(way))
    thin = Router(topo, max_paths=max_paths)
    chans, weights = thin.via_loads(way)  # (before the route is kept: the spread of the leaf pair)
    assert dict(zip(chans.tolist(), weights.tolist())) == pytest.approx(want)
    assert _loads(thin.routes(g0, g1)) == pytest.approx(want)
    assert _loads(thin.via(way)) == pytest.approx(want)
    assert len(thin.via(way).paths) <= max_paths


@pytest.mark.parametrize("algorithm", ["tree", "ring"])
def test_an_all_reduce_does_not_depend_on_the_sample(topo, algorithm):
    options = SimOptions(achievable=True)
    gpus = [d.id for d in topo.gpus()]
    runs = {}
    for max_paths in (64, 4):
        router = Router(topo, True, max_paths=max_paths)
        runs[max_paths] = Simulator(topo, gpus, options, router=router).run("all-reduce", algorithm, 64 * 2**20)
    assert runs[4].time_s == pytest.approx(runs[64].time_s, rel=1e-9)
