import json

import pytest

from dgxstudio.cli import main
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.pipeline import PipelineError, PipelineSpec, run_pipeline
from dgxstudio.sim.training import ModelSpec, TrainingError, grid, scaling, train_iteration

TF, TB = 2e-3, 4e-3


def spec(schedule, p, m, v=1, act=0.0, gpus=None):
    gpus = gpus or [f"gpu{i}" for i in range(p)]
    return PipelineSpec(schedule, p, m, gpus, [TF] * p, [TB] * p, act, v)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p, m", [(2, 1), (4, 8), (8, 8), (4, 32), (8, 3)])
def test_makespan_and_bubble_with_free_communication(schedule, p, m):
    r = run_pipeline(load_preset("dgx1-v100"), spec(schedule, p, m))
    assert r.makespan_s == pytest.approx((m + p - 1) * (TF + TB), rel=1e-12)
    assert r.bubble_fraction == pytest.approx((p - 1) / (m + p - 1), rel=1e-9)


@pytest.mark.parametrize("v", [2, 3, 4])
def test_interleaving_divides_the_bubble_by_v(v):
    p, m = 4, 8
    base = run_pipeline(load_preset("dgx1-v100"), spec("1f1b", p, m))
    inter = run_pipeline(load_preset("dgx1-v100"), spec("interleaved", p, m, v))
    bubble_time = lambda r: r.makespan_s - m * (TF + TB)  # noqa: E731
    assert bubble_time(inter) == pytest.approx(bubble_time(base) / v, rel=1e-9)


def test_in_flight_micro_batches():
    p, m = 4, 16
    assert run_pipeline(load_preset("dgx1-v100"), spec("1f1b", p, m)).peak_inflight[0] <= p
    assert run_pipeline(load_preset("dgx1-v100"), spec("gpipe", p, m)).peak_inflight[0] == m


