"""After Ctrl+Z or Ctrl+Shift+Z the status bar says what was undone or redone, in the History panel's
words, instead of keeping the edit's own message ("Added GPU 8 ...")."""

from PySide6.QtCore import QPoint, Qt

from .test_editor import drop_from_palette

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def test_undo_and_redo_keys_name_the_step_in_the_status_bar(make_window, qtbot):
    w = make_window("dgx1-v100")
    stack = w.document.undo_stack
    payload = next(f"part:{p.id}" for p in w.document.topology.catalog.parts.values() if p.kind == "gpu")
    drop_from_palette(w, payload, QPoint(200, 200))
    assert stack.count() == 1
    step = stack.text(0)
    w.show_status("Added something")   # the edit's own message, as the overview gives it
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    assert stack.index() == 0
    assert w.status.text() == f"Undid: {step}"
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL | SHIFT)
    assert stack.index() == 1
    assert w.status.text() == f"Redid: {step}"
    # the History panel names the step the same way
    assert w.history.model().index(1, 0).data() == step
