"""The schedule a folded tree run simulates, built from columns (sim/fold_reduced.py): group for
group the one the group-by-group build gave (written out below as the reference): same names,
meta, patterns, bytes, delays, and dependencies renumbered and listed once in their first order."""

import dataclasses

import pytest

from dgxstudio.sim.run import Simulator  # noqa: F401 (first: the modules import in its order)
from dgxstudio.sim import fold_reduced, tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.schedule import Schedule

from .test_fold_alike import SCHEDULES, built


def _reference(sched, kept, new_id):
    out = Schedule([], sched.payload_bytes, sched.description, dict(sched.meta))
    for g in kept.tolist():
        grp = sched.groups[g]
        out.add(dataclasses.replace(grp, deps_done=tuple(dict.fromkeys(int(new_id[d]) for d in grp.deps_done)),
                                    deps_sent=tuple(dict.fromkeys(int(new_id[d]) for d in grp.deps_sent))))
    return out


@pytest.mark.parametrize("algorithm, build, size", SCHEDULES)  # (they fold)
def test_the_reduced_schedule_is_the_group_by_group_one(algorithm, build, size):
    sim, sched, scale = built(algorithm, build, size)
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
