"""Shortcuts that speed ``analyze`` on large regular clusters (issues 16, 12, 17) give what the
general computation gives, on small, irregular and hand-edited cases as well as regular ones. Every
comparison is exact (``==`` on floats): each shortcut adds the same numbers in the same order.

- The bisection's capacity graph read from the analysis' Fabric equals the one built link by link
  (same pairs, order and capacities), and is not read from a Fabric that cannot stand for it.
- Channel offsets checked for all systems together equal those checked one by one, and a system
  changed by hand (a link slower, of another latency, missing or added) gets None either way.
- Ring loads assembled from per-class templates equal the loads routed hop by hop, with and without
  an odd system; ``analyze`` of such a cluster equals ``analyze`` with every per-class shortcut
  off (no system signature, links walked again), which also shows an odd system is routed on its
  own (it used to reuse another system's route shape and crash on a missing link).
- Per-GPU bandwidth with figures looked up once per distinct link equals link by link.
- Spreads over the spines read from twin leaves equal each leaf pair's own route, also where one
  leaf lost a spine link (no longer a twin); switch costs read from the switches equal those of
  every bundle.
- The router's channel figures and links read per bundle equal those read channel by channel.
"""

import pytest

from dgxstudio.analysis.bisection import _fabric_edges, _graph_edges, bisection_bandwidth
from dgxstudio.analysis.fabric import Fabric
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset, preset_names
from dgxstudio.model.topology import Link


def _edited_tree():
    """A fat tree whose links run both ways round, with a bandwidth override, parallel links added
    in a different order, and counts above one."""
    topo = build_fat_tree(6, "dgx-a100", oversubscription=2)
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    ib[3].a, ib[3].b = ib[3].b, ib[3].a
    ib[4].bandwidth_per_direction_Bps = 3.3e9
    topo.links["extra-parallel"] = Link("extra-parallel", ib[4].b, ib[4].a, ib[4].type, count=3)
    topo._links_by_device = None
    return topo


@pytest.mark.parametrize("make", [lambda: build_fat_tree(6, "dgx-h100", rail_optimized=True),
                                  lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
                                  _edited_tree]
                         + [(lambda n=n: load_preset(n)) for n in preset_names()])
def test_capacity_graph_from_the_fabric_equals_link_by_link(make):
    topo = make()
    edges = _fabric_edges(topo, Fabric(topo))
    assert edges == _graph_edges(topo)  # same pairs, order and float capacities, bit for bit


def test_capacity_graph_is_not_read_from_a_fabric_that_cannot_stand_for_it():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    assert _fabric_edges(topo, Fabric(topo, achievable=True)) is None
    assert _fabric_edges(topo, Fabric(topo, {"nvlink"})) is None
    assert _fabric_edges(topo, Fabric(build_fat_tree(4, "dgx-h100", rail_optimized=True))) is None
    ib = next(lk for lk in topo.links.values() if lk.type.startswith("IB"))
    ib.bandwidth_per_direction_Bps = 0.0  # the Fabric drops the pair; the capacity graph keeps it
    fab = Fabric(topo)
    assert fab.dropped == 1 and _fabric_edges(topo, fab) is None
    gpus = [d.id for d in topo.gpus()]
    assert bisection_bandwidth(topo, gpus, fabric=fab) == bisection_bandwidth(topo, gpus)


@pytest.mark.parametrize("make", [lambda: build_fat_tree(24, "dgx-h100", rail_optimized=True, oversubscription=2),
                                  _edited_tree])
def test_bisection_with_the_analysis_fabric_equals_its_own(make):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    assert bisection_bandwidth(topo, gpus, fabric=Fabric(topo)) == bisection_bandwidth(topo, gpus)


# ---- ring loads from templates, channel offsets checked together ---------------------------------

def _odd_system_cluster(alter):
    """A rail-optimized cluster of 12 DGX H100 with one system made different by hand."""
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True)
    sids = sorted({topo.system_of(d.id) for d in topo.gpus()})
    odd = sids[5]
    inside = sorted((lk for lk in topo.links.values() if lk.type == "NVLink4" and topo.system_of(lk.a) == odd),
                    key=lambda lk: lk.id)
    if alter == "bandwidth":
        inside[0].bandwidth_per_direction_Bps = 1e9
    elif alter == "latency":
        inside[3].latency_s = 4e-6
    elif alter == "missing-link":
        del topo.links[inside[2].id]
        topo._links_by_device = None
    elif alter == "extra-link":
        a, b = inside[0].a, inside[1].b
        topo.links["odd-extra"] = Link("odd-extra", a, b, "NVLink4")
        topo._links_by_device = None
    return topo, odd


