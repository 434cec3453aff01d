"""A big run's setup (routing, NCCL's channels, its schedule, the fold of its alike systems: 2-4 s on
2,048 DGX H100 before the engine's first report) is reported step by step in words through the
run's progress callback, and a cancel raised during it stops the run before the engine starts."""

import threading

import pytest

from dgxstudio.cancel import Cancelled
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.setup_steps import AT, ENGINE_FROM, Setup, of_run

MiB = 2**20
STEPS = ["routing", "planning channels", "building the schedule", "folding alike systems"]


@pytest.fixture(scope="module")
def topo():
    return build_fat_tree(16, "dgx-h100", rail_optimized=True)   # 16 systems, 128 GPUs


def _gpus(topo):
    return [d.id for d in topo.gpus()]


def test_setup_steps_come_in_words_before_the_engines_first_report(topo):
    seen = []
    sim = Simulator(topo, _gpus(topo), SimOptions(), progress=seen.append)
    result = sim.run("all-reduce", "nvls-tree", 64 * MiB, progress=seen.append)
    first = next(i for i, p in enumerate(seen) if not isinstance(p, Setup))   # the engine's first report
    assert [p.step for p in seen[:first]] == STEPS   # each step once, in order, before it
    assert [p.fraction for p in seen[:first]] == [AT[s] for s in STEPS]
    assert not any(isinstance(p, Setup) for p in seen[first:])   # then the engine's alone, to the end
    bar = [of_run(p) for p in seen]
    assert bar == sorted(bar) and bar[first] >= ENGINE_FROM and bar[-1] == 1.0
    assert result.time_s > 0
    # the same answer as a run told nothing
    quiet = Simulator(topo, _gpus(topo), SimOptions()).run("all-reduce", "nvls-tree", 64 * MiB)
    assert result.time_s == quiet.time_s


@pytest.mark.parametrize("algorithm, steps", [
    ("ring", ["planning channels", "building the schedule"]),
    ("tree", ["planning channels", "building the schedule", "folding alike systems"]),
    ("single-ring", ["finding rings", "building the schedule"]),
])
def test_other_algorithms_say_their_steps(topo, algorithm, steps):
    seen = []
    Simulator(topo, _gpus(topo)[:16], SimOptions()).run("all-reduce", algorithm, 4 * MiB, progress=seen.append)
    first = next(i for i, p in enumerate(seen) if not isinstance(p, Setup))
    assert [p.step for p in seen[:first]] == steps


@pytest.mark.parametrize("at", STEPS)
def test_a_cancel_raised_during_setup_stops_the_run(topo, at):
    cancel = threading.Event()
    seen = []

    def progress(p):
        seen.append(p)
        if isinstance(p, Setup) and p.step == at:
            cancel.set()   # as Cancel pressed while this step runs
    with pytest.raises(Cancelled):
        sim = Simulator(topo, _gpus(topo), SimOptions(), cancel=cancel, progress=progress)
        sim.run("all-reduce", "nvls-tree", 64 * MiB, progress=progress, cancel=cancel)
    assert cancel.is_set() and all(isinstance(p, Setup) for p in seen)   # the engine never began
    assert seen[-1].step == at   # the next step's check stopped it (the fold's: the engine's own)
