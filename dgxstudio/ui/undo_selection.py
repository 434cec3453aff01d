"""Undo and redo bring back the selection of their moment, as diagram editors do.

Undoing a delete drew the devices again but selected nothing, redoing a duplicate left the copies
unselected, undoing a group selected nothing: the user had to find and pick the same items again to
go on. Each undo step now keeps the selection from just before its edit (taken when the edit is
pushed) and the one from just before it is undone (the state right after the edit, as the user left
it); undo selects the first again, redo the second. Ids that no longer exist are left out.
"""

from __future__ import annotations

from shiboken6 import isValid


class SelectionMemory:
    """What the document's undo steps read and restore: the canvas's selection, as ids."""

    def __init__(self, scene) -> None:
        self.scene = scene

    def current(self) -> tuple[str, ...]:
        return tuple(self.scene.selected_ids()) if isValid(self.scene) else ()

    def restore(self, ids: tuple[str, ...] | None) -> None:
        if ids is None or not isValid(self.scene):   # (a window being closed)
            return
        topo = self.scene.topology
        alive = [i for i in ids if i in topo.devices or i in topo.groups or i in topo.links]
        if set(alive) != set(self.scene.selected_ids()):   # unchanged: no selection signals, no Inspector rebuild
            self.scene.select_ids(alive)