ALTERATIONS = ["none", "bandwidth", "latency", "missing-link", "extra-link"]


@pytest.mark.parametrize("alter", ALTERATIONS)
def test_offsets_checked_together_equal_those_checked_one_by_one(alter, monkeypatch):
    from dgxstudio.analysis.routing import Router

    topo, odd = _odd_system_cluster(alter)
    sids = sorted({topo.system_of(d.id) for d in topo.gpus()})
    together, alone = Router(topo), Router(topo)
    calls = []
    original = Router._offset_from_reference
    monkeypatch.setattr(Router, "_offset_from_reference", lambda self, sid: calls.append(sid) or original(self, sid))
    together.offsets_in_bulk(sids)
    bulk_calls = list(calls)
    for sid in sids:
        alone._system_signature(sid)
        alone._offset_from_reference(sid)
    assert together._offsets == alone._offsets
    assert together._reference == alone._reference
    assert (together._offsets[odd] is None) == (alter != "none")
    # the regular systems were settled together; only the reference and the odd one, one by one
    assert set(bulk_calls) <= {sids[0], odd}


@pytest.mark.parametrize("alter", ALTERATIONS)
def test_ring_loads_from_templates_equal_hop_by_hop_with_an_odd_system(alter):
    from .test_routing_fast import assert_ring_loads_equal_hop_by_hop

    topo, _ = _odd_system_cluster(alter)
    assert_ring_loads_equal_hop_by_hop(topo)


def _general_only(monkeypatch):
    """Every shortcut by class of systems off: no system has a builder signature (so no route shape,
    template, run or offset is shared between systems), and the bisection walks the links itself."""
    from dgxstudio.analysis import bisection
    from dgxstudio.analysis.routing import Router

    def no_signature(self, sid):
        self._signatures[sid] = ()
        return ()

    monkeypatch.setattr(Router, "_system_signature", no_signature)
    monkeypatch.setattr(bisection, "_fabric_edges", lambda topo, fab: None)


@pytest.mark.parametrize("alter", ALTERATIONS)
def test_analyze_with_an_odd_system_equals_the_general_computation(alter, monkeypatch):
    from dgxstudio.analysis.summary import analyze

    topo, _ = _odd_system_cluster(alter)
    gpus = [d.id for d in topo.gpus()]
    fast = analyze(topo, gpus)
    _general_only(monkeypatch)
    assert analyze(topo, gpus) == fast


@pytest.mark.parametrize("achievable", [False, True])
def test_per_gpu_bandwidth_with_figures_looked_up_once_equals_link_by_link(achievable):
    from dgxstudio.analysis.bandwidth import gpu_bandwidth
    from dgxstudio.model.catalog import NETWORK_FAMILIES

    topo, odd = _odd_system_cluster("bandwidth")
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    ib[0].bandwidth_per_direction_Bps = 7e9  # a NIC link with its own figure
    gpus = [d.id for d in topo.gpus()]
    got = {b.gpu: b for b in gpu_bandwidth(topo, gpus, achievable)}
    share = {}
    for sid in {topo.system_of(g) for g in gpus}:
        total = 0.0
        for d in topo.devices_in_group(sid):
            dev = topo.devices[d]
            if dev.kind == "nic" and dev.properties.get("role", "compute") == "compute":
                for lk in topo.links_of(d):
                    if topo.link_type_of(lk).family in NETWORK_FAMILIES:
                        total += 2 * topo.link_bandwidth_per_direction_Bps(lk, achievable)
        share[sid] = total / sum(1 for g in gpus if topo.system_of(g) == sid)
    for g in gpus:
        nv = sum(2 * topo.link_bandwidth_per_direction_Bps(lk, achievable) for lk in topo.links_of(g)
                 if topo.link_type_of(lk).family == "nvlink")
        assert got[g].nvlink_bidir_Bps == nv
        assert got[g].network_bidir_Bps == share[topo.system_of(g)]
    assert len({got[g].nvlink_bidir_Bps for g in gpus}) == 2  # the odd system's slower GPU stands out


def test_channel_figures_read_per_bundle_equal_channel_by_channel():
    from dgxstudio.analysis.routing import Router

    topo, _ = _odd_system_cluster("latency")
    router = Router(topo)
    figures = router._channel_figures()
    hop = router.fabric.hop_latency
    assert figures[:, 0].tolist() == router.capacity.tolist()
    assert figures[:, 1].tolist() == router._channel_latency
    assert figures[:, 2].tolist() == [hop[u] for u, _ in router.channel_ends]
    assert figures[:, 3].tolist() == [hop[v] for _, v in router.channel_ends]
    assert router.channel_links == [tuple(router.fabric.bundle(u, v).links) for u, v in router.channel_ends]


