"""A request that gives no result, said where the user looks (the s35 new-user review): a refused run
left the last run's figures in the Results dock with nothing saying so (the refusal only in a status
bar that cut it off), and a size the form did not accept read "Simulation failed": nothing had run."""

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

LEFT = Qt.MouseButton.LeftButton
SHOTS = os.environ.get("DGXSTUDIO_SHOTS")   # a directory: the tests save what they show there


def _shot(widget, name: str) -> None:
    if SHOTS:
        QApplication.processEvents()   # (the layout follows the new text's height)
        widget.grab().save(os.path.join(SHOTS, name))


def _run(w, qtbot, protocol: str) -> None:
    p = w.sim_panel
    p.algorithm.setCurrentText("ring")
    p.protocol.setCurrentText(protocol)
    p.size.setText("1MiB")
    qtbot.mouseClick(p.run_button, LEFT)


def test_a_refused_run_says_so_above_the_last_runs_result(make_window, qtbot):
    w = make_window("dgx1-p100")
    p = w.sim_panel
    _run(w, qtbot, "simple")
    qtbot.waitUntil(lambda: p.state.text().startswith("Done"), timeout=60000)
    summary = w.results.summary.text()
    assert w.results.unanswered.isHidden()
    with qtbot.waitSignal(p.runner.failed, timeout=60000):
        _run(w, qtbot, "ll128")   # P100 is sm60: NCCL enables LL128 from sm70
    QApplication.processEvents()
    why = "NCCL does not enable LL128 here: it needs sm70 or later (these GPUs are sm60)"
    said = w.results.unanswered.text()
    assert w.results.unanswered.isVisible()
    assert f"Not run: {why}" in said and "failed" not in said   # refused before the engine began
    assert "Request: all-reduce ring/LL128 1 MiB on 8 GPUs, achievable figures" in said
    assert "Below: the last run that finished (all-reduce ring/Simple 1 MiB on 8 GPUs, achievable figures)" in said
    # the last run's figures stay, and its row can still be picked in the runs table
    assert w.results.summary.text() == summary and w.results.table.rowCount() == 1
    assert w.results.table.item(0, 0).flags() & Qt.ItemFlag.ItemIsSelectable
    # the status bar's message in full as its tip (the bar cuts it off)
    assert w.status.toolTip() == w.status.text() == f"Not run: {why}"
    _shot(w.results_dock, "refused_run_results.png")
    # the next run that starts takes the note away; its result is the answer
    _run(w, qtbot, "simple")
    qtbot.waitUntil(lambda: p.state.text().startswith("Done"), timeout=60000)
    assert w.results.unanswered.isHidden() and w.results.table.rowCount() == 2


def test_a_size_the_form_refuses_is_not_run_not_failed(make_window, qtbot):
    w = make_window("dgx1-p100")
    p = w.sim_panel
    w.sim_dock.show()
    w.sim_dock.raise_()
    shown = []
    p.resultReady.connect(lambda *a: shown.append(a))
    p.size.setText("0.5")
    qtbot.mouseClick(p.run_button, LEFT)
    why = "Size: '0.5' is not a whole number of bytes (a size without a unit is bytes); did you mean 0.5KiB?"
    assert p.state.text() == p.state.toolTip() == f"Not run: {why}"
    assert w.status.text() == f"Not run: {why}"
    assert "failed" not in w.results.unanswered.text() and f"Not run: {why}" in w.results.unanswered.text()
    assert "Request:" not in w.results.unanswered.text()   # no run was made of the form
    assert not shown and not p.runner.running and p.run_button.text() == "Run"
    _shot(w.sim_dock, "refused_size_sim.png")
    w.results_dock.raise_()   # (behind the Findings tab until a run shows a result)
    _shot(w.results_dock, "refused_size_results.png")


def test_a_refused_form_leaves_the_run_under_way_running_and_cancellable(make_window, qtbot):
    """The refused form made the buttons idle ("Run", Cancel greyed) while the run it did not replace
    went on: that run could no longer be cancelled."""
    w = make_window("dgx1-fat-tree-124")
    p = w.sim_panel
    p.algorithm.setCurrentText("tree")   # seconds of work
    qtbot.mouseClick(p.run_button, LEFT)
    qtbot.waitUntil(lambda: p.runner.running, timeout=5000)
    p.size.setText("0.5")
    qtbot.mouseClick(p.run_button, LEFT)
    assert p.state.text().startswith("Not run: Size: ")
    assert p.runner.running and p.cancel_button.isEnabled() and p.run_button.text() == "Restart"
    qtbot.mouseClick(p.cancel_button, LEFT)
    qtbot.waitUntil(lambda: p.state.text() == "Cancelled", timeout=20000)
