"""CollNet's least-cost distances between leaves, searched once per class of twins (leaves with the
same neighbours at the same costs: a pod's leaves of every rail) and kept for every rail's call."""

import numpy as np
import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collnet_root, switch_distances

FABRICS = {
    "h100-3-tiers": lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, tiers=3),
    "h100-uneven-3-tiers": lambda: build_fat_tree(37, "dgx-h100", rail_optimized=True, tiers=3, per_leaf=4),
    "a100-oversubscribed": lambda: build_fat_tree(12, "dgx-a100", per_leaf=2, oversubscription=2.0),
}


def _graph(topo, max_paths=64):
    router = Router(topo, max_paths=max_paths)
    assert collnet_root._distances_answer(router)  # (sets the router's whole cost unit)
    return router, switch_distances.OutsideGraph(router)


@pytest.mark.parametrize("name", list(FABRICS))
def test_rows_read_from_a_twin_are_the_searched_rows(name):
    topo = FABRICS[name]()
    _, graph = _graph(topo)
    leaves = [d for d in graph.names if topo.devices[d].name.startswith("Leaf")]
    searched = graph._search(np.array([graph.index[a] for a in leaves], dtype=np.int64))
    # asked in two calls (as two rails would), the second answered from the first's searches
    half = len(leaves) // 2
    first, second = graph.distances(leaves[:half]), graph.distances(leaves[half:])
    for k in (0, 1):
        assert np.array_equal(np.vstack([first[k], second[k]]), searched[k])
    classes = {graph._class(graph.index[a]) for a in leaves}
    assert len(graph._rows) == len(classes) < len(leaves), "not one search per class of twins"
    for a in leaves[::5]:
        for b in leaves[::3]:
            assert graph.cost(a, b) == searched[0][leaves.index(a), graph.index[b]]


@pytest.mark.parametrize("max_paths", [64, 2])
@pytest.mark.parametrize("name", list(FABRICS))
def test_every_rail_on_one_router_reads_the_routes_switches(name, max_paths):
    """Rail after rail on one router (its twin rows and twin pairs' routes kept from the rails
    before), each leaf's switches towards the others are those of the routes asked pair by pair."""
    topo = FABRICS[name]()
    router, _ = _graph(topo, max_paths)
    rails = router._rails()
    systems = [[d for d in g.devices if topo.devices[d].kind == "gpu"] for g in topo.groups.values()
               if g.kind == "system"]
    for k in range(len(systems[0])):
        leaves = collnet_root.Counter(router._uplink(rails[gpus[k]][0]) for gpus in systems)
        got = collnet_root._by_distances(router, topo, leaves, 1)
        assert got == collnet_root._by_routes(Router(topo, max_paths=max_paths), topo, leaves, 1)


@pytest.mark.parametrize("max_paths", [64, 5, 2, 1])
@pytest.mark.parametrize("name", list(FABRICS))
def test_the_sample_read_from_distances_is_the_routers_route(name, max_paths):
    """The devices of the router's route between two leaves (every least-cost path sorted, at most
    max_paths of them evenly spaced), read from the distances without listing the paths."""
    topo = FABRICS[name]()
    router, graph = _graph(topo, max_paths)
    switches = [d for d in graph.names if topo.devices[d].kind in collnet_root.SWITCH_KINDS]
    asked = Router(topo, max_paths=max_paths)
    sampled = 0
    for a in switches[::7]:
        for b in switches[::5]:
            if a == b:
                continue
            route = asked.routes(a, b)
            assert graph.sample(a, b, max_paths) == {d for p in route.paths for d in p}, (a, b)
            sampled += graph._both_rows(b)[1][graph.index[a]] > max_paths
    assert sampled or max_paths == 64, "no pair with more paths than the router keeps"
