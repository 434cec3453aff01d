"""Zero-bubble schedules (Qi et al., ICLR 2024): dependency order, memory per stage, bubble against
the paper's formulas, for ZB-H1, ZB-H2 and ZB-V."""

import pytest

from dgxstudio.cli import main
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import zero_bubble as Z
from dgxstudio.sim.pipeline import PipelineError, PipelineSpec, ideal_bubble, placement, run_pipeline, virtual_stage

MS = 1e-3


@pytest.fixture(scope="module")
def topo():
    return load_preset("dgx1-v100")


def run(topo, schedule, p, m, tf, tb, tw, act=0.0, gpus=None):
    gpus = gpus or [d.id for d in topo.gpus()][:p]
    spec = PipelineSpec(schedule, p, m, gpus, [tf * MS] * p, [(tb + tw) * MS] * p, act, w_share=tw / (tb + tw))
    return run_pipeline(topo, spec)


def check_valid(r):
    """Each stage runs every (kind, chunk, micro-batch) once, one at a time; F waits for the previous
    virtual stage's F, B for the next one's B (strictly later across GPUs: the data travels), W for its B."""
    spec = r.spec
    p, v, m = spec.stages, spec.chunks, spec.microbatches
    by = {(e["stage"], e["chunk"], e["microbatch"], e["kind"]): e for e in r.timeline}
    assert len(by) == len(r.timeline) == p * v * m * 3
    for s in range(p):
        row = sorted((e for e in r.timeline if e["stage"] == s), key=lambda e: e["start_s"])
        for a, b in zip(row, row[1:]):
            assert b["start_s"] >= a["end_s"] - 1e-15
    last = p * v - 1
    travel = spec.activation_bytes > 0
    for (s, c, i, kind), e in by.items():
        k = virtual_stage(spec, s, c)
        if kind == "F" and k > 0:
            ps, pc = placement(spec, k - 1)
            prev = by[(ps, pc, i, "F")]
            assert e["start_s"] > prev["end_s"] if ps != s and travel else e["start_s"] >= prev["end_s"]
        if kind == "B":
            assert e["start_s"] >= by[(s, c, i, "F")]["end_s"]
            if k < last:
                ns, nc = placement(spec, k + 1)
                nxt = by[(ns, nc, i, "B")]
                assert e["start_s"] > nxt["end_s"] if ns != s and travel else e["start_s"] >= nxt["end_s"]
        if kind == "W":
            assert e["start_s"] >= by[(s, c, i, "B")]["end_s"]


@pytest.mark.parametrize("schedule", ["zb-h1", "zb-h2", "zb-v"])
@pytest.mark.parametrize("boundary", ["nvlink", "infiniband"])
def test_dependency_order_with_real_transfers(schedule, boundary):
    if boundary == "nvlink":
        topo = load_preset("dgx1-v100")
        gpus = [d.id for d in topo.gpus()][:4]
    else:  # every boundary crosses the network: one GPU in each of 4 systems
        topo = build_fat_tree(4)
        gpus = [f"s{k}.gpu0" for k in range(1, 5)]
    r = run(topo, schedule, 4, 8, 1, 1, 1, act=64 * 2**20, gpus=gpus)
    check_valid(r)
    free = run(topo, schedule, 4, 8, 1, 1, 1, gpus=gpus)
    assert r.makespan_s > free.makespan_s  # transfers cost time


@pytest.mark.parametrize("p, m", [(2, 4), (3, 6), (4, 8), (4, 12), (8, 16)])
def test_memory_per_stage_is_the_papers(topo, p, m):
    """ZB-H1: stage s holds p - s micro-batches waiting for B and p in all ((p-i+1) M_B + (i-1) M_W on
    device i = s + 1); ZB-H2: 2(p - s) - 1 and 2p - 1; ZB-V: 1F1B's p (2p half-model chunks)."""
    one = run(topo, "1f1b", p, m, 1, 1, 1)
    for schedule in ("zb-h1", "zb-h2"):
        r = run(topo, schedule, p, m, 1, 1, 1)
        for s in range(p):
            waiting_b, waiting_w = Z.paper_peak_memory(schedule, p, s)
            assert r.peak_awaiting_b[s] == waiting_b
            assert r.peak_inflight[s] <= waiting_b + waiting_w == Z.memory_cap(schedule, p)
        assert r.peak_inflight[0] == Z.memory_cap(schedule, p)
    assert max(one.peak_inflight) == p
    v = run(topo, "zb-v", p, m, 1, 1, 1)
    assert max(v.peak_inflight) <= p


# (T_F, T_B, T_W) per stage: equal (the paper's figures), W <= F (Table 2's regime), W > F (the warm-up bound)
TIMES = [(1, 1, 1), (2, 1, 1), (3, 2, 1), (2, 3, 1), (5, 1, 4), (3, 1, 2), (2, 1, 1.5), (1, 2, 2), (1, 1, 3)]


@pytest.mark.parametrize("p, m", [(2, 4), (3, 5), (4, 7), (4, 12), (6, 11), (8, 16)])
@pytest.mark.parametrize("tf, tb, tw", TIMES)
def test_bubble_is_table_2s(topo, p, m, tf, tb, tw):
    """Per-stage bubble (idle between a stage's first and last pass) against Table 2: (p-1)(T_F+T_B+T_W)
    for 1F1B, (p-1)(T_F+T_B-T_W) for ZB-H1, (p-1)(T_F+T_B-2T_W) for ZB-H2, whenever T_W <= T_F; when
    T_W > T_F, stage 0's wait for its first B is longer and is what the schedules reach."""
    one = run(topo, "1f1b", p, m, tf, tb, tw)
    assert max(one.stage_bubble_s) == pytest.approx((p - 1) * (tf + tb + tw) * MS)
    for schedule in ("zb-h1", "zb-h2"):
        r = run(topo, schedule, p, m, tf, tb, tw)
        got = max(r.stage_bubble_s) / MS
        table = Z.paper_bubble(schedule, p, tf, tb, tw)
        if tw <= tf:
            assert got == pytest.approx(table, abs=1e-9)
        else:
            assert got == pytest.approx(Z.warm_up_bound(schedule, p, m, tf, tb), abs=1e-9) and got >= table
        assert r.stage_bubble_fraction == pytest.approx(ideal_bubble(r.spec), abs=1e-12)


