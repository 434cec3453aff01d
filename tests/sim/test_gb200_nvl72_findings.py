"""benchmarks/gb200_nvl72_findings.py: what NCCL 2.25.1's search, cost model and NVLS kernel say about
issue #13's GB200 NVL72 rack row (coreweave/nccl-tests PR #43)."""

import json
from pathlib import Path

import pytest

from tests.benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
MiB, GiB = 2**20, 2**30


@pytest.fixture(scope="module")
def mod():
    return load_benchmark("gb200_nvl72_findings")


@pytest.fixture(scope="module")
def data(mod):
    return json.loads(mod.DATA.read_text(encoding="utf-8"))


def test_nccl_2_25_rates_nvls_alike_on_8_and_72_gpus_and_picks_it_over_the_ring(mod, data):
    n = data["nccl_2_25"]
    rack, board = mod.model_2_25(n, 72), mod.model_2_25(n, 8)
    # 32 heads only fit at 20 GB/s (33 x 20 <= 720 < 33 x 24); 8 heads at 80 (9 x 80 = 720 < 9 x 90)
    assert (rack["heads"], rack["speed_GBps"], board["heads"], board["speed_GBps"]) == (32, 20.0, 8, 80.0)
    assert rack["nvls_algbw_GBps"] == pytest.approx(32 * 20 * 5 / 6) == board["nvls_algbw_GBps"]
    assert rack["ring_algbw_max_GBps"] == pytest.approx(720 * 72 / 142)
    assert rack["ring_latency_us"] == pytest.approx(8.4 + 142 * 3.4)
    rack_row = {s["key"]: s for s in json.loads((ROOT / "benchmarks" / "fidelity_offfile.json").read_text())["sources"]}[
        data["rows"]["rack"]]
    for size, _busbw, _t in rack_row["points"]:
        nvls = mod.model_time_us(rack["nvls_algbw_GBps"], rack["nvls_latency_us"], size)
        ring = mod.model_time_us(rack["ring_algbw_max_GBps"], rack["ring_latency_us"], size)
        assert nvls < ring
    # a GPU search could not place: no speed fits
    assert mod.nvls_head_speed([90.0, 80.0], 32, 720.0) == 0.0


def test_nvls_chunk_and_iteration_follow_enqueue_cc(mod, data):
    n = data["nccl_2_25"]
    ch100, ch90 = n["nvls_channels_sm100"], n["nvls_channels_sm90"]
    # 1,024 concurrent chunks on the rack: 64 KiB below 64 x 1,024 x 128 KiB = 8 GiB, 32 KiB below 512 MiB
    assert [mod.nvls_chunk(n, s, ch100, 32) for s in (256 * MiB, 512 * MiB, 4 * GiB, 8 * GiB)] == [32768, 65536, 65536, 131072]
    assert mod.nvls_chunk(n, 32 * MiB, ch100, 32) == 16384
    # 8 H100 (16 channels x 8 heads = 128): 128 KiB from 1 GiB, 64 KiB below
    assert [mod.nvls_chunk(n, s, ch90, 8) for s in (512 * MiB, 1 * GiB)] == [65536, 131072]
    assert mod.iteration_bytes(n, 1 * GiB, ch100, 32) == 64 * MiB
    assert mod.iteration_bytes(n, 8 * GiB, ch100, 32) == 128 * MiB
    assert mod.iteration_bytes(n, 1 * GiB, ch90, 8) == 16 * MiB


def test_fixed_cost_per_call_in_iteration_times(mod, data):
    src = mod.sources()
    rack, h100 = src[data["rows"]["rack"]], src[data["rows"]["one_node_h100"]]
    n = data["nccl_2_25"]
    a, algbw = mod.fixed_cost(rack, 512 * MiB)
    assert a == pytest.approx(581, abs=1) and algbw == pytest.approx(438.1, abs=0.1)
    it = mod.iteration_bytes(n, 1 * GiB, n["nvls_channels_sm100"], 32) / (algbw * 1e3)
    assert 3.7 < a / it < 3.9
    pairs = mod.pairwise_fixed_costs(rack, 512 * MiB, 2 * GiB)
    assert [round(p) for p in pairs] == [505, 628]    # from the printed times 1806.7, 3108.8, 5589.1 us
    ha, halgbw = mod.fixed_cost(h100, 1 * GiB)
    hit = mod.iteration_bytes(n, 1 * GiB, n["nvls_channels_sm90"], 8) / (halgbw * 1e3)
    hpairs = mod.pairwise_fixed_costs(h100, 1 * GiB, 8 * GiB)
    assert 1.3 < min(hpairs) / hit < max(hpairs) / hit < 2.9 < a / it


def test_nccls_quantized_nvls_estimate_is_not_a_rate(mod, data):
    n = data["nccl_2_25"]
    src = mod.sources()
    measured = {int(src[k]["ranks"]): src[k]["points"][0][1] for k in data["rows"]["single_system_nvls"]}
    q = {r: mod.quantized_2_28_busbw(n, r, "hopper", 0.85) for r in measured}
    assert q == pytest.approx({5: 408.0, 6: 425.0, 7: 408.0, 8: 476.0})
    assert q[7] / measured[7] - 1 < -0.11                          # 7 H100: 408 against 460
    assert mod.quantized_2_28_busbw(n, 8, "blackwell", 0.74) == pytest.approx(828.8)
    assert mod.quantized_2_28_busbw(n, 72, "blackwell", 0.74) == pytest.approx(917.6)


def test_every_row_and_candidate_is_named_once(data):
    keys = {s["key"] for s in json.loads((ROOT / "benchmarks" / "fidelity_offfile.json").read_text())["sources"]}
    rows = data["rows"]
    assert {rows["rack"], rows["one_node_h100"], *rows["single_system_nvls"]} <= keys
    ids = [c["id"] for c in data["candidates"]]
    assert len(ids) == len(set(ids)) and all(c["verdict"] and c["sources"] for c in data["candidates"])
