"""benchmarks/multinode_h100_findings.py: NCCL's NVLS warp split and the catalog what-ifs it weighs
issue #13's multi-node H100 rows with."""

import json
from pathlib import Path

import pytest

from tests.benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
GiB = 2**30


@pytest.fixture(scope="module")
def mod():
    return load_benchmark("multinode_h100_findings")


@pytest.fixture(scope="module")
def data(mod):
    return json.loads(mod.DATA.read_text(encoding="utf-8"))


def test_warp_split_is_nccls_all_reduce_h(mod, data):
    d = data["nvls_warp_split"]
    # 20 warps: NVLS on 8 GPUs gives reduce 5, scatter (20-5+1)>>1 = 8, gather (20-5)>>1 = 7
    assert mod.nvls_warps(d, 8, tree=False, has_up=False) == {"scatter": 8, "gather": 7, "reduce": 5, "bcast": 0}
    assert mod.nvls_warps(d, 6, tree=False, has_up=False) == {"scatter": 7, "gather": 6, "reduce": 7, "bcast": 0}
    # an NVLS-tree channel with a tree parent: bcast 4, reduce 5, scatter (20-5-4+1)>>1 = 6, gather 5
    assert mod.nvls_warps(d, 16, tree=True, has_up=True) == {"scatter": 6, "gather": 5, "reduce": 5, "bcast": 4}
    assert mod.nvls_warps(d, 16, tree=True, has_up=False) == mod.nvls_warps(d, 8, tree=False, has_up=False)


def test_two_system_window_holds_both_measured_rows(mod, data):
    d = data["nvls_warp_split"]
    win = mod.two_system_window(d, d["single_system_nvls"])
    assert win["floor_from"] == "nccl-1455-h100-nvls-6gpu"
    assert win["per_warp_floor_GBps"] == pytest.approx(440 / (2 * 5 / 6) / 96)      # 264 GB/s algbw, 6 x 16 warps
    assert win["low_GBps"] == pytest.approx(2.75 * 5 * 16 * 2 * 15 / 16)              # 412.5
    assert win["high_GBps"] == pytest.approx(480 / 1.75 * 1.875)                      # one system's NVLS, 16 ranks
    offfile = {s["key"]: s for s in json.loads((ROOT / "benchmarks" / "fidelity_offfile.json").read_text())["sources"]}
    for key in ("coreweave-92-h100-2node", "nccl-1221-h100-roce-2node"):
        measured = offfile[key]["points"][0][1]
        assert win["low_GBps"] < measured < win["high_GBps"]
    for s in d["single_system_nvls"]:  # the floor is read from the off-file sweeps, not copied apart
        assert offfile[s["key"]]["points"][0][1] == s["busbw_GBps"] and int(offfile[s["key"]]["ranks"]) == s["ranks"]


def test_every_row_and_what_if_names_something_that_exists(mod, data):
    from dgxstudio.model.catalog import default_catalog
    keys = {s["key"] for s in json.loads((ROOT / "benchmarks" / "fidelity_offfile.json").read_text())["sources"]}
    assert set(data["rows"]["sources"]) <= keys
    types = default_catalog().link_types
    for c in data["candidates"]:
        for tid, eff in c.get("what_if", {}).items():
            assert tid in types and 0 < eff < 1, (c["id"], tid)


def test_nic_what_if_moves_the_ring_not_the_two_system_nvls_tree_and_restores_the_catalog(mod):
    from dgxstudio.model.catalog import default_catalog
    before = default_catalog()
    keys = ["nccl-1221-h100-roce-4node", "nccl-1221-h100-roce-2node"]
    now = mod.simulate_rows(keys, 8 * GiB)
    slow = mod.simulate_rows(keys, 8 * GiB, {"IB-NDR": 0.82, "Eth-400G": 0.82})
    assert default_catalog() is before and before.link_types["Eth-400G"].achievable_efficiency == 0.94
    # (the ring forced: with the NICs at 82% NCCL's model picks the NVLS tree on 4 systems at 8 GiB)
    ring = mod.simulate_rows(keys[:1], 8 * GiB, {"IB-NDR": 0.82, "Eth-400G": 0.82}, algorithm="ring")
    assert now[(keys[0], 8 * GiB)][2].startswith("ring/") and ring[(keys[0], 8 * GiB)][2].startswith("ring/")
    ring_now, ring_slow = now[(keys[0], 8 * GiB)][1], ring[(keys[0], 8 * GiB)][1]
    assert ring_slow == pytest.approx(ring_now * 0.82 / 0.94, rel=0.01)               # NIC-bound ring
    assert slow[(keys[1], 8 * GiB)][1] == pytest.approx(now[(keys[1], 8 * GiB)][1], rel=1e-3)  # NVLink-bound
