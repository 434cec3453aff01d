"""The replay bar after a run that ends without a result: it said 'running…' for good after a refused
run (a tree over 512 DGX H100 stopped by the engine's budget) or a cancelled one; the run had already
cleared the previous replay, so the bar now says there is none."""

from PySide6.QtCore import Qt


def press_run(w, qtbot, algorithm: str, size: str = "256MiB") -> None:
    w.sim_dock.show()
    w.sim_dock.raise_()
    w.sim_panel.algorithm.setCurrentText(algorithm)
    w.sim_panel.size.setText(size)
    qtbot.mouseClick(w.sim_panel.run_button, Qt.MouseButton.LeftButton)


def test_a_refused_run_leaves_no_running_replay(make_window, qtbot):
    w = make_window("dgx1-v100")
    press_run(w, qtbot, "nvls")   # refused in the worker: NVLS needs NVSwitches
    qtbot.waitUntil(lambda: w.sim_panel.state.text().startswith("Not run"), timeout=10000)
    assert w.time_label.text().strip() == "no run"


def test_a_cancelled_run_leaves_no_running_replay(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    press_run(w, qtbot, "tree")   # seconds of work
    qtbot.waitUntil(lambda: "running" in w.time_label.text(), timeout=5000)
    qtbot.mouseClick(w.sim_panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.sim_panel.state.text() == "Cancelled", timeout=20000)
    assert w.time_label.text().strip() == "no run"
