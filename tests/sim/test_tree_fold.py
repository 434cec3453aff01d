"""NCCL's tree with alike trees simulated once (issue #17: groups and rate classes, not flows): the
folded run gives the flow-by-flow run's answer, per group, per flow and per channel, and a fabric
or a tree set without that symmetry runs flow by flow."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import fold_routes, tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator

MiB = 2**20
REL = 1e-9


def _runs(topo, size, proto="simple"):
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", proto, size)
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    return sched, folded, full


def _assert_same(a, b, n_groups):
    assert a.time_s == pytest.approx(b.time_s, rel=REL)
    for name in ("group_start", "group_sent", "group_done"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=REL, err_msg=name)
    np.testing.assert_allclose(a.channel_bytes, b.channel_bytes, rtol=REL, atol=1e-9 * b.channel_bytes.max())
    for g in range(n_groups):
        ea, eb = a.flow_ends.get(g), b.flow_ends.get(g)
        ea = np.full_like(eb, a.group_sent[g]) if ea is None and eb is not None else ea
        eb = np.full_like(ea, b.group_sent[g]) if eb is None and ea is not None else eb
        if ea is not None:
            np.testing.assert_allclose(ea, eb, rtol=REL, err_msg=f"flow ends of group {g}")
    assert a.delivered[-1][1] == pytest.approx(b.delivered[-1][1], rel=REL)
    assert [x["utilization"] for x in a.bottlenecks(5)] == pytest.approx([x["utilization"] for x in b.bottlenecks(5)],
                                                                         rel=REL)
    # the links' loads at a few instants, every channel (not only the representatives)
    for frac in (0.1, 0.35, 0.6, 0.85):
        t = frac * b.time_s
        la, lb = (_loads_at(x, t) for x in (a, b))
        assert la.keys() == lb.keys()
        assert [la[c] for c in sorted(la)] == pytest.approx([lb[c] for c in sorted(lb)], rel=REL)


def _loads_at(sim, t):
    for t0, t1, pid in sim.segments:
        if t0 <= t < t1:
            rp = sim.rate_patterns[pid]
            return dict(zip(rp.channels.tolist(), rp.load_Bps.tolist()))
    return {}


@pytest.mark.parametrize("label, build, size, proto", [
    ("2 DGX H100, rail-optimized", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 24 * MiB, "simple"),
    ("4 DGX H100, LL128", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True), 6 * MiB, "ll128"),
    ("8 DGX A100, leaves 4:1 oversubscribed",
     lambda: build_fat_tree(8, "dgx-a100", oversubscription=4, per_leaf=2), 12 * MiB, "simple"),
    ("5 DGX H100, uneven leaves oversubscribed 2:1",
     lambda: build_fat_tree(5, "dgx-h100", rail_optimized=True, oversubscription=2, per_leaf=2), 8 * MiB, "simple"),
])
def test_alike_trees_run_once_with_the_flow_by_flow_answer(label, build, size, proto):
    sched, folded, full = _runs(build(), size, proto)
    # the mirrored pairs of trees ran once: at most half the flows re-timed (what the budget counts)
    assert isinstance(folded.rate_patterns, tree_fold._FoldedPatterns), label
    assert folded.rate_patterns.size.max() >= 2
    assert folded.flow_events * 2 <= full.flow_events, label
    _assert_same(folded, full, len(sched.groups))
    assert len(folded.group_done) == len(sched.groups)


@pytest.mark.parametrize("label, build", [
    ("DGX-1 V100 (hybrid cube-mesh chains differ per rail)", lambda: build_fat_tree(4, "dgx1-v100")),
    ("DGX-1 V100, uneven leaves oversubscribed 2:1",
     lambda: build_fat_tree(5, "dgx1-v100", oversubscription=2, per_leaf=2)),
])
def test_trees_that_are_not_alike_run_flow_by_flow(label, build):
    topo = build()
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", 8 * MiB)
    assert tree_fold.Fold.of(Engine(sim.router, scale), sched) is None, label
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    assert not isinstance(folded.rate_patterns, tree_fold._FoldedPatterns)
    assert folded.flow_events == full.flow_events
    np.testing.assert_array_equal(folded.group_done, full.group_done)


def test_a_folded_trees_transfers_read_as_its_own():
    """A group of a tree that was not simulated lists its own pairs, paths and flow end times."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    r = sim.run("all-reduce", "tree", 24 * MiB)  # (the Simulator folds its tree runs)
    sched, _, full = _runs(topo, 24 * MiB, r.protocol)
    assert isinstance(r.sim.rate_patterns, tree_fold._FoldedPatterns)
    last_tree = sched.meta["trees"][-1]
    for g in range(last_tree[0], last_tree[1], 7):
        a, b = r.sim.transfers(g), full.transfers(g)
        assert [(x["src"], x["dst"], x["paths"]) for x in a] == [(x["src"], x["dst"], x["paths"]) for x in b]
        assert [x["end_s"] for x in a] == pytest.approx([x["end_s"] for x in b], rel=REL)


