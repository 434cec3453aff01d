"""benchmarks/midsize_candidates.py: NCCL's ring and tuning arithmetic it uses to weigh issue #13's mid-size bands."""

import json

import pytest

from tests.benchmark_scripts import load_benchmark

MiB = 2**20


@pytest.fixture(scope="module")
def mod():
    return load_benchmark("midsize_candidates")


@pytest.fixture(scope="module")
def data(mod):
    return json.loads(mod.DATA.read_text(encoding="utf-8"))


def test_a100_ring_runs_one_loop_up_to_nchannels_x_ranks_x_2_mib(mod, data):
    d = data["a100_one_node"]
    # all_reduce.h: chunk = 512 KiB step x 4 chunk steps = 2 MiB; loop = 24 channels x 8 ranks x 2 MiB = 384 MiB
    at_128 = mod.ring_structure(128 * MiB, 24, 8, d)
    assert at_128["loops"] == 1 and at_128["chunk"] == pytest.approx(128 * MiB / 192) and at_128["slices"] == 28
    assert mod.ring_structure(384 * MiB, 24, 8, d)["loops"] == 1
    past = mod.ring_structure(384 * MiB + 1, 24, 8, d)
    assert past["loops"] == 2 and past["chunk"] == 2 * MiB and past["slices"] == 56 and past["steps"] == 28


def test_simple_ring_keeps_every_channel_from_nc_x_nt_x_64_bytes(mod, data):
    d = data["a100_one_node"]
    assert mod.simple_channels(24 * 512 * 64, 24, d) == (24, 544)      # the sync warp on top of 512 threads
    assert mod.simple_channels(24 * 512 * 64 - 1, 24, d) == (23, 544)
    assert mod.simple_channels(1024, 24, d) == (1, 96)                 # one channel, threads halved to 64, + a warp


def test_nccl_2_24_3_nvls_tree_latency_is_its_own_not_the_simulators(mod, data):
    shape = mod.T.CallShape("all-reduce", 32, 4, "hopper", 16, 1e11, 1e11, "nvlink", nvls_busbw_Bps=1e11,
                            net_busbw_Bps=1e11)
    assert mod.nvls_tree_latency_2243(shape, data["h100_four_nodes"]) == pytest.approx(81e-6)  # 25 + 2 x 2 x 14 us
    assert mod.T.model_latency(shape, "nvls-tree", "simple") > 100e-6                         # master's 20.9 us hops
