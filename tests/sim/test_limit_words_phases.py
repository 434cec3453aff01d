"""A run held below link speed by steps that load different links in turn (the lecture's hierarchical
all-reduce: reduce, then broadcast) was explained only by NCCL's protocol ceilings and per-hop latency,
which it does not have."""

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.latency_bound import limit_words
from dgxstudio.sim.run import simulate


def test_a_phased_run_names_steps_that_take_turns():
    r = simulate(load_preset("dgx1-v100"), "all-reduce", "hierarchical", 256 * 2**20)
    why = limit_words(r.sim)
    assert why is not None and why.startswith("not link-bound")
    assert "steps that load different links in turn" in why
