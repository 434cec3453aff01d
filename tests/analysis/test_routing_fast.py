"""Router shortcuts (issues 12/17) give what the plain computation gives.

- Each device's system from one pass over the groups equals ``Topology.system_of``.
- The router's channel tables, built bundle by bundle, are those of building them channel by channel.
- The check that a system is wired like its reference (the channel offset) agrees with checking
  each channel by name, capacity, latency and hop latency.
"""

import numpy as np
import pytest

from dgxstudio.analysis.fabric import Fabric, bundle_key, system_map
from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset, preset_names


@pytest.mark.parametrize("name", preset_names())
def test_system_map_equals_system_of(name):
    topo = load_preset(name)
    assert system_map(topo) == {d: topo.system_of(d) for d in topo.devices}


def test_system_map_follows_nested_groups():
    topo = build_fat_tree(3, "dgx-h100", rail_optimized=True)
    assert system_map(topo) == {d: topo.system_of(d) for d in topo.devices}
    assert any(v is not None for v in system_map(topo).values())


@pytest.mark.parametrize("topo", [build_fat_tree(6, "dgx-h100", rail_optimized=True), build_fat_tree(5),
                                  load_preset("dgx1-v100")], ids=["h100", "dgx1-tree", "dgx1"])
def test_channel_tables_equal_channel_by_channel(topo):
    router = Router(topo)
    fab = router.fabric
    index, ends, caps, lats, links = {}, [], [], [], []
    for key, b in fab.bundles.items():
        for u, v in (key, key[::-1]):
            index[(u, v)] = len(caps)
            caps.append(b.bandwidth)
            ends.append((u, v))
            links.append(tuple(b.links))
    assert router.channel_index == index and router.channel_ends == ends and router.channel_links == links
    assert router.capacity.tolist() == caps
    assert router._channel_latency == [fab.bundles[bundle_key(u, v)].latency_s for u, v in ends]
    cost = {key: 1e9 / b.bandwidth for key, b in fab.bundles.items()}
    assert router._adj_cost.complete() == {u: [(v, cost[bundle_key(u, v)]) for v in vs] for u, vs in fab.adj.items()}


def _plain_offset(router, sid):
    """The offset check channel by channel (as first written)."""
    sig = router._signatures[sid]
    ref = router._reference[sig[:2]]
    mine, theirs = router._internal.get(ref, []), router._internal.get(sid, [])
    if len(mine) != len(theirs):
        return None
    pf, ps = router._signatures[ref][2], sig[2]
    n = len(pf)
    hop = router.fabric.hop_latency
    delta = theirs[0] - mine[0] if mine else 0
    for c in mine:
        u, v = router.channel_ends[c]
        mu, mv = ps + u[n:], ps + v[n:]
        d = router.channel_index.get((mu, mv))
        if (d is None or d - c != delta or router.capacity[d] != router.capacity[c]
                or router._channel_latency[d] != router._channel_latency[c]
                or hop.get(mu) != hop[u] or hop.get(mv) != hop[v]):
            return None
    return delta


@pytest.mark.parametrize("alter", ["none", "latency", "bandwidth", "device"])
def test_channel_offset_equals_the_channel_by_channel_check(alter):
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    third = sorted({topo.system_of(g) for g in gpus})[2]
    inside = sorted((lk for lk in topo.links.values() if lk.type == "NVLink4" and topo.system_of(lk.a) == third),
                    key=lambda lk: lk.id)
    if alter == "latency":
        inside[0].latency_s = 5e-6
    elif alter == "bandwidth":
        inside[1].bandwidth_per_direction_Bps = 1e9
    fab = Fabric(topo)
    if alter == "device":  # one NVSwitch of the third system slower to cross
        switch = next(e for e in (inside[2].a, inside[2].b) if topo.devices[e].kind == "nvswitch")
        fab.hop_latency[switch] += 1e-7
    router = Router(topo, fabric=fab)
    assert router.fabric is fab
    for g in gpus:  # every system's routes, so every system's offset is checked
        router.routes(g, next(h for h in gpus if h != g and topo.system_of(h) == topo.system_of(g)))
    got = dict(router._offsets)
    assert got == {sid: _plain_offset(router, sid) for sid in got}
    inside = {}
    for c, (u, v) in enumerate(router.channel_ends):   # each system's inside channels, channel by channel
        if router._system.get(u) is not None and router._system.get(u) == router._system.get(v):
            inside.setdefault(router._system[u], []).append(c)
    assert router._internal == inside
    assert (got[third] is None) == (alter != "none")
    assert sum(v is not None for v in got.values()) >= 3


