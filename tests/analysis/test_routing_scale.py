"""Routes found from both ends at once equal every least-cost path of a plain search (issue 17)."""

import random

import networkx as nx
import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree


def reference_paths(router, src, dst):
    """All least-cost paths through non-GPU devices of the two end systems or of no system."""
    ends = {router._system[src], router._system[dst]}
    g = nx.Graph()
    for u, nbrs in router._adj_cost.complete().items():
        for v, cost in nbrs:
            g.add_edge(u, v, weight=round(cost, 6))
    keep = [n for n in g if (router._system[n] is None or router._system[n] in ends)
            and (n not in router._gpus or n in (src, dst))]
    return sorted(nx.all_shortest_paths(g.subgraph(keep), src, dst, weight="weight"))


@pytest.mark.parametrize("system, rail", [("dgx-a100", False), ("dgx-h100", True)])
def test_bidirectional_routes_equal_all_least_cost_paths(system, rail):
    topo = build_fat_tree(16, system=system, rail_optimized=rail)
    router = Router(topo, max_paths=10**6)
    nics = [d.id for d in topo.devices.values() if d.kind == "nic"]
    gpus = [d.id for d in topo.gpus()]
    rnd = random.Random(7)
    pairs = [tuple(rnd.sample(nics, 2)) for _ in range(15)] + [tuple(rnd.sample(gpus, 2)) for _ in range(5)]
    for src, dst in pairs:
        if router._nvlink_paths(src, dst) is not None:
            continue
        got = router._enumerate(router._dag(src, dst), src, dst)
        assert [list(p) for p in got] == [list(p) for p in reference_paths(router, src, dst)], (src, dst)
