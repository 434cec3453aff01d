"""benchmarks/nvls_tree_fill_findings.py: the NVLS tree over 248 x 8 H200 against NCCL's source, and
where its simulated time goes (the first piece's fill through 16 levels at the pair cap)."""

import json

import pytest

from tests.benchmark_scripts import load_benchmark

MiB = 2**20


@pytest.fixture(scope="module")
def mod():
    return load_benchmark("nvls_tree_fill_findings")


@pytest.fixture(scope="module")
def data(mod):
    return json.loads(mod.DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def run(mod, data):
    case = data["case"]
    sim = mod.machine(case["systems"], case["system"])
    return sim, sim.run("all-reduce", "nvls-tree", float(case["size_bytes"]))


def test_nccls_side_at_248_nodes(mod):
    side = mod.nccl_side(512 * MiB, 248, 16, 8)
    assert side["chunk_bytes"] == 65536 and side["loop_bytes"] == 8 * MiB and side["loops_per_channel"] == 64
    assert side["tree_depth"] == 8                       # rank 0 at the root with one child: 1 + log2(128)
    assert side["model_latency_hops"] == 14              # NCCL's model: 2 x log2i(248)
    assert side["model_latency_s"] == pytest.approx(25e-6 + 14 * 20.9e-6)
    assert mod.btree_depth(2) == 1 and mod.btree_depth(4) == 2 and mod.btree_depth(256) == 8


def test_time_line_adds_up_to_the_run_and_the_fill_is_the_pair_cap(mod, data, run):
    sim, r = run
    tl = mod.timeline(r)
    assert tl["pieces"] == 64
    assert tl["first_plus_steady_s"] == pytest.approx(r.time_s, rel=1e-9)
    fa = mod.fill_arithmetic(sim, r.size_bytes, r.channels)
    # the first piece's way up and down the 8-level trees: 16 x (a tree's share at the pair cap + hop latency)
    assert tl["trees_done_s"] - tl["reduce_done_s"] == pytest.approx(fa["trees_s"], rel=1e-6)
    assert tl["steady_interval_s"] == pytest.approx(fa["tree_share_bytes"] / fa["pair_cap_Bps"], rel=1e-6)
    # the steady state is NCCL's model's data term; the rest is fill and latency
    model = r.model_estimates["nvls-tree/Simple"]
    side = mod.nccl_side(r.size_bytes, 248, r.channels, 8)
    assert fa["steady_s"] == pytest.approx(model - side["model_latency_s"], rel=1e-6)
    recorded = data["time_line"]
    assert tl["time_s"] * 1e6 == pytest.approx(recorded["total_us"], abs=0.05)
    assert tl["steady_interval_s"] * 1e6 == pytest.approx(recorded["steady_interval_us"], abs=0.005)


def test_what_if_restores_the_tuning_functions(mod):
    from dgxstudio.sim import tuning as T
    before = (T.nvls_tree_head_algbw_Bps, T.hop_latency, T.nvls_tree_chunk_bytes)
    with mod.what_if("no-cap+no-net-latency+half-chunk"):
        assert T.hop_latency("net", "nvls-tree", "simple") == 0.0
        assert T.hop_latency("net", "tree", "simple") == before[1]("net", "tree", "simple")
        assert T.nvls_tree_chunk_bytes(512 * MiB, 248, 16, 8) == 32768
    assert (T.nvls_tree_head_algbw_Bps, T.hop_latency, T.nvls_tree_chunk_bytes) == before
