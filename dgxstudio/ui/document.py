"""The open document: a topology, where it is saved, and its undo stack.

Model events are forwarded as a Qt signal so widgets can observe the model; the model itself never
knows about Qt. Every edit goes through ``push`` so it can be undone.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from ..model import fileio
from ..model.commands import Command
from ..model.events import ModelEvent
from ..model.topology import Topology


class UndoableCommand(QUndoCommand):
    """Wraps a model command for the QUndoStack."""

    def __init__(self, document: "Document", command: Command):
        super().__init__(command.text)
        self.document = document
        self.command = command
        memory = document.selection_memory   # (ui/undo_selection): the selection as the edit found it
        self.selection_before = memory.current() if memory is not None else None
        self.selection_after: tuple[str, ...] | None = None
        self._pushed = False

    def redo(self) -> None:
        self.command.do(self.document.topology)
        if self._pushed and self.document.selection_memory is not None:   # a redo, not the push itself
            self.document.selection_memory.restore(self.selection_after)
        self._pushed = True

    def id(self) -> int:   # (Qt's name) steps that may merge into the one before: arrow-key nudges (ui/nudge)
        return 1 if getattr(self.command, "merge_key", None) is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:   # noqa: N802 (Qt's name)
        return isinstance(other, UndoableCommand) and hasattr(other.command, "merge_key") and \
            self.command.absorb(other.command)

    def undo(self) -> None:
        memory = self.document.selection_memory
        if memory is not None:
            self.selection_after = memory.current()
        self.command.undo(self.document.topology)
        if memory is not None:
            memory.restore(self.selection_before)


class Document(QObject):
    modelChanged = Signal(object)      # a ModelEvent
    topologyReplaced = Signal()
    pathChanged = Signal(str)

    def __init__(self, topology: Topology, path: str | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.selection_memory = None   # set by the window: undo and redo restore the selection (ui/undo_selection)
        self.topology = topology
        self.path = path
        self._attach(topology)

    def _attach(self, topology: Topology) -> None:
        topology.events.connect(self._on_model_event)

    def _on_model_event(self, event: ModelEvent) -> None:
        self.modelChanged.emit(event)

    def push(self, command: Command) -> None:
        self.undo_stack.push(UndoableCommand(self, command))

    def replace(self, topology: Topology, path: str | None) -> None:
        """Open another topology in this window: a fresh undo history, a clean state."""
        self.topology.events.disconnect(self._on_model_event)
        self.topology = topology
        self.path = path
        self._attach(topology)
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.topologyReplaced.emit()
        self.pathChanged.emit(path or "")

    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def display_name(self) -> str:
        return os.path.basename(self.path) if self.path else "Untitled"

    def save(self, path: str | None = None) -> None:
        """Save atomically; on success the document is clean and remembers the path."""
        target = path or self.path
        if not target:
            raise ValueError("no file name")
        fileio.save(self.topology, target)
        self.undo_stack.setClean()
        if target != self.path:
            self.path = target
            self.pathChanged.emit(target)
