"""NCCL's LL and LL128 trees forward each line as it arrives over NVLink (prims_ll.h LLGenericOp), and
send a step over the network only once all its lines are written (net.cc sendProxyProgress)."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator

KiB = 1024


def _sim(system: str, proto: str) -> Simulator:
    topo = build_fat_tree(2, system, rail_optimized=True)
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True, protocol=proto))


@pytest.mark.parametrize("system", ["dgx-h100", "dgx-a100"])
def test_ll_tree_across_two_systems_lands_near_ncclS_own_estimate(system):
    """One LL step (32 KiB of data) holds a channel's whole share at 256 KiB: forwarded whole at every
    level, the tree paid a piece's transfer on each of its 2 x 8 levels and took 2.2x (H100) and 2.5x
    (A100) NCCL's own estimate, so `auto` sweeps dipped where NCCL picks the LL tree."""
    sim = _sim(system, "ll")
    r = sim.run("all-reduce", "tree", 256 * KiB)
    sim.options.protocol = "auto"
    estimate = sim.run("all-reduce", "auto", 256 * KiB).model_estimates["tree/LL"]
    assert r.time_s == pytest.approx(estimate, rel=0.3)


def test_network_levels_wait_for_a_whole_step_and_nvlink_levels_stream():
    sim = _sim("dgx-h100", "ll")
    r = sim.run("all-reduce", "tree", 256 * KiB)
    groups = r.schedule.groups
    system = sim.router.system_of
    pieces = max(g.meta["piece"] for g in groups if g.meta.get("tree") == "tree 0") + 1
    assert pieces > 1  # the step is cut in pieces that stand for its lines
    seen = {"net": 0, "nvlink": 0}
    for g in groups:
        if g.meta.get("tree") != "tree 0" or g.meta.get("phase") != "up" or not g.deps_done:
            continue
        before = groups[g.deps_done[0]].meta
        if before.get("phase") != "up":
            continue
        crosses = any(system.get(a) != system.get(b) for a, b in g.pattern.pairs)
        if crosses:  # the proxy sends once the step's last line is written (one step here)
            assert before["piece"] == pieces - 1
        else:  # each line goes on as it arrives
            assert before["piece"] == g.meta["piece"]
        seen["net" if crosses else "nvlink"] += 1
    assert seen["net"] and seen["nvlink"]


def test_streaming_pieces_are_ncclS_trips():
    from dgxstudio.sim import tuning as T

    # LL: 512 threads x one 8-byte data line = 4 KiB a trip; 16 KiB a channel is 4 trips of one step
    assert T.tree_pieces("ll", 256 * KiB, 16, 11) == (4096, 4)
    # a 32 KiB step holds 8 trips; 1 MiB over 16 channels is 2 steps
    assert T.tree_pieces("ll", 1024 * KiB, 16, 11) == (4096, 8)
    # LL128: a trip is 640 threads x 60 data bytes = 38,400 B, more than 16 KiB: one piece
    assert T.tree_pieces("ll128", 256 * KiB, 16, 11)[1] == 1
    # Simple forwards whole chunks
    assert T.tree_pieces("simple", 16 * 2**20, 24, 7) == (65536, 1)
