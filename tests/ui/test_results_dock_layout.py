"""The Results dock uses its height for what it shows (review s34): the summary sat below an empty band
(its scroll area took the dock's spare height and the label centred its three lines in it) and the
bottleneck list showed four of its ten rows at the window's default size, two at 1280x768."""

import re

import pytest
from PySide6.QtCore import QPoint, Qt

from dgxstudio.model.presets import load_preset
from dgxstudio.ui.main_window import MainWindow


def _window(qtbot, width, height):
    """The window at a size (1400x900 is MainWindow's own; the test screen is 800x800, which would
    clamp it)."""
    w = MainWindow(load_preset("dgx-h100"), None, "dgx-h100")
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(50)   # the default dock layout is made once the window is shown
    return w


def _run_from_the_dock(w, qtbot, runs=1):
    """An all-reduce, auto, 256 MiB, started with the Simulation dock's Run button."""
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.collective.setCurrentText("all-reduce")
    p.algorithm.setCurrentText("auto")
    p.size.setText("256MiB")
    for _ in range(runs):
        with qtbot.waitSignal(p.resultReady, timeout=60000):
            qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    qtbot.wait(50)


def _visible_rows(lst) -> int:
    return lst.viewport().height() // lst.sizeHintForRow(0)


@pytest.mark.parametrize("size, rows, runs", [((1400, 900), 8, 1), ((1280, 768), 4, 1), ((1280, 768), 4, 3)])
def test_the_summary_is_at_the_top_and_the_bottleneck_list_takes_the_rest(qtbot, size, rows, runs):
    w = _window(qtbot, *size)
    _run_from_the_dock(w, qtbot, runs)
    r = w.results
    assert w.results_dock.isVisible() and r.isVisible()
    area, label, lst = r.summary_area, r.summary, r.bottlenecks
    text_height = label.heightForWidth(area.viewport().width())
    # no band: the summary's text starts within a few pixels of the dock's contents' top, and its
    # area is no taller than the text (the spare height is the list's)
    assert label.mapTo(r, QPoint(0, 0)).y() <= 8
    assert area.height() <= text_height + 2, (area.height(), text_height)
    assert _visible_rows(lst) >= rows, (lst.viewport().height(), lst.sizeHintForRow(0))
    assert lst.count() > _visible_rows(lst) and lst.verticalScrollBar().maximum() > 0   # the rest scrolls
    # the list ends where the table begins: nothing else takes the dock's height
    assert r.table.geometry().top() - lst.geometry().bottom() <= 8
    assert r.table.rowCount() == runs
    assert w.height() <= size[1]   # a run does not make the window taller than asked (it was 771)
    w.document.undo_stack.setClean()
    w.close()


def test_one_precision_for_the_figures_of_one_sentence(qtbot):
    # "470.32 GB/s = 81.7% of the topology's 575.4 GB/s (any algorithm; NCCL's rings alone allow 369.90 GB/s)"
    w = _window(qtbot, 1280, 768)
    _run_from_the_dock(w, qtbot)
    sentence = w.results.summary.text().split("<br>")[1]
    figures = re.findall(r"(\d+(?:\.\d+)?) GB/s", re.sub("<[^>]+>", "", sentence))
    assert len(figures) == 4, sentence   # algorithm, bus, the topology's bound, the rings' bound
    assert {len(f.split(".")[1]) for f in figures} == {2}, figures
    w.document.undo_stack.setClean()
    w.close()
