"""A tree whose chain inside a system is longer than the simulator's piece budget (NVL72 racks: 72 GPUs
a chain) gets pieces enough to fill it; chains of at most 16 GPUs keep the budget they had."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tuning as T
from dgxstudio.sim.results import busbw_factor
from dgxstudio.sim.run import SimOptions, Simulator

MiB = 2**20


def test_budget_grows_only_for_chains_longer_than_it():
    base = T.tuning_data()["tree_pipeline"]["max_pieces_per_connection"]
    # 20 NVL72 racks: 71 GPUs after the chain's head, 4 levels between racks
    assert T.piece_budget(T.tree_depth(1440, 20), 71) == 75 + base
    # 2,048 DGX H100 (depth 18) and one DGX A100 keep the budget
    assert T.piece_budget(T.tree_depth(16384, 2048), 7) == base
    assert T.piece_budget(T.tree_depth(8, 1), 7) == base
    # a whole LL128 message over 32 channels: 4 GiB is 3,495 trips a channel, cut in depth + budget
    piece, each = T.tree_pieces("ll128", 4 * 2**30, 32, 75, 71)
    assert 4 * 2**30 / 32 / piece == pytest.approx(75 + base)
    piece, each = T.tree_pieces("ll128", 4 * 2**30, 32, 18, 7)
    assert 4 * 2**30 / 32 / piece == pytest.approx(base)


def test_nvl72_tree_fills_its_72_gpu_chain():
    """Two NVL72 racks, NCCL's tree forced at 64 MiB: with 16 pieces a channel the 73-deep tree never
    filled and ran at 47% of NCCL's own estimate for it (144.0 against 304 GB/s busbw)."""
    topo = build_fat_tree(2, "gb200-nvl72", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    size = 64 * MiB
    r = sim.run("all-reduce", "tree", size)
    assert r.protocol == "ll128"
    pieces = {g.meta.get("piece") for g in r.schedule.groups if "piece" in g.meta}
    assert len(pieces) > T.tree_depth(144, 2)
    estimate = size / r.model_estimates["tree/LL128"] * busbw_factor("all-reduce", 144)
    assert r.busbw_Bps == pytest.approx(estimate, rel=0.15)