# Rail-optimized (one and several scalable units, 3 tiers), oversubscribed, 4 NICs of 8, a DGX-1 tree
# and an irregular hand-altered fabric where shortcuts must fall back.
def _irregular_rings():
    from tests.analysis.test_analysis_speed_same import _irregular
    return _irregular()


RING_FABRICS = [lambda: build_fat_tree(6, "dgx-h100", rail_optimized=True),
                lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
                lambda: build_fat_tree(24, "dgx-h100", rail_optimized=True, oversubscription=2),
                lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
                lambda: build_fat_tree(5, "dgx-a100", nics_per_system=4, tiers=2),  # one leaf under spines
                lambda: build_fat_tree(12),
                _irregular_rings]


def assert_ring_loads_equal_hop_by_hop(topo):
    from dgxstudio.analysis.channels import plan, ring_loads, ring_rates
    gpus = [d.id for d in topo.gpus()]
    fast_router, plain_router = Router(topo), Router(topo)
    p = plan(topo, gpus, fast_router.fabric, None)
    fc, fw = ring_loads(p, fast_router)
    pc, pw = ring_loads(p, plain_router, fast=False)
    assert fc.tolist() == pc.tolist() and fw.tolist() == pw.tolist()
    hc, hw = ring_loads(p, Router(topo), by_hop=True)  # each hop's route as the simulator keeps it
    assert hc.tolist() == pc.tolist() and hw.tolist() == pw.tolist()
    assert ring_rates(p, Router(topo)) == ring_rates(p, plain_router)


@pytest.mark.parametrize("make", RING_FABRICS)
def test_ring_loads_equal_the_routes_hop_by_hop(make):
    assert_ring_loads_equal_hop_by_hop(make())


@pytest.mark.parametrize("make", RING_FABRICS)
def test_switch_routes_reversed_equal_their_own_search(make, monkeypatch):
    topo = make()
    fast, plain = Router(topo), Router(topo)
    monkeypatch.setattr(plain, "_uniform_outside", lambda: False)
    switches = [d for d, k in fast.fabric.kind.items() if k in ("ib_switch", "eth_switch")]
    pairs = [(a, b) for a, b in zip(switches, switches[1:] + switches[:1])][:40]
    pairs += [(switches[0], s) for s in switches[5::7]][:20]
    for a, b in pairs:
        if a == b:
            continue
        for x, y in ((a, b), (b, a)):
            r, q = fast.routes(x, y), plain.routes(x, y)
            assert r.paths == q.paths and r.channels.tolist() == q.channels.tolist()
            assert r.weights.tolist() == q.weights.tolist() and r.latency_s == q.latency_s
    assert fast._uniform_outside() is (make is not RING_FABRICS[5])  # EDR is not a whole number


def test_reversal_is_refused_where_costs_have_no_common_unit():
    topo = build_fat_tree(6, "dgx-h100", rail_optimized=True)
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")
                 and topo.system_of(lk.a) is None and topo.system_of(lk.b) is None), key=lambda lk: lk.id)
    ib[0].bandwidth_per_direction_Bps = 3.3e10 + 0.5
    assert Router(topo)._uniform_outside() is False


