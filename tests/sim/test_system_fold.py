"""An NVLS tree's systems wired alike simulated once (sim/system_fold.py, issue #17): one system per
class runs its NVLink SHARP reduce and multicast, its flows standing for the class's, and the answer
is the flow-by-flow run's per group, per flow and per channel; a system wired differently is a class
of its own."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives, nvls, system_fold, tree_fold  # noqa: F401 (collectives first: nvls imports it)
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.schedule import Lanes

from .test_collnet_fold import _schedule
from .test_tree_fold import _assert_same

MiB = 2**20


def _slower_nvlink(topo, k):
    """One NVLink of the k-th system (by name) at 1 GB/s per direction: that system is wired
    differently (its NVLS reduce takes longer, and its switches' shares change)."""
    gpus = [d.id for d in topo.gpus()]
    sid = sorted({topo.system_of(g) for g in gpus})[k]
    inside = sorted((lk for lk in topo.links.values() if lk.type == "NVLink4" and topo.system_of(lk.a) == sid),
                    key=lambda lk: lk.id)
    inside[0].bandwidth_per_direction_Bps = 1e9  # (None: the link type's own figure, 450 GB/s and more)
    return topo


def _runs(topo, size):
    sim, sched, scale = _schedule(topo, "nvls-tree", size)
    sched.meta["trees"] = nvls.tree_units(sched)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    folded = tree_fold.run(sim.router, sched, scale)
    full = Engine(sim.router, scale).run(sched)
    return sched, fold, folded, full


@pytest.mark.parametrize("label, build, size, rep_sys", [
    ("2 DGX H100, rail-optimized", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 24 * MiB, [0, 0]),
    ("4 DGX H100, two systems a leaf", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2),
     40 * MiB, [0, 0, 0, 0]),
    ("5 DGX H100, uneven leaves oversubscribed 2:1",
     lambda: build_fat_tree(5, "dgx-h100", rail_optimized=True, oversubscription=2, per_leaf=2), 40 * MiB, [0] * 5),
    ("4 DGX H100, the third's NVLink slower (a class of its own)",
     lambda: _slower_nvlink(build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2), 2), 40 * MiB,
     [0, 0, 2, 0]),
    ("5 DGX H100, the fourth's NVLink slower", lambda: _slower_nvlink(build_fat_tree(5, "dgx-h100",
     rail_optimized=True, oversubscription=2, per_leaf=2), 3), 40 * MiB, [0, 0, 0, 3, 0]),
])
def test_alike_systems_run_once_with_the_flow_by_flow_answer(label, build, size, rep_sys):
    sched, fold, folded, full = _runs(build(), size)
    assert fold is not None and fold.systems is not None, label
    assert fold.systems.rep_sys.tolist() == rep_sys
    systems = sched.meta["systems"]
    # the folded systems' groups were not run: the run had a representative system's per class
    per_system = sum(1 for _, m in sched.groups.patterns_and_metas() if m.get("phase") == "nvls-reduce") // len(systems)
    assert (~fold.systems.kept).sum() == 2 * per_system * (len(systems) - len(set(rep_sys)))
    assert folded.flow_events < full.flow_events  # the budget counts the flows the folded run re-times
    _assert_same(folded, full, len(sched.groups))
    # every system's NVLink channels carried what they carry in the flow-by-flow run
    nvl = fold.systems.channels
    assert len(nvl) > 100 and (full.channel_bytes[nvl] > 0).all()
    np.testing.assert_allclose(folded.channel_bytes[nvl], full.channel_bytes[nvl], rtol=1e-9)
    # a folded system's transfers read as they ran (its routes asked when first read)
    last = [g for g in range(len(sched.groups)) if fold.systems.rep_group[g] != g][-3:]
    for g in last:
        a, b = folded.transfers(g), full.transfers(g)
        assert [(x["src"], x["dst"], x["paths"]) for x in a] == [(x["src"], x["dst"], x["paths"]) for x in b]
        assert [x["end_s"] for x in a] == pytest.approx([x["end_s"] for x in b], rel=1e-9)
    assert len(systems) == len(rep_sys)


def test_systems_the_router_reads_from_no_template_run_as_they_are():
    """The first system of a kind is the router's reference: wired differently, the others' routes
    are each searched, no template says they are alike, and each system runs its own flows."""
    sched, fold, folded, full = _runs(_slower_nvlink(build_fat_tree(4, "dgx-h100", rail_optimized=True,
                                                                    per_leaf=2), 0), 40 * MiB)
    assert fold is not None and fold.systems is None
    _assert_same(folded, full, len(sched.groups))


