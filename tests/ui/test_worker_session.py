"""Issue 16: the report's analysis runs off the GUI thread with progress and Cancel, and the session
keeps summaries, not full records, of the runs it no longer shows."""

import threading
import time

import pytest

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog

import dgxstudio.analysis.summary as summary
from dgxstudio.cancel import check_cancelled
from dgxstudio.sim.run import CompactSim

from .test_simulation_gui import configure


def _slow_analyze(seen):
    real = summary.analyze

    def analyze(topo, gpus, progress=None, cancelled=None):
        seen["thread"] = threading.current_thread()
        for i in range(400):  # about 4 s unless cancelled
            if progress:
                progress(i / 400, "rings")
            check_cancelled()
            time.sleep(0.01)
        return real(topo, gpus)
    return analyze


def _progress_dialog():
    return next((w for w in QApplication.topLevelWidgets() if isinstance(w, QProgressDialog) and w.isVisible()), None)


def test_report_analysis_runs_off_the_gui_thread_and_cancels(make_window, qtbot, tmp_path, monkeypatch):
    w = make_window("dgx1-v100")
    seen, ticks, shown = {}, [], {}
    monkeypatch.setattr(summary, "analyze", _slow_analyze(seen))
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(20)

    def press_cancel():
        dialog = _progress_dialog()
        shown["text"] = dialog.labelText() if dialog else None
        if dialog is None:
            QTimer.singleShot(50, press_cancel)
            return
        qtbot.mouseClick(next(b for b in dialog.findChildren(type(w.sim_panel.run_button)) if b.text() == "Cancel"),
                         Qt.MouseButton.LeftButton)
    QTimer.singleShot(600, press_cancel)
    started = time.perf_counter()
    assert not w.export_report(str(tmp_path / "r.html"))
    assert time.perf_counter() - started < 3  # back at Cancel, not when the analysis would have ended
    timer.stop()
    assert seen["thread"] is not threading.main_thread()
    assert "rings" in shown["text"]
    assert not (tmp_path / "r.html").exists() and "cancelled" in w.status.text()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 10 and max(gaps) < 0.5  # the window kept running its event loop


def test_report_analysis_completes_with_its_dialog(make_window, qtbot, tmp_path, monkeypatch):
    w = make_window("dgx1-v100")
    seen = {}
    fast = _slow_analyze(seen)
    monkeypatch.setattr(summary, "analyze", lambda topo, gpus, progress=None, cancelled=None:
                        fast(topo, gpus, progress, cancelled) if progress else None)
    assert w.export_report(str(tmp_path / "r.html"))
    assert "Bisection" in (tmp_path / "r.html").read_text() or "bisection" in (tmp_path / "r.html").read_text()


def test_the_session_keeps_summaries_of_runs_it_no_longer_shows(make_window, qtbot, tmp_path):
    w = make_window("dgx1-v100")
    p = configure(w, size="64MiB")
    results = []
    for size in ("64MiB", "16MiB"):
        p.size.setText(size)
        with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
            qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
        results.append(blocker.args[1])
    first, second = w.session["runs"]
    assert isinstance(first.sim, CompactSim) and first.time_s == results[0].time_s
    assert first.document == results[0].document == w.sim_panel.request.document  # the report names its document
    assert second is results[1] and not isinstance(second.sim, CompactSim)  # the run on screen keeps its record
    assert w.replayer.sim is results[1].sim
    assert w.export_report(str(tmp_path / "r.html"))
    assert (tmp_path / "r.html").read_text().count("Bottleneck links") == 2


def test_settle_heap_takes_start_up_objects_out_of_full_collections(make_window):
    import gc

    from dgxstudio.ui.app import settle_heap

    make_window("dgx1-v100")
    try:
        settle_heap()
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


def _analysis_threads():
    return [t for t in threading.enumerate() if t.name == "dgxstudio-analysis" and t.is_alive()]


@pytest.mark.parametrize("step, slow_name", [("bisection", "bisection_bandwidth"),
                                             ("latency", "system_to_system_latency")])
def test_cancelling_the_report_stops_the_analysis_inside_a_long_step(make_window, qtbot, tmp_path, monkeypatch,
                                                                     step, slow_name):
    """The real analysis of a 48-system DGX H100 cluster, its bisection or latency step made long by
    running the real step again and again (about 20 s in all): Cancel pressed while the dialog shows
    that step ends the worker thread within a fraction of a second, since the step's own loops read
    the cancel flag (before, they read it only between steps)."""
    from dgxstudio.model.fabrics import build_fat_tree

    w = make_window(topology=build_fat_tree(48, "dgx-h100", rail_optimized=True))
    real = getattr(summary, slow_name)
    runs = []

    def repeated(*args, **kwargs):
        started = time.perf_counter()
        while True:  # no cancel check here: only the real step's own checks can stop this
            result = real(*args, **kwargs)
            runs.append(1)
            if time.perf_counter() - started > 20:
                return result
    monkeypatch.setattr(summary, slow_name, repeated)
    pressed = {}

    def press_cancel():
        dialog = _progress_dialog()
        if dialog is None or step not in dialog.labelText() or not runs:
            QTimer.singleShot(20, press_cancel)
            return
        pressed["at"] = time.perf_counter()
        qtbot.mouseClick(next(b for b in dialog.findChildren(type(w.sim_panel.run_button)) if b.text() == "Cancel"),
                         Qt.MouseButton.LeftButton)
    QTimer.singleShot(50, press_cancel)
    assert not w.export_report(str(tmp_path / "r.html"))
    assert "at" in pressed and time.perf_counter() - pressed["at"] < 1.0
    for thread in _analysis_threads():
        thread.join(5)
    ended = time.perf_counter() - pressed["at"]
    print(f"ended {ended:.3f} s after Cancel, {len(runs)} runs")
    assert ended < 0.5, f"the analysis ran on for {ended:.2f} s after Cancel"
    assert not (tmp_path / "r.html").exists() and "cancelled" in w.status.text()


def test_the_report_analysis_makes_no_deep_copy_on_the_gui_thread(make_window, qtbot, tmp_path, monkeypatch):
    """The report's analysis reads a shallow snapshot (the window-modal dialog keeps edits out), not
    a deep copy taken on the GUI thread (8 s on a 59 MB cluster)."""
    from dgxstudio.model import topology as topology_module

    w = make_window("dgx-h100")
    copies = []
    real = topology_module.Topology.copy
    monkeypatch.setattr(topology_module.Topology, "copy",
                        lambda self: copies.append(threading.current_thread()) or real(self))
    assert w.export_report(str(tmp_path / "r.html"))
    assert [t for t in copies if t is threading.main_thread()] == []
    assert "bisection" in (tmp_path / "r.html").read_text().lower()
