"""A large design's first check waits while the user zooms or scrolls right after opening it (issue 17:
zoom and pan frames at cluster scale; the check's thread takes turns with the GUI thread), then runs
once the view rests, within a bounded wait."""

import threading

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from dgxstudio.ui import findings as findings_mod


def _wheel(w, notches: int) -> None:
    pos = QPointF(w.view.viewport().rect().center())
    event = QWheelEvent(pos, QPointF(w.view.viewport().mapToGlobal(pos.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * notches), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(w.view.viewport(), event)


def _checking_threads():
    return [t for t in threading.enumerate() if t.name == "dgxstudio-findings" and t.is_alive()]


def _texts(w):
    return [w.findings.item(i).text() for i in range(w.findings.count())]


def test_the_first_check_of_a_large_design_waits_for_the_view_to_rest(make_window, qtbot, monkeypatch):
    monkeypatch.setattr(findings_mod, "DEFER_ABOVE", 0)       # the preset counts as a large design
    monkeypatch.setattr(findings_mod, "IDLE_MS", 1500)         # far longer than the pauses between notches
    monkeypatch.setattr(findings_mod, "MAX_WAIT_MS", 60_000)
    w = make_window("dgx-h100")
    for k in range(10):   # the user zooms in and out for about a second, right after opening
        _wheel(w, 1 if k < 5 else -1)
        qtbot.wait(100)
        assert _texts(w) == ["Checking the design…"] and not _checking_threads()
    bar = w.view.horizontalScrollBar()
    bar.setValue(bar.value() + 20)   # and scrolls
    qtbot.wait(100)
    assert _texts(w) == ["Checking the design…"]
    qtbot.waitUntil(lambda: _texts(w) != ["Checking the design…"], timeout=15_000)   # then rests
    assert _texts(w) == ["No problems found"]


def test_the_wait_is_bounded(make_window, qtbot, monkeypatch):
    monkeypatch.setattr(findings_mod, "DEFER_ABOVE", 0)
    monkeypatch.setattr(findings_mod, "IDLE_MS", 300)
    monkeypatch.setattr(findings_mod, "MAX_WAIT_MS", 600)
    w = make_window("dgx-h100")
    checked_while_zooming = False
    for k in range(80):   # zooming on and on, at least 4 s: the check starts anyway
        _wheel(w, 1 if (k // 5) % 2 == 0 else -1)
        qtbot.wait(50)
        if _texts(w) != ["Checking the design…"]:
            checked_while_zooming = True
            break
    assert checked_while_zooming
    qtbot.waitUntil(lambda: _texts(w) == ["No problems found"], timeout=15_000)
