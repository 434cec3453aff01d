"""A run kept for the report after it leaves the screen: the same figures, a fraction of the memory."""

import pickle

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import CompactSim, compact, simulate


def test_a_compacted_run_reports_the_same_and_weighs_far_less():
    topo = build_fat_tree(4, "dgx-a100")
    full = simulate(topo, "all-reduce", "tree", 64 * 2**20)
    small = compact(full)
    assert isinstance(small.sim, CompactSim) and compact(small) is small
    a, b = full.as_dict(), small.as_dict()
    for key in ("time_s", "busbw_Bps", "bound_busbw_Bps", "fraction_of_bound", "transfer_groups", "events",
                "algorithm", "protocol", "channels"):
        assert a[key] == b[key], key
    assert a["bottlenecks"] == b["bottlenecks"]
    assert small.sim.bottlenecks(1) == full.sim.bottlenecks(1)
    assert len(small.sim.delivered) <= 256 and small.sim.delivered[-1] == full.sim.delivered[-1]
    assert len(pickle.dumps(small.sim)) * 20 < len(pickle.dumps(full.sim, protocol=5)) + len(pickle.dumps(full.schedule))
