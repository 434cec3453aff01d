"""The analysis shortcuts of issue 12 give the figures the plain computation gives.

- A Fabric looks each link's figures up once per distinct (type, width, count, overrides); a link
  whose override differs from its neighbours' must still get its own figure.
- The rail rings' router may reuse the Fabric the analysis already built; rings, hops and rates are
  those of a router that builds its own, and a Fabric of another kind is never reused.
- A route's latency is the devices' hop latencies plus the links' latencies along its slowest path.
"""

import pytest

from dgxstudio.analysis.fabric import Fabric
from dgxstudio.analysis.rings import _rail_rings
from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree


def plain_bundles(topo, achievable=False):
    """Per device pair: summed per-direction bandwidth and least latency, link by link."""
    out = {}
    for lk in topo.links.values():
        key = tuple(sorted((lk.a, lk.b)))
        bw = topo.link_bandwidth_per_direction_Bps(lk, achievable)
        lat = topo.link_latency_s(lk)
        old = out.get(key)
        out[key] = (bw, lat) if old is None else (old[0] + bw, min(old[1], lat))
    return {k: v for k, v in out.items() if v[0] > 0}


@pytest.mark.parametrize("achievable", [False, True])
def test_fabric_figures_equal_link_by_link_figures_with_overrides(achievable):
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    ib = [lk for lk in topo.links.values() if lk.type.startswith("IB")]
    ib[0].bandwidth_per_direction_Bps = 1.0e9     # same type as its neighbours, own figure
    ib[1].latency_s = 7e-6
    fab = Fabric(topo, achievable=achievable)
    assert set(fab.bundles) == set(plain_bundles(topo, achievable))
    for key, (bw, lat) in plain_bundles(topo, achievable).items():
        assert fab.bundles[key].bandwidth == pytest.approx(bw, rel=1e-12)
        assert fab.bundles[key].latency_s == lat
    k0 = tuple(sorted((ib[0].a, ib[0].b)))
    assert fab.bundles[k0].bandwidth == topo.link_bandwidth_per_direction_Bps(ib[0], achievable) < 2e9 * ib[0].count
    assert fab.bundles[tuple(sorted((ib[1].a, ib[1].b)))].latency_s == 7e-6
    for d in topo.devices:
        assert fab.hop_latency[d] == topo.device_hop_latency_s(d)


@pytest.mark.parametrize("systems, kw", [(6, dict(rail_optimized=True)),
                                         (12, dict(rail_optimized=True, oversubscription=2)),
                                         (5, dict(nics_per_system=4))])
def test_rail_rings_with_the_analysis_fabric_equal_their_own(systems, kw):
    system = "dgx-a100" if "nics_per_system" in kw else "dgx-h100"
    topo = build_fat_tree(systems, system, **kw)
    gpus = [d.id for d in topo.gpus()]
    own = _rail_rings(topo, gpus, achievable=False)
    shared = _rail_rings(topo, gpus, achievable=False, fabric=Fabric(topo))
    assert own is not None and shared is not None
    assert [r.gpus for r in shared.rings] == [r.gpus for r in own.rings]
    assert [r.hops for r in shared.rings] == [r.hops for r in own.rings]
    assert [r.bidir_Bps for r in shared.rings] == [r.bidir_Bps for r in own.rings]


def test_router_never_reuses_a_fabric_of_another_kind():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    for other in (Fabric(topo, achievable=True), Fabric(topo, {"nvlink"}), Fabric(build_fat_tree(2, "dgx-h100"))):
        assert Router(topo, fabric=other).fabric is not other
    same = Fabric(topo)
    assert Router(topo, fabric=same).fabric is same


def test_route_latency_is_the_slowest_paths_hop_and_link_latencies():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    router = Router(topo)
    gpus = [d.id for d in topo.gpus()]
    for src, dst in [(gpus[0], gpus[1]), (gpus[0], gpus[-1]), (gpus[3], gpus[12])]:
        route = router.routes(src, dst)
        want = max(sum(topo.device_hop_latency_s(d) for d in p)
                   + sum(router.fabric.bundle(p[i], p[i + 1]).latency_s for i in range(len(p) - 1))
                   for p in route.paths)
        assert route.latency_s == want


