"""An overview of the whole canvas with the visible area outlined; click or drag to move there."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsView

from .canvas import CanvasView


class MiniMap(QGraphicsView):
    def __init__(self, main: CanvasView):
        super().__init__(main.scene())
        self.main = main
        self.setInteractive(False)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setRenderHints(QPainter.RenderHint.Antialiasing)
        self.setMinimumSize(160, 120)
        self.setToolTip("The whole design; the blue frame is what the canvas shows. Click or drag to move the canvas there")
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(100)
        self._refit.timeout.connect(self.refit)
        main.scene().changed.connect(lambda _r: self._refit.start())
        main.horizontalScrollBar().valueChanged.connect(self.viewport().update)
        main.verticalScrollBar().valueChanged.connect(self.viewport().update)
        main.zoomChanged.connect(lambda _z: self.viewport().update())

    def refit(self) -> None:
        rect = self.scene().itemsBoundingRect()
        if not rect.isNull():
            self.fitInView(rect.adjusted(-20, -20, 20, 20), Qt.AspectRatioMode.KeepAspectRatio)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.refit()

    def visible_area(self) -> QRectF:
        return self.main.mapToScene(self.main.viewport().rect()).boundingRect()

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        painter.setPen(QPen(QColor("#1e6fd9"), 0))
        painter.setBrush(QColor(30, 111, 217, 40))
        painter.drawRect(self.visible_area())

    def mousePressEvent(self, event) -> None:
        self.main.centerOn(self.mapToScene(event.position().toPoint()))
        self.viewport().update()

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.mousePressEvent(event)