@pytest.mark.parametrize("p, m", [(2, 4), (3, 6), (4, 8), (4, 12), (6, 12), (8, 16)])
def test_zb_v_has_no_bubble_when_passes_take_the_same_time(topo, p, m):
    """Section 6: ZB-V reaches zero bubble with T_F = T_B = T_W (m >= 2p) at 1F1B's memory; the whole
    iteration is then the work plus the V's skew, half a stage's forward per stage."""
    r = run(topo, "zb-v", p, m, 1, 1, 1)
    assert max(r.stage_bubble_s) == pytest.approx(0.0, abs=1e-12)
    assert ideal_bubble(r.spec) == 0.0
    assert r.makespan_s == pytest.approx((3 * m + (p - 1) / 2) * MS)
    check_valid(r)


@pytest.mark.parametrize("tf, tb, tw", TIMES[1:])
def test_zb_v_beats_zb_h1_at_the_same_memory(topo, tf, tb, tw):
    """Shorter iterations at 1F1B's memory. (The authors' V heuristic is not optimal: with W four times
    B, 5:1:4, its worst stage idles 7.5 against ZB-H1's 6, as their own scheduler does.)"""
    for p, m in ((4, 8), (8, 16)):
        v = run(topo, "zb-v", p, m, tf, tb, tw)
        h1 = run(topo, "zb-h1", p, m, tf, tb, tw)
        if (tf, tb, tw) != (5, 1, 4):
            assert max(v.stage_bubble_s) <= max(h1.stage_bubble_s) + 1e-12
        assert v.makespan_s < h1.makespan_s
        assert max(v.peak_inflight) <= max(h1.peak_inflight) == p


def test_zb_v_planner_is_scale_free():
    """The plan depends on the ratios of the times only (ties are compared with a tolerance)."""
    a = Z.v_shape(4, 8, [1.0] * 4, [2.0] * 4, [2.0] * 4)
    b = Z.v_shape(4, 8, [0.5e-3] * 4, [1e-3] * 4, [1e-3] * 4)
    assert a == b


def test_few_micro_batches_have_no_closed_form(topo):
    assert Z.expected_bubble("zb-h2", 4, 6, 1, 1, 1) is None  # ZB-H2's warm-up needs 2p - 1 = 7
    assert ideal_bubble(PipelineSpec("zb-v", 4, 6, ["a"] * 4, [1.0] * 4, [2.0] * 4, 0.0)) is None
    r = run(topo, "zb-h2", 4, 4, 1, 1, 1)
    check_valid(r)
    assert r.as_dict()["ideal_bubble_fraction"] is None


def test_weight_gradient_share(topo):
    from dgxstudio.sim.training import ModelSpec

    # the paper's FLOP count per transformer layer: B sbh(24h + 8s), W sbh(24h)
    assert ModelSpec(hidden=2048, seq_len=2048).weight_gradient_share() == pytest.approx(24 / 56)
    r = run(topo, "zb-h1", 4, 8, 1, 1.5, 0.5)
    assert {round((e["end_s"] - e["start_s"]) / MS, 9) for e in r.timeline if e["kind"] == "W"} == {0.5}
    with pytest.raises(PipelineError, match="more than 0 and less than 1"):
        PipelineSpec("zb-h1", 2, 2, ["a", "b"], [1.0] * 2, [1.0] * 2, 0.0, w_share=1.0).check()
    assert main(["pipeline", "--preset", "dgx1-v100", "--schedule", "zb-h1", "--stages", "4", "--microbatches", "8",
                 "--fwd-time", "1ms", "--bwd-time", "2ms", "--activation-bytes", "0", "--w-share", "0.25"]) == 0
    assert main(["pipeline", "--preset", "dgx1-v100", "--schedule", "zb-h1", "--stages", "4", "--microbatches", "8",
                 "--fwd-time", "1ms", "--bwd-time", "2ms", "--activation-bytes", "0", "--w-share", "2"]) == 2


def test_zb_v_plans_with_the_boundary_transfer_time():
    """ZB-V's scheduler takes a communication time (the authors plan on profiled times): run_pipeline gives
    it the slowest boundary's transfer, bytes over the route's rate plus its latency, and the plan is no
    worse than one that assumes free transfers."""
    from dataclasses import replace

    topo = build_fat_tree(4)
    gpus = [f"s{k}.gpu0" for k in range(1, 5)]
    act = 64 * 2**20
    r = run(topo, "zb-v", 4, 8, 1, 1, 1, act=act, gpus=gpus)
    edr = topo.catalog.link_type("IB-EDR").bandwidth_per_direction_Bps()
    assert act / edr < r.spec.plan_comm_s < act / edr * 1.05 + 20e-6
    free = run_pipeline(topo, replace(r.spec, plan_comm_s=0.0))
    assert r.makespan_s <= free.makespan_s + 1e-12
    check_valid(r)
    assert run(topo, "zb-h1", 4, 8, 1, 1, 1, gpus=gpus).spec.plan_comm_s is None  # only ZB-V plans with it
