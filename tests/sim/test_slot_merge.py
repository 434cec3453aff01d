"""Slots of one class inside the representative tree run as one flow (sim/slot_merge.py): each
role's flows start from its classes' first slots and stand for their classes' sizes, every slot
reads its class's end time, and the folded run keeps the flow-by-flow run's answer with fewer flows
than slots."""

import numpy as np

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.slot_merge import SlotMerge

from .test_tree_fold import MiB, _assert_same


def test_each_role_runs_one_flow_per_class_from_its_first_slot():
    # two trees of 7 slots in roles of 3 and 4; tree 1's classes are read for its own roles
    cls = np.array([5, 2, 5, 9, 9, 1, 9, 0, 1, 2, 3, 3, 3, 3])
    merge = SlotMerge(cls, 7, np.array([0, 3, 7]))
    pos, count, inner = merge.role(0, 0)
    assert pos.tolist() == [0, 1] and count.tolist() == [2, 1] and inner.tolist() == [0, 1, 0]
    pos, count, inner = merge.role(0, 1)
    assert pos.tolist() == [0, 2] and count.tolist() == [3, 1] and inner.tolist() == [0, 0, 1, 0]
    pos, count, inner = merge.role(1, 1)
    assert pos.tolist() == [0] and count.tolist() == [4] and inner.tolist() == [0, 0, 0, 0]
    assert merge.role(1, 1)[0] is pos  # (worked out once)


def test_a_folded_run_of_fewer_flows_than_slots_keeps_every_flows_answer(monkeypatch):
    """On 16 DGX H100 systems over spines the representative tree's chains inside the systems fall
    into a few classes: the folded run carries fewer flows than the tree has slots, each flow
    standing for its class's slots of every tree, and every group, flow and channel reads as in the
    flow-by-flow run. (16 systems: 106 flows for 254 slots. On 8, NCCL's tree, whose root has one
    child and whose inner systems differ in their children, leaves 68 flows for 126 slots; a tree
    with the root's two children left 62.)"""
    topo = build_fat_tree(16, "dgx-h100", rail_optimized=True, per_leaf=2)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", 6 * MiB)
    runs = []
    real = Engine.run

    def spy(self, *a, **k):
        runs.append(self)
        return real(self, *a, **k)

    monkeypatch.setattr(Engine, "run", spy)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None
    folded = fold.run()
    eng1 = runs[-1]
    flows = len(eng1.routes)
    assert flows < fold.per_tree / 2  # (one representative tree: a flow per class of its slots)
    stands = np.asarray([eng1.represents[r] for r in range(flows)])
    assert stands.sum() == fold.per_tree * fold.m and (stands > fold.m).any()
    monkeypatch.setattr(Engine, "run", real)
    _assert_same(folded, Engine(sim.router, scale).run(sched), len(sched.groups))
