"""The other trees' hops inside systems and between systems under one leaf as parts, not routed
(sim/unrouted_hops.py): joined, every slot is what routing every tree gives it (channels, weights,
latency, cap), tree 0 is still routed, and the engine keeps fewer routes."""

import numpy as np
import pytest

from dgxstudio.analysis.ring_segments import HopRoutes
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.tree_parts import TreeParts
from dgxstudio.sim.unrouted_hops import Unrouted

from .test_tree_orbits import _schedule


def _joined(parts: TreeParts, row: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([parts.ch[i] for i in row]), np.concatenate([parts.w[i] for i in row])


def _end_names(patterns) -> dict[int, str]:
    """The device numbers of ``TreeParts.ends`` (numbered in the order they first come), each to its name."""
    names: dict[str, int] = {}
    for p in patterns:
        for pair in p.pairs:
            for x in pair:
                names.setdefault(x, len(names))
    return {i: x for x, i in names.items()}


def _assert_same_parts(fast: TreeParts, slow: TreeParts) -> None:
    """Every slot joined from its parts alike (channels, weights), with the same latency and cap."""
    assert np.array_equal(fast.lat, slow.lat) and np.array_equal(fast.cap, slow.cap)
    for rf, rs in zip(fast.rows.tolist(), slow.rows.tolist()):
        cf, wf = _joined(fast, rf)
        cs, ws = _joined(slow, rs)
        assert np.array_equal(cf, cs) and np.array_equal(wf, ws)


def _parts_both_ways(topo, forget: bool):
    sim, sched, scale = _schedule(topo)
    if forget:  # (the schedule's build asked HopRoutes for hops: forgotten, as where it had not)
        HopRoutes.of(sim.router)._known.clear()
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)  # (the patterns as tree_fold asks them)
    assert fold is not None
    patterns = [p for pats in fold.role_patterns for p in pats]
    n_roles = len(fold.role_patterns[0])
    fast_eng, slow_eng = Engine(sim.router, scale), Engine(sim.router, scale)
    fast = TreeParts.of(fast_eng, patterns, n_roles)
    slow = TreeParts.of(slow_eng, patterns)
    return sim, fold, fast, slow, fast_eng, slow_eng


@pytest.mark.parametrize("forget", [True, False])
def test_other_trees_hops_in_parts_equal_their_routes(forget):
    # 12 rail-optimized DGX H100 systems, 4 per leaf: hops inside systems, hops between systems
    # under one leaf (one path per leg) and hops spread over the spines
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4)
    sim, fold, fast, slow, fast_eng, slow_eng = _parts_both_ways(topo, forget)
    assert fast.rows.shape == slow.rows.shape
    # the parts that are no engine route and no spread hop's: the hops taken by Unrouted
    per_tree = len(fast.rows) // len(fold.role_patterns)
    alone = (fast.rows[:, 0] >= fast.n_routes) & (fast.rows[:, 1:] == fast.n_routes).all(axis=1)
    assert not alone[:per_tree].any()  # tree 0's all routed
    ends = fast.ends
    system = sim.router._system
    by_number = _end_names(p for pats in fold.role_patterns for p in pats)
    same = np.array([system.get(by_number[a]) == system.get(by_number[b]) for a, b in ends.tolist()])
    if forget:  # both kinds taken, in every other tree
        assert (alone & same).sum() > 50 and (alone & ~same).sum() > 50
    assert len(fast_eng.route_ch) < len(slow_eng.route_ch)
    _assert_same_parts(fast, slow)


def _forgotten():
    """12 rail-optimized DGX H100 systems, 4 per leaf, after the tree's schedule was built: its router,
    its HopRoutes with nothing answered, and the GPUs."""
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4)
    sim, sched, scale = _schedule(topo)
    hops = HopRoutes.of(sim.router)
    hops._known.clear()
    return sim.router, hops, [d.id for d in topo.gpus()]


def test_a_pair_routed_before_is_left_to_the_template():
    """A hop the router already keeps a route for (asked before) is not taken: the template reads it."""
    router, hops, gpus = _forgotten()
    system = router._system
    # (a system whose hop is read from another's search: the first system's own are kept routes)
    inside = next((a, b) for a in gpus for b in gpus if a != b and system[a] == system[b]
                  and router.template_leg(a, b) is not None)
    rail = router._rails()
    leaf = {g: router._uplink(rail[g][0]) for g in gpus}
    between = next((a, b) for a in gpus for b in gpus if system[a] != system[b] and leaf[a] == leaf[b]
                   and rail[a][0] != rail[b][0])
    take = Unrouted(hops).take
    assert take([inside, between], [0, 1], 1e-6)[0] == [0, 1]
    router.routes(*inside)  # kept by the router now
    router.routes(*between)
    assert take([inside, between], [0, 1], 1e-6)[0] == []


