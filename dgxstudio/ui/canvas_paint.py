"""What painting the canvas costs, kept down without changing a pixel of it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter


def opaque_viewport(viewport) -> None:
    """The canvas's background is the scene's opaque brush, painted over every pixel a frame repaints
    (fill_background). QGraphicsView also has its viewport fill that area with the palette's base
    colour first, a fill nobody sees: a second pass over 0.5 million pixels in every canvas frame.
    The viewport paints all of its pixels itself instead (WA_OpaquePaintEvent), which keeps it opaque
    for Qt: the window's background still leaves it out and scrolling still moves its pixels."""
    viewport.setAutoFillBackground(False)
    viewport.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)


def fill_background(painter, rect, brush) -> None:
    """The scene's background, as QGraphicsScene.drawBackground fills it, but without smoothing: the
    area a frame repaints is whole pixels, mapped to the scene and back, so its edges land a hair off
    the pixel grid and a smoothed fill covered an edge row 254/255. Over the base colour that fill
    used to paint first, that read the same; over the pixels a scroll leaves in the uncovered strip
    it read #fafafa instead of #fbfbfb. Unsmoothed, every pixel whose centre is in the area is the
    brush's colour, which is what the base colour and the smoothed fill together gave."""
    painter.save()
    painter.setBrushOrigin(0, 0)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    painter.fillRect(rect, brush)
    painter.restore()
