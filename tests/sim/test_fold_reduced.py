"""The schedule a folded tree run simulates, built from columns (sim/fold_reduced.py): group for
group the one the group-by-group build gave (written out below as the reference): same names,
meta, patterns, bytes, delays, and dependencies renumbered and listed once in their first order."""

import dataclasses

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator  # (first: the modules import in its order)
from dgxstudio.sim import fold_reduced, nvls, tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.schedule import Schedule

MiB = 2**20


def _reference(sched, kept, new_id):
    out = Schedule([], sched.payload_bytes, sched.description, dict(sched.meta))
    for g in kept.tolist():
        grp = sched.groups[g]
        out.add(dataclasses.replace(grp, deps_done=tuple(dict.fromkeys(int(new_id[d]) for d in grp.deps_done)),
                                    deps_sent=tuple(dict.fromkeys(int(new_id[d]) for d in grp.deps_sent))))
    return out


@pytest.mark.parametrize("algorithm, build, size", [
    ("collnet", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2), 64 * MiB),
    ("collnet", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 1024 * MiB),  # (columns)
    ("tree", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True), 64 * MiB),
    ("tree", lambda: build_fat_tree(4, "dgx-a100"), 16 * MiB),
    ("nvls-tree", lambda: build_fat_tree(3, "dgx-h100", rail_optimized=True), 32 * MiB),  # (systems folded)
])
def test_the_reduced_schedule_is_the_group_by_group_one(algorithm, build, size):
    topo = build()
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", algorithm, "simple", size)
    if algorithm == "nvls-tree":
        sched.meta["trees"] = nvls.tree_units(sched)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None
    kept, new_id = fold.kept()
    assert len(kept) < len(sched.groups)
    got = fold_reduced.reduced(sched, sched.columns(), kept, new_id)
    want = _reference(sched, kept, new_id)
    assert len(got.groups) == len(want.groups) == len(kept)
    for a, b in zip(got.groups, want.groups):
        assert (a.name, a.meta, a.bytes_each, a.duration_s, a.post_delay_s) == \
            (b.name, b.meta, b.bytes_each, b.duration_s, b.post_delay_s)
        assert a.pattern is b.pattern
        assert tuple(a.deps_done) == tuple(b.deps_done) and tuple(a.deps_sent) == tuple(b.deps_sent)
    assert got.meta == want.meta and got.payload_bytes == want.payload_bytes
