"""Arrow-key nudges of the same selection along one axis are one undo step, as Inkscape's are (its
"Move horizontally" and "Move vertically" steps merge while the same key goes on: ``maybeDone`` with
"selector:move:horizontal" in Inkscape's selection-chemistry.cpp). Holding an arrow key pushed one
step per auto-repeat: thirty lines in History and thirty Ctrl+Z to take back one gesture.

A save, an undo, or any other edit in between starts a new step (QUndoStack merges only into the
step on top, and never into the saved one)."""

from __future__ import annotations

from ..model.commands import Move


class Nudge(Move):
    """A Move made by the arrow keys; ``merge_key`` says which later nudges it takes in."""

    def __init__(self, positions, old, text: str, axis: str):
        super().__init__(positions, old, text)
        self.merge_key = (axis, frozenset(positions))

    def absorb(self, later: "Nudge") -> bool:
        """Take in a nudge pushed right after this one: its end places, this one's starting places."""
        if later.merge_key != self.merge_key:
            return False
        self.positions = dict(later.positions)
        return True