@pytest.mark.parametrize("families", [None, {"nvlink"}])
def test_fabric_bundles_and_neighbours_follow_the_graph_order(families):
    """Links merged per pair under one key whichever way they run: the bundles and their order are
    those of ``to_graph``'s edges, each device's neighbours in that edge order, links drawn both ways
    included."""
    from dgxstudio.model.graph import to_graph
    from dgxstudio.model.topology import Link
    topo = build_fat_tree(3, "dgx-a100")
    lk = next(lk for lk in topo.links.values() if lk.type.startswith("NVLink"))
    topo.links["reverse-twin"] = Link("reverse-twin", lk.b, lk.a, lk.type)  # a parallel link drawn the other way
    topo._links_by_device = None
    fab = Fabric(topo, families)
    g = to_graph(topo, families=families)
    edges = [(u, v) for u, v, bw in g.edges(data="bandwidth_per_direction_Bps") if bw > 0]
    assert list(fab.bundles) == [bundle_key(u, v) for u, v in edges]
    adj = {n: [] for n in topo.devices}
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    assert fab.adj == adj
    twin = fab.bundle(lk.a, lk.b)
    assert "reverse-twin" in twin.links and lk.id in twin.links
    assert twin.bandwidth == pytest.approx(g.edges[lk.a, lk.b]["bandwidth_per_direction_Bps"], rel=1e-15)


@pytest.mark.parametrize("make", RING_FABRICS + [lambda: build_fat_tree(256, "dgx-h100", rail_optimized=True),
                                                 lambda: build_fat_tree(96, "dgx-a100")])
def test_two_hop_switch_routes_equal_the_search(make, monkeypatch):
    """Leaves under common spines get their routes without a search; every switch pair that can be
    shown so gets the search's paths, and pairs that cannot (a direct link, longer routes) search."""
    topo = make()
    fast, plain = Router(topo), Router(topo)
    monkeypatch.setattr(plain, "_two_hop", lambda src, dst: None)
    monkeypatch.setattr(plain, "_complete", {})
    monkeypatch.setattr(fast, "_complete", {})
    switches = [d for d, k in fast.fabric.kind.items() if k in ("ib_switch", "eth_switch")]
    pairs = [(a, b) for a, b in zip(switches, switches[1:])][:60] + [(switches[0], s) for s in switches[2::5]][:40]
    shortcut = _same_routes_pair_by_pair(fast, plain, pairs, lambda a, b: fast._two_hop(a, b))
    assert shortcut > 0 or not fast._uniform_outside()


def _same_routes_pair_by_pair(fast, plain, pairs, shortcut) -> int:
    """Each pair's route from both routers (neither reversing an earlier one) is the same; returns
    how many pairs the fast router's ``shortcut(a, b)`` answered."""
    taken = 0
    for a, b in pairs:
        if a == b:
            continue
        fast._complete.clear()
        plain._complete.clear()
        taken += fast._uniform_outside() and shortcut(a, b) is not None
        r, q = fast.routes(a, b), plain.routes(a, b)
        assert r.paths == q.paths and r.channels.tolist() == q.channels.tolist()
        assert r.weights.tolist() == q.weights.tolist() and r.latency_s == q.latency_s
    return taken


def test_an_analysis_shares_one_system_map_and_only_for_its_topology():
    from dgxstudio.analysis.fabric import sharing_system_map
    topo, other = build_fat_tree(2, "dgx-h100"), build_fat_tree(2, "dgx-a100")
    with sharing_system_map(topo):
        assert system_map(topo) is system_map(topo)
        assert system_map(topo) == {d: topo.system_of(d) for d in topo.devices}
        assert system_map(other) is not system_map(other)
    assert system_map(topo) is not system_map(topo)


@pytest.mark.parametrize("make", [lambda: build_fat_tree(512, "dgx-h100", rail_optimized=True),
                                  lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
                                  lambda: build_fat_tree(200)])
