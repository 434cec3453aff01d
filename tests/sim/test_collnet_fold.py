"""CollNet with its alike rails simulated once (issue #17: CollNet at 16,384 GPUs): every rail's
chains and SHARP tree are a copy of the others' on a rail-optimized fabric, so the run folds
(sim/tree_fold.py) and gives the flow-by-flow run's answer per group, per flow and per channel."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator

from .test_tree_fold import _assert_same

MiB = 2**20


def _schedule(topo, algorithm, size):
    """The simulator, the schedule of an all-reduce by ``algorithm`` and its capacity scale."""
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", algorithm, "simple", size)
    return sim, sched, scale


def _collnet(topo, size):
    return _schedule(topo, "collnet", size)


@pytest.mark.parametrize("label, build, size", [
    ("4 DGX H100, rail-optimized, two systems a leaf (a two-level SHARP tree)",
     lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2), 8 * MiB),
    ("5 DGX H100, uneven leaves oversubscribed 2:1",
     lambda: build_fat_tree(5, "dgx-h100", rail_optimized=True, oversubscription=2, per_leaf=2), 6 * MiB),
    ("8 DGX A100 on one fat tree, leaves 4:1 oversubscribed",
     lambda: build_fat_tree(8, "dgx-a100", oversubscription=4, per_leaf=2), 4 * MiB),
])
def test_alike_rails_run_once_with_the_flow_by_flow_answer(label, build, size):
    sim, sched, scale = _collnet(build(), size)
    assert len(sched.meta["trees"]) == len(sim.channel_plan().tree_chains)
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    assert isinstance(folded.rate_patterns, tree_fold._FoldedPatterns), label
    assert folded.rate_patterns.size.max() >= 2
    _assert_same(folded, full, len(sched.groups))


def test_the_simulator_folds_collnet():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    r = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run("all-reduce", "collnet", 8 * MiB)
    assert isinstance(r.sim.rate_patterns, tree_fold._FoldedPatterns)
    sim, sched, scale = _collnet(topo, 8 * MiB)
    assert r.time_s == pytest.approx(Engine(sim.router, scale).run(sched).time_s, rel=1e-9)
