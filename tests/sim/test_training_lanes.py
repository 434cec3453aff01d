"""Every lane at once, the lecture's A100/A800 verdict, bucketed data-parallel overlap in train."""

import json

import pytest

from dgxstudio.cli import main
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.sim.training import ModelSpec, boundary_send, grid, train_iteration
from dgxstudio.analysis.routing import Router


@pytest.fixture(scope="module")
def pairs():
    return {s: build_fat_tree(2, s) for s in ("dgx-a100", "hgx-a800")}


def test_lecture_verdict_a100_network_a800_nvlink(pairs):
    out = {}
    for system, topo in pairs.items():
        gpus = [d.id for d in topo.gpus()]
        r = train_iteration(topo, gpus, 1, 8, 2, ModelSpec(), microbatches=4)
        out[system] = r.details
    a100, a800 = out["dgx-a100"], out["hgx-a800"]
    assert a100["nvlink_to_network"]["required_ratio"] == pytest.approx(1.75)
    assert a100["critical_resource"] == "infiniband"
    assert a800["critical_resource"] == "nvlink"
    assert a100["nvlink_to_network"]["offered_ratio"] == pytest.approx(300 / 160)
    assert a800["nvlink_to_network"]["offered_ratio"] == pytest.approx(200 / 160)
    assert "headroom" in a100["critical_resource_words"] and "NVLink is the limit" in a800["critical_resource_words"]
    # the simulated rates stand beside the lecture's arithmetic, and NVLink is the busiest class
    assert a800["nvlink_to_network"]["simulated"]["offered_ratio"] < a100["nvlink_to_network"]["simulated"]["offered_ratio"]
    assert set(a100["busy_fraction"]) >= {"nvlink", "infiniband"}


def test_every_lane_doubles_boundary_traffic_on_the_nics(pairs):
    topo = pairs["dgx-a100"]
    gpus = [d.id for d in topo.gpus()]
    sys0 = [g for g in gpus if topo.system_of(g) == topo.system_of(gpus[0])]
    sys1 = [g for g in gpus if g not in sys0]
    router = Router(topo, True)
    # stage 0 in the first system, stage 1 in the second: one replica on GPUs 0-3, two on GPUs 0-7
    one_place = grid(sys0[:4] + sys1[:4], 1, 4, 2, "tp,dp,pp")
    two_place = grid(sys0 + sys1, 2, 4, 2, "tp,dp,pp")
    one = boundary_send(topo, router, one_place, 1, 4, 2, 64e6)[1]
    two = boundary_send(topo, router, two_place, 2, 4, 2, 64e6)[1]

    def nic_bytes(sim):
        return {sim.channel_ends[c]: float(b) for c, b in enumerate(sim.channel_bytes)
                if b > 0 and topo.devices[sim.channel_ends[c][0]].kind == "nic"}
    b1, b2 = nic_bytes(one), nic_bytes(two)
    assert b1 and sum(b2.values()) == pytest.approx(2 * sum(b1.values()))
    # the second replica's lanes leave through the NICs beside its own GPUs, not through the first's
    assert set(b1) < set(b2) and len(b2) == 2 * len(b1)
    r1 = train_iteration(topo, sys0[:4] + sys1[:4], 1, 4, 2, ModelSpec(), microbatches=4, order="tp,dp,pp")
    r2 = train_iteration(topo, sys0 + sys1, 2, 4, 2, ModelSpec(), microbatches=4, order="tp,dp,pp")
    assert (r1.details["lanes_simulated"], r2.details["lanes_simulated"]) == (4, 8)
    assert r1.bottleneck["pipeline_bubble_and_transfers"] == "infiniband"


def test_train_buckets_hide_behind_backward_when_compute_dominates(pairs):
    topo = pairs["dgx-a100"]
    gpus = [d.id for d in topo.gpus()]
    small = ModelSpec(layers=8, hidden=4096, seq_len=8192, efficiency=0.01)  # compute-heavy: 16 buckets per GPU
    r = train_iteration(topo, gpus, 2, 8, 1, small, microbatches=2)
    assert r.details["dp_buckets"] >= 10 and r.details["dp_allreduce_s"] > 0
    assert r.breakdown_s["data_parallel"] < 0.1 * r.details["dp_allreduce_s"]
    big = ModelSpec(layers=8, hidden=4096, seq_len=64, efficiency=1.0)  # communication dominates
    r = train_iteration(topo, gpus, 2, 8, 1, big, microbatches=1)
    assert r.breakdown_s["data_parallel"] > 0.8 * r.details["dp_allreduce_s"]


