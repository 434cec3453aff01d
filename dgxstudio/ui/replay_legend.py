"""The replay's legend: what every colour and mark on the canvas means while a run is shown.

It stands at the right edge of the canvas in a margin of its own (the drawing area shrinks by the
legend's width while it shows, so it never hides a device or a link), lists only what the shown run
uses (its rings or trees by colour, the utilization scale, GPU states, chunks in flight, tree roots
and levels), folds to its title on a click, and goes away when the run does.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .style import utilization_color

MAX_ROWS = 10
WIDTH = 270
STYLE = ("#replayLegend{background:rgba(255,255,255,235);border:1px solid #999;border-radius:4px}"
         "QLabel{font-size:9pt}")


class _Swatch(QWidget):
    """A small sample of a mark: a filled box, a line, a dot, or the utilization gradient."""

    def __init__(self, kind: str, color: QColor | None = None, width: int = 18):
        super().__init__()
        self.kind, self.color = kind, color
        self.setFixedSize(width, 14)

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(1, 1, self.width() - 2, self.height() - 2)
        if self.kind == "gradient":
            grad = QLinearGradient(r.left(), 0, r.right(), 0)
            for k in range(5):
                grad.setColorAt(k / 4, utilization_color(k / 4))
            p.fillRect(r, grad)
        elif self.kind == "box":
            p.setPen(QPen(QColor("#888888"), 1))
            p.setBrush(self.color or QColor("#ffffff"))
            p.drawRoundedRect(r, 3, 3)
        elif self.kind == "line":
            p.setPen(QPen(self.color, 3))
            p.drawLine(int(r.left()), int(r.center().y()), int(r.right()), int(r.center().y()))
        elif self.kind == "dot":
            p.setPen(QPen(QColor("#1b1b1b"), 1))
            p.setBrush(self.color)
            p.drawEllipse(r.center(), 5, 5)
        elif self.kind == "root":
            p.setPen(QPen(self.color, 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawEllipse(r.center(), 6, 6)
        p.end()


class ReplayLegend(QFrame):
    """Shown over the canvas's top-right corner while a run is loaded."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("replayLegend")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        # The style sheet is given when a run is first shown: polishing a widget with a style sheet
        # costs 1.5-3 ms, and a hidden child of the canvas is polished with the window's first frame.
        self._styled = False
        self.rows = QVBoxLayout(self)
        self.rows.setContentsMargins(8, 6, 8, 6)
        self.rows.setSpacing(2)
        self.entries: list[str] = []
        self.folded = False
        self.setToolTip("What the colours and marks of the replay mean; click to fold or unfold")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedWidth(WIDTH)  # long names wrap: the canvas keeps the rest of the width
        self.hide()

    def mousePressEvent(self, event) -> None:
        """A click folds the legend to its title (so it hides less of the canvas) or unfolds it."""
        self.folded = not self.folded
        head = self.rows.itemAt(0).widget() if self.rows.count() else None
        if isinstance(head, QLabel):
            head.setText(head.text()[:-1] + ("▸" if self.folded else "▾"))
        for i in range(1, self.rows.count()):
            w = self.rows.itemAt(i).widget()
            if w is not None:
                w.setVisible(not self.folded)
        self._fit_height()
        self.place()
        event.accept()

    def _fit_height(self) -> None:
        """Folded, as small as its title; open, WIDTH wide and as tall as its rows need there (wrapped
        labels included)."""
        head = self.rows.itemAt(0).widget() if self.rows.count() else None
        width = WIDTH
        if self.folded and head is not None:
            m = self.rows.contentsMargins()
            width = min(WIDTH, QLabel(head.text()).sizeHint().width() + m.left() + m.right() + 4)
        self.setFixedWidth(width)
        self.layout().activate()
        self.setFixedHeight(self.layout().totalHeightForWidth(width) if self.layout().hasHeightForWidth()
                            else self.sizeHint().height())

    def clear(self) -> None:
        while self.rows.count():
            item = self.rows.takeAt(0)
            w = item.widget()
            if w is not None:   # hidden now: deleteLater waits for the event loop, and a paint or grab
                w.hide()        # before it drew the old run's rows under the new one's
                w.deleteLater()
        self.entries = []
        self.hide()
        self.place()  # gives the canvas its margin back

    def _row(self, swatch: QWidget, text: str) -> None:
        line = QWidget()
        h = QHBoxLayout(line)
        h.setContentsMargins(0, 0, 0, 0)
        h.setSpacing(6)
        h.addWidget(swatch)
        label = QLabel(text)
        label.setWordWrap(True)
        h.addWidget(label, 1)
        self.rows.addWidget(line)
        self.entries.append(text)

    def show_run(self, title: str, series: list[tuple[str, QColor, str]], states: dict[str, QColor | None],
                 trees: bool = False, note: str | None = None) -> None:
        """``series``: (label, colour, mark) for each ring, tree or phase the run draws; ``states``: the GPU
        states it can show; ``note``: a line under the title (how the rings make the run's channels)."""
        self.clear()
        if not self._styled:
            self._styled = True
            self.setStyleSheet(STYLE)
        heading = QLabel(f"<b>{title}</b> {'▸' if self.folded else '▾'}")
        heading.setWordWrap(True)
        self.rows.addWidget(heading)
        self.entries.append(title)
        if note:
            line = QLabel(note)
            line.setWordWrap(True)
            self.rows.addWidget(line)
            self.entries.append(note)
        for label, color, mark in series[:MAX_ROWS]:
            self._row(_Swatch(mark, color), label)
        if len(series) > MAX_ROWS:
            self.rows.addWidget(QLabel(f"… and {len(series) - MAX_ROWS} more"))
        if trees:
            self._row(_Swatch("root", QColor("#1b1b1b")), "tree root; L1, L2 … level below it")
        self._row(_Swatch("dot", QColor("#ffffff")), "chunk in flight, in its ring's or tree's colour")
        self._row(_Swatch("gradient", width=54), "link busy: 0% → 100%")
        self._row(_Swatch("line", QColor("#c8c8c8")), "link idle at this moment")
        for state, color in states.items():
            self._row(_Swatch("box", color), f"device {state}")
        for i in range(1, self.rows.count()):
            w = self.rows.itemAt(i).widget()
            if w is not None:
                w.setVisible(not self.folded)
        self.show()
        self.raise_()
        self._fit_height()
        self.place()

    @staticmethod
    def _shows_whole(view) -> bool:
        """Whether every item of the view's scene is in sight."""
        items = view.scene().itemsBoundingRect() if view.scene() is not None else None
        if items is None or items.isNull():
            return False
        return view.mapToScene(view.viewport().rect()).boundingRect().contains(items)

    def place(self) -> None:
        """In a margin at the right of the canvas, as wide as the legend: the view's drawing area
        shrinks while the legend shows, so no device or link is ever under it. A child of the view
        rather than of its viewport: a viewport scrolls its children with the scene."""
        parent = self.parentWidget()
        if parent is None:
            return
        margin = self.width() + 12 if not self.isHidden() else 0
        if hasattr(parent, "setViewportMargins"):
            before = parent.viewportMargins().right()
            # a design seen whole stays whole: a wider margin would push its right edge (a DGX H100's
            # GPU7 and NVSwitch3) out of sight behind a scroll bar (a narrower one keeps it in sight)
            whole = margin > before and hasattr(parent, "fit") and self._shows_whole(parent)
            parent.setViewportMargins(0, 0, margin, 0)
            if whole:
                parent.fit()
        if margin:
            area = parent.viewport().geometry() if hasattr(parent, "viewport") else parent.rect()
            self.move(area.right() + 7, area.top() + 4)
