"""The simulator's set-up follows structure (issue 17) and gives what the general path gives, exactly.

- Ring hops read from templates of systems wired alike (``ring_segments.HopRoutes``, ``LazyRoute``)
  give the engine the same route ids, channels, weights, latencies and paths as asking the router
  hop by hop, hence the same simulated time, busbw and bottlenecks (compared with ``==``), also on a
  cluster with one system changed by hand, where that system's hops are not read from a template.
- Hierarchical's ring across systems, asked without waypoints, is read as the via hop through each
  GPU's own NIC, with even or hashed spreading and with PXN (asked of the router) alike.
- A ``LazyRoute`` and a route the router builds for the same hop share one route id.
- The components' shapes worked out all at once equal those worked out component by component, and a
  second run of one Simulator with the same routes reuses them.
- NVLink counts of every device from one pass over the links equal ``nvlinks_per_gpu``.
"""

import numpy as np
import pytest

from dgxstudio.analysis import ring_segments
from dgxstudio.analysis.routing import LazyRoute
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.engine import Engine, Pattern
from dgxstudio.sim.rates import RouteTable, _Shapes
from dgxstudio.sim.run import SimOptions, Simulator

from ..analysis.test_analyze_structure import ALTERATIONS, _odd_system_cluster


def _general_hops(monkeypatch):
    """Every ring hop asked of the router (no template read by ``HopRoutes``)."""
    monkeypatch.setattr(ring_segments.HopRoutes, "_route", lambda self, src, dst, way: None)


def _summary(result):
    sim = result.sim
    return (result.time_s, result.busbw_Bps, result.bound_busbw_Bps, result.protocol, sim.events,
            sim.bottlenecks(), sim.channel_bytes.tolist(),
            [(r.channels.tolist(), r.weights.tolist(), r.latency_s, r.paths) for r in sim.routes],
            [g.pattern._template["route"].tolist() + g.pattern._template["latency"].tolist()
             for g in result.schedule.groups if g.pattern is not None and g.pattern.pairs][:64],
            sim.transfers(0), sim.transfers(len(result.schedule.groups) // 2))


def _run(topo, algorithm, size, protocol="auto", **options):
    gpus = [d.id for d in topo.gpus()]
    return Simulator(topo, gpus, SimOptions(achievable=True, protocol=protocol, **options)).run("all-reduce", algorithm,
                                                                                                size)


@pytest.mark.parametrize("alter", ALTERATIONS)
@pytest.mark.parametrize("algorithm,size,protocol", [("ring", 2**24, "auto"), ("ring", 2**16, "ll"),
                                                     ("hierarchical", 2**22, "auto")])
def test_ring_hops_from_templates_equal_the_router_hop_by_hop(alter, algorithm, size, protocol, monkeypatch):
    topo, odd = _odd_system_cluster(alter)
    fast = _run(topo, algorithm, size, protocol)
    lazy = [r for r in fast.sim.routes if isinstance(r, LazyRoute)]
    if algorithm == "ring":
        assert len(lazy) > len(fast.sim.routes) / 2  # the shortcut was taken for most hops
    # the odd system is never read from another system's template: its hops inside were routed on their own
    inside_odd = [r for r in lazy if topo.system_of(r.ends[0]) == odd == topo.system_of(r.ends[1])]
    assert not inside_odd if alter != "none" else (algorithm != "ring" or inside_odd)
    summary = _summary(fast)
    topo, _ = _odd_system_cluster(alter)
    _general_hops(monkeypatch)
    plain = _run(topo, algorithm, size, protocol)
    assert not any(isinstance(r, LazyRoute) for r in plain.sim.routes)
    assert _summary(plain) == summary


@pytest.mark.parametrize("algorithm", ["ring", "hierarchical"])
@pytest.mark.parametrize("options", [{"spread": "hash"}, {"pxn": True}, {}], ids=["hash", "pxn", "even"])
def test_ring_hops_with_hashed_routes_or_pxn_equal_the_router_hop_by_hop(options, algorithm, monkeypatch):
    topo = build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8)  # hops between leaves, over spines
    fast = _run(topo, algorithm, 2**24, **options)
    lazy = [r for r in fast.sim.routes if isinstance(r, LazyRoute)]
    assert lazy
    if algorithm == "hierarchical" and not options.get("pxn"):
        # its ring across systems, asked without waypoints, read as the via hops of the GPUs' own NICs
        across = [r for r in lazy if topo.system_of(r.ends[0]) != topo.system_of(r.ends[1])]
        assert len(across) == 40
    summary = _summary(fast)
    _general_hops(monkeypatch)
    assert _summary(_run(build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8), algorithm, 2**24,
                         **options)) == summary


def test_a_lazy_route_and_the_routers_route_of_the_same_hop_share_an_id():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sim.plan_bound()  # the templates exist
    plan = sim.channel_plan()
    order, via = plan.rings[0], plan.via[0]
    first_system = topo.system_of(plan.systems[0][0])  # (its hops were searched, not read from a template)
    k = next(i for i in range(1, len(order)) if via[i] is not None and topo.system_of(order[i]) != first_system)
    way = via[k]
    engine = Engine(sim.router)
    lazy_pattern = Pattern([(order[k], order[(k + 1) % len(order)])], via=[way])
    rid = engine.template(lazy_pattern)["route"][0]
    assert isinstance(engine.routes[rid], LazyRoute)
    path = sim.router.via(way).paths
    assert len(path) == 1
    pinned = Pattern([(order[k], order[(k + 1) % len(order)])], paths=[list(path[0])])  # a fresh Route, same path
    assert engine.template(pinned)["route"][0] == rid
    other = Pattern([(order[k], order[(k + 1) % len(order)])], paths=[list(path[0])], cap_Bps=1e9)
    assert engine.template(other)["route"][0] != rid  # another cap, another id
    assert engine.routes[rid].paths == path and engine.routes[rid].latency_s == sim.router.via(way).latency_s


