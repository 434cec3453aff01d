"""The analysis reproduces the white papers' figures from the topology alone."""

import json

import pytest

from dgxstudio.analysis.bandwidth import gpu_bandwidth
from dgxstudio.analysis.bisection import bisection_bandwidth
from dgxstudio.analysis.gpuset import GpuSetError, select_gpus
from dgxstudio.analysis.paths import path_latency, system_to_system_latency
from dgxstudio.analysis.rings import find_rings
from dgxstudio.analysis.summary import analyze
from dgxstudio.cli import main
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset

GB = 1e9


def gpus(t):
    return [d.id for d in t.gpus()]


def nvlink_units(t):
    return {lk.id: lk.count for lk in t.links.values() if lk.type.startswith("NVLink")}


@pytest.mark.parametrize("preset, count, bound", [("dgx1-p100", 2, 80 * GB), ("dgx1-v100", 3, 150 * GB)])
def test_dgx1_rings_use_every_nvlink(preset, count, bound):
    t = load_preset(preset)
    r = find_rings(t, gpus(t))
    assert r.count == count and r.exact and r.link_disjoint
    assert r.allreduce_busbw_bound_Bps == pytest.approx(bound)
    used = {}
    for ring in r.rings:
        assert sorted(ring.gpus) == sorted(gpus(t))
        for i, g in enumerate(ring.gpus):
            nxt = ring.gpus[(i + 1) % len(ring.gpus)]
            link = next(lk for lk in t.links_of(g) if lk.other(g) == nxt and lk.type.startswith("NVLink"))
            used[link.id] = used.get(link.id, 0) + 1
    assert used == nvlink_units(t)


def test_removing_one_nvlink_drops_the_v100_rings():
    t = load_preset("dgx1-v100")
    doubled = next(lk for lk in t.links.values() if lk.type == "NVLink2" and lk.count == 2)
    doubled.count = 1
    r = find_rings(t, gpus(t))
    assert r.count == 2 and r.allreduce_busbw_bound_Bps == pytest.approx(100 * GB)
    single = next(lk for lk in t.links.values() if lk.type == "NVLink2" and lk.count == 1 and lk is not doubled)
    t.remove_link(single.id)
    assert find_rings(t, gpus(t)).allreduce_busbw_bound_Bps <= 100 * GB


def test_dgx_a100_nvlink_bandwidth_and_rings_through_nvswitches():
    t = load_preset("dgx-a100")
    bws = gpu_bandwidth(t, gpus(t))
    assert all(b.nvlink_bidir_Bps == pytest.approx(600 * GB) for b in bws)
    assert sum(b.nvlink_bidir_Bps for b in bws) == pytest.approx(4.8e12)
    r = find_rings(t, gpus(t))
    assert r.count == 6 and r.allreduce_busbw_bound_Bps == pytest.approx(300 * GB)


def test_pcie_server_ring_shares_links_and_is_far_slower():
    t = load_preset("pcie-8gpu")
    r = find_rings(t, gpus(t))
    assert r.count == 1 and not r.link_disjoint
    assert r.allreduce_busbw_bound_Bps == pytest.approx(15.75e9, rel=1e-3)


def test_fat_tree_124_bisection_and_latency_match_table_1():
    t = load_preset("dgx1-fat-tree-124")
    b = bisection_bandwidth(t, gpus(t))
    assert b.bidir_Bps == pytest.approx(124 * 4 * 200e9 * 64 / 66 / 8 * 0.5)
    assert b.bidir_Bps / GB == pytest.approx(6012, abs=0.5)
    assert len(b.half_a) == len(b.half_b) == 496
    lat = system_to_system_latency(t)
    assert lat.max_s == pytest.approx(1.28e-6) and lat.switch_hops_worst == 3
    assert lat.min_s == pytest.approx(1.01e-6 + 0.09e-6)


@pytest.mark.parametrize("systems", [16, 128])
def test_halving_the_spines_halves_the_bisection(systems):
    full = build_fat_tree(systems, spines=16)
    half = build_fat_tree(systems, spines=8)
    bf = bisection_bandwidth(full, gpus(full)).bidir_Bps
    bh = bisection_bandwidth(half, gpus(half)).bidir_Bps
    assert bh == pytest.approx(bf / 2)


def test_exact_bisection_of_small_sets_returns_the_split():
    t = load_preset("dgx1-p100")
    b = bisection_bandwidth(t, gpus(t))
    assert b.exact and len(b.half_a) == 4
    # 4 crossing NVLinks of 20 GB/s each way, plus the cheapest PCIe cut (two x16 Gen3 uplinks).
    assert b.bidir_Bps == pytest.approx(4 * 40 * GB + 2 * 2 * 15.75e9, rel=1e-3)


def test_path_latency_counts_links_and_devices():
    t = load_preset("dgx1-v100")
    p = path_latency(t, "gpu0", "gpu1")
    assert p.hops == 1 and p.latency_s == pytest.approx(0.47e-6)
    p = path_latency(t, "gpu0", "gpu5")
    assert "gpu1" not in p.path and "gpu4" not in p.path  # never through another GPU


def test_fat_tree_three_levels_when_two_cannot_hold_it():
    t = build_fat_tree(200)
    assert "core1.1" in t.devices
    lat = system_to_system_latency(t)
    assert lat.switch_hops_worst == 5
    assert lat.max_s == pytest.approx(1.01e-6 + 5 * 0.09e-6)


def test_gpu_set_specs():
    t = load_preset("dgx1-fat-tree-124")
    assert select_gpus(t, "s001.gpu0-s001.gpu3") == [f"s001.gpu{i}" for i in range(4)]
    assert len(select_gpus(t, "s002.system,s003.system")) == 16
    assert len(select_gpus(t, "group:DGX-1 #7")) == 8
    with pytest.raises(GpuSetError, match="s001.ib0"):
        select_gpus(t, "s001.ib0")
    with pytest.raises(GpuSetError, match="nothing|neither"):
        select_gpus(t, "bogus")


def test_analyze_json_keys(capsys):
    assert main(["analyze", "--preset", "dgx1-v100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpus"] == 8
    assert data["bisection"]["exact"] is True and data["bisection"]["bidir_Bps"] > 0
    assert data["rings"]["count"] == 3
    assert data["rings"]["allreduce_busbw_bound_Bps"] == pytest.approx(150e9)
    assert len(data["rings"]["rings"]) == 3 and len(data["rings"]["rings"][0]) == 8
    assert data["nvlink_bw_per_gpu_bidir_Bps"] == pytest.approx(300e9)
    assert data["aggregate_nvlink_bw_bidir_Bps"] == pytest.approx(2.4e12)
    assert "max_system_to_system_s" in data["latency"]


def test_analyze_subset_and_progress():
    t = load_preset("dgx-a100")
    seen = []
    result = analyze(t, ["gpu0", "gpu1", "gpu2", "gpu3"], progress=lambda f, what: seen.append(f))
    assert result["gpus"] == 4 and seen[-1] == 1.0
    assert result["rings"]["count"] == 6
