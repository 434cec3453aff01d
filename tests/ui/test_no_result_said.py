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
    assert f"Simulation failed, no result: {why}" in said
    assert "Request: all-reduce ring/LL128 1 MiB on 8 GPUs, achievable figures" in said
    assert "Below: the last run that finished (all-reduce ring/Simple 1 MiB on 8 GPUs, achievable figures)" in said
    # the last run's figures stay, and its row can still be picked in the runs table
    assert w.results.summary.text() == summary and w.results.table.rowCount() == 1
    assert w.results.table.item(0, 0).flags() & Qt.ItemFlag.ItemIsSelectable
    # the status bar's message in full as its tip (the bar cuts it off)
    assert w.status.toolTip() == w.status.text() == f"Simulation failed, no result: {why}"
    _shot(w.results_dock, "refused_run_results.png")
    # the next run that starts takes the note away; its result is the answer
    _run(w, qtbot, "simple")
    qtbot.waitUntil(lambda: p.state.text().startswith("Done"), timeout=60000)
    assert w.results.unanswered.isHidden() and w.results.table.rowCount() == 2

