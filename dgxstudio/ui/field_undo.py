"""Ctrl+Z in an Inspector field that has nothing of its own to undo undoes the document's last edit.

After a name was typed and Enter pressed, the focus stays in the field, whose own undo history the
Inspector's refresh has cleared (it shows the saved value again): the field still claimed Ctrl+Z,
Ctrl+Shift+Z and Ctrl+Y, so the keys did nothing at all and the rename could only be undone from the
menu or after clicking the canvas. While the field holds typing of its own, the keys stay its own, as
in every text field.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit


def _is_redo(event) -> bool:
    return event.matches(QKeySequence.StandardKey.Redo) or (
        event.key() == Qt.Key.Key_Y and event.modifiers() == Qt.KeyboardModifier.ControlModifier)


class UndoKeysToDocument(QObject):
    """An event filter for the Inspector's text and number fields."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:   # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.ShortcutOverride:
            return False
        edit = watched.lineEdit() if isinstance(watched, QAbstractSpinBox) else watched
        if not isinstance(edit, QLineEdit):
            return False
        if event.matches(QKeySequence.StandardKey.Undo):
            return not edit.isUndoAvailable()   # (not accepted: the window's Undo takes the key)
        if _is_redo(event):
            return not edit.isRedoAvailable()
        return False
