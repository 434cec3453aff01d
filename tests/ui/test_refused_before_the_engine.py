"""A request the simulator refuses before its engine starts (LL128 on the DGX-1 P100's sm60 GPUs) read
"Simulation failed, no result: ..." in the panel's state line, the status bar and the Results dock:
nothing had run, nothing failed. It reads "Not run: ..." there, as a request the form refuses; a real
failure keeps "Simulation failed"."""

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from .test_simulation_gui import configure

LEFT = Qt.MouseButton.LeftButton
WHY = "NCCL does not enable LL128 here: it needs sm70 or later (these GPUs are sm60)"


def _press_run(w, qtbot, protocol: str = "ll128") -> None:
    w.sim_dock.show()
    p = configure(w, size="1MiB")   # all-reduce, ring
    p.protocol.setCurrentText(protocol)
    assert p.protocol.isEnabled() and p.protocol.currentText() == protocol
    with qtbot.waitSignal(p.runner.failed, timeout=60000):
        qtbot.mouseClick(p.run_button, LEFT)
    QApplication.processEvents()


def test_ll128_on_p100_reads_not_run_everywhere(make_window, qtbot):
    w = make_window("dgx1-p100")
    p = w.sim_panel
    shown = []
    p.resultReady.connect(lambda *a: shown.append(a))
    _press_run(w, qtbot)
    said = f"Not run: {WHY}"
    assert p.state.text() == said and p.state.toolTip() == said
    assert w.status.text() == said
    w.results_dock.raise_()
    dock = w.results.unanswered
    assert dock.isVisible() and said in dock.text() and "failed" not in dock.text().lower()
    assert "Request: all-reduce ring/LL128 1 MiB on 8 GPUs, achievable figures" in dock.text()
    assert p.progress.text() in ("", "0%")   # no figure on the bar: nothing ran
    assert not shown and not p.runner.running and p.run_button.text() == "Run"
    if os.environ.get("DGXSTUDIO_SHOTS"):
        w.results_dock.grab().save(os.path.join(os.environ["DGXSTUDIO_SHOTS"], "ll128_p100_not_run.png"))


def test_an_internal_error_before_the_engine_still_reads_failed(make_window, qtbot, monkeypatch):
    """Only a refusal (the core's ValueError) is "Not run": a bug in the run is a failure."""
    from dgxstudio.ui import sim_panel

    def broken(*args, **kwargs):
        raise RuntimeError("broken on purpose")
    monkeypatch.setattr(sim_panel, "Simulator", broken)
    w = make_window("dgx1-p100")
    _press_run(w, qtbot, "simple")
    said = "Simulation failed, no result: internal error: RuntimeError: broken on purpose"
    assert w.status.text() == said and said in w.results.unanswered.text()
    assert w.sim_panel.state.text() == "Error: internal error: RuntimeError: broken on purpose"
