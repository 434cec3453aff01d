"""The NVLS tree's pieces are NCCL's loops: every channel moves one chunk per head, the chunk by
enqueue.cc's NVLS-tree rule (nvlsChunkSize 128 KiB, at most 64 KiB from 4 nodes on, smaller for small
calls: v2.28.9-1:2060-2068; resources/nccl_tuning.json ``nvls_tree_chunk``)."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import SimOptions, Simulator

MiB = 2**20


@pytest.mark.parametrize("size, nodes, chunk", [
    (8 * 2**30, 2, 131072),     # 2 nodes keep nvlsChunkSize at large sizes
    (64 * MiB, 2, 131072),      # 64 MiB is not < 4 x 128 ops x 128 KiB
    (64 * MiB - 1, 2, 65536),
    (8 * MiB, 2, 65536),        # not < 1 x 128 x 64 KiB
    (4 * MiB, 2, 32768),
    (512 * MiB, 248, 65536),    # from 4 nodes on: at most 64 KiB
    (8 * 2**30, 4, 65536),
    (32 * MiB, 4, 65536),       # not < 4 x 128 x 64 KiB
    (8 * MiB - 1, 4, 32768),
])
def test_chunk_follows_enqueue_cc(size, nodes, chunk):
    assert T.nvls_tree_chunk_bytes(size, nodes, 16, 8) == chunk


def test_more_channels_and_heads_shrink_it_sooner():
    # concurrentOps = channels x heads: 32 x 8 = 256 ops on 2 nodes, 32 MiB < 4 x 256 x 128 KiB
    assert T.nvls_tree_chunk_bytes(32 * MiB, 2, 32, 8) == 65536
    assert T.nvls_tree_chunk_bytes(128 * MiB, 2, 32, 8) == 131072
    # 96 MiB: not < 4 x 128 ops x 128 KiB on 16 channels, < 4 x 256 x 128 KiB on 32 (both lines read
    # 64 KiB at 32 MiB, where the test showed no difference between the counts)
    assert T.nvls_tree_chunk_bytes(96 * MiB, 2, 16, 8) == 131072
    assert T.nvls_tree_chunk_bytes(96 * MiB, 2, 32, 8) == 65536
    assert T.nvls_tree_chunk_bytes(96 * MiB, 2, 16, 16) == 65536


def _schedule(systems: int, size: float):
    topo = build_fat_tree(systems=systems, system="dgx-h100", rail_optimized=True)
    gpus = [g.id for g in topo.gpus()]
    result = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "nvls-tree", size)
    return result


def test_two_dgx_h100_move_128_kib_chunks():
    # 16 channels x 8 heads x 128 KiB = 16 MiB a loop: 512 loops at 8 GiB (the merge base cut 8 MiB
    # pieces, NCCL's loop from 4 nodes on, 1,024 of them)
    r = _schedule(2, 8 * 2**30)
    assert r.channels == 16
    assert r.schedule.meta["pieces"] == 512


def test_four_dgx_h100_move_64_kib_chunks():
    r = _schedule(4, 2**30)      # 16 x 8 x 64 KiB = 8 MiB a loop
    assert r.schedule.meta["pieces"] == 128