def test_cli_train_reports_critical_resource(capsys, tmp_path):
    f = tmp_path / "a800.dgxs"
    assert main(["generate", "fat-tree", "--system", "hgx-a800", "--systems", "2", "-o", str(f)]) == 0
    capsys.readouterr()
    assert main(["train", str(f), "--tp", "8", "--pp", "2", "--microbatches", "4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["critical_resource"] == "nvlink" and d["figures"] == "achievable"
    assert d["nvlink_to_network"]["required_ratio"] == pytest.approx(1.75)
    assert main(["train", str(f), "--tp", "8", "--pp", "2", "--microbatches", "4"]) == 0
    assert "critical resource at rated figures: nvlink" in capsys.readouterr().out


def test_expert_parallel_all_to_all_matches_the_simulator(pairs):
    from dgxstudio.sim.run import SimOptions, Simulator
    from dgxstudio.sim.training import TrainingError

    topo = pairs["dgx-a100"]
    gpus = [d.id for d in topo.gpus()]
    moe = ModelSpec(layers=4, hidden=1024, seq_len=1024, experts=16, top_k=2)
    r = train_iteration(topo, gpus, 16, 1, 1, moe, microbatches=2, ep=16)
    ref = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-to-all", "direct", moe.dispatch_bytes())
    assert r.details["ep_all_to_all_s"] == pytest.approx(ref.time_s, rel=1e-6)
    # dispatch + combine, forward and backward, in every MoE layer of every micro-batch
    assert r.breakdown_s["expert_parallel"] == pytest.approx(2 * 4 * 4 * ref.time_s)
    assert r.bottleneck["expert_parallel"] == "infiniband"
    # two groups of 8 (one per system) stay on NVLink and are faster than one group across the network
    local = train_iteration(topo, gpus, 16, 1, 1, moe, microbatches=2, ep=8)
    assert local.details["ep_all_to_all_s"] < r.details["ep_all_to_all_s"]
    assert local.bottleneck["expert_parallel"] == "nvlink"
    # top-2 routing runs the MLP twice per token: more compute than the dense model
    dense = train_iteration(topo, gpus, 16, 1, 1, ModelSpec(layers=4, hidden=1024, seq_len=1024), microbatches=2)
    assert r.breakdown_s["compute"] > dense.breakdown_s["compute"]
    with pytest.raises(TrainingError, match="divide"):
        train_iteration(topo, gpus, 16, 1, 1, moe, ep=3)
    with pytest.raises(TrainingError, match="mixture-of-experts"):
        train_iteration(topo, gpus, 16, 1, 1, ModelSpec(layers=4, hidden=1024, seq_len=1024), ep=2)


def test_cli_train_expert_parallel(capsys, pairs, tmp_path):
    f = tmp_path / "a100.dgxs"
    assert main(["generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "-o", str(f)]) == 0
    capsys.readouterr()
    assert main(["train", str(f), "--dp", "16", "--ep", "8", "--experts", "8", "--layers", "4", "--microbatches", "2",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ep"] == 8 and d["breakdown_s"]["expert_parallel"] > 0


def test_pipeline_lanes_run_at_once_and_contend(pairs):
    from dgxstudio.sim.pipeline import PipelineSpec, run_pipeline

    topo = pairs["dgx-a100"]
    gpus = [d.id for d in topo.gpus()]
    lanes = [[gpus[k], gpus[8 + k]] for k in range(8)]  # 8 lanes, each crossing the network on its own rail
    spec = PipelineSpec("1f1b", 2, 4, lanes[0], [1e-4] * 2, [2e-4] * 2, 256e6)
    alone = run_pipeline(topo, spec, achievable=True)
    together = run_pipeline(topo, spec, achievable=True, lanes=lanes)
    assert float(together.sim.channel_bytes.sum()) == pytest.approx(8 * float(alone.sim.channel_bytes.sum()))
    assert together.makespan_s >= alone.makespan_s - 1e-12
    shared = [[gpus[0], gpus[8]], [gpus[1], gpus[9]]]  # GPUs 0 and 1 share a PCIe switch, not a NIC
    assert run_pipeline(topo, spec, achievable=True, lanes=shared).makespan_s >= alone.makespan_s - 1e-12


def test_expert_gradients_are_reduced_only_among_replicas_holding_the_same_experts(pairs):
    """With ep = dp every replica holds its own experts: only the dense layers' gradients cross the
    data-parallel group. With ep = 8 of 16, each expert lives on two replicas, one per system."""
    from dgxstudio.analysis.routing import Router
    from dgxstudio.sim import collectives as C
    from dgxstudio.sim.scaling import bucket_sizes, ddp_bucket_bytes
    from dgxstudio.sim.training import concurrent_allreduce, grid

    topo = pairs["dgx-a100"]
    gpus = [d.id for d in topo.gpus()]
    moe = ModelSpec(layers=4, hidden=1024, seq_len=1024, experts=16, top_k=2)
    own = train_iteration(topo, gpus, 16, 1, 1, moe, microbatches=2, ep=16)
    dense_bytes = 4 * 4.0 * 1024 ** 2 * moe.bytes_per_value
    assert own.details["expert_data_parallel_size"] == 1
    assert own.details["gradient_bytes_per_gpu"] - own.details["expert_gradient_bytes_per_gpu"] == pytest.approx(dense_bytes)
    # the same as all-reducing the dense gradients alone, bucket by bucket, over all 16 replicas
    router = Router(topo, achievable=True)
    place = grid(gpus, 16, 1, 1, "tp,pp,dp")
    replicas = [place[(d, 0, 0)] for d in range(16)]
    expected = sum(concurrent_allreduce(topo, router, {"all": replicas}, s, 4 * 2**20, {"all": [C.RingSpec(replicas)]})[0]
                   for s in bucket_sizes(dense_bytes, ddp_bucket_bytes()))
    assert own.details["dp_allreduce_s"] == pytest.approx(expected, rel=1e-9)
    shared = train_iteration(topo, gpus, 16, 1, 1, moe, microbatches=2, ep=8)
    assert shared.details["expert_data_parallel_size"] == 2
    assert shared.details["dp_allreduce_s"] > own.details["dp_allreduce_s"]
    # exactly: the dense buckets over all 16 replicas, then the expert buckets over the 8 pairs {e, e + 8}
    # that hold the same experts, all 8 pairs at once
    expert_bytes = shared.details["expert_gradient_bytes_per_gpu"]
    assert expert_bytes == pytest.approx(4 * 8.0 * 1024 ** 2 * 16 / 8 * moe.bytes_per_value)
    pairs_ = {f"e{e}": [replicas[e], replicas[e + 8]] for e in range(8)}
    expert_t = sum(concurrent_allreduce(topo, router, pairs_, s, 4 * 2**20, {k: [C.RingSpec(v)] for k, v in pairs_.items()})[0]
                   for s in bucket_sizes(expert_bytes, ddp_bucket_bytes()))
    assert shared.details["dp_allreduce_s"] == pytest.approx(expected + expert_t, rel=1e-9)
    # the pairs cross the network (replica e in one system, e + 8 in the other); the dense ring does too
    assert {topo.system_of(a) != topo.system_of(b) for a, b in pairs_.values()} == {True}


def test_verdicts_at_rated_and_achievable_figures(pairs, capsys, tmp_path):
    """The lecture's verdict takes rated NVLink against 0.8 x rated RDMA; at the catalog's NCCL-measured
    figures (NVLink3 x0.8, HDR x0.96) NVLink limits the A100 pair too. Both are reported, with why."""
    v = {}
    for system, topo in pairs.items():
        gpus = [d.id for d in topo.gpus()]
        v[system] = train_iteration(topo, gpus, 1, 8, 2, ModelSpec(), microbatches=4).details["verdicts"]
    a100, a800 = v["dgx-a100"], v["hgx-a800"]
    assert a100["rated"]["limit"] == "infiniband" and a100["rated"]["offered_ratio"] == pytest.approx(300 / 160)
    assert a100["achievable"]["limit"] == "nvlink" and a100["achievable"]["offered_ratio"] == pytest.approx(240 / 192)
    assert a100["achievable"]["nvlink_per_gpu_per_direction_Bps"] == pytest.approx(240e9)
    assert a100["achievable"]["network_per_system_per_direction_Bps"] == pytest.approx(8 * 25e9 * 0.96)
    assert a100["simulated"]["limit"] == "nvlink"
    assert "80% of NVLink's rating but 96% of the network's" in a100["why_they_differ"]
    assert {a800[k]["limit"] for k in ("rated", "achievable", "simulated")} == {"nvlink"}
    assert "why_they_differ" not in a800
    for d in (a100, a800):
        assert all(d[k]["required_ratio"] == pytest.approx(1.75) for k in ("rated", "achievable", "simulated"))
    f = tmp_path / "a100.dgxs"
    assert main(["generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "-o", str(f)]) == 0
    capsys.readouterr()
    assert main(["train", str(f), "--tp", "8", "--pp", "2", "--microbatches", "4"]) == 0
    out = capsys.readouterr().out
    assert "rated:      infiniband limits" in out and "achievable: nvlink limits" in out and "why: NCCL reaches" in out
    # the achievable verdict is said in the headline and its own line (not a third time after the headline)
    assert "critical resource at rated figures: infiniband (achievable and simulated: nvlink)" in out


def test_the_json_sentence_has_no_two_parentheses_in_a_row(tmp_path):
    """The review: '... (1.88x offered, 1.75x required) (the lecture's verdict, at rated figures; ...)'."""
    from dgxstudio.model.builders import build_fat_tree
    from dgxstudio.sim.training import ModelSpec, train_iteration
    topo = build_fat_tree(2, "dgx-a100")
    r = train_iteration(topo, [g.id for g in topo.gpus()], 1, 8, 2, ModelSpec(), 4, "1f1b")
    words = r.details["critical_resource_words"]
    assert ") (" not in words and "(1.88x offered, 1.75x required); that is the lecture's verdict" in words