def _shapes_one_by_one(table, used, capacity, route_cap, n_channels, decompose):
    """The components' local channels and classes worked out one component at a time (the reference)."""
    ref = _Shapes(table, used, capacity, route_cap, n_channels, decompose)
    comp_ch, ch_local, classes, comp_class = [], np.zeros(n_channels, dtype=np.int64), {}, []
    for c in range(ref.n_comp):
        r = ref.by_comp[ref.bounds[c]:ref.bounds[c + 1]]
        if not len(r):
            comp_ch.append(np.zeros(0, np.int64))
            comp_class.append(classes.setdefault(b"empty", len(classes)))
            continue
        lens, ch, w = table.gather(r)
        uniq, first, inv = np.unique(ch, return_index=True, return_inverse=True)
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
        chans = np.empty(len(uniq), dtype=np.int64)
        chans[rank] = uniq
        comp_ch.append(chans)
        ch_local[chans] = np.arange(len(chans))
        desc = [lens.astype(np.int64).tobytes(), rank[inv].astype(np.int64).tobytes(), np.asarray(w, float).tobytes(),
                np.asarray(capacity[chans], float).tobytes()]
        if route_cap is not None:
            desc.append(np.asarray(route_cap[r], float).tobytes())
        comp_class.append(classes.setdefault(b"|".join(desc), len(classes)))
    return ref, comp_ch, ch_local, comp_class, len(classes)


@pytest.mark.parametrize("algorithm", ["ring", "tree", "hierarchical"])
@pytest.mark.parametrize("decompose", [True, False])
def test_component_shapes_at_once_equal_one_by_one(algorithm, decompose):
    topo, _ = _odd_system_cluster("bandwidth")
    result = _run(topo, algorithm, 2**22)
    engine_routes = result.sim.routes
    table = RouteTable([r.channels for r in engine_routes] + [np.zeros(0, np.int64)],  # and a route with no channel
                       [r.weights for r in engine_routes] + [np.zeros(0)])
    used = np.arange(len(engine_routes) + 1)[::2]
    if len(engine_routes) % 2 == 1:
        used = np.append(used[:-1], len(engine_routes))
    capacity = np.asarray(result.sim.capacity, dtype=float)
    caps = np.linspace(1e9, 2e9, len(engine_routes) + 1)
    for route_cap in (None, caps):
        ref, comp_ch, ch_local, comp_class, n_classes = _shapes_one_by_one(table, used, capacity, route_cap,
                                                                           len(capacity), decompose)
        assert len(ref.comp_ch) == len(comp_ch) and all(a.tolist() == b.tolist() for a, b in zip(ref.comp_ch, comp_ch))
        assert ref.ch_local.tolist() == ch_local.tolist()
        assert ref.comp_class.tolist() == comp_class and ref.n_classes == n_classes
    empty = _Shapes(table, np.zeros(0, np.int64), capacity, None, len(capacity), decompose)
    assert empty.n_comp == 1 and empty.comp_class.tolist() == [0] and len(empty.comp_ch[0]) == 0


def test_a_second_run_with_the_same_routes_reuses_the_shapes():
    topo = build_fat_tree(6, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    sim = Simulator(topo, gpus, SimOptions(achievable=True, protocol="simple"))
    first = sim.run("all-reduce", "ring", 2**26)
    kept = dict(sim.router._shapes_kept)
    second = sim.run("all-reduce", "ring", 2**27)
    assert sim.router._shapes_kept == kept  # the same object, found again
    fresh = Simulator(topo, gpus, SimOptions(achievable=True, protocol="simple")).run("all-reduce", "ring", 2**27)
    assert (second.time_s, second.sim.bottlenecks()) == (fresh.time_s, fresh.sim.bottlenecks())
    assert first.time_s != second.time_s
    sim.run("all-reduce", "tree", 2**26)  # other routes: another shape
    assert len(sim.router._shapes_kept) == 2 and set(kept) <= set(sim.router._shapes_kept)


@pytest.mark.parametrize("alter", ["none", "missing-link", "extra-link"])
def test_nvlink_counts_in_one_pass_equal_per_device(alter):
    from dgxstudio.analysis.channels import nvlink_counts, nvlinks_per_gpu

    topo, _ = _odd_system_cluster(alter)
    counts = nvlink_counts(topo)
    assert {d: counts.get(d, 0) for d in topo.devices} == {d: nvlinks_per_gpu(topo, d) for d in topo.devices}


@pytest.mark.parametrize("alter", ["none", "missing-link"])
def test_the_bound_without_a_ring_next_equals_the_ring_hop_by_hop(alter):
    """A run that is not a ring (hierarchical, tree) and a result's bound read the ring loads from
    templates all at once; a ring run hop by hop from the routes its engine then uses: one number."""
    topo, _ = _odd_system_cluster(alter)
    gpus = [d.id for d in topo.gpus()]
    hier = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "hierarchical", 2**22)
    tree = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "tree", 2**22)
    ring = Simulator(topo, gpus, SimOptions(achievable=True))
    hops = ring.plan_bound(for_ring=True)
    assert len(ring_segments.HopRoutes.of(ring.router)._known) >= 12 * 8 * 2  # read hop by hop
    assert hier.bound_busbw_Bps == tree.bound_busbw_Bps == ring.bound_busbw("all-reduce")
    assert hops == Simulator(topo, gpus, SimOptions(achievable=True)).plan_bound(for_ring=False)