@pytest.mark.parametrize("schedule, v", [("gpipe", 1), ("1f1b", 1), ("interleaved", 2)])
def test_schedules_are_valid(schedule, v):
    """No task starts before its inputs arrive; no GPU runs two tasks at once."""
    p, m = 4, 8
    r = run_pipeline(load_preset("dgx1-v100"), spec(schedule, p, m, v, act=32 * 2**20))
    by_task = {(e["stage"], e["chunk"], e["microbatch"], e["kind"]): e for e in r.timeline}
    for dev in {e["device"] for e in r.timeline}:
        tasks = sorted((e for e in r.timeline if e["device"] == dev), key=lambda e: e["start_s"])
        for a, b in zip(tasks, tasks[1:]):
            assert b["start_s"] >= a["end_s"] - 1e-15
    for (s, c, i, kind), e in by_task.items():
        k = c * p + s
        if kind == "F" and k > 0:
            prev = by_task[((k - 1) % p, (k - 1) // p, i, "F")]
            assert e["start_s"] > prev["end_s"]  # strictly: the activation has to travel
        if kind == "B":
            assert e["start_s"] >= by_task[(s, c, i, "F")]["end_s"]
            if k < p * v - 1:
                nxt = by_task[((k + 1) % p, (k + 1) // p, i, "B")]
                assert e["start_s"] > nxt["end_s"]


def test_infiniband_boundary_costs_what_the_engine_says():
    topo = build_fat_tree(2)
    act = 64 * 2**20
    nv = run_pipeline(topo, spec("1f1b", 2, 4, act=act, gpus=["s1.gpu0", "s1.gpu1"]))
    ib = run_pipeline(topo, spec("1f1b", 2, 4, act=act, gpus=["s1.gpu0", "s2.gpu0"]))
    free = (4 + 1) * (TF + TB)
    assert ib.makespan_s > nv.makespan_s > free
    # Each transfer costs bytes over the boundary's bottleneck plus its path latency.
    transfer = [t for t in ib.sim.transfers(next(i for i, g in enumerate(ib.sim.groups) if g.pattern))][0]
    edr = topo.catalog.link_type("IB-EDR").bandwidth_per_direction_Bps()
    assert transfer["end_s"] - transfer["start_s"] >= act / edr


def test_bad_pipelines_are_refused():
    with pytest.raises(PipelineError, match="multiple of the stages"):
        run_pipeline(load_preset("dgx1-v100"), spec("interleaved", 4, 6, 2))
    with pytest.raises(PipelineError, match="4 stages need 4 GPUs"):
        run_pipeline(load_preset("dgx1-v100"), PipelineSpec("1f1b", 4, 4, ["gpu0"], [TF] * 4, [TB] * 4, 0))
    with pytest.raises(PipelineError, match="not a GPU"):
        run_pipeline(load_preset("dgx1-v100"), spec("1f1b", 2, 2, gpus=["gpu0", "cpu0"]))


def test_grid_places_tensor_groups_inside_systems():
    topo = build_fat_tree(4)
    gpus = [d.id for d in topo.gpus()]
    place = grid(gpus, 4, 8, 1)
    for d in range(4):
        assert {topo.system_of(place[(d, 0, t)]) for t in range(8)} == {topo.system_of(place[(d, 0, 0)])}
    with pytest.raises(TrainingError, match="only 32"):
        grid(gpus, 8, 8, 1)


def test_train_iteration_breakdown():
    topo = build_fat_tree(4)
    gpus = [d.id for d in topo.gpus()]
    r = train_iteration(topo, gpus, 2, 8, 2, ModelSpec(), microbatches=4, overlap=False)
    assert r.iteration_s == pytest.approx(sum(r.breakdown_s.values()), rel=1e-9)
    assert r.bottleneck["tensor_parallel"] == "nvlink"
    assert r.bottleneck["data_parallel"] in ("infiniband", "pcie")
    overlapped = train_iteration(topo, gpus, 2, 8, 2, ModelSpec(), microbatches=4, overlap=True)
    assert overlapped.iteration_s < r.iteration_s


def test_scaling_nvlink_beats_pcie():
    def eff(name):
        topo = load_preset(name)
        return scaling(topo, [d.id for d in topo.gpus()], 97.5e6, 5e-3, 64, 64)[-1].strong_efficiency
    assert eff("dgx1-v100") > eff("pcie-8gpu")


def test_cli_pipeline_and_train_json(capsys):
    assert main(["pipeline", "--preset", "dgx1-v100", "--stages", "4", "--microbatches", "8", "--fwd-time", "2ms",
                 "--bwd-time", "4ms", "--activation-bytes", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("schedule", "stages", "microbatches", "makespan_s", "bubble_fraction", "peak_inflight_microbatches", "timeline"):
        assert key in data
    assert data["makespan_s"] == pytest.approx(11 * 6e-3)
    assert {"device", "kind", "microbatch", "start_s", "end_s"} <= set(data["timeline"][0])
    assert main(["train", "--preset", "dgx-a100", "--dp", "2", "--tp", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["iteration_s"] > 0 and set(data["breakdown_s"]) == set(data["bottleneck_link_class"])


def test_zb_h1_splits_backward_and_shrinks_the_bubble():
    from dgxstudio.sim.pipeline import ideal_bubble

    topo = load_preset("dgx1-v100")
    gpus = [d.id for d in topo.gpus()][:4]
    one = run_pipeline(topo, PipelineSpec("1f1b", 4, 8, gpus, [1e-3] * 4, [2e-3] * 4, 0.0))
    zb = run_pipeline(topo, PipelineSpec("zb-h1", 4, 8, gpus, [1e-3] * 4, [2e-3] * 4, 0.0))
    # Qi et al.: bubble (p-1)(tf+tb-tw) instead of (p-1)(tf+tb+tw), with tb = tw = half the backward
    assert one.makespan_s == pytest.approx(33e-3)
    assert zb.makespan_s == pytest.approx(8 * 3e-3 + 3 * 1e-3)
    assert zb.bubble_fraction == pytest.approx(ideal_bubble(zb.spec))
    kinds = {e["kind"] for e in zb.timeline}
    assert kinds == {"F", "B", "W"}
    assert all(e["end_s"] - e["start_s"] == pytest.approx(1e-3) for e in zb.timeline)
    # no stage holds more activations than 1F1B's first stage does
    assert max(zb.peak_inflight) == max(one.peak_inflight) == 4
    # every W follows its own B on the same stage
    for st in range(4):
        order = [(e["kind"], e["microbatch"]) for e in zb.timeline if e["stage"] == st]
        for i in range(8):
            assert order.index(("B", i)) < order.index(("W", i))
    assert main(["pipeline", "--preset", "dgx1-v100", "--schedule", "zb-h1", "--stages", "4", "--microbatches", "8",
                 "--fwd-time", "1ms", "--bwd-time", "2ms", "--activation-bytes", "0"]) == 0


def test_zb_h2_trades_memory_for_the_warm_up_bubble():
    topo = load_preset("dgx1-v100")
    gpus = [d.id for d in topo.gpus()][:4]
    # tb = tw = 2 ms: ZB-H1's memory cap leaves bubbles; ZB-H2 reaches the last stage's own bound
    spec = dict(stages=4, microbatches=8, stage_gpus=gpus, fwd_s=[1e-3] * 4, bwd_s=[4e-3] * 4, activation_bytes=0.0)
    h1 = run_pipeline(topo, PipelineSpec("zb-h1", **spec))
    h2 = run_pipeline(topo, PipelineSpec("zb-h2", **spec))
    bound = 3 * 1e-3 + 8 * (1e-3 + 4e-3)
    assert h2.makespan_s == pytest.approx(bound) and h1.makespan_s > bound * 1.05
    assert max(h2.peak_inflight) <= 8 and max(h2.peak_inflight) > max(h1.peak_inflight) == 4
    for st in range(4):
        order = [(e["kind"], e["microbatch"]) for e in h2.timeline if e["stage"] == st]
        assert sorted(order) == sorted([(k, i) for k in "FBW" for i in range(8)])
        for i in range(8):
            assert order.index(("F", i)) < order.index(("B", i)) < order.index(("W", i))
    assert main(["pipeline", "--preset", "dgx1-v100", "--schedule", "zb-h2", "--stages", "4", "--microbatches", "8",
                 "--fwd-time", "1ms", "--bwd-time", "4ms", "--activation-bytes", "0"]) == 0
