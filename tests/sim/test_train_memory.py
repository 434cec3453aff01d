"""GPU memory per GPU in a training iteration: ZeRO's model states, Korthikanti et al.'s per-layer
activations, the micro-batches each stage holds read from the simulated schedule, against the
catalog's GPU memory."""

import json
import subprocess
import sys

import pytest

from dgxstudio.model.presets import build_preset
from dgxstudio.sim.train_memory import activation_bytes_per_layer
from dgxstudio.sim.training import ModelSpec, train_iteration
from dgxstudio.sim.training_words import memory_words


def _gpus(topo):
    return [g.id for g in topo.gpus()]


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_a_layer_stores_the_papers_sbh_10_plus_24_over_t_in_16_bit(tp):
    """Korthikanti et al. (arXiv 2205.05198) section 4.2.2: sbh(10 + 24/t) without the attention
    scores (recomputed, as FlashAttention does)."""
    m = ModelSpec(hidden=1024, seq_len=512, microbatch_size=3, precision="bf16")
    sbh = 3 * 512 * 1024
    assert activation_bytes_per_layer(m, tp) == pytest.approx(sbh * (10 + 24 / tp), rel=1e-12)


def test_fp32_doubles_the_values_but_not_the_dropout_masks():
    m16, m32 = ModelSpec(precision="fp16"), ModelSpec(precision="fp32")
    sbh = m16.microbatch_size * m16.seq_len * m16.hidden
    # 34 bytes per sbh in 16-bit: 32 of values, 2 of 1-byte masks; fp32: 64 + 2
    assert activation_bytes_per_layer(m16, 1) == pytest.approx(34 * sbh)
    assert activation_bytes_per_layer(m32, 1) == pytest.approx(66 * sbh)


def test_a_top_2_router_stores_each_tokens_mlp_inputs_twice():
    dense = ModelSpec()
    moe = ModelSpec(experts=8, top_k=2)
    sbh = dense.microbatch_size * dense.seq_len * dense.hidden
    # the MLP's stored inputs: first linear 2 (replicated), GeLU 8 and second linear 8 (split over t)
    assert activation_bytes_per_layer(moe, 4) - activation_bytes_per_layer(dense, 4) == pytest.approx(sbh * (2 + 16 / 4))


def test_model_states_are_16_bytes_per_parameter_split_over_tensor_and_pipeline():
    topo = build_preset("dgx-h100")
    r = train_iteration(topo, _gpus(topo), 1, 4, 2, ModelSpec(), 4, "1f1b")
    mem = r.details["memory"]
    assert mem["model_state_bytes_per_parameter"] == 16
    for st in mem["per_stage"]:
        assert st["model_state_bytes"] == pytest.approx(ModelSpec().parameter_count * 16 / 8)
        assert st["capacity_bytes"] == 80e9 and st["fits"] is True


def test_1f1b_holds_p_microbatches_on_the_first_stage_and_gpipe_holds_all():
    """Narayanan et al. (SC'21) section 2.2: 1F1B limits the first stage to p micro-batches in flight,
    the last to one; GPipe holds every micro-batch until its backward."""
    topo = build_preset("dgx-h100")
    gpus = _gpus(topo)
    per_mb = activation_bytes_per_layer(ModelSpec(), 2) * ModelSpec().layers / 4
    one_f = train_iteration(topo, gpus, 1, 2, 4, ModelSpec(), 8, "1f1b").details["memory"]["per_stage"]
    gpipe = train_iteration(topo, gpus, 1, 2, 4, ModelSpec(), 8, "gpipe").details["memory"]["per_stage"]
    assert [st["microbatches_held"] for st in one_f] == [4, 3, 2, 1]
    assert [st["microbatches_held"] for st in gpipe] == [8, 8, 8, 8]
    assert one_f[0]["activation_bytes"] == pytest.approx(4 * per_mb)
    assert gpipe[3]["activation_bytes"] == pytest.approx(8 * per_mb)


def test_interleaved_first_stage_holds_the_papers_p_times_1_plus_p_minus_1_over_pv():
    """Korthikanti et al. section 4.2.3: the interleaved schedule's first stage holds (1 + (p-1)/(pv))
    times 1F1B's p micro-batches of activations: 5.5 stage-micro-batches for p = 4, v = 2."""
    topo = build_preset("dgx-h100")
    r = train_iteration(topo, _gpus(topo), 1, 2, 4, ModelSpec(), 8, "interleaved", chunks=2)
    held = [st["microbatches_held"] for st in r.details["memory"]["per_stage"]]
    assert held[0] == pytest.approx(4 * (1 + 3 / 8)) and held[0] == max(held)


@pytest.mark.parametrize("schedule, first, each", [("zb-h1", 4, 4), ("zb-h2", 7, 7), ("zb-v", 4, 4)])
def test_zero_bubble_schedules_hold_what_the_paper_says(schedule, first, each):
    """Qi et al. (arXiv 2401.10241) sections 2.1 and 2.2: ZB-H1 keeps the peak of 1F1B's first stage
    (p micro-batches) on every stage, ZB-H2 allows 2p - 1; ZB-V (its arXiv version) the same as 1F1B.
    Activations are held until W, the pass that last reads them."""
    topo = build_preset("dgx-h100")
    r = train_iteration(topo, _gpus(topo), 1, 2, 4, ModelSpec(), 8, schedule)
    held = [st["microbatches_held"] for st in r.details["memory"]["per_stage"]]
    assert held[0] == first and max(held) == each


def test_gpt3_175b_on_one_dgx_h100_does_not_fit_and_says_so():
    topo = build_preset("dgx-h100")
    model = ModelSpec(layers=96, hidden=12288)
    r = train_iteration(topo, _gpus(topo), 1, 8, 1, model, 2, "1f1b")
    mem = r.details["memory"]
    assert mem["fits"] is False
    words = memory_words(r)
    assert words.startswith("DOES NOT FIT: each GPU needs at least")
    assert "H100 SXM5 80GB's 80 GB" in words and "--tp, --pp" in words


def test_train_prints_the_memory_line_and_json_holds_it():
    out = subprocess.run([sys.executable, "-m", "dgxstudio", "train", "--preset", "dgx-a100", "--tp", "8"],
                         capture_output=True, text=True, cwd="/", check=True).stdout
    line = next(x for x in out.splitlines() if x.strip().startswith("memory:"))
    assert "each GPU needs at least" in line and "GB of the" in line and "A100 SXM4 40GB's 40 GB" in line
    js = json.loads(subprocess.run([sys.executable, "-m", "dgxstudio", "train", "--preset", "dgx-a100", "--tp", "8",
                                    "--json"], capture_output=True, text=True, cwd="/", check=True).stdout)
    assert js["memory"]["fits"] is True and js["memory"]["per_stage"][0]["gpu"]
