"""NCCL's NVLS tree with its alike network trees simulated once (issue #17: the NVLS tree at 16,384
GPUs): the trees' groups interleave, piece by piece, with every system's NVLS reduce and multicast
and the joins between them; the trees fold (sim/tree_fold.py) while those run as they are, and the
answer is the flow-by-flow run's per group, per flow and per channel."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives, limits, nvls, tree_fold  # noqa: F401 (collectives first: nvls imports it)
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.schedule import Group, Pattern

from .test_collnet_fold import _schedule
from .test_tree_fold import _assert_same

MiB = 2**20


def _nvls_tree(topo, size):
    """The NVLS tree's schedule, its network trees listed as the simulator lists them."""
    sim, sched, scale = _schedule(topo, "nvls-tree", size)
    sched.meta["trees"] = nvls.tree_units(sched)
    return sim, sched, scale


@pytest.mark.parametrize("label, build, size, classes", [
    ("2 DGX H100, rail-optimized", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 24 * MiB, 1),
    ("4 DGX H100, two systems a leaf", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2),
     40 * MiB, 1),
    ("5 DGX H100, uneven leaves oversubscribed 2:1 (mirror trees apart)",
     lambda: build_fat_tree(5, "dgx-h100", rail_optimized=True, oversubscription=2, per_leaf=2), 40 * MiB, 2),
])
def test_alike_trees_run_once_beside_the_systems_nvls(label, build, size, classes):
    sim, sched, scale = _nvls_tree(build(), size)
    assert len(sched.meta["trees"]) == 2 * 8  # a pair of trees per rail
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None and len(set(fold.rep_of.tolist())) == classes, label
    assert fold.outside  # the systems' NVLS reduce and multicast run beside the trees
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    assert isinstance(folded.rate_patterns, tree_fold._FoldedPatterns)
    assert folded.flow_events < full.flow_events  # the budget counts the flows the folded run re-times
    assert folded.time_s > 0 and folded.events > 20
    _assert_same(folded, full, len(sched.groups))
    # the NVLink channels the systems' reduce and multicast load came back as they ran
    nvl = np.flatnonzero(full.channel_bytes * ~np.isin(np.arange(len(full.channel_bytes)), fold.uch))
    assert len(nvl) and folded.channel_bytes[nvl] == pytest.approx(full.channel_bytes[nvl], rel=1e-9)


def test_the_simulator_folds_the_nvls_tree():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    r = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run("all-reduce", "nvls-tree",
                                                                                      40 * MiB)
    assert isinstance(r.sim.rate_patterns, tree_fold._FoldedPatterns)
    sim, sched, scale = _nvls_tree(topo, 40 * MiB)
    assert r.time_s == pytest.approx(Engine(sim.router, scale).run(sched).time_s, rel=1e-9)


def test_a_transfer_outside_the_trees_on_their_channels_keeps_the_run_flow_by_flow():
    """A group outside the trees that crosses the network (where the trees run) would see folded
    channels: the schedule is then run flow by flow."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    sim, sched, scale = _nvls_tree(topo, 40 * MiB)
    a, b = sim.channel_plan().systems[0][0], sim.channel_plan().systems[3][0]
    sched.add(Group("across", Pattern([(a, b)]), 4 * MiB))
    assert tree_fold.Fold.of(Engine(sim.router, scale), sched) is None
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    assert not isinstance(folded.rate_patterns, tree_fold._FoldedPatterns)
    np.testing.assert_array_equal(folded.group_done, full.group_done)


def test_a_folded_nvls_tree_runs_within_the_budget_of_the_flows_it_re_times(monkeypatch):
    """Over 512 DGX H100 the NVLS tree's folded run re-times about 1,050 flows an event for 36,000-48,000
    and its state repeats only after about 8,500 events (its transient decays geometrically): counted
    as the flows they stand for it was refused from 512 MiB up, though it ends in 3.3 s."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim, sched, scale = _nvls_tree(topo, 24 * MiB)
    full = Engine(sim.router, scale).run(sched)
    folded = tree_fold.run(sim.router, sched, scale)
    monkeypatch.setattr(limits, "MAX_FLOW_EVENTS", int(full.flow_events * 0.75))
    with pytest.raises(limits.TooLarge):
        Engine(sim.router, scale).run(sched)
    within = tree_fold.run(sim.router, sched, scale)
    assert within.flow_events == folded.flow_events < limits.MAX_FLOW_EVENTS
    _assert_same(within, full, len(sched.groups))


def test_a_long_nvls_tree_runs_flow_by_flow_where_its_steady_state_is_skipped():
    """Folding builds every group as an object: past ``FOLD_PIECES`` pieces the simulator leaves the
    run to the steady-state shortcut (16 GiB over 128 DGX H100 took 22 s folded, 4.8 s not)."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    long = sim.run("all-reduce", "nvls-tree", 4 * 2**30)
    assert long.schedule.meta["pieces"] > nvls.FOLD_PIECES
    assert not isinstance(long.sim.rate_patterns, tree_fold._FoldedPatterns) and long.sim.periods_skipped > 0
    short = sim.run("all-reduce", "nvls-tree", 256 * MiB)
    assert short.schedule.meta["pieces"] <= nvls.FOLD_PIECES
    assert isinstance(short.sim.rate_patterns, tree_fold._FoldedPatterns)


def test_the_systems_nvls_transfers_read_as_they_ran():
    """A group outside the trees (a system's NVLS reduce) lists its pairs, paths and end times as in
    the flow-by-flow run, and so does a tree group of a tree that was not simulated."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    r = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run("all-reduce", "nvls-tree",
                                                                                      40 * MiB)
    sim, sched, scale = _nvls_tree(topo, 40 * MiB)
    full = Engine(sim.router, scale).run(sched)
    metas = [m for _, m in sched.groups.patterns_and_metas()]
    outside = [g for g, m in enumerate(metas) if m.get("phase") in ("nvls-reduce", "nvls-multicast")]
    last_tree = sched.meta["trees"][-1]
    assert outside and last_tree
    for g in [*outside[::37], *last_tree[::41]]:
        a, b = r.sim.transfers(g), full.transfers(g)
        assert a and [(x["src"], x["dst"], x["paths"]) for x in a] == [(x["src"], x["dst"], x["paths"]) for x in b]
        assert [x["end_s"] for x in a] == pytest.approx([x["end_s"] for x in b], rel=1e-9)
