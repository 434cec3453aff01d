"""An overview of the whole canvas with the visible area outlined; click or drag to move there.

The drawing is a picture of the scene taken once the scene has been quiet for a moment, so zooming,
panning or a replay on the canvas cost the overview only the outline of the visible area, not a
second rendering of every item.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from .canvas import CanvasView

BACKGROUND = QColor("#fbfbfb")
FIRST_PICTURE_MS = 40   # after the dock's first frame (see paintEvent)
REFIT_AFTER_MS = 150    # after the scene's last change
QUIET_RETRY_MS = 20     # while the canvas catches up, the picture is tried again this much later
QUIET_WAIT_MAX = 25     # tries at most (half a second): then it is taken anyway


class MiniMap(QWidget):
    def __init__(self, main: CanvasView):
        super().__init__()
        self.main = main
        self.setMinimumSize(160, 120)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)   # it fills itself: the dock behind is not repainted
        self.setToolTip("The whole design; the blue frame is what the canvas shows. Click or drag to move the canvas there")
        self._picture: QPixmap | None = None
        self._source = QRectF()   # the scene area pictured
        self._target = QRectF()   # where it is drawn in this widget
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(REFIT_AFTER_MS)
        self._refit.timeout.connect(self._refit_when_quiet)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(0)
        self._settle.timeout.connect(self._refit_when_quiet)
        self._painted = False   # the first picture waits for the first paint
        self._waited = 0
        main.scene().changed.connect(self._scene_changed)   # a method: let go when this widget is deleted
        main.horizontalScrollBar().valueChanged.connect(self.update)
        main.verticalScrollBar().valueChanged.connect(self.update)
        main.zoomChanged.connect(lambda _z: self.update())

    def scene(self):
        return self.main.scene()

    def _scene_changed(self, _regions) -> None:
        self._refit.start(REFIT_AFTER_MS)

    def _refit_when_quiet(self) -> None:
        """Take the picture again, but not in a turn where the canvas draws what it left for later
        (its names after a window's first frame, its boxes' cached pictures after a zoom: see
        TopologyScene.catching_up): both in one turn made frames of 10-16 ms on GB200 NVL72, where
        the picture alone is 2-4 ms. Each is drawn in its own turn instead."""
        catching_up = getattr(self.scene(), "catching_up", None)
        if catching_up is not None and catching_up() and self._waited < QUIET_WAIT_MAX:
            self._waited += 1
            self._refit.start(QUIET_RETRY_MS)
            return
        self._waited = 0
        self.refit()

    def refit(self) -> None:
        """Take the picture of the whole scene again."""
        rect = self.scene().itemsBoundingRect()
        if rect.isNull() or self.width() < 4 or self.height() < 4:
            self._picture = None
            self.update()
            return
        rect = rect.adjusted(-20, -20, 20, 20)
        s = min(self.width() / rect.width(), self.height() / rect.height())
        w, h = rect.width() * s, rect.height() * s
        self._source = rect
        self._target = QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)
        ratio = self.devicePixelRatioF()
        picture = QPixmap(int(self.width() * ratio), int(self.height() * ratio))
        picture.setDevicePixelRatio(ratio)
        picture.fill(BACKGROUND)
        painter = QPainter(picture)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.scene().render(painter, self._target, self._source)
        painter.end()
        self._picture = picture
        self.update()

    def resizeEvent(self, event) -> None:
        # Taken in a turn of its own once the size settles: a window opening resizes the dock twice,
        # and two renderings of the whole scene made its first frame 10 ms longer. The first picture
        # waits for the dock's first paint (see paintEvent).
        super().resizeEvent(event)
        if self._painted:
            self._settle.start()

    def visible_area(self) -> QRectF:
        return self.main.mapToScene(self.main.viewport().rect()).boundingRect()

    def to_widget(self, r: QRectF) -> QRectF:
        if self._source.isEmpty():
            return QRectF()
        s = self._target.width() / self._source.width()
        return QRectF(self._target.left() + (r.left() - self._source.left()) * s,
                      self._target.top() + (r.top() - self._source.top()) * s, r.width() * s, r.height() * s)

    def to_scene(self, p: QPointF) -> QPointF:
        if self._target.isEmpty():
            return QPointF()
        s = self._source.width() / self._target.width()
        return QPointF(self._source.left() + (p.x() - self._target.left()) * s,
                       self._source.top() + (p.y() - self._target.top()) * s)

    def paintEvent(self, event) -> None:
        if not self._painted:
            # The first picture is taken once this first frame is on screen, not inside it (the
            # rendering of the whole scene was 3-4 ms of a DGX preset window's first frame), and not
            # at all while the dock sits behind a tab.
            self._painted = True
            QTimer.singleShot(FIRST_PICTURE_MS, self, self._refit_when_quiet)
        painter = QPainter(self)
        painter.fillRect(self.rect(), BACKGROUND)
        if self._picture is not None:
            painter.drawPixmap(0, 0, self._picture)
            painter.setPen(QPen(QColor("#1e6fd9"), 1))
            painter.setBrush(QColor(30, 111, 217, 40))
            painter.drawRect(self.to_widget(self.visible_area()).intersected(QRectF(self.rect())))
        painter.end()

    def mousePressEvent(self, event) -> None:
        if self._picture is not None:
            self.main.centerOn(self.to_scene(event.position()))
            self.update()

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.mousePressEvent(event)
