"""The small things item 10 lists: findings icons, a dock that keeps its width, live throughput, the
sweep axis in sizes, tooltips."""

import numpy as np
from PySide6.QtWidgets import QToolBar, QToolButton

from .test_runs_belong_to_a_document import run


def test_findings_have_real_icons(make_window):
    from dgxstudio.model.topology import Topology
    from PySide6.QtCore import QPointF

    w = make_window(topology=Topology("t"))
    w.scene.drop("part:connectx-6-hdr", QPointF(0, 0))
    w.findings.refresh()
    item = w.findings.item(0)
    assert not item.icon().isNull() and not item.text().startswith(("⛔", "⚠"))


def test_selecting_a_link_does_not_widen_the_right_dock(make_window, qtbot):
    w = make_window("dgx1-v100")
    qtbot.wait(50)
    before = w.inspector_dock.width()
    lid = next(iter(w.document.topology.links))
    w.select_and_center([lid])
    qtbot.wait(50)
    w.scene.select_ids([])
    qtbot.wait(50)
    assert w.inspector_dock.width() <= before + 10


def test_throughput_fills_in_live_and_sweep_axis_reads_sizes(make_window, qtbot):
    from dgxstudio.model.fabrics import build_fat_tree

    # NCCL's tree on eight DGX-1: the cube-mesh chains differ per rail, so no tree folds into another
    # and the fill and drain have no steady state to skip (about 6,500 events, most of a second):
    # several progress reports (one per 50 ms) come. (Two DGX A100, used before, fold into one tree
    # since their chains follow NCCL's order, and finish in 50 ms.)
    w = make_window(topology=build_fat_tree(8, "dgx1-v100"))
    p = w.sim_panel
    seen = []
    p.progressed.connect(lambda *_: seen.append(w.live_plots.rate_curve.getData()[0]))
    run(w, qtbot, algorithm="tree", size="64MiB")
    assert any(x is not None and len(x) > 1 for x in seen), "throughput plot drawn while the run goes"
    axis = w.sweep_plot.plot.getAxis("bottom")
    assert axis.tickStrings([3.0103, 6.0206], 1, 1) == ["1 KiB", "1 MiB"] or \
        axis.tickStrings(list(np.log10([1024, 2**20])), 1, 1) == ["1 KiB", "1 MiB"]


def test_replay_bar_controls_have_tooltips(make_window):
    w = make_window("dgx1-v100")
    bar = w.findChild(QToolBar, "replaybar")
    for button in bar.findChildren(QToolButton):
        if button.defaultAction() is not None and button.isVisible():
            assert button.toolTip() and button.toolTip() != button.text(), button.text()
    assert w.scrubber.toolTip() and w.speed.toolTip()


def test_a_missing_xcb_cursor_library_is_named(monkeypatch):
    import ctypes.util

    from dgxstudio.ui.app import missing_display_libraries

    # (the others found, whether or not this machine has them: tests/ui/test_review_s36.py)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name == "xcb-cursor" else f"lib{name}.so")
    assert missing_display_libraries({"DISPLAY": ":0"}) == ["libxcb-cursor0"]
    assert missing_display_libraries({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}) == []
    assert missing_display_libraries({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}) == []


def test_a_short_inspector_scrolls_its_rows_instead_of_squeezing_them(make_window, qtbot):
    from PySide6.QtWidgets import QLabel

    w = make_window("dgx1-v100")
    w.resize(1300, 560)
    lid = next(iter(w.document.topology.links))
    w.select_and_center([lid])
    qtbot.wait(100)
    form = w.inspector.form_host
    rows = [lab for lab in form.findChildren(QLabel) if lab.isVisible() and lab.wordWrap() and lab.text()]
    assert rows, "the link's rows are shown"
    for lab in rows:  # every wrapped label has the height its text needs at its width
        assert lab.height() >= lab.heightForWidth(lab.width()) - 1, lab.text()
