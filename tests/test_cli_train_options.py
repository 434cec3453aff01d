"""`train` as a Megatron user types it: every bad grid option named with its value, `--bucket-size 0`
as its help promises, and a header that says what ran (schedule, GPUs used of those selected)."""

import json

import pytest

from dgxstudio.cli import main

from tests.terminal import on_terminal


@pytest.fixture(scope="module")
def a100_pair(tmp_path_factory):
    f = tmp_path_factory.mktemp("train") / "a100x2.dgxs"
    assert main(["generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "-o", str(f)]) == 0
    return str(f)


@pytest.mark.parametrize("options, said", [
    (["--tp", "0"], "--tp 0: must be at least 1"),
    (["--tp", "-8"], "--tp -8: must be at least 1"),
    (["--dp", "0"], "--dp 0: must be at least 1"),
    (["--pp", "0"], "--pp 0: must be at least 1"),
    (["--ep", "0", "--experts", "8"], "--ep 0: must be at least 1"),
    (["--microbatches", "0"], "--microbatches 0: must be at least 1"),
    (["--experts", "-8"], "--experts -8: must be at least 0"),
    (["--experts", "8", "--top-k", "0"], "--top-k 0: must be between 1 and --experts (8)"),
    (["--experts", "8", "--top-k", "9"], "--top-k 9: must be between 1 and --experts (8)"),
])
def test_bad_grid_options_are_named(a100_pair, capsys, options, said):
    capsys.readouterr()
    assert main(["train", a100_pair, *options]) == 2
    out, err = capsys.readouterr()
    assert said in err and out == ""


def test_bucket_size_zero_is_one_all_reduce_as_the_help_says(a100_pair, capsys):
    capsys.readouterr()
    assert main(["train", a100_pair, "--dp", "16", "--bucket-size", "0", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["train", a100_pair, "--dp", "16", "--json"]) == 0
    buckets = json.loads(capsys.readouterr().out)
    assert one["dp_buckets"] == 1 and buckets["dp_buckets"] > 1
    assert one["dp_allreduce_s"] > 0


def test_header_names_the_schedule_and_the_gpus_used(a100_pair, capsys):
    capsys.readouterr()
    assert main(["train", a100_pair, "--tp", "4", "--pp", "2", "--schedule", "zb-h1"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "on 8 of the 16 GPUs selected" in head and "zb-h1 schedule" in head and "achievable link figures" in head
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", "--schedule", "zb-h1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schedule"] == "zb-h1"


@pytest.mark.parametrize("share", ["0", "1", "1.5", "-0.2", "nan"])
def test_pipeline_w_share_out_of_range_names_the_option_with_one_rule(a100_pair, capsys, share):
    """Before: 1.5 read 'must be at least 0 and at most 1' and 0 'must be between 0 and 1'."""
    capsys.readouterr()
    assert main(["pipeline", a100_pair, "--schedule", "zb-h1", "--stages", "4", "--microbatches", "8",
                 "--w-share", share]) == 2
    assert f"--w-share {float(share):g}: " in capsys.readouterr().err


def test_pipeline_spec_w_share_bounds_read_alike():
    from dgxstudio.sim.pipeline import PipelineError, PipelineSpec

    said = []
    for share in (0.0, 1.0, 1.5):
        with pytest.raises(PipelineError) as err:
            PipelineSpec("zb-h1", 2, 4, ["a", "b"], [1e-3] * 2, [2e-3] * 2, 0.0, 1, share).check()
        said.append(str(err.value).split("(")[-1])
    assert said == ["must be more than 0 and less than 1)"] * 3


def test_train_says_which_model_and_compute_rate_it_ran(a100_pair, capsys):
    """The JSON held 'peak_flops_used': 156e12 for an A100 whose fp16 peak is 312 TFLOP/s (it was peak x
    efficiency), and the text named no model at all."""
    capsys.readouterr()
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "peak_flops_used" not in d
    assert d["gpu_peak_flop_per_s"] == 312e12 and d["compute_flop_per_s_per_gpu"] == 156e12 and d["efficiency"] == 0.5
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2"]) == 0
    model = capsys.readouterr().out.splitlines()[1]
    assert model.startswith("  model: 24 layers, hidden 2048, sequence 2048")
    assert "fp16 at 50% of the GPU's 312 TFLOP/s = 156 TFLOP/s per GPU" in model


def test_a_slow_iteration_is_not_zero_samples_per_second(a100_pair, capsys):
    capsys.readouterr()
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", "--layers", "96", "--hidden", "12288",
                 "--params", "175e9", "--precision", "fp32", "--efficiency", "0.4"]) == 0
    line = capsys.readouterr().out.splitlines()[2]
    assert line.startswith("  iteration ") and " 0.0 samples/s" not in line


def test_ep_help_speaks_megatrons_terms(capsys):
    """Before: 'expert parallelism: replicas per expert group', which reads as the replicas of one expert."""
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = "".join(capsys.readouterr().out.split())   # argparse wraps lines at hyphens
    assert "--expert-model-parallel-size" in text and "splitovergroupsofEPdata-parallelreplicas" in text
    assert "zb-h1" in text.split("--schedule{gpipe,1f1b,zb-h1,zb-h2,zb-v}")[-1].split("--no-overlap")[0]


def test_train_says_how_much_of_the_gradient_all_reduce_the_backward_hid(a100_pair, capsys):
    """The bucketed DDP overlap showed only its exposed remainder ('data_parallel 36.35 ms')."""
    capsys.readouterr()
    assert main(["train", a100_pair, "--dp", "16"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("  data-parallel:"))
    assert "2.25 GiB of gradients per GPU in 93 buckets of 25 MiB" in line and "hidden behind" in line
    assert main(["train", a100_pair, "--dp", "16", "--no-overlap"]) == 0
    assert "none hidden (after the backward pass)" in capsys.readouterr().out
    # an MoE layer's experts live on one replica each when dp = ep: only the dense gradients are reduced
    assert main(["train", a100_pair, "--dp", "2", "--tp", "4", "--pp", "2", "--ep", "2", "--experts", "8"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("  data-parallel:"))
    assert "96 MiB of gradients per GPU in 4 buckets" in line and "the experts' 768 MiB have no replica" in line


def test_train_tells_a_terminal_which_phase_runs(a100_pair, monkeypatch):
    """An MoE iteration over a 127-system SuperPOD took 20 s in silence."""
    term = on_terminal(monkeypatch)
    assert main(["train", a100_pair, "--dp", "4", "--tp", "2", "--pp", "2", "--ep", "2", "--experts", "8"]) == 0
    shown = term.getvalue()
    for phase in ("tensor-parallel all-reduces", "expert-parallel all-to-all", "pipeline lanes", "gradient all-reduce"):
        assert f"training on 2 x DGX A100 fat tree: {phase}" in shown


@pytest.mark.parametrize("command", [["train", "A100", "--dp", "16"],
                                     ["scaling", "--preset", "dgx1-p100", "--sample-time", "5ms"]])
def test_a_bucket_size_of_one_byte_is_refused_before_listing_the_buckets(a100_pair, capsys, command):
    """train --dp 16 --bucket-size 1B listed 2.4 billion buckets and was killed at 23.7 GB after 73 s."""
    import tracemalloc

    capsys.readouterr()
    tracemalloc.start()
    try:
        code = main([a100_pair if x == "A100" else x for x in command] + ["--bucket-size", "1B"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 2 and "--bucket-size 1 B cuts" in err and "more than the limit of 1,000,000" in err
    assert "use buckets of at least" in err and peak < 200e6


def test_train_splits_the_pipeline_category_into_sends_and_bubble(a100_pair, capsys):
    """'pipeline_bubble_and_transfers 10.90 ms bottleneck: infiniband' read as InfiniBand costing 10.9 ms;
    its sends take at most 16 crossings x 49 us."""
    capsys.readouterr()
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    bound = 2 * 1 * 8 * d["boundary_send_s"]
    assert bound < 0.1 * d["breakdown_s"]["pipeline_bubble_and_transfers"]
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("  pipeline:"))
    assert f"at most {bound * 1e6:.2f} us of it (16 crossings of" in line
    assert "over infiniband), the rest is the 1f1b schedule's bubble" in line


def test_pipeline_says_its_peak_activations_are_counted_in_micro_batches(a100_pair, capsys):
    """'activations held at most, per stage: [4, 4, 4, 4]' gave no unit: bytes, tensors, micro-batches?"""
    capsys.readouterr()
    assert main(["pipeline", a100_pair, "--schedule", "zb-h1", "--stages", "4", "--microbatches", "8"]) == 0
    assert "micro-batches whose activations a stage holds at most, per stage: [4, 4, 4, 4]" in capsys.readouterr().out


@pytest.mark.parametrize("options", [["--layers", "100000", "--hidden", "1000000"], ["--seq-len", "100000000"]])
def test_a_model_beyond_the_time_limit_names_the_model_options(a100_pair, capsys, options):
    """Before: 'stage time (s): 1.97289e+06 is out of range (must be at least 0 and at most 1e+06)', after
    simulating the tensor all-reduce of 400 GB activations."""
    capsys.readouterr()
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", *options]) == 2
    err = capsys.readouterr().err
    assert "a stage's backward pass would take" in err and "check --layers, --hidden, --seq-len" in err


def test_train_runs_megatrons_interleaved_schedule_with_its_chunks(capsys, a100_pair):
    def iteration(*extra):
        assert main(["train", a100_pair, "--tp", "8", "--pp", "2", "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    one_f = iteration()
    inter = iteration("--schedule", "interleaved")
    assert inter["chunks"] == 2 and inter["schedule"] == "interleaved"
    # the bubble shrinks by the chunks ((p - 1) / v of a micro-batch's passes instead of p - 1)
    assert inter["breakdown_s"]["pipeline_bubble_and_transfers"] < one_f["breakdown_s"]["pipeline_bubble_and_transfers"]
    assert iteration("--schedule", "interleaved", "--chunks", "4")["chunks"] == 4
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", "--schedule", "interleaved"]) == 0
    out = capsys.readouterr().out
    assert "interleaved schedule (2 model chunks per stage)" in out and "48 crossings" in out


@pytest.mark.parametrize("options, said", [
    (["--schedule", "interleaved", "--chunks", "5"], "--chunks 5: 24 layers do not split evenly into 2 stages x 5 chunks"),
    (["--schedule", "interleaved", "--microbatches", "7"], "--microbatches 7: the interleaved schedule needs a multiple"),
    (["--schedule", "interleaved", "--chunks", "1"], "--chunks: the interleaved schedule needs 2 or more"),
    (["--chunks", "2"], "--chunks 2: model chunks apply to the interleaved schedule"),
    (["--schedule", "interleaved", "--chunks", "0"], "--chunks 0: must be at least 1"),
])
def test_interleaved_options_are_refused_by_name(capsys, a100_pair, options, said):
    assert main(["train", a100_pair, "--tp", "8", "--pp", "2", *options]) == 2
    assert said in capsys.readouterr().err