def _same_route(a, b):
    return (a.paths == b.paths and a.channels.tolist() == b.channels.tolist()
            and a.weights.tolist() == b.weights.tolist() and a.latency_s == b.latency_s)


@pytest.mark.parametrize("system, kw", [("dgx-h100", dict(rail_optimized=True)), ("dgx-a100", {}),
                                        ("dgx1-v100", {})])
def test_routes_inside_a_system_equal_routes_built_path_by_path(system, kw, monkeypatch):
    topo = build_fat_tree(5, system, **kw)
    gpus = [d.id for d in topo.gpus()]
    fast = Router(topo)
    slow = Router(topo)
    monkeypatch.setattr(slow, "_channel_offset", lambda first, sid: None)
    pairs = [(a, b) for a in gpus for b in gpus if a != b and topo.system_of(a) == topo.system_of(b)]
    for a, b in pairs:
        assert _same_route(fast.routes(a, b), slow.routes(a, b)), (a, b)
    assert any(v is not None for v in fast._offsets.values())  # the shortcut was taken


def test_a_system_wired_differently_is_routed_path_by_path():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    third = sorted({topo.system_of(g) for g in gpus})[2]
    inside = [lk for lk in topo.links.values() if lk.type == "NVLink4" and topo.system_of(lk.a) == third]
    inside[0].latency_s = 5e-6   # one NVLink of the third system is slower to cross
    router = Router(topo)
    members = [g for g in gpus if topo.system_of(g) == third]
    firsts = [g for g in gpus if topo.system_of(g) != third]
    router.routes(firsts[0], firsts[1])   # the first system's route becomes the template
    for a in members:
        for b in members:
            if a != b:
                router.routes(a, b)
    assert third in router._offsets and router._offsets[third] is None
    fresh = Router(topo)
    for a in members[:3]:
        for b in members:
            if a != b:
                r = router.routes(a, b)
                want = max(sum(topo.device_hop_latency_s(d) for d in p)
                           + sum(fresh.fabric.bundle(p[i], p[i + 1]).latency_s for i in range(len(p) - 1))
                           for p in r.paths)
                assert r.latency_s == want


def _classes_sources(topo, fab):
    """Each system's network NICs, the network nodes and the dead-end NICs, as system_to_system_latency
    finds them."""
    nets = {k for k, b in fab.bundles.items() if b.family in ("infiniband", "ethernet")}
    network = {end for k in nets for end in k}
    nics_of = {}
    for n in network:
        if fab.kind.get(n) == "nic" and topo.system_of(n) is not None:
            nics_of.setdefault(topo.system_of(n), []).append(n)
    ends = {n for n in network if fab.kind.get(n) == "nic" and sum(1 for nb in fab.adj[n] if nb in network) == 1}
    return nics_of, network, ends


def _irregular():
    """A fat tree with one NIC cabled to a second switch (no longer a dead end), one link of zero
    latency and one slower device, so no two systems see quite the same network."""
    from dgxstudio.model.topology import Link
    topo = build_fat_tree(6, "dgx-a100", oversubscription=2)
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    nic = next(e for e in (ib[0].a, ib[0].b) if topo.devices[e].kind == "nic")
    far = next(e for lk in ib[40:] for e in (lk.a, lk.b) if topo.devices[e].kind == "ib_switch")
    topo.links["extra-nic-link"] = Link("extra-nic-link", nic, far, ib[0].type)
    topo._links_by_device = None
    ib[5].latency_s = 0.0
    return topo


# Rail-optimized (several scalable units), oversubscribed, 3-tier and hand-altered fabrics.
NETWORKS = [lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
            lambda: build_fat_tree(24, "dgx-h100", rail_optimized=True, oversubscription=2),
            lambda: build_fat_tree(200),
            lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
            _irregular]


@pytest.mark.parametrize("make", NETWORKS)
def test_network_search_equals_the_plain_search(make):
    from dgxstudio.analysis.paths import _dijkstra, _network_dijkstra
    topo = make()
    fab = Fabric(topo)
    nics_of, network, ends = _classes_sources(topo, fab)
    passable = network - ends
    adj = {u: [(v, fab.bundle(u, v).latency_s, fab.hop_latency[v]) for v in fab.adj[u] if v in passable]
           for u in network}
    for sid, nics in sorted(nics_of.items()):
        sources = sorted(nics)
        extra = {}
        for t in sources:
            if t in ends:
                for sw in fab.adj[t]:
                    if sw in network:
                        extra.setdefault(sw, []).append((t, fab.bundle(sw, t).latency_s, fab.hop_latency[t]))
        want = _dijkstra(fab, sources, allowed=network - (ends - set(sources)))
        assert _network_dijkstra(fab, sources, adj, extra) == want, sid


