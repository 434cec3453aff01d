"""All-to-all by symmetry class (issue #17): one flow per class of flows that are images of each other
under the fabric's symmetry gives the pair-by-pair run's answer, and lifts the pair cap."""

import numpy as np
import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives as C
from dgxstudio.sim import symmetry
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim import nccl_p2p, tuning as T
from dgxstudio.sim.training import ModelSpec, expert_all_to_all, merge

MiB = 2**20


def _gpus(topo, local):
    return [d.id for d in topo.gpus() if d.id.rsplit(".", 1)[-1] in local]


def _compare(topo, gpus, size, chunk):
    """The symmetric run and the pair-by-pair run of one all-to-all, on one router."""
    router = Router(topo, achievable=True)
    sym = C.all_to_all(gpus, size, chunk, router)
    assert "classes" in sym.meta, "the fabric is symmetric: the all-to-all must run by class"
    full = C.all_to_all(gpus, size, chunk)
    a = symmetry.run(router, sym)
    b = Engine(router).run(full)
    return sym.meta["classes"], a, b


def _assert_same(a, b):
    assert a.time_s == pytest.approx(b.time_s, rel=1e-9)
    np.testing.assert_allclose(a.group_done, b.group_done, rtol=1e-9)
    np.testing.assert_allclose(a.group_sent, b.group_sent, rtol=1e-9)
    # every channel carries what it carries pair by pair (not only the representatives)
    np.testing.assert_allclose(a.channel_bytes, b.channel_bytes, rtol=1e-9, atol=1e-6 * b.channel_bytes.max())
    assert a.delivered[-1][1] == pytest.approx(b.delivered[-1][1], rel=1e-9)
    ta, da = np.array(a.delivered).T
    tb, db = np.array(b.delivered).T
    np.testing.assert_allclose(np.interp(tb, ta, da), db, rtol=1e-9, atol=1e-9 * db[-1])
    assert a.bottlenecks(3)[0]["utilization"] == pytest.approx(b.bottlenecks(3)[0]["utilization"], rel=1e-9)


@pytest.mark.parametrize("label, build", [
    ("DGX A100 fat tree", lambda: build_fat_tree(16, "dgx-a100")),
    ("DGX A100, leaves oversubscribed 4:1", lambda: build_fat_tree(16, "dgx-a100", oversubscription=4)),
    ("rail-optimized DGX H100", lambda: build_fat_tree(16, "dgx-h100", rail_optimized=True, per_leaf=4)),
    ("DGX-1 V100 (GPUs share NICs)", lambda: build_fat_tree(16, "dgx1-v100")),
    ("three tiers, pods of 20 and 2 leaves", lambda: build_fat_tree(22, "dgx-a100", per_leaf=1, tiers=3)),
])
def test_symmetry_replication_equals_the_pair_by_pair_run(label, build):
    topo = build()
    # three GPUs of each of the 16 systems (48 GPUs, 2,256 transfers) keep the full run short;
    # several pieces and flows of several rates (NVLink inside systems, the network across)
    gpus = _gpus(topo, {"gpu0", "gpu3", "gpu5"} if len(topo.gpus()) <= 128 else {"gpu2", "gpu7"})
    p = len(gpus)
    classes, a, b = _compare(topo, gpus, p * MiB, 0.4 * MiB)
    assert classes.flows == p * (p - 1) and len(classes.pairs) * 10 < classes.flows
    assert len(a.segments) >= 2
    _assert_same(a, b)


def test_symmetry_replication_equals_the_full_run_over_every_gpu_of_8_systems():
    topo = build_fat_tree(8, "dgx-a100")
    classes, a, b = _compare(topo, [d.id for d in topo.gpus()], 64 * MiB, 4 * MiB)
    assert classes.flows == 64 * 63
    _assert_same(a, b)


def test_a_subset_of_systems_is_coloured_apart_and_still_exact():
    topo = build_fat_tree(16, "dgx-a100", oversubscription=2)
    # 5 of the 16 systems: some leaves hold two of them, some one, some none
    gpus = [g for g in _gpus(topo, {"gpu0", "gpu7"}) if int(g[1:3]) in (1, 2, 3, 5, 9)]
    classes, a, b = _compare(topo, gpus, 8 * MiB, 1 * MiB)
    _assert_same(a, b)


def test_no_symmetry_falls_back_to_the_pair_by_pair_run():
    topo = build_fat_tree(4, "dgx-a100")
    # one system's first NIC loses its cable, another's leaf gets it: no two systems are alike
    # through the whole fabric any more (and the second leaf serves three systems)
    link = next(lk for lk in topo.links.values() if {lk.a, lk.b} & {"s1.ib0"} and "leaf1" in (lk.a, lk.b))
    topo.remove_link(link.id)
    gpus = [d.id for d in topo.gpus()]
    router = Router(topo, achievable=True)
    assert symmetry.all_pairs(router, gpus) is None
    # routes pinned by a hash of the names are not symmetric either
    assert symmetry.all_pairs(Router(build_fat_tree(4, "dgx-a100"), spread="hash"), gpus) is None
    sched = C.all_to_all(gpus, 32 * MiB, 4 * MiB, router)
    assert "classes" not in sched.meta and len(sched.groups[0].pattern.pairs) == 32 * 31
    sim = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-to-all", "direct", 32 * MiB)
    call = nccl_p2p.plan_call(nccl_p2p.facts_of(topo, router, gpus), 32 * MiB)   # NCCL's p2p plan, as the run's
    full = Engine(Router(topo, achievable=True), T.protocol_efficiency(call.protocol)).run(C.with_launch(
        C.all_to_all(gpus, 32 * MiB, SimOptions().chunk, None, call.hop_s, call.pair_cap_Bps), call.launch_s))
    assert sim.time_s == full.time_s