def test_switch_routes_from_twins_equal_the_search(make, monkeypatch):
    """Leaves of two pods: the first pair is searched, the others come from it renamed; each equals
    its own search (the DGX-1 tree's EDR costs have no common unit: every pair searched)."""
    topo = make()
    fast, plain = Router(topo), Router(topo)
    for r in (fast, plain):
        monkeypatch.setattr(r, "_two_hop", lambda src, dst: None)
    monkeypatch.setattr(plain, "_twin_paths", lambda src, dst: None)
    switches = [d for d, k in fast.fabric.kind.items() if k in ("ib_switch", "eth_switch")]
    leaves = [d for d in switches if any(fast._system.get(v) for v in fast.fabric.adj[d])]
    pairs = [(a, b) for a in leaves[:6] for b in leaves[-6:] if a != b] + [(leaves[1], leaves[len(leaves) // 2])]
    renamed = _same_routes_pair_by_pair(fast, plain, pairs, lambda a, b: fast._twin_paths(a, b))
    assert renamed > 0 or not fast._uniform_outside()


@pytest.mark.parametrize("make", [RING_FABRICS[1], RING_FABRICS[3], RING_FABRICS[5]])
def test_ring_hops_across_leaves_are_summed_per_leaf_pair_as_via_adds_them(make, monkeypatch):
    """Hops from a GPU through its NIC to another leaf's NIC and GPU: the loads known per leaf pair
    equal ``via``'s own route, channel by channel and weight by weight."""
    from dgxstudio.analysis.channels import plan, ring_directions
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    fast, plain = Router(topo), Router(topo)
    ways = [w for _, _, via in ring_directions(plan(topo, gpus, fast.fabric, None)) if via for w in via if w]
    for way in ways[:4]:  # the GPU legs' shapes searched once, as a ring's first hops do
        fast.routes(way[0], way[1])
        fast.routes(way[2], way[3])
    spread = 0
    for way in ways:
        got = fast._spread_via(way)
        if got is None:
            continue
        spread += 1
        want = plain.via(way)
        assert got[0].tolist() == want.channels.tolist() and got[1].tolist() == want.weights.tolist()
    assert spread > 0


@pytest.mark.parametrize("alter", ["none", "no-builder", "bandwidth"])
def test_template_leg_is_the_route_moved_to_its_system(alter):
    """``template_leg`` (each end's shape key kept per device) answers for a pair inside a system
    exactly when another system's search serves it: the route's channels are the template's moved by
    the offset, its weights the same; None for a system without a builder signature or wired
    otherwise, and for a pair already routed."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    systems = sorted({topo.system_of(d.id) for d in topo.gpus()})
    third = systems[2]
    if alter == "no-builder":
        topo.groups[third].properties.pop("builder", None)
    elif alter == "bandwidth":
        next(lk for lk in sorted(topo.links.values(), key=lambda lk: lk.id)
             if lk.type == "NVLink4" and topo.system_of(lk.a) == third).bandwidth_per_direction_Bps = 1e9
    router, plain = Router(topo), Router(topo)
    by_system = {}
    for d in topo.devices:
        if topo.system_of(d) is not None and topo.devices[d].kind in ("gpu", "nic"):
            by_system.setdefault(topo.system_of(d), []).append(d)
    answered = {sid: 0 for sid in systems}
    for sid in systems:
        members = by_system[sid][:6]
        for a in members:
            for b in members:
                if a == b:
                    continue
                leg = router.template_leg(a, b)
                want = plain.routes(a, b)
                if leg is None:
                    router.routes(a, b)  # (the first system's search: the template for the others)
                    continue
                answered[sid] += 1
                first, delta = leg
                assert (first.channels + delta).tolist() == want.channels.tolist()
                assert first.weights.tolist() == want.weights.tolist()
                assert router.template_leg(a, b) is not None  # asked again: the same
    assert answered[systems[0]] == 0 and answered[systems[1]] > 0 and answered[systems[3]] > 0
    assert (answered[third] == 0) == (alter != "none")
    a, b = by_system[systems[1]][:2]
    router.routes(a, b)
    assert router.template_leg(a, b) is None  # routed: the router's own route serves it