def _plain_system_latency(topo, fab):
    """The worst and best system-to-system latency, one plain search per system and one NIC at a time
    (the computation before issue 12's shortcuts; every system its own class)."""
    from dgxstudio.analysis.paths import _dijkstra
    nics_of, network, ends = _classes_sources(topo, fab)
    owner = {n: s for s, ns in nics_of.items() for n in ns}
    worst, best = (-1.0, None, 0), float("inf")
    for s in sorted(nics_of):
        sources = sorted(nics_of[s])
        dist, prev = _dijkstra(fab, sources, allowed=network - (ends - set(sources)))
        nearest = {}
        for t in sorted(owner):
            other = owner[t]
            if other == s:
                continue
            if t in dist:
                cand = (dist[t], t)
            elif t in ends:
                sw = next(nb for nb in fab.adj[t] if nb in network)
                if sw not in dist:
                    continue
                cand = (dist[sw] + fab.bundle(sw, t).latency_s + fab.hop_latency[t], t)
                if other not in nearest or cand < nearest[other]:
                    prev[t] = sw
            else:
                continue
            if other not in nearest or cand < nearest[other]:
                nearest[other] = cand
        for other, (d, n) in sorted(nearest.items(), key=lambda item: item[1]):
            best = min(best, d)
            if d > worst[0]:
                hops, cur = 0, n
                while prev[cur] is not None:
                    hops += fab.kind.get(cur) in ("ib_switch", "eth_switch")
                    cur = prev[cur]
                worst = (d, (s, other), hops)
    return worst[0], best, worst[2]


@pytest.mark.parametrize("make", NETWORKS)
def test_system_latency_equals_one_plain_search_per_system(make):
    from dgxstudio.analysis.paths import system_to_system_latency
    topo = make()
    fab = Fabric(topo)
    got = system_to_system_latency(topo, fab=fab)
    assert (got.max_s, got.min_s, got.switch_hops_worst) == _plain_system_latency(topo, fab)


@pytest.mark.parametrize("name", ["dgx-h100", "gb200-nvl72", "dgx1-v100", "pcie-8gpu", "dgx1-fat-tree-124",
                                  "dgx-a100-superpod"])
def test_nvlink_pre_check_never_says_no_when_nvlink_joins_the_gpus(name):
    from dgxstudio.analysis.rings import _connected, _may_join_over_nvlink
    from dgxstudio.model import fileio
    from pathlib import Path
    topo = fileio.load(Path(__file__).resolve().parents[2] / "presets" / f"{name}.dgxs")
    nv = Fabric(topo, {"nvlink"})
    gpus = [d.id for d in topo.gpus()]
    for subset in (gpus, gpus[:2], gpus[:1] + gpus[-1:], gpus[::3]):
        if len(subset) >= 2 and _connected(nv, subset):
            assert _may_join_over_nvlink(topo, subset)
    joined = name in ("dgx-h100", "gb200-nvl72", "dgx1-v100")   # a PCIe server and clusters are not
    assert _may_join_over_nvlink(topo, gpus) is joined   # so a cluster's NVLink Fabric is never built
    assert _connected(nv, gpus) is joined


def test_rail_rings_trace_their_paths_only_when_read_and_then_as_before():
    from dgxstudio.analysis.channels import hop_route, plan, ring_directions
    from dgxstudio.analysis.rings import find_rings
    from dgxstudio.analysis.routing import Router

    topo = build_fat_tree(3, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    result = find_rings(topo, gpus)
    ring = result.rings[0]
    assert "hops" not in ring.__dict__  # nothing traced by analyze
    router = Router(topo)
    order, hops, via = ring_directions(plan(topo, gpus, router.fabric, None))[0]
    assert ring.gpus == list(order)
    assert ring.hops == [list(hop_route(router, order, hops, via, k).paths[0]) for k in range(len(order))]
    assert ring.links and "_trace" not in ring.__dict__
