"""A run's reports say when its engine begins (``setup_steps.EngineBegins``), before the engine's first
``Progress``, which comes only after its first 50 ms: the GUI told a setup refusal from an engine
failure by the bar standing below 50%, and an engine that stopped before its first report read as
refused before it ran."""

import pytest

from dgxstudio.model.presets import load_preset
from dgxstudio.sim import engine as engine_module
from dgxstudio.sim.limits import TooLarge
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.setup_steps import EngineBegins, Setup, of_run

MiB = 2**20


@pytest.mark.parametrize("algorithm", ["ring", "tree", "hierarchical", "auto"])
def test_the_engine_says_once_that_it_begins_after_the_setup_steps(algorithm):
    topo = load_preset("dgx-a100")
    seen = []
    Simulator(topo, [d.id for d in topo.gpus()], SimOptions()).run("all-reduce", algorithm, 64 * MiB,
                                                                   progress=seen.append)
    begins = [i for i, p in enumerate(seen) if isinstance(p, EngineBegins)]
    assert len(begins) == 1, seen
    first = begins[0]
    assert all(isinstance(p, Setup) for p in seen[:first]) and seen[:first]   # the setup's steps before it
    assert not any(isinstance(p, Setup) for p in seen[first:])
    assert of_run(seen[first]) == 0.5 and [of_run(p) for p in seen] == sorted(of_run(p) for p in seen)


def test_an_engine_refusal_before_its_first_report_comes_after_it_began(monkeypatch):
    def too_large(self, *args, **kwargs):
        raise TooLarge("stopped past the engine's work budget (on purpose)")
    monkeypatch.setattr(engine_module.Engine, "template", too_large)   # (after the engine began)
    monkeypatch.setattr(engine_module.chain_stages, "run", lambda *a: None)
    topo = load_preset("dgx-a100")
    seen = []
    with pytest.raises(TooLarge):
        Simulator(topo, [d.id for d in topo.gpus()], SimOptions()).run("all-reduce", "ring", 64 * MiB,
                                                                       progress=seen.append)
    assert isinstance(seen[-1], EngineBegins) and not any(hasattr(p, "sim_time_s") for p in seen)


def test_a_run_told_nothing_hears_nothing():
    topo = load_preset("dgx1-v100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions())
    quiet = sim.run("all-reduce", "ring", 4 * MiB)
    told = sim.run("all-reduce", "ring", 4 * MiB, progress=lambda p: None)
    assert quiet.time_s == told.time_s


def test_a_schedule_over_the_group_limit_is_refused_before_the_engine_begins(monkeypatch):
    """Its columns are built (and the limit checked) as the engine starts: a refusal of the request's
    size, told as one (the Simulation dock's "Not run"), not as the engine failing."""
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.sim import limits

    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", 5000)
    topo = build_fat_tree(2, "dgx-h100")
    seen = []
    with pytest.raises(TooLarge):
        Simulator(topo, [d.id for d in topo.gpus()], SimOptions()).run("all-reduce", "nvls-tree", 8 * 2**30,
                                                                       progress=seen.append)
    assert seen and all(isinstance(p, Setup) for p in seen)
