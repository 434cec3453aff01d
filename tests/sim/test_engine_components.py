"""Fair rates solved per independent component of the network equal the whole-network solve.

The engine splits the channels a schedule uses into components (channels tied together by some
route) and solves and caches max-min rates per component. That is exact: these tests run the same
schedules both ways, with and without contention, and compare every group's times and every
channel's bytes to 1e-9.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.analysis.routing import Router
from dgxstudio.model import Device, Link, Topology
from dgxstudio.model.catalog import load_catalog
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import engine as engine_mod, part_components, tree_fold
from dgxstudio.sim.engine import Engine, Group, Pattern, RouteTable, Schedule, _components
from dgxstudio.sim.run import SimOptions, Simulator

CATALOG = load_catalog(include_user=False)


def assert_same(a, b):
    assert a.time_s == pytest.approx(b.time_s, rel=1e-9, abs=1e-18)
    np.testing.assert_allclose(a.group_done, b.group_done, rtol=1e-9, atol=1e-18)
    np.testing.assert_allclose(a.group_sent, b.group_sent, rtol=1e-9, atol=1e-18)
    np.testing.assert_allclose(a.channel_bytes, b.channel_bytes, rtol=1e-9, atol=1e-3)


def both_ways(monkeypatch, run):
    """Run ``run()`` with the component-wise solve and with the whole network as one component."""
    out = []
    original = Engine.__init__
    for decompose in (True, False):
        def init(self, router, capacity_scale=1.0, decompose=decompose, _orig=original):
            _orig(self, router, capacity_scale, decompose)
        monkeypatch.setattr(Engine, "__init__", init)
        out.append(run())
    monkeypatch.setattr(Engine, "__init__", original)
    return out


def two_islands() -> Topology:
    t = Topology("two islands", CATALOG)
    for i in range(6):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
    for j in range(2):
        t.add_device(Device(f"s{j}", "pcie_switch", "pcie-switch-gen3", f"S{j}"))
    for i in range(6):
        t.add_link(Link(f"l{i}", f"g{i}", f"s{i // 3}", "PCIe3"))
    return t


def test_disjoint_routes_are_separate_components():
    router = Router(two_islands())
    eng = Engine(router)
    # channels have a direction: g0->g1 and g2->g1 share s0->g1; g3->g4 and g5->g4 share s1->g4
    pairs = [("g0", "g1"), ("g2", "g1"), ("g3", "g4"), ("g5", "g4")]
    tpl = eng.template(Pattern(pairs))
    table = RouteTable(eng.route_ch, eng.route_w)
    comp, ch_comp, n = _components(table, np.unique(tpl["route"]), router.n_channels)
    by_pair = dict(zip(pairs, comp[np.searchsorted(np.unique(tpl["route"]), tpl["route"])]))
    assert n == 2
    assert by_pair[("g0", "g1")] == by_pair[("g2", "g1")] != by_pair[("g3", "g4")] == by_pair[("g5", "g4")]
    # every channel a route uses belongs to that route's component
    for rid, c in zip(np.unique(tpl["route"]), comp):
        assert set(ch_comp[eng.route_ch[rid]].tolist()) == {c}


def test_a_route_joining_two_islands_merges_them():
    t = two_islands()
    t.add_link(Link("bridge", "s0", "s1", "PCIe3"))
    router = Router(t)
    eng = Engine(router)
    # g0->g4 and g1->g3 both cross the bridge from s0 to s1: one component
    tpl = eng.template(Pattern([("g0", "g4"), ("g1", "g3")]))
    comp, _, n = _components(RouteTable(eng.route_ch, eng.route_w), np.unique(tpl["route"]), router.n_channels)
    assert n == 1 and set(comp.tolist()) == {0}
    # without the bridge's shared channel (opposite directions) they stay apart
    tpl = eng.template(Pattern([("g0", "g4"), ("g3", "g1")]))
    _, _, n = _components(RouteTable(eng.route_ch, eng.route_w), np.unique(tpl["route"]), router.n_channels)
    assert n == 2


@pytest.mark.parametrize("algorithm, systems, size", [
    ("tree", 2, 4 * 2**20), ("tree", 4, 64 * 2**20), ("ring", 4, 2**26), ("hierarchical", 3, 2**24),
    ("ring", 2, 2**10), ("tree", 3, 2**30),
])
def test_collectives_on_fat_trees_match_the_whole_network_solve(monkeypatch, algorithm, systems, size):
    topo = build_fat_tree(systems, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    a, b = both_ways(monkeypatch, lambda: Simulator(topo, gpus, SimOptions(achievable=True))
                     .run("all-reduce", algorithm, size).sim)
    assert_same(a, b)
    # the replay sees the same load on every channel in every segment
    for (t0, t1, pa), (u0, u1, pb) in zip(a.segments[:50], b.segments[:50]):
        ra, rb = a.rate_patterns[pa], b.rate_patterns[pb]
        la = np.zeros(len(a.capacity)); la[ra.channels] = ra.load_Bps
        lb = np.zeros(len(b.capacity)); lb[rb.channels] = rb.load_Bps
        np.testing.assert_allclose(la, lb, rtol=1e-9, atol=1e-3)


@st.composite
def contended_schedule(draw):
    """Random transfers on two switch islands, optionally bridged, with dependencies between them."""
    t = two_islands()
    if draw(st.booleans()):
        t.add_link(Link("bridge", "s0", "s1", "PCIe3", bandwidth_per_direction_Bps=draw(st.sampled_from([1e9, 4e9]))))
        pool = [f"g{i}" for i in range(6)]
        islands = [pool]
    else:
        islands = [[f"g{i}" for i in range(3)], [f"g{i}" for i in range(3, 6)]]
    groups = []
    for k in range(draw(st.integers(1, 8))):
        isl = islands[draw(st.integers(0, len(islands) - 1))]
        pairs = draw(st.lists(st.tuples(st.sampled_from(isl), st.sampled_from(isl)).filter(lambda p: p[0] != p[1]),
                              min_size=1, max_size=4))
        deps = tuple(sorted(set(draw(st.lists(st.integers(0, k - 1), max_size=2))))) if k else ()
        groups.append(Group(f"g{k}", Pattern(pairs), draw(st.sampled_from([1e3, 1e6, 3e7])), deps))
    return t, groups


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(contended_schedule())
def test_random_schedules_match_the_whole_network_solve(monkeypatch, case):
    topo, groups = case
    router = Router(topo)

    def run():
        fresh = [Group(g.name, Pattern(list(g.pattern.pairs)), g.bytes_each, g.deps_done) for g in groups]
        return Engine(router).run(Schedule(fresh))

    a, b = both_ways(monkeypatch, run)
    assert_same(a, b)


def test_patterns_are_assembled_from_their_components():
    topo = build_fat_tree(2, "dgx-a100")
    r = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run("all-reduce", "tree", 2**22).sim
    # (the pair of trees per rail mirror each other: the run is folded, its patterns spread over
    # every channel of a class as they are read, sim/tree_fold.py)
    assert isinstance(r.rate_patterns, tree_fold._FoldedPatterns)
    assert isinstance(r.rate_patterns.patterns, engine_mod._ComponentPatterns)
    assert max(pid for _, _, pid in r.segments) < len(r.rate_patterns)
    # channel bytes are the integral of the patterns' loads over the segments
    total = np.zeros(len(r.capacity))
    for t0, t1, pid in r.segments:
        rp = r.rate_patterns[pid]
        np.add.at(total, rp.channels, rp.load_Bps * (t1 - t0))
    np.testing.assert_allclose(total, r.channel_bytes, rtol=1e-9, atol=1e-3)


def test_a_joint_solve_is_split_among_its_components_alike_either_way(monkeypatch):
    """Components that miss the cache at one event are solved together and the answer split among
    them: by a comparison per component or (many components) by one sort by component. The same
    bits either way, on a tree whose events re-solve many components at once."""
    topo = build_fat_tree(4, "dgx-a100", per_leaf=2, oversubscription=2.0)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    runs = []
    for limit in (10**9, 0):
        monkeypatch.setattr(part_components, "SPLIT_BY_SORT", limit)
        r = sim.run("all-reduce", "tree", 8 * 2**20).sim
        runs.append((r.group_done.tobytes(), r.group_sent.tobytes(), r.channel_bytes.tobytes(), r.events))
    assert runs[0] == runs[1] and runs[0][3] > 100
