"""NCCL's per-channel ceiling of the NVLS tree, perChMaxNVLSTreeBw, as NCCL defines it: a bus
bandwidth (bytes/s per direction, nccl-tests' busbw units) per head of the NVLS graph, turned into
algorithm bandwidth by nRanks / nsteps (tuning.cc v2.28.9-1:285-301, 345-350; resources/nccl_tuning.json
``nvls_tree_per_channel_units``). The simulated NVLS tree must not beat it."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import SimOptions, Simulator


def test_one_head_carries_the_bus_ceiling_times_nranks_over_nsteps():
    shape = T.CallShape("all-reduce", 16, 2, "hopper", 16, 4e11, 4e11, "nvlink", nvls_busbw_Bps=4e11,
                        net_busbw_Bps=4e11)
    # 57.7 GB/s bus bandwidth per head on 2 Hopper nodes; 16 ranks: algbw = busbw x 16 / 30
    assert T.nvls_tree_head_algbw_Bps(shape) == pytest.approx(57.7e9 * 16 / 30)
    one = T.CallShape("all-reduce", 8, 1, "hopper", 16, 4e11, 4e11, "nvlink", nvls_busbw_Bps=4e11)
    assert T.nvls_tree_head_algbw_Bps(one) == float("inf")   # NCCL sets 0.0 for one node: no ceiling


def test_two_dgx_h100_nvls_tree_stays_under_nccls_ceiling_of_8_heads():
    topo = build_fat_tree(systems=2, system="dgx-h100", rail_optimized=True)
    gpus = [g.id for g in topo.gpus()]
    shape = Simulator(topo, gpus).call_shape("all-reduce")
    assert T.nvls_heads(shape) == 8
    ceiling_busbw = 8 * 57.7e9          # bytes/s per direction, as nccl-tests prints busbw
    # (the links' achievable figures, as benchmarks/fidelity_offfile.py runs these rows)
    result = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "nvls-tree", 4 * 2**30)
    # the merge base simulated 519.7 GB/s busbw here (its cap, 57.7 GB/s of data a pair for 16
    # channels, never bound); measured at 8 GiB: 441 (coreweave/nccl-tests #92), 430 (NVIDIA/nccl #1221)
    assert result.busbw_Bps <= ceiling_busbw * (1 + 1e-9)
    assert result.busbw_Bps >= 0.95 * ceiling_busbw      # the ceiling binds: nothing else slower
