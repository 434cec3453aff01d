"""``ViaLatency`` gives the latency ``Router.via`` gives, bit for bit, without building the paths.

Each topology is routed by two routers: one answers with ``ViaLatency``, the other with ``via``
(so neither's caches steer the other's answers). The requests are every pair of GPUs across systems
through their NICs (``_rail_waypoints``), same leaf and different leaves, and the test checks that
the shortcut answered them (no ``via`` route was built), so it cannot pass by asking the router.
"""

import itertools

import pytest

from dgxstudio.analysis.ring_segments import HopRoutes
from dgxstudio.analysis.routing import Router
from dgxstudio.analysis.via_latency import ViaLatency
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset

CASES = {
    "h100-superpod": lambda: load_preset("dgx-h100-superpod"),
    "h100-rails-3-tiers": lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, tiers=3),
    "a100-oversubscribed": lambda: build_fat_tree(12, "dgx-a100", per_leaf=2, oversubscription=2.0),
    "dgx1-tree": lambda: build_fat_tree(9, per_leaf=3),
}


def _ways(router, limit=3000):
    gpus = sorted(router._gpus)
    system = router._system
    first = {}
    for g in gpus:  # a few GPUs per system keep the test short; every system takes part
        first.setdefault(system[g], []).append(g)
    chosen = [g for members in first.values() for g in members[:3]]
    ways = []
    for a, b in itertools.permutations(chosen, 2):
        if system[a] != system[b]:
            way = router._rail_waypoints(a, b)
            if way is not None and len(way) == 4:
                ways.append(way)
    return ways[:limit]


@pytest.mark.parametrize("name", list(CASES))
def test_via_latency_is_the_routers_bit_for_bit(name):
    topo = CASES[name]()
    fast, plain = Router(topo), Router(topo)
    ways = _ways(plain)
    assert len(ways) > 50
    latency = ViaLatency(fast)
    got = [latency(w) for w in ways]
    want = [plain.via(w).latency_s for w in ways]
    assert got == want
    assert not any(isinstance(key, tuple) and key and key[0] == "via" for key in fast._cache)
    # different leaves and one leaf shared: both kinds were asked
    leaves = {(fast._uplink(w[1]) == fast._uplink(w[2])) for w in ways}
    assert leaves == {True, False} or name == "dgx1-tree"


def test_a_hop_spread_over_spines_reads_its_latency_without_paths():
    topo = load_preset("dgx-h100-superpod")
    router, plain = Router(topo), Router(topo)
    ways = [w for w in _ways(plain, 400) if plain._uplink(w[1]) != plain._uplink(w[2])]
    hops = HopRoutes.of(router)
    for w in ways:
        route = hops.route(w[0], w[-1], w)
        assert route.latency_s == plain.via(w).latency_s
    assert not any(isinstance(key, tuple) and key and key[0] == "via" for key in router._cache)
