"""NCCL_NVLS_ENABLE=0 (``SimOptions.nvls_enable``, ``--no-nvls``): NCCL sets up no NVLink SHARP, so its
cost model chooses among the ring and the tree even where the NVSwitches could reduce. The 20-rack
GB200 run of coreweave/nccl-tests PR #48 was made so (its script: NCCL_NVLS_ENABLE=0); simulated with
NVLS, auto took the NVLS tree and gave 845-1,009 GB/s against 151-287 measured."""

import json
import subprocess
import sys

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import nccl_env
from dgxstudio.sim.results import SimOptions, SimulationError
from dgxstudio.sim.run import Simulator

GiB = 2**30


def _sim(topo, **options):
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True, **options))


@pytest.mark.parametrize("systems, nvls", [(1, "nvls"), (2, "nvls-tree")])
def test_auto_leaves_nvls_out_when_it_is_disabled(systems, nvls):
    topo = load_preset("dgx-h100") if systems == 1 else build_fat_tree(2, "dgx-h100", rail_optimized=True)
    on = _sim(topo).run("all-reduce", "auto", GiB)
    assert on.algorithm == nvls   # NCCL's choice with NVLink SHARP there
    off = _sim(topo, nvls_enable=False).run("all-reduce", "auto", GiB)
    assert off.algorithm in ("ring", "tree")
    assert not any(k.startswith("nvls") for k in off.model_estimates)
    assert "NCCL_NVLS_ENABLE=0" in off.reason and "NCCL_NVLS_ENABLE" not in on.reason
    # what is left is NCCL's model's pick among ring and tree, as with NVLS on
    ranked = [k for k in on.model_estimates if not k.startswith("nvls")]
    assert list(off.model_estimates)[0] == ranked[0]


def test_asking_for_nvls_when_disabled_is_refused_with_the_reason():
    sim = _sim(load_preset("dgx-h100"), nvls_enable=False)
    with pytest.raises(SimulationError, match="NCCL_NVLS_ENABLE=0"):
        sim.run("all-reduce", "nvls", GiB)
    assert sim.refusal("all-reduce", "nvls-tree").startswith("nvls-tree is disabled")
    assert sim.refusal("all-reduce", "ring") is None


def test_offered_algorithms():
    assert nccl_env.offered("all-reduce") == ("ring", "tree", "nvls", "nvls-tree")
    assert nccl_env.offered("all-reduce", nvls_enable=False) == ("ring", "tree")
    assert nccl_env.offered("all-gather", nvls_enable=False) == ("ring",)


def test_cli_takes_no_nvls():
    cmd = [sys.executable, "-m", "dgxstudio", "simulate", "--preset", "dgx-h100", "--size", "1GiB", "--json"]
    on = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    off = json.loads(subprocess.run(cmd + ["--no-nvls"], capture_output=True, text=True, check=True).stdout)
    assert on["algorithm"] == "nvls" and off["algorithm"] in ("ring", "tree")
    bad = subprocess.run(cmd + ["--no-nvls", "--algorithm", "nvls"], capture_output=True, text=True)
    assert bad.returncode != 0 and "NCCL_NVLS_ENABLE=0" in bad.stderr


def test_auto_names_only_what_the_switch_took_away():
    """On a DGX A100 (no NVLink SHARP) NCCL_NVLS_ENABLE=0 takes nothing away: auto's reason does not
    say it did; on one DGX H100 it names nvls (nvls-tree needs several systems)."""
    a100 = _sim(load_preset("dgx-a100"), nvls_enable=False).run("all-reduce", "auto", GiB)
    assert "NCCL_NVLS_ENABLE" not in a100.reason
    h100 = _sim(load_preset("dgx-h100"), nvls_enable=False).run("all-reduce", "auto", GiB)
    assert h100.reason.endswith("; nvls left out (NCCL_NVLS_ENABLE=0)")
