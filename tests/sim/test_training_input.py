"""The input pipeline's host-to-device copies in data-parallel scaling: flows on the drawn topology."""

import json

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.cli import main
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.scaling import StepModel, input_copy_s, input_host, run_case, scaling, training_data

IMAGE = 3 * 224 * 224 * 4  # one fp32 224x224 RGB image


def _gpus(topo):
    return [d.id for d in topo.gpus()]


def test_each_gpu_is_fed_from_its_own_socket_not_over_nvlink():
    for preset in ("dgx1-p100", "pcie-8gpu-p100"):
        topo = load_preset(preset)
        hosts = [input_host(topo, g) for g in _gpus(topo)]
        assert hosts == ["cpu0"] * 4 + ["cpu1"] * 4


def test_copies_contend_on_the_uplinks_they_share():
    """One GPU alone copies at the PCIe x16 achievable figure (10 GB/s); GPUs behind one switch uplink
    share it: 2 per uplink on the DGX-1, 4 on the PCIe server's single switch per socket."""
    nbytes = 64 * IMAGE
    pcie = load_preset("pcie-8gpu-p100")
    dgx = load_preset("dgx1-p100")
    one = input_copy_s(pcie, Router(pcie, True), _gpus(pcie)[:1], nbytes)
    assert one == pytest.approx(nbytes / 10e9, rel=0.01)
    assert input_copy_s(dgx, Router(dgx, True), _gpus(dgx), nbytes) == pytest.approx(2 * one, rel=0.01)
    assert input_copy_s(pcie, Router(pcie, True), _gpus(pcie), nbytes) == pytest.approx(4 * one, rel=0.01)
    # the two sockets copy in parallel: 8 GPUs take no longer than the 4 of one socket
    assert input_copy_s(pcie, Router(pcie, True), _gpus(pcie)[:4], nbytes) == pytest.approx(4 * one, rel=0.01)


def test_prefetched_copy_hides_under_compute_serial_copy_adds_to_the_step():
    topo = load_preset("pcie-8gpu-p100")
    gpus = _gpus(topo)
    base = dict(grad_bytes=97.5e6, sample_s=5e-3, sample_batch=64, overlap=False, input_bytes_per_sample=IMAGE)
    none = scaling(topo, gpus, StepModel(**{**base, "input_bytes_per_sample": 0.0}), 64, 64, [8])[0]
    pre = scaling(topo, gpus, StepModel(**base, input_prefetch=True), 64, 64, [8])[0]
    ser = scaling(topo, gpus, StepModel(**base, input_prefetch=False), 64, 64, [8])[0]
    assert pre.weak_input_copy_s == pytest.approx(ser.weak_input_copy_s) and ser.weak_input_copy_s > 0.01
    assert pre.weak_exposed_input_s == 0 and pre.weak_samples_per_s == pytest.approx(none.weak_samples_per_s)
    assert ser.weak_exposed_input_s == pytest.approx(ser.weak_input_copy_s)
    step = none.weak_compute_s + none.weak_exposed_comm_s + ser.weak_input_copy_s
    assert ser.weak_samples_per_s == pytest.approx(512 / step, rel=1e-9)
    # strong scaling copies 1/8 of the images: the copy shrinks with the batch
    assert ser.strong_input_copy_s == pytest.approx(ser.weak_input_copy_s / 8, rel=0.05)


def test_a_prefetch_that_outlasts_the_compute_meets_the_all_reduce_on_the_links():
    """A tiny compute and huge samples: the copy is still running when the gradients are all-reduced.
    What is exposed is then the all-reduce run beside the rest of the copies, minus the all-reduce alone:
    more than the copy's own leftover would be if the two did not share the PCIe uplinks."""
    topo = load_preset("pcie-8gpu-p100")
    gpus = _gpus(topo)
    m = StepModel(97.5e6, 1e-5, 64, overlap=False, input_bytes_per_sample=4e6, input_prefetch=True)
    r = scaling(topo, gpus, m, 64, 64, [8])[0]
    leftover_alone = r.weak_input_copy_s - r.weak_compute_s
    assert leftover_alone > 0.05
    assert r.weak_exposed_input_s > 0
    assert r.weak_exposed_input_s + r.weak_exposed_comm_s > max(leftover_alone, r.allreduce_s)


def test_resnet50_case_input_is_sourced_and_reported():
    c = training_data()["cases"]["resnet50-p100"]["input_pipeline"]
    assert c["bytes_per_sample"] == IMAGE
    assert "ReaderShim" in c["prefetch_source"] and "224 x 224 x 3" in c["bytes_source"]
    r = run_case("resnet50-p100")
    for label in ("nvlink", "pcie"):
        row = next(x for x in r["systems"][label]["rows"] if x["gpus"] == 8)
        assert row["weak_input_copy_s"] > 0 and row["strong_input_copy_s"] > 0
    serial = run_case("resnet50-p100", input_prefetch=False)
    # copied before each step, the PCIe server (4 GPUs per uplink) pays twice the DGX-1's wait
    w = {k: next(x for x in serial["systems"][k]["rows"] if x["gpus"] == 8)["weak_exposed_input_s"]
         for k in ("nvlink", "pcie")}
    assert w["pcie"] == pytest.approx(2 * w["nvlink"], rel=0.01)
    assert serial["comparison"]["weak"]["simulated"]["pcie"] < r["comparison"]["weak"]["simulated"]["pcie"]


def test_cli_scaling_input_options(capsys):
    assert main(["scaling", "--preset", "pcie-8gpu-p100", "--sample-time", "5ms", "--input-bytes", str(IMAGE),
                 "--input-copy", "serial", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["input_bytes_per_sample"] == IMAGE and out["input_copy"] == "serial"
    row8 = out["topologies"][0]["rows"][-1]
    assert row8["weak_exposed_input_s"] == pytest.approx(row8["weak_input_copy_s"]) and row8["weak_input_copy_s"] > 0
    assert main(["scaling", "--preset", "pcie-8gpu-p100", "--sample-time", "5ms", "--input-bytes", str(IMAGE)]) == 0
    assert "weak input copy" in capsys.readouterr().out
    assert main(["scaling", "--case", "resnet50-p100"]) == 0
    assert "input copies of all 8 GPUs at once" in capsys.readouterr().out


@pytest.mark.parametrize("preset, algorithm", [("dgx-h100", "nvls"), ("dgx-a100", "tree"), ("dgx-h100", "ring")])
def test_all_reduce_beside_copies_keeps_the_runs_own_capacities(preset, algorithm):
    """``allreduce_with_copies`` reruns the all-reduce beside the copies: a copy of one byte per GPU
    (over PCIe, which the all-reduce does not use) leaves its time as it was. It rescaled every link by
    the protocol's efficiency alone: NVLS lost its 0.85 on the NVLink SHARP channels (15% fast) and the
    tree its 0.92 (8% fast)."""
    from dgxstudio.sim.results import SimOptions
    from dgxstudio.sim.run import Simulator
    from dgxstudio.sim.scaling import allreduce_with_copies

    topo = load_preset(preset)
    router = Router(topo, True)
    r = Simulator(topo, _gpus(topo), SimOptions(achievable=True), router=router).run("all-reduce", algorithm, 256 * 2**20)
    assert r.algorithm == algorithm
    assert allreduce_with_copies(topo, router, r, _gpus(topo), 1.0) == pytest.approx(r.time_s, rel=1e-9)
