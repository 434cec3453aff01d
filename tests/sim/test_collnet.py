"""CollNet (SHARP): the reduction switch found without asking every pair of heads, and a reduction
tree of switches, so that the bandwidth holds as a rail spreads over more leaves."""

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collnet_root
from dgxstudio.sim.run import simulate

MiB = 2**20

TOPOLOGIES = {
    "h100-3-leaves": lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4),
    "h100-3-tiers": lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, tiers=3),
    "a100-oversubscribed": lambda: build_fat_tree(12, "dgx-a100", per_leaf=2, oversubscription=2.0),
    "dgx1-tree": lambda: build_fat_tree(9, per_leaf=3),
}


def _heads(topo, k):
    """The k-th GPU of every system, as a rail's heads."""
    out = []
    for group in topo.groups.values():
        if group.kind == "system":
            gpus = [d for d in group.devices if topo.devices[d].kind == "gpu"]
            out.append(gpus[k])
    return out


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_the_common_switches_are_those_found_pair_by_pair(name):
    topo = TOPOLOGIES[name]()
    for k in (0, 5):  # (a DGX-1's GPU 5 shares GPU 4's NIC: its routes are searched, and so is the set)
        heads = _heads(topo, k)
        fast_router, plain_router = Router(topo), Router(topo)
        found = collnet_root.fast(fast_router, topo, heads)
        assert found and found == collnet_root.plain(plain_router, topo, heads)
    assert collnet_root._by_leaves(Router(topo), topo, _heads(topo, 0)) is not None, "the shortcut did not answer"


def test_a_route_kept_for_a_pair_of_heads_sends_the_question_pair_by_pair():
    topo = TOPOLOGIES["h100-3-leaves"]()
    heads = _heads(topo, 0)
    router = Router(topo)
    router.routes(heads[0], heads[1])
    assert collnet_root._by_leaves(router, topo, heads) is None
    assert collnet_root.fast(router, topo, heads) == collnet_root.plain(Router(topo), topo, heads)


def test_sharp_reduces_in_a_tree_of_switches():
    topo = TOPOLOGIES["h100-3-leaves"]()
    router = Router(topo)
    heads = _heads(topo, 0)
    common = collnet_root.fast(router, topo, heads)
    levels = collnet_root.aggregation_tree(router, topo, heads, common, "unused")
    assert len(levels) == 2
    leaves = {parent for _, parent in levels[0]}
    assert len(leaves) == 3
    for head, leaf in levels[0]:  # each head into its own NIC's leaf
        assert leaf == router._uplink(router._rails()[head][0])
    roots = {root for _, root in levels[1]}
    assert len(roots) == 1 and [a for a, _ in levels[1]] == list(dict.fromkeys(leaf for _, leaf in levels[0]))
    (root,) = roots
    assert all(root in router.fabric.adj[a] for a in leaves)  # a spine joined to every leaf
    assert topo.devices[root].kind == "ib_switch" and root not in leaves


def test_collnet_bandwidth_holds_as_the_rails_spread_over_more_leaves():
    """One leaf per rail (4 systems) against three (12 systems, 4 per leaf): SHARP sends each link
    one stream, so the bus bandwidth stays; sending every head to one switch fell to 69% of it."""
    one = simulate(build_fat_tree(4, "dgx-h100", rail_optimized=True), "all-reduce", "collnet", 256 * MiB)
    three = simulate(TOPOLOGIES["h100-3-leaves"](), "all-reduce", "collnet", 256 * MiB)
    assert three.algorithm == "collnet"
    assert three.busbw_Bps == pytest.approx(one.busbw_Bps, rel=0.05)


def test_collnet_stays_within_the_bound_the_topology_reports():
    """SHARP sends each system's data once each way, so the bound with SHARP switches is the systems'
    NICs at once: the H100 SuperPOD's CollNet read 111% of the ring-shaped bound before."""
    from dgxstudio.sim.run import SimOptions, Simulator

    topo = TOPOLOGIES["h100-3-leaves"]()
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    r = sim.run("all-reduce", "collnet", 256 * MiB)
    assert r.busbw_Bps <= r.bound_busbw_Bps
    nics = sim._system_network_Bps(sim.channel_plan().systems[0])
    p = len(sim.gpus)
    assert r.bound_busbw_Bps == pytest.approx(nics * 2 * (p - 1) / p)


