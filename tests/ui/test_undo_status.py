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


def _add_parts(w, kinds):
    parts = w.document.topology.catalog.parts.values()
    for i, kind in enumerate(kinds):
        payload = next(f"part:{p.id}" for p in parts if p.kind == kind)
        drop_from_palette(w, payload, QPoint(150 + 60 * i, 200))


def _window_with_history(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.history_dock.show()
    w.history_dock.raise_()
    qtbot.waitUntil(w.history.isVisible, timeout=2000)
    return w


def _click_history_row(w, qtbot, row):
    view = w.history
    rect = view.visualRect(view.model().index(row, 0))
    assert rect.isValid() and not rect.isEmpty()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_a_click_in_the_history_panel_names_what_it_undid_and_redid(make_window, qtbot):
    w = _window_with_history(make_window, qtbot)
    stack = w.document.undo_stack
    _add_parts(w, ["gpu", "nic", "cpu"])
    assert stack.count() == 3 and stack.index() == 3
    steps = [stack.text(i) for i in range(3)]
    assert len(set(steps)) == 3
    w.show_status("Added something")
    _click_history_row(w, qtbot, 2)          # the row after step 1: undoes step 2 only
    assert stack.index() == 2
    assert w.status.text() == f"Undid: {steps[2]}"
    _click_history_row(w, qtbot, 0)          # "<opened>": undoes steps 1 and 0, newest first
    assert stack.index() == 0
    assert w.status.text() == f"Undid 2 edits: {steps[1]}, {steps[0]}"
    _click_history_row(w, qtbot, 3)          # redoes all three, oldest first
    assert stack.index() == 3
    assert w.status.text() == f"Redid 3 edits: {steps[0]}, {steps[1]}, {steps[2]}"
    # a click on the step already current moves nothing and says nothing new
    w.show_status("unchanged")
    _click_history_row(w, qtbot, 3)
    assert w.status.text() == "unchanged"


def test_an_edit_made_after_a_history_click_keeps_its_own_message(make_window, qtbot):
    w = _window_with_history(make_window, qtbot)
    stack = w.document.undo_stack
    _add_parts(w, ["gpu", "gpu"])
    _click_history_row(w, qtbot, 1)
    assert stack.index() == 1
    qtbot.wait(10)                            # back in the event loop: the panel's click is over
    w.show_status("before the edit")
    _add_parts(w, ["gpu"])                         # pushes a new step from the canvas
    assert stack.index() == 2
    assert not w.status.text().startswith(("Undid", "Redid"))


def test_steps_alike_are_named_once():
    from PySide6.QtGui import QUndoCommand, QUndoStack
    from dgxstudio.ui.history_status import history_words
    stack = QUndoStack()
    for text in ("add GPU", "add GPU", "link"):
        stack.push(QUndoCommand(text))
    assert history_words(stack, 2, 0) == "Undid 2 edits, each: add GPU"
    assert history_words(stack, 1, 3) == "Redid 2 edits: add GPU, link"


def test_a_few_edits_are_all_named_so_a_step_between_two_alike_is_not_hidden():
    """Undoing "add GPU", "add NIC", "add GPU" in one History click once read "Undid 3 edits: add GPU
    … add GPU", which says the same as three GPUs added; a few steps are named each, more as a span."""
    from PySide6.QtGui import QUndoCommand, QUndoStack
    from dgxstudio.ui.history_status import history_words
    stack = QUndoStack()
    for text in ("add GPU", "add NIC", "add GPU", "link", "move"):
        stack.push(QUndoCommand(text))
    assert history_words(stack, 3, 0) == "Undid 3 edits: add GPU, add NIC, add GPU"
    assert history_words(stack, 0, 3) == "Redid 3 edits: add GPU, add NIC, add GPU"
    assert history_words(stack, 5, 0) == "Undid 5 edits: move … add GPU"