@pytest.mark.parametrize("kept", ["leg out", "leg in", "nics", "via"])
def test_a_hop_whose_leg_or_nics_the_router_keeps_is_left_to_the_template(kept):
    """The cache is looked at only for hops whose devices some kept route names (``Unrouted._touched``):
    a route kept for the source's leg to its NIC, the NIC's to the destination, the two NICs, or the
    whole via hop, leaves that hop to the template; a hop of other GPUs is still taken by the same
    instance (its set of named devices made again as the cache grew)."""
    router, hops, gpus = _forgotten()
    system, rail = router._system, router._rails()
    nic = {g: rail[g][0] for g in gpus}
    leaf = {g: router._uplink(nic[g]) for g in gpus}
    between = [(a, b) for a in gpus for b in gpus if system[a] != system[b] and leaf[a] == leaf[b]]
    named = {x for key in router._cache for x in key}  # (devices the routes kept so far name)
    taken = [(a, b) for a, b in between if Unrouted(hops).take([(a, b)], [0], 1e-6)[0] == [0]
             and not {a, b, nic[a], nic[b]} & named]
    s, d = taken[0]
    other = next((a, b) for a, b in taken if not {a, b, nic[a], nic[b]} & {s, d, nic[s], nic[d]})
    take = Unrouted(hops).take
    assert take([(s, d), other], [0, 1], 1e-6)[0] == [0, 1]
    if kept == "leg out":
        router.routes(s, nic[s])
    elif kept == "leg in":
        router.routes(nic[d], d)
    elif kept == "nics":
        router.routes(nic[s], nic[d])
    else:
        router.via([s, nic[s], nic[d], d])
    assert take([(s, d), other], [0, 1], 1e-6)[0] == [1]


def test_a_take_of_many_pairs_is_each_pairs_take_and_looks_each_gpu_up_once():
    """A pattern's pairs are told apart at once (sim/unrouted_hops.py: device numbers, each GPU's
    NIC, uplink and links looked up once for both ways): the pairs of many kinds taken together,
    by names or by numbers, give what each pair taken alone gives, and the router's rails are read
    once per batch of GPUs, not once per GPU and way."""
    router, hops, gpus = _forgotten()
    system = router._system
    rail = router._rails()
    leaf = {g: router._uplink(rail[g][0]) for g in gpus}
    inside = [(a, b) for a in gpus for b in gpus if a != b and system[a] == system[b]][:40]
    between = [(a, b) for a in gpus for b in gpus if system[a] != system[b] and leaf[a] == leaf[b]][:60]
    across = [(a, b) for a in gpus for b in gpus if system[a] != system[b] and leaf[a] != leaf[b]][:20]  # (spread)
    pairs = [*between, *across, *inside, *(p[::-1] for p in between)]
    alone = [Unrouted(hops).take([pair], [0], 1e-6) for pair in pairs]
    calls = []
    real = type(router)._rails
    type(router)._rails = lambda self: calls.append(1) or real(self)
    at = list(range(len(pairs)))
    try:
        by_names = Unrouted(hops).take(pairs, at, 1e-6)
    finally:
        type(router)._rails = real
    assert len(calls) <= 4 < len({g for pair in between for g in pair})
    names = list(dict.fromkeys(x for pair in pairs for x in pair))
    number = {x: i for i, x in enumerate(names)}
    by_numbers = Unrouted(hops, names).take(pairs, at, 1e-6, np.array([[number[a], number[b]] for a, b in pairs]))
    want = [(i, got[1][0], got[2][0], got[3][0]) for i, got in enumerate(alone) if got[0]]
    assert len(want) > 80 and not any(alone[len(between) + k][0] for k in range(len(across)))
    for got in (by_numbers, by_names):
        assert got[0] == [i for i, *_ in want]
        for (_, ch, w, lat), c, ww, la in zip(want, *got[1:]):
            assert np.array_equal(ch, c) and np.array_equal(w, ww) and lat == la
