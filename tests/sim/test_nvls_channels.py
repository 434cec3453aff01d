"""NVLS and NVLS tree run on NCCL's nvlsChannels (16 on sm90; on Blackwell 24 in one system, 32
across systems), not on the ring's channels; NCCL's cost model multiplies by the NVLS graph's heads
(one per GPU of a system), which is neither (resources/nccl_tuning.json ``nvls_channels``)."""

import json

import pytest

from dgxstudio.cli import main
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import simulate


def test_the_nvls_channel_rule_per_generation_and_system_count():
    assert T.nvls_channels("hopper", 1) == T.nvls_channels("hopper", 2) == 16
    assert T.nvls_channels("blackwell", 1) == 24     # NVLS_NCHANNELS_SM100_NVL: one node or NVLink domain
    assert T.nvls_channels("blackwell", 4) == 32     # NVLS_NCHANNELS_SM100 across nodes
    assert T.nvls_channels("ampere", 1) == T.nvls_channels("volta", 1) == 0  # no NVLink SHARP
    data = T.tuning_data()["nvls_channels"]
    assert "nvls.cc" in data["source"] and all("nvls.cc v2." in v["where"] for v in data["versions"])


def _json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_one_dgx_h100_nvls_run_is_labelled_with_16_channels_in_the_cli_json(capsys):
    out = _json(capsys, "simulate", "--preset", "dgx-h100", "--size", "1GiB", "--json")
    assert (out["algorithm"], out["channels"]) == ("nvls", 16)     # was the ring's 32
    assert "(16 channels)" in out["reason"]
    small = _json(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", "nvls", "--size", "4KiB", "--json")
    assert small["channels"] == 16                                  # at every size, as enqueue.cc


def test_blackwell_nvls_uses_24_channels_in_one_system_and_32_across(capsys):
    out = _json(capsys, "simulate", "--preset", "dgx-b200", "--algorithm", "nvls", "--size", "64MiB", "--json")
    assert out["channels"] == 24
    topo = build_fat_tree(systems=2, system="dgx-b200", rail_optimized=True)
    result = simulate(topo, "all-reduce", "nvls-tree", 1 << 20)
    assert result.channels == 32


def test_the_cost_model_multiplies_nvls_by_its_heads_not_the_ring_channels():
    # one DGX H100: 8 heads, whatever the ring's channel count
    for ring_channels in (8, 32):
        shape = T.CallShape("all-reduce", 8, 1, "hopper", ring_channels, 3e11, 3e11, "nvlink", nvls_busbw_Bps=4e11)
        assert T.model_busbw(shape, "nvls", "simple") == pytest.approx(4e11 * 0.85 * 7 / 8 * 2)
    # two systems: NVLS tree's per-channel ceiling (57.7 GB/s, Hopper, 2 nodes) times 8 heads, not 16 channels
    shape = T.CallShape("all-reduce", 16, 2, "hopper", 16, 4e11, 4e11, "nvlink", nvls_busbw_Bps=4e11,
                        net_busbw_Bps=4e11)
    assert T.model_busbw(shape, "nvls-tree", "simple") == pytest.approx(8 * 57.7e9)
    # one GPU per system: no NVLS graph of two heads, so no NVLS tree ('needs at least 2 channels')
    lone = T.CallShape("all-reduce", 4, 4, "hopper", 2, 1e11, 1e11, "nvlink", nvls_busbw_Bps=4e11, net_busbw_Bps=1e11)
    assert T.model_busbw(lone, "nvls-tree", "simple") == 0.0


def test_the_cost_model_turns_nvls_bus_bandwidth_into_algorithm_bandwidth_by_nranks_over_nsteps():
    # tuning.cc v2.28.9-1:345-350: RING, NVLS and NVLS_TREE take nRanks / nsteps, the others 0.5
    # (0.5 for NVLS was neither 2.28's rule nor 2.19-2.27's 5/6)
    size = 1 << 30
    one = T.CallShape("all-reduce", 8, 1, "hopper", 16, 3e11, 3e11, "nvlink", nvls_busbw_Bps=4e11)
    two = T.CallShape("all-reduce", 16, 2, "hopper", 16, 4e11, 4e11, "nvlink", nvls_busbw_Bps=4e11,
                      net_busbw_Bps=4e11)
    for shape, algo in ((one, "nvls"), (two, "nvls-tree")):
        data_time = T.model_time(shape, algo, "simple", size) - T.model_latency(shape, algo, "simple")
        bus = T.model_busbw(shape, algo, "simple")
        assert data_time == pytest.approx(size / (bus * shape.ranks / (2 * (shape.ranks - 1))))
    tree = T.model_time(two, "tree", "simple", size) - T.model_latency(two, "tree", "simple")
    assert tree == pytest.approx(size / (T.model_busbw(two, "tree", "simple") * 0.5))


def test_a_dgx_a100_ring_keeps_the_ring_channels():
    result = simulate(load_preset("dgx-a100"), "all-reduce", "ring", 1 << 30)
    assert result.channels == 24


def test_the_cli_text_and_the_report_table_show_the_nvls_channels(capsys):
    from dgxstudio.analysis.summary import analyze
    from dgxstudio.report.content import ReportData, Table, build_blocks
    from dgxstudio.report.provenance import stamp

    assert main(["simulate", "--preset", "dgx-h100", "--algorithm", "nvls", "--size", "64MiB"]) == 0
    row = [ln.split() for ln in capsys.readouterr().out.splitlines() if " nvls " in ln and "Simple" in ln]
    assert row and row[0][2:5] == ["nvls", "Simple", "16"], row       # size, algorithm, protocol, ch
    topo = load_preset("dgx-h100")
    data = ReportData(topo, analyze(topo, [g.id for g in topo.gpus()]))
    data.sweeps.append([stamp(simulate(topo, "all-reduce", "nvls", 64 * 2**20), data.document)])
    table = next(b for b in build_blocks(data) if isinstance(b, Table) and b.header[0] == "size (bytes)")
    assert table.rows[0][1:4] == ["nvls", "Simple", "16"]