def test_a_system_whose_groups_wait_differently_keeps_the_systems_unfolded():
    """The groups of a system must be its representative's renamed, dependencies included: one
    reduce that waits for the trees to take a later piece than the others' is not, and nothing
    folds by system (the trees still do)."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    sim, sched, scale = _schedule(topo, "nvls-tree", 40 * MiB)
    names = [sched.groups[g].name for g in range(len(sched.groups))]
    g = names.index("NVLS reduce s3 s4.nvswitch3 piece 4")
    assert sched.groups[g].deps_done == (names.index("trees took piece 0"),)
    sched.set_deps_done(g, (names.index("trees took piece 1"),))
    sched.meta["trees"] = nvls.tree_units(sched)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None and fold.systems is None
    _assert_same(tree_fold.run(sim.router, sched, scale), Engine(sim.router, scale).run(sched), len(sched.groups))


def test_the_schedule_lists_its_trees_as_its_metas_do():
    """``tree_units`` reads the trees' groups the builder listed; they are those whose meta names the
    tree, pieces added as columns included."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    for size in (24 * MiB, 512 * MiB):
        sim, sched, scale = _schedule(topo, "nvls-tree", size)
        listed = nvls.tree_units(sched)
        by_key: dict = {}
        for g, (_, m) in enumerate(sched.groups.patterns_and_metas()):
            if m.get("tree") is not None:
                by_key.setdefault(m["tree"], []).append(g)
        assert listed == list(by_key.values())
    assert any(isinstance(c, Lanes) for c in sched.groups._chunks)  # (the long one's later pieces are columns)


def test_a_long_nvls_tree_of_many_systems_folds_with_the_flow_by_flow_answer(monkeypatch):
    """With its systems folded a piece runs a few dozen groups: from ``FOLD_SYSTEMS`` systems the
    simulator folds up to ``FOLD_PIECES_SYSTEMS`` pieces (here lowered to four systems), pieces
    added as columns included, and the answer is the flow-by-flow run's."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    sim, sched, scale = _schedule(topo, "nvls-tree", 2048 * MiB)
    assert sched.meta["pieces"] > nvls.FOLD_PIECES and not nvls.folds(sched)
    monkeypatch.setattr(nvls, "FOLD_SYSTEMS", 4)
    assert nvls.folds(sched)
    monkeypatch.setattr(nvls, "FOLD_PIECES_SYSTEMS", sched.meta["pieces"] - 1)
    assert not nvls.folds(sched)
    monkeypatch.setattr(nvls, "FOLD_PIECES_SYSTEMS", sched.meta["pieces"])
    _assert_folds_as_flow_by_flow(topo, sim, sched, scale, 2048 * MiB)


def _assert_folds_as_flow_by_flow(topo, sim, sched, scale, size):
    """The simulator's run of ``size`` folds its systems, with the flow-by-flow run's answer."""
    r = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run("all-reduce", "nvls-tree", size)
    assert isinstance(r.sim.rate_patterns, tree_fold._FoldedPatterns)
    sched.meta["trees"] = nvls.tree_units(sched)
    assert tree_fold.Fold.of(Engine(sim.router, scale), sched).systems is not None
    _assert_same(r.sim, Engine(sim.router, scale).run(sched), len(sched.groups))


def test_a_16_gib_nvls_tree_of_many_systems_folds_with_the_flow_by_flow_answer(monkeypatch):
    """From ``FOLD_SYSTEMS`` systems (here lowered to four) a 16 GiB NVLS tree (2,048 pieces here, past the
    old cap of 1,024; most of them columns) folds as it is, and the answer is the flow-by-flow run's."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    monkeypatch.setattr(nvls, "FOLD_SYSTEMS", 4)
    sim, sched, scale = _schedule(topo, "nvls-tree", 16384 * MiB)
    assert sched.meta["pieces"] > 1024 and nvls.folds(sched)
    _assert_folds_as_flow_by_flow(topo, sim, sched, scale, 16384 * MiB)


def test_a_systems_legs_are_the_routers_templates_asked_in_one_pass(monkeypatch):
    """SystemFold.of reads each system's pairs from Router.template_leg in one pass; ``_Legs``
    (which may route a pattern) is asked only for pairs without a template leg: the reference
    system's own, which the router searched, and none of the other systems'."""
    asked = []
    real = system_fold._Legs.__call__

    def call(self, pattern, i, a, b):
        asked.append(self.router._system.get(a))
        return real(self, pattern, i, a, b)
    monkeypatch.setattr(system_fold._Legs, "__call__", call)
    sched, fold, folded, full = _runs(build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2), 40 * MiB)
    monkeypatch.undo()
    assert fold is not None and fold.systems is not None and fold.systems.rep_sys.tolist() == [0, 0, 0, 0]
    systems = sched.meta["systems"]
    # (two folds: _runs' Fold.of, and tree_fold.run's)
    assert asked and len(set(asked)) == 1 and len(asked) <= 2 * sum(len(p.pairs) for p in systems[0])
    _assert_same(folded, full, len(sched.groups))
