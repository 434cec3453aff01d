"""Parameter server, single ring and the engine's shapes at 16,384 GPUs (issue 17) give what the plain
path gives, exactly.

- A hop through two NICs whose last (or first) leg is a route the router already keeps (the server's
  own NIC to its GPU, asked by every worker's hop) is joined by ``via_loads``' fast paths from that
  route: the same channels and weights as ``via`` joining every path, and the same simulation as
  when such a leg sends the hop down the path-by-path join.
- Single ring's rail rings are worked out once, with the simulator's router, its channel plan and its
  ring rates, and only the ring it runs is traced: the same rings, rates, result and bound as the
  rings worked out with peak figures first, then again with achievable ones on routers of their own.
- ``shapes_of`` keys a run's routes by their own arrays: equal arrays in other objects find the kept
  shapes, one weight changed does not.
"""

import collections

import numpy as np

from dgxstudio.analysis import rings as rings_mod
from dgxstudio.analysis import routing_loads
from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import run as run_mod
from dgxstudio.sim import symmetry
from dgxstudio.sim.rates import RouteTable, shapes_of
from dgxstudio.sim.run import SimOptions, Simulator

from .test_engine_templates import _summary


def _cluster(n: int = 8):
    topo = build_fat_tree(n, "dgx-h100", rail_optimized=True)
    return topo, [d.id for d in topo.gpus()]


def _server_ways(router: Router, gpus: list[str]) -> list[list[str]]:
    """Every worker's hop to the first GPU and back, as the router forces them through the NICs."""
    server = gpus[0]
    ways = []
    for g in gpus[1:]:
        for way in (router._rail_waypoints(g, server), router._rail_waypoints(server, g)):
            if way is not None:
                ways.append(way)
    return ways


def test_hops_with_a_kept_leg_equal_every_path_joined():
    topo, gpus = _cluster()
    fast = Router(topo, achievable=True)
    taken = collections.Counter()
    for name in ("_single_path_via", "_spread_via"):
        orig = getattr(fast, name)

        def counted(way, orig=orig, name=name):
            out = orig(way)
            taken[name] += out is not None
            return out
        setattr(fast, name, counted)
    plain = Router(topo, achievable=True)
    ways = _server_ways(fast, gpus)
    kept = 0
    for way in ways:
        # the hops the engine asks, in its order: the server's legs are kept by the router after the first
        kept += (way[0], way[1]) in fast._cache or (way[2], way[3]) in fast._cache
        chans, weights = fast.via_loads(way)
        whole = plain.via(way)
        assert (chans.tolist(), weights.tolist()) == (whole.channels.tolist(), whole.weights.tolist()), way
    assert kept > len(ways) / 3
    # both fast paths served hops with a kept leg (a leaf shared with the server's NIC, and not)
    assert taken["_single_path_via"] >= 8 and taken["_spread_via"] > len(ways) / 3


def test_parameter_server_with_kept_legs_equals_the_path_by_path_join(monkeypatch):
    # every worker's hop asked of the router, as before workers ran by symmetry class
    monkeypatch.setattr(symmetry, "pattern_classes", lambda router, pairs: None)
    topo, gpus = _cluster(6)
    fast = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "parameter-server", 2**24)
    summary = _summary(fast)
    # a kept leg sends the hop down the path-by-path join, as before
    monkeypatch.setattr(routing_loads.TemplateLoads, "_leg_loads", routing_loads.TemplateLoads.channel_loads)
    topo, gpus = _cluster(6)
    plain = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "parameter-server", 2**24)
    assert _summary(plain) == summary


def _plain_rings(topo, gpus, achievable=False, **_):
    """``find_rings`` as it was: peak rings first, then (rail rings) again with achievable figures,
    each on a router of its own."""
    result = rings_mod._find_rings(topo, gpus, 16, 3.0)
    if achievable and result.rings and result.method == rings_mod.RAIL_RINGS:
        return rings_mod._rail_rings(topo, gpus, achievable=True)
    assert not achievable  # (the clusters below take the rail rings)
    return result


def _rings_of(sim):
    return [(r.gpus, r.bidir_Bps, r.hops) for r in sim.rings().rings]


def test_single_ring_on_the_simulators_router_equals_rings_worked_out_twice(monkeypatch):
    topo, gpus = _cluster(6)
    sim = Simulator(topo, gpus, SimOptions(achievable=True))
    built = []
    monkeypatch.setattr(Router, "__init__", lambda self, *a, _init=Router.__init__, **k: (built.append(1),
                                                                                           _init(self, *a, **k))[1])
    fast = sim.run("all-reduce", "single-ring", 2**24)
    assert not built  # no router of its own, no second set of rings
    traced = [r for r in sim.rings().rings if "_trace" not in r.__dict__]
    assert len(traced) == 1 and traced[0] is sim.rings().rings[0]  # only the ring that runs
    summary, rings, bound = _summary(fast), _rings_of(sim), sim.plan_bound()
    monkeypatch.undo()
    monkeypatch.setattr(run_mod, "find_rings", _plain_rings)
    topo, gpus = _cluster(6)
    ref = Simulator(topo, gpus, SimOptions(achievable=True))
    plain = ref.run("all-reduce", "single-ring", 2**24)
    assert ref.rings().method == rings_mod.RAIL_RINGS
    assert _summary(plain) == summary and _rings_of(ref) == rings and ref.plan_bound() == bound
    assert plain.rings == fast.rings


def test_routes_keyed_by_their_arrays():
    rng = np.random.default_rng(5)
    route_ch = [rng.choice(40, size=k, replace=False).astype(np.int64) for k in (3, 5, 4, 6)]
    route_w = [np.full(len(c), 0.5) for c in route_ch]
    capacity = np.full(40, 1e9)
    used = np.arange(4)

    class Owner:
        pass

    owner = Owner()
    first = shapes_of(owner, RouteTable(route_ch, route_w), used, capacity, None, 40)
    same = shapes_of(owner, RouteTable([c.copy() for c in route_ch], [w.copy() for w in route_w]), used, capacity,
                     None, 40)
    assert same is first and len(owner._shapes_kept) == 1
    changed_w = [w.copy() for w in route_w]
    changed_w[2][1] = 0.25
    other = shapes_of(owner, RouteTable(route_ch, changed_w), used, capacity, None, 40)
    assert other is not first and len(owner._shapes_kept) == 2
    changed_c = [c.copy() for c in route_ch]
    changed_c[0][0] = 39 if changed_c[0][0] != 39 else 38
    assert shapes_of(owner, RouteTable(changed_c, route_w), used, capacity, None, 40) is not first
    # a table made without its routes' arrays keys by its entries, as before
    bare = RouteTable.__new__(RouteTable)
    table = RouteTable(route_ch, route_w)
    bare.lens, bare.offsets, bare.ch, bare.w = table.lens, table.offsets, table.ch, table.w
    assert shapes_of(Owner(), bare, used, capacity, None, 40).comp_class.tolist() == first.comp_class.tolist()
