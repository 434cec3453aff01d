"""The Simulation dock says what a run's setup is doing, and its bar moves, before the engine's first
report (2-4 s on 2,048 DGX H100, the bar at 0% through them); Cancel stops the run there."""

import threading

from PySide6.QtCore import Qt

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold

from .test_simulation_gui import configure


def test_the_dock_names_the_setup_step_and_cancels_during_it(make_window, qtbot, monkeypatch):
    w = make_window(topology=build_fat_tree(16, "dgx-h100", rail_optimized=True))
    entered, release = threading.Event(), threading.Event()
    real = tree_fold.Fold.of.__func__

    def slow_of(cls, engine, sched):   # the fold made to last, as at 2,048 systems
        entered.set()
        release.wait(30)
        return real(cls, engine, sched)
    monkeypatch.setattr(tree_fold.Fold, "of", classmethod(slow_of))
    p = configure(w, algorithm="nvls-tree", size="64MiB")
    steps = []
    p.progressed.connect(lambda _r, _p: steps.append((p.state.text(), p.progress.value())))
    shown = []
    p.resultReady.connect(lambda *a: shown.append(a))
    try:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(entered.is_set, timeout=30000)
        qtbot.waitUntil(lambda: p.state.text().endswith("folding alike systems"), timeout=5000)
        assert p.state.text().startswith("Running all-reduce nvls-tree 64 MiB on 128 GPUs")
        assert 0 < p.progress.value() < 500 and p.runner.running   # the bar moved before the engine's first report
        said = [text.rpartition("… ")[2] for text, _ in steps]
        assert said == ["routing", "planning channels", "building the schedule", "folding alike systems"]
        values = [v for _, v in steps]
        assert values == sorted(values)
        with qtbot.waitSignal(p.runner.cancelled, timeout=10000):
            qtbot.mouseClick(p.cancel_button, Qt.MouseButton.LeftButton)
            release.set()
    finally:
        release.set()
    assert p.state.text() == "Cancelled" and not p.runner.running
    qtbot.wait(50)
    assert shown == []
