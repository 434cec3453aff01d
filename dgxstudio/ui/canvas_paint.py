"""What painting the canvas costs, kept down without changing a pixel of it."""

from __future__ import annotations

from PySide6.QtCore import Qt


def opaque_viewport(viewport) -> None:
    """The canvas's background is the scene's opaque brush, which QGraphicsView paints over every
    pixel a frame repaints (the exposed area grown by a pixel each side, so no edge is left partly
    covered). QGraphicsView also has its viewport fill that area with the palette's base colour
    first, a fill nobody sees: a second pass over 0.5 million pixels in every canvas frame. The
    viewport paints all of its pixels itself instead (WA_OpaquePaintEvent), which keeps it opaque for
    Qt: the window's background still leaves it out and scrolling still moves its pixels."""
    viewport.setAutoFillBackground(False)
    viewport.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
