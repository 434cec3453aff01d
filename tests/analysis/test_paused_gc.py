"""``analyze`` pauses the cyclic garbage collector while it runs and restores it however it ends."""

import gc
import threading

import pytest

from dgxstudio.analysis.summary import analyze, paused_gc
from dgxstudio.cancel import Cancelled
from dgxstudio.heap import wait_released
from dgxstudio.model.presets import load_preset


@pytest.fixture(autouse=True)
def _gc_back_on():
    yield
    gc.enable()


def test_analyze_pauses_the_collector_and_restores_it():
    topo = load_preset("dgx-h100")
    gpus = [d.id for d in topo.gpus()]
    seen = []
    analyze(topo, gpus, progress=lambda f, label: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()
    gc.disable()
    analyze(topo, gpus)
    assert not gc.isenabled()  # left off when it was off


def test_a_cancelled_analysis_restores_the_collector():
    topo = load_preset("dgx-h100")
    with pytest.raises(Cancelled):
        analyze(topo, [d.id for d in topo.gpus()], cancelled=lambda: True)
    assert wait_released(30)  # once what it built is let go of on the release thread
    assert gc.isenabled()


def test_nested_and_concurrent_pauses_end_with_the_last():
    inner_started, release = threading.Event(), threading.Event()

    def other():
        with paused_gc():
            inner_started.set()
            release.wait(5)

    with paused_gc():
        t = threading.Thread(target=other)
        t.start()
        inner_started.wait(5)
    assert not gc.isenabled()  # the other pause still runs
    release.set()
    t.join(5)
    assert gc.isenabled()


def test_a_simulation_pauses_the_collector_and_restores_it():
    """A run allocates millions of small acyclic objects on large clusters; the collector walking the
    whole topology at each generation-2 pass was two fifths of a 16,384-GPU run's CPU time."""
    from dgxstudio.sim.run import SimOptions, SimulationError, Simulator

    topo = load_preset("dgx-a100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions())
    seen = []
    sim.run("all-reduce", "ring", 2**20, progress=lambda p: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()
    with pytest.raises(SimulationError):
        sim.run("all-reduce", "no-such-algorithm", 2**20)
    assert gc.isenabled()  # restored when the run is refused too
