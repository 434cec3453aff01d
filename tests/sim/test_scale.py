"""Large clusters (issue 17): algorithms finish, and the engine's shortcuts give the exact answer."""

import math

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import simulate

MiB = 2**20


@pytest.mark.parametrize("systems", [16, 24, 64])
def test_tree_all_reduce_finishes_on_dgx_a100_fat_trees(systems):
    # 24 and 64 systems once spun forever: a flow's remaining bytes went to -2e-9 B and never finished.
    topo = build_fat_tree(systems, system="dgx-a100")
    r = simulate(topo, "all-reduce", "tree", MiB)
    assert math.isfinite(r.time_s) and r.time_s > 0
    # Every event finishes a flow or a group: the loop cannot outnumber the transfers it moves.
    flows = sum(len(g.pattern.pairs) for g in r.schedule.groups if g.pattern is not None)
    assert r.sim.events <= flows + len(r.schedule.groups)