def _leaf_with_a_spine_link_less():
    """A three-tier rail-optimized fabric where one leaf lost one of its spine links: it is no
    longer a twin of its pod's other leaves."""
    topo = build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3)
    up = sorted((lk for lk in topo.links.values() if lk.a.startswith("leaf") and "spine" in lk.b), key=lambda lk: lk.id)
    del topo.links[up[3].id]
    topo._links_by_device = None
    return topo


@pytest.mark.parametrize("make", [lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
                                  lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
                                  _leaf_with_a_spine_link_less])
def test_spread_over_spines_read_from_twins_equals_its_own_route(make, monkeypatch):
    from dgxstudio.analysis.channels import plan, ring_directions
    from dgxstudio.analysis.routing import Router

    topo = make()
    gpus = [d.id for d in topo.gpus()]
    twins, own = Router(topo), Router(topo)
    monkeypatch.setattr(own, "_twin_spread", lambda a, b: None)
    read = []
    original = twins._twin_spread
    monkeypatch.setattr(twins, "_twin_spread", lambda a, b: read.append((a, b)) or original(a, b))
    p = plan(topo, gpus, twins.fabric, None)
    hops = 0
    for order, _, via in ring_directions(p):
        for way in via or []:
            if way is None:
                continue
            x, y = twins.via_loads(way), own.via_loads(way)
            assert x[0].tolist() == y[0].tolist() and x[1].tolist() == y[1].tolist()
            hops += 1
    assert hops and twins._spreads.keys() == own._spreads.keys()
    for key, spread in twins._spreads.items():
        mine = own._spreads[key]
        assert spread[0] == mine[0] and spread[5] == mine[5]
        assert all(spread[i].tolist() == mine[i].tolist() for i in (1, 2, 3, 4))
    assert sum(original(a, b) is not None for a, b in set(read)) >= 2  # the shortcut did answer


@pytest.mark.parametrize("make", [lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
                                  lambda: build_fat_tree(24, "dgx-h100", rail_optimized=True, oversubscription=2),
                                  _leaf_with_a_spine_link_less])
def test_switch_costs_read_from_the_switches_equal_those_of_every_bundle(make):
    import math

    from dgxstudio.analysis.routing import Router

    topo = make()
    router = Router(topo)
    system = router._system
    outside = [b.bandwidth for (u, v), b in router.fabric.bundles.items()
               if system.get(u) is None and system.get(v) is None]
    assert router._uniform_outside()
    assert router._lcm == math.lcm(*(int(bw) for bw in set(outside)))
    assert router._cheapest == min(router._lcm // int(bw) for bw in outside)


@pytest.mark.parametrize("make", [lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
                                  _leaf_with_a_spine_link_less])
def test_switch_searches_over_the_switches_alone_equal_those_over_every_neighbour(make):
    from dgxstudio.analysis.routing import Router

    topo = make()
    lean, full = Router(topo), Router(topo)
    full._outside_cost = full._adj_cost  # every neighbour listed, those inside systems skipped one by one
    switches = [d for d, k in lean.fabric.kind.items() if k in ("ib_switch", "eth_switch")]
    pairs = [(a, b) for a, b in zip(switches, switches[7:] + switches[:7])][:30]
    for a, b in pairs:
        assert lean._dag(a, b) == full._dag(a, b)
    assert any(len(lean._outside_cost[s]) < len(lean._adj_cost[s]) for s in switches)  # leaves lose their NICs


def test_system_map_keeps_the_first_group_of_a_device_and_the_devices_order():
    """A device listed by two groups takes the first one's system (as system_of does), a group that
    lists a device no longer in the topology adds nothing, and the map follows the devices' order."""
    from dgxstudio.analysis.fabric import _system_map
    from dgxstudio.model.topology import Group
    topo = build_fat_tree(3, "dgx-h100", rail_optimized=True)
    first_system = next(g for g in topo.groups.values() if g.kind == "system")
    gpu = first_system.devices[0]
    topo.groups["late"] = Group("late", "late", "system", None, [gpu, "gone-device"])
    topo._group_by_device = None
    got = _system_map(topo)
    assert list(got.items()) == [(d, topo.system_of(d)) for d in topo.devices]
    assert got[gpu] == first_system.id and "gone-device" not in got
