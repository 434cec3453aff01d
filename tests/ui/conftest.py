"""Helpers for driving the real widgets: windows that are closed and deleted after each test, real
mouse drags, and modal dialogs answered by the test."""

import gc

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from dgxstudio.model.presets import load_preset
from dgxstudio.model.topology import Topology
from dgxstudio.ui.main_window import MainWindow


@pytest.fixture(autouse=True)
def _clean_settings(tmp_path_factory, monkeypatch):
    """Every test starts from an empty settings store of its own: a window closed by one test saves
    its dock layout (History raised, say), and the next test's window restored it, its Inspector
    behind the History tab. A test that needs a saved layout makes it (test_first_frame's _reopened)."""
    monkeypatch.setenv("DGXSTUDIO_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


@pytest.fixture
def make_window(qtbot):
    windows = []

    def make(preset: str | None = "dgx1-v100", topology: Topology | None = None, path: str | None = None):
        topo = topology if topology is not None else (load_preset(preset) if preset else Topology("Untitled"))
        w = MainWindow(topo, path, preset if topology is None else None)
        w.resize(1300, 850)
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()
        w.view.setFocus()
        qtbot.waitUntil(w.isActiveWindow, timeout=3000)
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.document.undo_stack.setClean()
        w.close()
        w.deleteLater()
    QApplication.processEvents()
    gc.collect()


def send_mouse(widget, kind, pos: QPoint, buttons=Qt.MouseButton.LeftButton, button=Qt.MouseButton.LeftButton,
               modifiers=Qt.KeyboardModifier.NoModifier):
    ev = QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, modifiers)
    QApplication.sendEvent(widget, ev)


def drag(view, start: QPoint, end: QPoint, steps: int = 6, modifiers=Qt.KeyboardModifier.NoModifier):
    """Press, move with the button held, release: what a hand on a mouse does (with Ctrl held, say)."""
    vp = view.viewport()
    send_mouse(vp, QEvent.Type.MouseButtonPress, start, modifiers=modifiers)
    for i in range(1, steps + 1):
        p = start + (end - start) * i / steps
        send_mouse(vp, QEvent.Type.MouseMove, QPoint(int(p.x()), int(p.y())), buttons=Qt.MouseButton.LeftButton,
                   button=Qt.MouseButton.NoButton, modifiers=modifiers)
    send_mouse(vp, QEvent.Type.MouseButtonRelease, end, buttons=Qt.MouseButton.NoButton, modifiers=modifiers)
    QApplication.processEvents()


def answer_next_dialog(button, seen: list | None = None):
    """Click ``button`` on the next modal message box, as a user would."""
    def click():
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            if seen is not None:
                seen.append(box.text())
            box.button(button).click()
        else:
            QTimer.singleShot(20, click)
    QTimer.singleShot(20, click)



@pytest.fixture(autouse=True, scope="session")
def _release_clipboard():
    """Our copies put Python-made data on the clipboard; released while Qt lives, it cannot be freed
    twice when the interpreter exits (a segfault otherwise)."""
    yield
    if QApplication.instance() is not None:   # (a run of tests that made no window has no clipboard)
        QApplication.clipboard().clear()
        QApplication.processEvents()