@pytest.mark.parametrize("per_leaf", [2, 4, 8])
def test_the_nearest_common_switch_is_the_one_every_route_would_choose(per_leaf):
    """Without a spine joined to every leaf (three tiers), the fallback root (``_nearest``: where no
    level of switches can be grouped under switches above it) is the switch whose routes from the
    leaves are shortest in sum, then by name: asked only of the candidates whose floor can win, the
    same switch as asking every leaf's route to every candidate."""
    topo = build_fat_tree(48 if per_leaf == 8 else 40, "dgx-h100", rail_optimized=True, tiers=3, per_leaf=per_leaf)
    router = Router(topo)
    for k in (0, 3):
        heads = _heads(topo, k)
        common = collnet_root.fast(router, topo, heads)
        leaves = list(dict.fromkeys(router._uplink(router._rails()[h][0]) for h in heads))
        above = sorted(s for s in common if s not in leaves)
        assert len(leaves) > 1 and not [s for s in above if all(s in router.fabric.adj[a] for a in leaves)]
        every = min(above, key=lambda s: (sum(len(router.routes(a, s).paths[0]) for a in leaves), s))
        assert collnet_root._nearest(router, leaves, above) == every


UNEVEN = {  # (a leaf with fewer systems than the others; more paths than a route keeps)
    "h100-uneven-3-tiers": lambda: build_fat_tree(37, "dgx-h100", rail_optimized=True, tiers=3, per_leaf=4),
    "a100-uneven-oversubscribed": lambda: build_fat_tree(11, "dgx-a100", per_leaf=2, oversubscription=2.0),
}


@pytest.mark.parametrize("max_paths", [64, 2])
@pytest.mark.parametrize("name", list(TOPOLOGIES) + list(UNEVEN))
def test_the_switches_read_from_distances_are_the_routes_switches(name, max_paths):
    """Each leaf's switches towards the others, read from least-cost distances (and, where the router
    keeps a sample of the paths, from a twin pair's route), are those of the router's routes asked
    leaf pair by leaf pair; and the common set is the one found pair by pair of heads."""
    topo = {**TOPOLOGIES, **UNEVEN}[name]()
    sampled = False
    for k in (0, 3):
        heads = _heads(topo, k)
        router = Router(topo, max_paths=max_paths)
        rails = router._rails()
        if any(h not in rails for h in heads):  # (a DGX-1 GPU without a NIC of its own)
            continue
        leaves = collnet_root.Counter(router._uplink(rails[h][0]) for h in heads)
        if None in leaves:
            continue
        if not collnet_root._distances_answer(router):  # (the DGX-1 tree's costs are not whole units)
            assert name == "dgx1-tree"
            continue
        got = collnet_root._by_distances(router, topo, leaves, 1)
        assert got is not None and got is not False
        assert got == collnet_root._by_routes(Router(topo, max_paths=max_paths), topo, leaves, 1)
        assert collnet_root.fast(router, topo, heads) == collnet_root.plain(Router(topo, max_paths=max_paths), topo, heads)
        graph = collnet_root.switch_distances.OutsideGraph(router)
        _, count = graph.distances(list(leaves))
        sampled |= bool((count > max_paths).any())
    if max_paths == 2 and "3-tiers" in name:
        assert sampled, "no leaf pair had more paths than the router keeps"


@pytest.mark.parametrize("name, switch_inside", [("h100-3-tiers", False), ("h100-3-tiers", True),
                                                  ("a100-oversubscribed", False)])
def test_a_legs_switches_and_paths_are_its_routes(name, switch_inside):
    """A head's legs inside its system (GPU to NIC and back), read from the first system wired alike
    without building the route: the route's switches and number of paths, system by system (also
    where each system's PCIe switches are Ethernet switches: then a leg has a switch of its own)."""
    topo = TOPOLOGIES[name]()
    if switch_inside:
        for d in topo.devices.values():
            if d.kind == "pcie_switch":
                d.kind = "eth_switch"
    router, asked = Router(topo), Router(topo)
    legs = collnet_root._Legs(router, topo)
    systems = [g for g in topo.groups.values() if g.kind == "system"]
    renamed = 0
    for group in systems[:2] + systems[-2:]:
        gpus = [d for d in group.devices if topo.devices[d].kind == "gpu"]
        nics = [d for d in group.devices if topo.devices[d].kind == "nic"]
        for a, b in [(g, n) for g in gpus[::3] for n in nics[::2]] + [(gpus[0], gpus[-1])]:
            for x, y in ((a, b), (b, a)):
                paths = asked.routes(x, y).paths
                renamed += router.template_leg(x, y) is not None
                assert legs.of(x, y) == (collnet_root._switches(topo, paths), len(paths))
    assert renamed, "no leg was read from another system's route"
    assert switch_inside == any(legs.of(g, n)[0] for g in gpus for n in nics)
    assert any(len(asked.routes(g, h).paths) > 1 for g in [gpus[0]] for h in gpus[1:]), "no leg with several paths"
