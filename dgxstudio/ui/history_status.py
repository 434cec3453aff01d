"""The status bar says what a click (or a key) in the History panel undid or redid.

Ctrl+Z and Ctrl+Shift+Z already name their step ("Undid: add Tesla P100 SXM2"); a click on an earlier
step in the History panel moves the undo stack just as far, but left the edit's own message standing.

QUndoView moves the stack from inside its own selection handling, on a mouse press or a key in the
view, so the stack's ``indexChanged`` cannot tell a step chosen in the panel from an edit pushed
elsewhere. The panel's presses and keys are marked while Qt delivers them; an index change that
happens while one is handled (before control is back in the event loop) is the panel's.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QUndoView

_USER_EVENTS = (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick, QEvent.Type.KeyPress)


def history_words(stack: QUndoStack, before: int, after: int) -> str:
    """What moving the stack from index ``before`` to ``after`` did, in the History panel's words.

    Step ``i`` of the stack is the edit that index ``i + 1`` is after; index 0 is the opened document.
    """
    if after < before:
        steps = [stack.text(i) for i in range(before - 1, after - 1, -1)]   # newest first, as undone
        verb = "Undid"
    else:
        steps = [stack.text(i) for i in range(before, after)]               # oldest first, as redone
        verb = "Redid"
    if len(steps) == 1:
        return f"{verb}: {steps[0]}"
    if len(set(steps)) == 1:
        return f"{verb} {len(steps)} edits, each: {steps[0]}"
    if len(steps) <= 3:
        # all of them: "X … X" for X, Y, X read as "each: X", and "…" between two hides nothing
        return f"{verb} {len(steps)} edits: {', '.join(steps)}"
    return f"{verb} {len(steps)} edits: {steps[0]} … {steps[-1]}"


class HistoryStatus(QObject):
    """Reports in ``show`` each move of the undo stack made from the History panel ``view``."""

    def __init__(self, view: QUndoView, show: Callable[[str], None]) -> None:
        super().__init__(view)
        self._view = view
        self._show = show
        self._in_view_event = False
        self._index = view.stack().index()
        view.stack().indexChanged.connect(self._moved)
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:   # noqa: N802 (Qt's name)
        if event.type() in _USER_EVENTS:
            # the view handles the event after this filter returns, synchronously, and nothing else
            # can push an edit before control is back in the event loop, where the flag is cleared
            self._in_view_event = True
            QTimer.singleShot(0, self._event_done)
        return False

    def _event_done(self) -> None:
        self._in_view_event = False

    def _moved(self, index: int) -> None:
        before, self._index = self._index, index
        if self._in_view_event and index != before:
            self._show(history_words(self._view.stack(), before, index))
