"""SHARP's aggregation tree on three switch tiers: the leaves reduce into a spine of their pod, the
spines into a core, each rail over its own plane, so that no link above the leaves carries more than
one stream of a piece (issue #13: over 2,048 DGX H100 every leaf's stream crossed the spines to one
core unreduced, and CollNet ran 4.8x slower than over 128 systems)."""

from collections import Counter

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collnet_root
from dgxstudio.sim.run import SimOptions, Simulator, simulate

MiB = 2**20


def _three_tiers():
    # 40 systems, 4 per unit: 80 leaves in 3 pods of 4 spines (planes), cores above each plane
    return build_fat_tree(40, "dgx-h100", rail_optimized=True, tiers=3, per_leaf=4)


def _tier(name: str) -> str:
    return "core" if name.startswith("core") else "spine" if ".spine" in name else "leaf" if name.startswith("leaf") else ""


def _sharp_reduce_groups(sched, piece: int):
    return [g for g in sched.groups if g.meta.get("phase") == "sharp-reduce" and g.meta.get("piece") == piece]


def test_three_tiers_reduce_in_three_levels_with_one_stream_per_spine_core_link():
    topo = _three_tiers()
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions())
    sched, _, _ = sim.nccl_schedule("all-reduce", "collnet", "simple", 64 * MiB)
    groups = _sharp_reduce_groups(sched, 0)
    rails = len(sim.channel_plan().tree_chains)
    # one streaming stage a rail (SHARP's SAT), holding heads -> leaf, leaf -> spine, spine -> core
    assert rails == 8 and len(groups) == rails
    router = Router(topo)
    crossing = Counter()  # (spine, core) hop -> how many of the first piece's streams cross it
    parents = Counter()
    for g in groups:
        for child, parent in g.pattern.pairs:
            parents[_tier(child), _tier(parent)] += 1
            hops = {(a, b) for path in router.routes(child, parent).paths for a, b in zip(path, path[1:])}
            crossing.update(h for h in hops if _tier(h[0]) == "spine" and _tier(h[1]) == "core")
    # each leaf one stream to a spine of its pod; each spine one stream to its plane's core
    assert parents["leaf", "spine"] == 80 and parents["leaf", "core"] == 0
    spines_used = parents["spine", "core"]
    assert spines_used == 3 * rails  # one spine per pod for each rail
    assert crossing and max(crossing.values()) == 1 and len(crossing) == spines_used


def test_each_rail_takes_its_own_plane_and_root_where_the_fabric_has_them():
    topo = _three_tiers()
    router = Router(topo)
    seen_spines, roots = [], []
    for k in range(8):
        heads = [[d for d in g.devices if topo.devices[d].kind == "gpu"][k]
                 for g in topo.groups.values() if g.kind == "system"]
        common = collnet_root.fast(router, topo, heads)
        levels = collnet_root.aggregation_tree(router, topo, heads, common, "unused", k)
        assert len(levels) == 3
        spines = {p for _, p in levels[1]}
        assert len({s.split(".")[1] for s in spines}) == 1  # (one plane: spine j of every pod)
        (root,) = {p for _, p in levels[2]}
        assert all(root in router.fabric.adj[s] for s in spines)
        seen_spines.append(spines)
        roots.append(root)
    assert len(set(roots)) == 8
    # four planes for eight rails: two rails a plane, each over its own core of the plane
    assert len({frozenset(s) for s in seen_spines}) == 4


def test_on_two_tiers_every_rail_keeps_the_first_spine():
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4)
    router = Router(topo)
    for k in (0, 3):
        heads = [[d for d in g.devices if topo.devices[d].kind == "gpu"][k]
                 for g in topo.groups.values() if g.kind == "system"]
        common = collnet_root.fast(router, topo, heads)
        trees = [collnet_root.aggregation_tree(router, topo, heads, common, "unused", rail) for rail in (0, k, 7)]
        assert trees[0] == trees[1] == trees[2] and len(trees[0]) == 2
        assert {p for _, p in trees[0][1]} == {"spine1"}


def test_collnet_over_three_tiers_keeps_most_of_the_bandwidth_of_two():
    """One stream per link above the leaves: the bus bandwidth over three pods stays near that of
    three leaves under one spine tier (it fell to 67% with every leaf's stream sent to one core;
    with the levels one after the other, 90%)."""
    two = simulate(build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4), "all-reduce", "collnet", 64 * MiB)
    three = simulate(_three_tiers(), "all-reduce", "collnet", 64 * MiB)
    assert three.algorithm == "collnet"
    assert three.busbw_Bps == pytest.approx(two.busbw_Bps, rel=0.02)  # (busbw counts 2(p-1)/p: 320 GPUs against 96)


def test_the_tree_rules_come_from_the_sourced_data():
    data = collnet_root.sharp_trees()
    assert data["tree_per_rail"] is True and "each rail can use a different tree" in data["tree_per_rail_source"]


def test_without_a_root_above_one_plane_the_fewest_switches_cover_each_level():
    """Where no switch of the common set sits above a level's switches (here the cores left out of
    it), each level is covered greedily by the fewest switches above, most covered first, then by
    name: the leaves by one spine of their pod, those spines by one core."""
    assert collnet_root._greedy(["a", "b", "c"], {"a": ["x", "y"], "b": ["y"], "c": ["y", "z"]}) == {"a": "y", "b": "y", "c": "y"}
    assert collnet_root._greedy(["a", "b"], {"a": ["x"], "b": ["z"]}) == {"a": "x", "b": "z"}
    topo = _three_tiers()
    router = Router(topo)
    heads = [[d for d in g.devices if topo.devices[d].kind == "gpu"][0]
             for g in topo.groups.values() if g.kind == "system"]
    common = {s for s in collnet_root.fast(router, topo, heads) if not s.startswith("core")}
    levels = collnet_root.aggregation_tree(router, topo, heads, common, "unused", 0)
    assert len(levels) == 3
    assert {p for _, p in levels[1]} == {"pod1.spine1", "pod2.spine1", "pod3.spine1"}
    assert {p for _, p in levels[2]} == {"core1.1"}


def test_a_three_tier_collnet_settles_into_its_steady_state():
    """A piece through SHARP's levels one after the other held the heads' buffers for six piece
    times: the run alternated 4 pieces and a wait and never repeated a state the shortcut could
    skip (16 GiB over 40 DGX H100 in 3 pods: 78,617 events; over 2,048 refused by the budget).
    Streaming through every level at once, it settles and skips."""
    r = simulate(_three_tiers(), "all-reduce", "collnet", 16 * 2**30)
    assert r.sim.periods_skipped > 0 and r.sim.events < 2_000
