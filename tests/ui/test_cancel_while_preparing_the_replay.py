"""Issue 17: after the run, the worker prepares what the replay shows (``replay_facts.prepare``:
its groups per class, its timeline, the busiest links' plot: seconds at 512 systems). Cancel acts
during that preparation too, and the panel says what is under way instead of sitting at 100%."""

import threading

import pytest
from PySide6.QtCore import Qt

from dgxstudio.cancel import Cancelled
from dgxstudio.model.presets import build_preset
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.ui import replay_facts
from dgxstudio.ui.replay_facts import Preparing, prepare

from .test_simulation_gui import configure


def _slow_busiest_steps(entered: threading.Event, release: threading.Event):
    """The busiest links' step made to last (as at 512 systems) in small pieces, each reporting to
    ``on_pattern`` as the real loop does; it gives up only when the test ends (``release``)."""
    real = replay_facts.busiest_steps

    def slow(sim, top=5, on_pattern=None):
        entered.set()
        k = 0
        while not release.wait(0.01):
            if on_pattern is not None:
                on_pattern(min(k / 1000, 0.99))
            k += 1
        return real(sim, top)
    return slow


def test_cancel_while_the_replay_is_prepared_stops_the_run(make_window, qtbot, monkeypatch):
    w = make_window("dgx-a100")
    entered, release = threading.Event(), threading.Event()
    monkeypatch.setattr(replay_facts, "busiest_steps", _slow_busiest_steps(entered, release))
    p = configure(w, size="16MiB")
    shown = []
    p.resultReady.connect(lambda *a: shown.append(a))
    try:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(entered.is_set, timeout=60000)   # the run is over, its replay being prepared
        # the panel says so (it sat at "Running ..." with a full bar before)
        qtbot.waitUntil(lambda: p.state.text().startswith("Preparing the replay of "), timeout=5000)
        assert "the busiest links" in p.state.text() and p.runner.running and p.cancel_button.isEnabled()
        with qtbot.waitSignal(p.runner.cancelled, timeout=3000):   # without the change: never, until release
            qtbot.mouseClick(p.cancel_button, Qt.MouseButton.LeftButton)
    finally:
        release.set()
    # as after any cancelled run: no result, idle buttons, no replay
    assert p.state.text() == "Cancelled" and not p.runner.running
    assert p.run_button.text() == "Run" and not p.cancel_button.isEnabled()
    assert w.time_label.text() == " no run "
    qtbot.wait(50)
    assert shown == []


@pytest.fixture(scope="module")
def small_run():
    topo = build_preset("dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    return Simulator(topo, gpus, SimOptions()).run("all-reduce", "ring", 16 * 2**20)


def test_prepare_reports_each_step_and_keeps_nothing_when_cancelled(small_run):
    seen = []
    prepare(small_run, progress=seen.append)
    assert small_run.replay_facts.timeline is not None and small_run.replay_facts.link_steps
    assert all(isinstance(s, Preparing) for s in seen)
    assert [s.step for s in seen][:3] == list(replay_facts.STEPS)
    assert [s.fraction for s in seen] == sorted(s.fraction for s in seen) and seen[-1] == Preparing(1.0, "done")

    del small_run.replay_facts
    calls = []
    with pytest.raises(Cancelled):   # a flag that turns on once the preparation has begun
        prepare(small_run, progress=calls.append, cancel=lambda: len(calls) >= 2)
    assert not hasattr(small_run, "replay_facts")