def test_the_exact_check_refuses_a_partition_that_is_not_equitable():
    # owners 0 and 1 share a class; their rows (sorted keys) differ in one place
    keys = np.array([3, 5, 3, 6, 9])
    lens = np.array([2, 2, 1])
    assert not fold_routes._rows_equal(keys, lens, np.array([0, 0, 1]))
    keys[3] = 5
    assert fold_routes._rows_equal(keys, lens, np.array([0, 0, 1]))
    # the same keys, but owner 1 has one entry more
    assert not fold_routes._rows_equal(np.array([3, 3, 3]), np.array([1, 2]), np.array([0, 0]))


def test_flows_listed_in_another_order_keep_their_own_end_times():
    """A folded tree whose levels list their transfers in another order than its representative's
    (the last tree's, reversed here) reads each flow's end from the flow of the same class."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", 24 * MiB)
    first, end = sched.meta["trees"][-1]
    for p in {id(g.pattern): g.pattern for g in sched.groups[first:end]}.values():
        p.pairs = p.pairs[::-1]
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None and int(fold.rep_of[-1]) == 0
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    uneven = [g for g in range(first, end) if full.flow_ends.get(g) is not None]
    assert len(uneven) > 10  # groups whose flows end at different times: their order matters
    for g in uneven:
        np.testing.assert_allclose(folded.flow_ends.get(g), full.flow_ends.get(g), rtol=REL)
    _assert_same(folded, full, len(sched.groups))


def test_the_run_budget_counts_the_flows_a_folded_run_re_times(monkeypatch):
    """The budget bounds the work of the run, and a folded run re-times one flow for its alike ones:
    a budget the flow-by-flow run exceeds lets the folded run finish, with the flow-by-flow answer
    (counted as the flows they stand for, the NVLS tree over 512 DGX H100 re-timed about 1,050 flows
    an event, standing for 36,000-48,000, and was refused at 1 GiB after 3 s though it ends in 3.3 s).
    A budget its own flows exceed stops it, naming the flows they stand for."""
    from dgxstudio.sim import limits

    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", 24 * MiB)
    full = Engine(sim.router, scale).run(sched)
    folded = tree_fold.run(sim.router, sched, scale)
    assert folded.flow_events < full.flow_events * 0.75
    monkeypatch.setattr(limits, "MAX_FLOW_EVENTS", int(full.flow_events * 0.75))
    with pytest.raises(limits.TooLarge):
        Engine(sim.router, scale).run(sched)
    within = tree_fold.run(sim.router, sched, scale)
    assert within.flow_events == folded.flow_events
    _assert_same(within, full, len(sched.groups))
    monkeypatch.setattr(limits, "MAX_FLOW_EVENTS", folded.flow_events // 2)
    with pytest.raises(limits.TooLarge, match=r"flows at a time \([\d,]+ re-timed, each for alike ones\)"):
        tree_fold.run(sim.router, sched, scale)