def test_an_all_to_all_over_more_than_141_gpus_runs():
    topo = build_fat_tree(24, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    assert len(gpus) * (len(gpus) - 1) > C.MAX_ALL_TO_ALL_PAIRS
    res = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-to-all", "direct", 64 * MiB)
    assert res.schedule.meta["classes"].flows == 192 * 191
    assert "symmetry classes" in res.schedule.description
    assert "simulated as 184 symmetry classes of its 36,672 transfers" in res.reason
    # a sweep finds the classes once: the next size reuses them
    sim = Simulator(topo, gpus, SimOptions(achievable=True))
    first = sim.run("all-to-all", "direct", 64 * MiB).schedule.meta["classes"]
    again = sim.run("all-to-all", "direct", 256 * MiB)
    assert again.schedule.meta["classes"] is first and again.time_s > res.time_s
    assert 0 < res.busbw_Bps <= res.bound_busbw_Bps * 1.0001
    assert res.sim.bottlenecks()[0]["utilization"] > 0.5
    # pair by pair the cap still names the limit
    with pytest.raises(ValueError, match="at most 20,000"):
        C.all_to_all(gpus, 64 * MiB, 4 * MiB)


@pytest.mark.parametrize("ep, order, by_class", [
    (8, "systems", True),       # a group is a system: NVLink only
    (16, "systems", True),      # a group is two systems under one leaf
    (32, "systems", True),      # a group is two leaves' systems
    (16, "scattered", None),    # groups pick GPUs here and there: by class only if that is symmetric
])
def test_moe_expert_groups_run_by_class_with_the_same_answer(ep, order, by_class):
    topo = build_fat_tree(8, "dgx-a100")
    router = Router(topo, achievable=True)
    gpus = [d.id for d in topo.gpus()]
    if order == "scattered":
        gpus = [gpus[(k * 23) % 64] for k in range(64)]
    place = {(d, 0, 0): g for d, g in enumerate(gpus)}
    moe = ModelSpec(layers=4, hidden=1024, seq_len=1024, experts=64, top_k=2)
    t, sim = expert_all_to_all(topo, router, place, 64, 1, 1, ep, moe, 1 * MiB)
    groups = [[place[(g * ep + e, 0, 0)] for e in range(ep)] for g in range(64 // ep)]
    sched = C.all_to_alls(groups, moe.dispatch_bytes(), 1 * MiB, router)
    if by_class:
        assert sched is not None and len(sched.meta["classes"].pairs) * 4 < 64 * (ep - 1)
    call = nccl_p2p.plan_call(nccl_p2p.facts_of(topo, router, groups[0]), moe.dispatch_bytes())
    full = Engine(Router(topo, achievable=True), T.protocol_efficiency(call.protocol)).run(C.with_launch(merge([
        C.all_to_all(m, moe.dispatch_bytes(), 1 * MiB, None, call.hop_s, call.pair_cap_Bps) for m in groups]),
        call.launch_s))
    assert t == pytest.approx(full.time_s, rel=1e-9)
    np.testing.assert_allclose(sim.channel_bytes, full.channel_bytes, rtol=1e-9, atol=1e-6 * full.channel_bytes.max())


def test_pxn_routes_through_a_peer_keep_the_symmetry():
    topo = build_fat_tree(16, "dgx-h100", rail_optimized=True, per_leaf=4)
    gpus = _gpus(topo, {"gpu0", "gpu5", "gpu6"})
    router = Router(topo, achievable=True, pxn=True)
    sym = C.all_to_all(gpus, 48 * MiB, 1 * MiB, router)
    assert "classes" in sym.meta
    _assert_same(symmetry.run(router, sym), Engine(router).run(C.all_to_all(gpus, 48 * MiB, 1 * MiB)))


def test_the_all_to_all_bound_counts_each_systems_nics():
    """All but 1/N of an all-to-all leaves each system through its NICs: on 4 DGX H100 the bound is
    the NICs' (8 x 400 Gb/s out of each system), not the NVLink injection or the bisection (which said
    96.9 GB/s while the run reached 60), and the run stays just under it."""
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.sim.run import SimOptions, Simulator

    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    p, local = 32, 8
    nics = sim._system_network_Bps(sim.channel_plan().systems[0])
    assert nics == pytest.approx(8 * 400e9 / 8 * 0.94, rel=1e-6)  # NDR at its achievable rate
    bound = sim.bound_busbw("all-to-all")
    assert bound == pytest.approx(nics * p / (local * (p - local)) * (p - 1) / p, rel=1e-9)
    run = sim.run("all-to-all", "direct", 2**26)
    assert 0.95 * bound < run.busbw_Bps <= bound * (1 + 1e-9)
