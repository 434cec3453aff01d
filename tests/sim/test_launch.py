"""One thread driving several GPUs (nccl-tests -g N): each call waits for the kernels to launch in turn."""

import json
import subprocess
import sys

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import SimOptions, Simulator


def run(topo, gpus, g, size=1024, algorithm="auto"):
    return Simulator(topo, gpus, SimOptions(achievable=True, gpus_per_thread=g)).run("all-reduce", algorithm, size)


def test_each_extra_gpu_on_the_thread_adds_one_launch_and_nothing_else():
    topo = load_preset("dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    per = T.tuning_data()["serial_launch_s"]["per_gpu"]
    base = run(topo, gpus, 1)
    for g in (2, 4, 8):
        r = run(topo, gpus, g)
        assert r.time_s - base.time_s == pytest.approx((g - 1) * per, rel=1e-9)
        assert (r.algorithm, r.protocol, r.channels) == (base.algorithm, base.protocol, base.channels)


def test_a_thread_drives_only_the_gpus_of_its_own_system():
    topo = build_fat_tree(2, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    sim = Simulator(topo, gpus, SimOptions(gpus_per_thread=16))
    assert sim.gpus_per_thread() == 8
    two = load_preset("dgx-a100")
    assert Simulator(two, [d.id for d in two.gpus()][:2], SimOptions(gpus_per_thread=8)).gpus_per_thread() == 2


def test_the_launch_figure_reproduces_its_own_source_within_its_scatter():
    """nccl-tests #123: ring, one channel, 8 B, -g N on a DGX A100: 10.0 ... 33.7 us for N = 2..8."""
    measured = {2: 10.0, 3: 13.76, 4: 16.88, 5: 20.8, 6: 25.2, 7: 29.5, 8: 33.7}
    topo = load_preset("dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    for n, us in measured.items():
        r = Simulator(topo, gpus[:n], SimOptions(achievable=True, gpus_per_thread=n, protocol="ll")).run(
            "all-reduce", "ring", 8)
        assert r.time_s * 1e6 == pytest.approx(us, rel=0.15), n


def test_cli_takes_gpus_per_thread_and_refuses_nonsense():
    cmd = [sys.executable, "-m", "dgxstudio", "simulate", "--preset", "dgx-a100", "--size", "1KiB", "--json"]
    one = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    eight = json.loads(subprocess.run(cmd + ["--gpus-per-thread", "8"], capture_output=True, text=True,
                                      check=True).stdout)
    assert eight["gpus_per_thread"] == 8 and eight["time_s"] > one["time_s"]
    bad = subprocess.run(cmd + ["--gpus-per-thread", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--gpus-per-thread" in bad.stderr and "0" in bad.stderr
