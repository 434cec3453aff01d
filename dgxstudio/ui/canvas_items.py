"""What the canvas draws: a device, a group (frame or collapsed box) and a link or bundle of links."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from .canvas_text import metrics
from .group_region import rounded
from .style import FAMILY_COLORS, KIND_COLORS, icon_pixmap, link_width
from ..units import counted

if TYPE_CHECKING:
    from .canvas import TopologyScene

MIME_PALETTE = "application/x-dgxstudio-palette"
SELECTED = QColor("#1e6fd9")
_FONT = QFont("Sans Serif", 8)
_FONT_BOLD = QFont("Sans Serif", 9, QFont.Weight.Bold)
_INK = QColor("#1b1b1b")
_GREY = QColor("#555555")


_NO_KIND = QColor("#888")
_FRAME_INK = QColor("#404040")
_BOX_FILL = QColor("#f2f2f2")
_MEMBERS_FILL = QColor(30, 111, 217, 24)   # an expanded group's region, nested ones a shade deeper
_WHITE_BRUSH = QBrush(QColor("#ffffff"))
_PENS: dict[tuple[int, float], QPen] = {}
_BRUSHES: dict[int, QBrush] = {}


def _pen(color: QColor, width: float) -> QPen:
    """One pen per colour and width, as the items draw them on every frame."""
    key = (color.rgba(), width)
    pen = _PENS.get(key)
    if pen is None:
        pen = _PENS[key] = QPen(color, width)
    return pen


def _brush(color: QColor) -> QBrush:
    brush = _BRUSHES.get(color.rgba())
    if brush is None:
        brush = _BRUSHES[color.rgba()] = QBrush(color)
    return brush


_BOLD: dict[int, QFont] = {}


def _bold(size: int) -> QFont:
    """One bold font object per size (their metrics are then measured once, see canvas_text.metrics)."""
    font = _BOLD.get(size)
    if font is None:
        font = _BOLD[size] = QFont("Sans Serif", size, QFont.Weight.Bold)
    return font


def fit_label(text: str, width: float, lines: int = 2, sizes: tuple[int, ...] = (9, 8, 7)) -> tuple[QFont, list[str]]:
    """How to draw a name in a box so it never reads as another name: on one line at the largest size
    that fits, else wrapped on up to ``lines`` lines, else elided keeping the end that tells one
    device from the next (``elide_keeping_end``). The full name is in the tooltip."""
    for size in sizes:
        font = _bold(size)
        if metrics(font)[0].horizontalAdvance(text) <= width:
            return font, [text]
    font = _bold(sizes[-1])
    fm = metrics(font)[0]
    out = wrap_words(text, fm, width)
    if len(out) <= lines and all(fm.horizontalAdvance(line) <= width for line in out):
        return font, out
    return font, elide_keeping_end(text, fm, width, lines)


def elide_keeping_end(text: str, fm: QFontMetricsF, width: float, lines: int) -> list[str]:
    """A name too long for its box, shortened so its last word stays whole: inside a system the end
    is what differs between devices ('DGX H100 #12 NVSwitch0' read 'DGX H…itch0', the same for all
    four switches). On two lines: the last words that fit below, the rest above with its own last
    word kept too (``DGX H… #12`` / ``NVSwitch0``); on one line the start gives way (``…#12 NVSwitch0``)."""
    words = text.split(" ")
    if lines < 2 or len(words) < 2:
        return [fm.elidedText(text, Qt.TextElideMode.ElideLeft, width)]
    k = len(words) - 1
    while k > 1 and fm.horizontalAdvance(" ".join(words[k - 1:])) <= width:
        k -= 1
    tail = fm.elidedText(" ".join(words[k:]), Qt.TextElideMode.ElideLeft, width)
    head = words[:k]
    last = " " + head[-1]
    room = width - fm.horizontalAdvance(last)
    if len(head) > 1 and fm.horizontalAdvance(" ".join(head)) > width and room > fm.horizontalAdvance("W…"):
        first = fm.elidedText(" ".join(head[:-1]), Qt.TextElideMode.ElideRight, room) + last
    else:
        first = fm.elidedText(" ".join(head), Qt.TextElideMode.ElideMiddle, width)
    return [first, tail]


def wrap_words(text: str, fm: QFontMetricsF, width: float) -> list[str]:
    """Words on as few lines as fit ``width`` (a word longer than the width keeps its own line)."""
    out, current = [], ""
    for word in text.split(" "):
        trial = f"{current} {word}".strip()
        if fm.horizontalAdvance(trial) <= width or not current:
            current = trial
        else:
            out.append(current)
            current = word
    out.append(current)
    return out


def text_runs(lines: list[str], font: QFont, rect: QRectF, centred: bool) -> list[tuple[QPointF, str]]:
    """Where each line's baseline starts so the lines sit centred in ``rect`` (left-aligned unless
    ``centred``): laid out once, then drawn line by line with the cheapest text call, which matters
    when every item's text is drawn again on every frame of a zoom."""
    fm = metrics(font)[0]
    step = fm.lineSpacing()
    y = rect.center().y() - (step * len(lines) - fm.leading()) / 2 + fm.ascent()
    out = []
    for line in lines:
        x = rect.center().x() - fm.horizontalAdvance(line) / 2 if centred else rect.left()
        out.append((QPointF(x, y), line))
        y += step
    return out


def draw_runs(painter: QPainter, runs: list[tuple[QPointF, str]]) -> None:
    for at, line in runs:
        painter.drawText(at, line)


class DeviceItem(QGraphicsItem):
    W, H = 112.0, 60.0
    HANDLE = 7.0
    _BOX = QRectF(-W / 2, -H / 2, W, H)
    _ICON_X, _ICON_Y = int(-W / 2 + 4), int(-H / 2 + 4)
    _HANDLE_AT = QPointF(W / 2 + HANDLE * 0.6, 0)

    def __init__(self, scene: "TopologyScene", device_id: str):
        super().__init__()
        self.canvas = scene
        self.device_id = device_id
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
                      | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setZValue(2)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.state_color: QColor | None = None
        self.refresh()

    def refresh(self) -> None:
        topo = self.canvas.document.topology
        dev = topo.devices[self.device_id]
        part = topo.part_of(self.device_id)
        self.name = dev.name
        self.kind = dev.kind
        used = topo.used_ports(self.device_id)
        # a group's name and count never part at a line break ("pcie" / "1/1" read as two things)
        self.ports = (" ".join(f"{g.name}\u00a0{used.get(g.name, 0)}/{g.count}" for g in part.ports)
                      if part else "unknown part")
        self.setToolTip(f"{dev.name} ({dev.id})\n{part.label if part else dev.part}\n{self.ports}")
        self._label = None   # fitted when first drawn large enough to read (a cluster opens many at once)
        self._runs = None
        self.update()

    def lay_out_text(self) -> tuple[list, list]:
        """The name and the port counts, laid out once (see text_runs)."""
        if self._runs is None:
            font, lines = self._fitted()
            name = text_runs(lines, font, QRectF(-self.W / 2 + 34, -self.H / 2 + 4, self.W - 38, 28), False)
            rect = QRectF(-self.W / 2 + 4, 2, self.W - 8, self.H / 2 - 4)
            ports = text_runs(wrap_words(self.ports, metrics(_FONT)[0], rect.width()), _FONT, rect, True)
            self._runs = (name, ports)
        return self._runs

    @property
    def label_font(self) -> QFont:
        return self._fitted()[0]

    @property
    def label_lines(self) -> list[str]:
        return self._fitted()[1]

    def _fitted(self) -> tuple[QFont, list[str]]:
        if self._label is None:
            self._label = fit_label(self.name, self.W - 38)
        return self._label

    @classmethod
    def drawn_rect(cls) -> QRectF:
        """What a device item covers around its position (its box and link handle)."""
        return QRectF(-cls.W / 2 - 2, -cls.H / 2 - 2, cls.W + cls.HANDLE * 2 + 4, cls.H + 4)

    def boundingRect(self) -> QRectF:
        return self.drawn_rect()

    def handle_center(self) -> QPointF:
        return QPointF(self.W / 2 + self.HANDLE * 0.6, 0)

    def on_handle(self, scene_pos: QPointF) -> bool:
        p = self.mapFromScene(scene_pos) - self.handle_center()
        return p.x() ** 2 + p.y() ** 2 <= (self.HANDLE + 3) ** 2

    def paint(self, painter: QPainter, option, widget=None) -> None:
        # Every device is painted on every frame of a zoom (its cached picture would be redrawn anyway):
        # pens, brushes, the box and the text layout are made once, not per item and frame.
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        selected = self.isSelected()   # (the option's state flags cost Python enum arithmetic per item and frame)
        edge = _pen(SELECTED, 3) if selected else _pen(KIND_COLORS.get(self.kind, _NO_KIND), 1.5)
        painter.setPen(edge)
        state = self.state_color
        painter.setBrush(_brush(state) if state is not None else _WHITE_BRUSH)
        if lod < 0.3:
            painter.drawRect(self._BOX)
            return
        painter.drawRoundedRect(self._BOX, 6, 6)
        painter.drawPixmap(self._ICON_X, self._ICON_Y, icon_pixmap(self.kind, 28))
        if self.canvas.text_held:   # a window's first frame: the names follow in the next (see TopologyScene)
            self._draw_handle(painter)
            return
        runs = self._runs if self._runs is not None else self.lay_out_text()
        painter.setPen(_INK)
        painter.setFont(self._label[0])
        for at, line in runs[0]:
            painter.drawText(at, line)
        if lod > 0.6:
            painter.setFont(_FONT)
            painter.setPen(_GREY)
            for at, line in runs[1]:
                painter.drawText(at, line)
        self._draw_handle(painter)

    def _draw_handle(self, painter: QPainter) -> None:
        painter.setPen(_pen(KIND_COLORS.get(self.kind, _NO_KIND), 1.5))
        painter.setBrush(_WHITE_BRUSH)
        painter.drawEllipse(self._HANDLE_AT, self.HANDLE, self.HANDLE)

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            self.canvas.item_moved(self)
        return super().itemChange(change, value)

    def mouseDoubleClickEvent(self, event) -> None:
        """A double-click offers the device's name for typing (the window's Rename, F2); the press
        before it selected the device alone."""
        self.canvas.renameRequested.emit()
        event.accept()


class GroupItem(QGraphicsItem):
    """A group: a frame around its members when expanded, a box standing for them when collapsed."""

    BOX_W, BOX_H = 130.0, 64.0
    TITLE = 22.0
    # A rack's trays (GB200 NVL72) are named "Compute tray 18": a wider box keeps the name on one line at
    # 10 pt, so the whole rack reads at the zoom that fits it in the window.
    TRAY_W, TRAY_SIZES = 184.0, (10, 9, 8, 7)
    # per item (trays differ); class defaults for subclasses that do not run this __init__ (the overview's)
    box_w, _title_sizes = BOX_W, (9, 8, 7)

    def __init__(self, scene: "TopologyScene", group_id: str, collapsed: bool):
        super().__init__()
        self.canvas = scene
        self.group_id = group_id
        self.collapsed = collapsed
        if scene.document.topology.groups[group_id].kind == "tray":
            self.box_w, self._title_sizes = self.TRAY_W, self.TRAY_SIZES
        self.frame = QRectF()
        self.region = QPainterPath()   # what the frame holds: its rectangle less non-members (group_region)
        self.fill: QColor | None = None
        flags = QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
        if collapsed:
            flags |= QGraphicsItem.GraphicsItemFlag.ItemIsMovable | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges
            self.setZValue(2)
            self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # a box: replay frames reuse it
        else:
            self.setZValue(-5)
        self.setFlags(flags)
        self.refresh()

    def refresh(self) -> None:
        """Name, GPU and device counts from the document."""
        topo = self.canvas.document.topology
        g = topo.groups[self.group_id]
        inside = topo.devices_in_group(self.group_id)
        self.title = g.name
        self._title_label = None
        self.summary = f"{counted(sum(topo.devices[d].kind == 'gpu' for d in inside), 'GPU')}, {counted(len(inside), 'device')}"
        self.setToolTip(f"{g.name} ({g.kind}, {g.id}): {self.summary}\n"
                        f"Double-click to {'expand' if self.collapsed else 'collapse'}")
        self.update()

    @property
    def title_font(self) -> QFont:
        return self._title_fitted()[0]

    @property
    def title_lines(self) -> list[str]:
        return self._title_fitted()[1]

    def _box_runs(self) -> tuple[list, list]:
        """The collapsed box's name, and its counts with the '+' that expands it, laid out once."""
        runs = getattr(self, "_runs", None)
        if runs is None or runs[0] != (self.title, self.summary):
            rect = QRectF(-self.box_w / 2, -self.BOX_H / 2, self.box_w, self.BOX_H)  # a tray's box is wider
            title = text_runs(self.title_lines, self.title_font,
                              QRectF(rect.left() + 36, rect.top() + 4, rect.width() - 58, 28), False)
            summary = text_runs([self.summary], _FONT, QRectF(rect.left() + 4, rect.top() + 36, rect.width() - 8, 24), True)
            summary += text_runs(["+"], _FONT, self.toggle_rect(), True)
            runs = self._runs = ((self.title, self.summary), (title, summary))
        return runs[1]

    def lay_out_text(self) -> tuple[list, list]:
        """The collapsed box's name and counts laid out now (see _box_runs), drawn in a later frame."""
        return self._box_runs()

    def _title_fitted(self) -> tuple[QFont, list[str]]:
        if getattr(self, "_title_label", None) is None:
            self._title_label = fit_label(self.title, self.box_w - 58, sizes=self._title_sizes)
        return self._title_label

    @staticmethod
    def frame_around(content: QRectF) -> QRectF:
        """The frame drawn around a group's content (its devices' and inner frames' rectangles united;
        an empty group: a small box)."""
        return content.adjusted(-24, -16, 24, 16) if not content.isNull() else QRectF(0, 0, 60, 40)

    @classmethod
    def drawn_around(cls, frame: QRectF) -> QRectF:
        """What an open group's drawing covers: its frame with the title bar above it."""
        return frame.adjusted(-2, -cls.TITLE - 2, 2, 2)

    def set_frame(self, rect: QRectF, region: QPainterPath | None = None) -> None:
        """The frame's rectangle and the region it holds (``region``: the rounded rectangle when none)."""
        self.prepareGeometryChange()
        self.frame = rect
        self.region = rounded(rect) if region is None else region

    def boundingRect(self) -> QRectF:
        if self.collapsed:
            return QRectF(-self.box_w / 2 - 2, -self.BOX_H / 2 - 2, self.box_w + 4, self.BOX_H + 4)
        return self.drawn_around(self.frame)

    def toggle_rect(self) -> QRectF:
        if self.collapsed:
            return QRectF(self.box_w / 2 - 20, -self.BOX_H / 2 + 2, 18, 18)
        return QRectF(self.frame.left() + 4, self.frame.top() - self.TITLE + 2, 18, 18)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        if self.collapsed:
            path.addRect(self.boundingRect())
        else:  # only the title bar picks the frame, so clicks inside reach the members
            path.addRect(QRectF(self.frame.left(), self.frame.top() - self.TITLE, self.frame.width(), self.TITLE))
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        selected = self.isSelected()   # (the option's state flags cost Python enum arithmetic per item and frame)
        pen = _pen(SELECTED, 2.5) if selected else _pen(_FRAME_INK, 1.2)
        if self.collapsed:
            rect = QRectF(-self.box_w / 2, -self.BOX_H / 2, self.box_w, self.BOX_H)
            painter.setPen(pen)
            painter.setBrush(_brush(self.fill or _BOX_FILL))
            painter.drawRoundedRect(rect, 6, 6)
            painter.drawPixmap(int(rect.left() + 4), int(rect.top() + 6), icon_pixmap("system", 28))
            if self.canvas.text_held:   # a window's first frame: the name and counts follow (see TopologyScene)
                return
            title, summary = self._box_runs()
            painter.setPen(_INK)
            painter.setFont(self.title_font)
            draw_runs(painter, title)
            painter.setFont(_FONT)
            draw_runs(painter, summary)
            return
        painter.setPen(QPen(pen.color(), pen.widthF(), Qt.PenStyle.DashLine))
        painter.setBrush(_brush(_MEMBERS_FILL))   # a gap for a device that is not a member reads as outside
        painter.drawPath(self.region)
        bar = QRectF(self.frame.left(), self.frame.top() - self.TITLE, self.frame.width(), self.TITLE)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(230, 230, 230, 220))
        painter.drawRect(bar)
        painter.setPen(QColor("#1b1b1b"))
        painter.setFont(_FONT_BOLD)
        text = f"{self.title}  ({self.summary})"
        fm = painter.fontMetrics()
        if fm.horizontalAdvance(text) > bar.width() - 30:  # drop the summary before cutting the name
            text = fm.elidedText(self.title, Qt.TextElideMode.ElideMiddle, int(bar.width() - 30))
        painter.drawText(bar.adjusted(26, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, text)
        painter.drawText(self.toggle_rect(), Qt.AlignmentFlag.AlignCenter, "-")

    def mouseDoubleClickEvent(self, event) -> None:
        self.canvas.toggle_group(self.group_id)

    def mousePressEvent(self, event) -> None:
        if self.toggle_rect().contains(event.pos()):
            self.canvas.toggle_group(self.group_id)
            event.accept()
            return
        super().mousePressEvent(event)

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged and self.collapsed:
            self.canvas.item_moved(self)
        return super().itemChange(change, value)


class LinkItem(QGraphicsPathItem):
    """One link between two visible devices, or a bundle of links to or from a collapsed group."""

    OVERLAY_EXTRA = 2.0   # what a replay's line may add to the link's width (see ui.animation)

    def __init__(self, a: QGraphicsItem, b: QGraphicsItem, link_ids: list[str], count: int, bandwidth: float,
                 family: str | None, bundle: bool, tooltip: str):
        super().__init__()
        self._bounds = self._shape = self._draw_pen = self._overlay_key = None
        self.a, self.b = a, b
        self.link_ids = link_ids
        self.count = count
        self.bundle = bundle
        self.family = family
        self.base_pen = QPen(FAMILY_COLORS.get(family, FAMILY_COLORS[None]), link_width(bandwidth))
        # flat ends (hidden under the devices anyway): a smoothed wide line with round caps is stroked as
        # an outline every frame, about 13x the cost of a flat-capped one (the DGX presets' worst frames)
        self.base_pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        if bundle:
            self.base_pen.setStyle(Qt.PenStyle.DashLine)
        self.use_base_pen()
        self.setZValue(0)
        self.setToolTip(tooltip)
        if not bundle:
            self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.update_path()

    def update_path(self) -> None:
        path = QPainterPath(self.a.scenePos())
        path.lineTo(self.b.scenePos())
        self.set_line(path)

    def set_line(self, path: QPainterPath) -> None:
        self.prepareGeometryChange()
        self._shape = self._bounds = None
        self.setPath(path)
        # drawn as a line: the same pixels as the path, without a copy of the path per frame and
        # with the line's cheaper way into the raster engine (GB200 NVL72's 162 dashed bundles)
        self._line = QLineF(path.elementAt(0).x, path.elementAt(0).y, path.elementAt(1).x, path.elementAt(1).y) \
            if path.elementCount() == 2 and path.elementAt(1).isLineTo() else None

    def use_base_pen(self) -> None:
        """Draw with ``base_pen`` (set or changed): no replay overlay."""
        self._draw_pen = None
        self._overlay_key = None
        self.prepareGeometryChange()
        self._shape = self._bounds = None
        self.setPen(self.base_pen)

    def boundingRect(self) -> QRectF:
        """As QGraphicsPathItem's from the base pen; while a replay draws over the link, from a pen
        OVERLAY_EXTRA wider, whatever the overlay's width now (see ``set_overlay``)."""
        bounds = self._bounds
        if bounds is None:
            extra = self.OVERLAY_EXTRA if self._overlay_key is not None else 0.0
            bounds = self._bounds = self._outline(self.base_pen.widthF() + extra).controlPointRect()
        return bounds

    def shape(self) -> QPainterPath:
        """The base pen's outline of the line, what a click picks (as QGraphicsPathItem makes it)."""
        shape = self._shape
        if shape is None:
            shape = self._shape = self._outline(self.base_pen.widthF())
        return shape

    def _outline(self, width: float) -> QPainterPath:
        pen, path = self.base_pen, self.path()
        stroker = QPainterPathStroker()
        stroker.setCapStyle(pen.capStyle())
        stroker.setWidth(width if width > 0 else 1e-8)
        stroker.setJoinStyle(pen.joinStyle())
        stroker.setMiterLimit(pen.miterLimit())
        outline = stroker.createStroke(path)
        outline.addPath(path)
        return outline

    def set_overlay(self, color: QColor | None, width: float | None = None) -> None:
        """A replay's colour (and width, at most OVERLAY_EXTRA wider) over the link. Only what is drawn
        changes, not the item's pen: a new pen is a new geometry, which moved every recoloured link in
        the scene's index on each pattern of a replay (500 links on the 124-system tree)."""
        key = (color.rgba(), width) if color is not None else None
        if key == self._overlay_key:
            return
        if (key is None) != (self._overlay_key is None):   # a replay starts or ends: wider bounds or back
            self.prepareGeometryChange()
            self._bounds = None
        self._overlay_key = key
        pen = None
        if color is not None:
            pen = QPen(self.base_pen)
            pen.setColor(color)
            if width:
                pen.setWidthF(min(width, self.base_pen.widthF() + self.OVERLAY_EXTRA))
        self._draw_pen = pen
        self.update()

    def drawn_pen(self) -> QPen:
        """The pen the link is drawn with now: a replay's overlay, else the base pen."""
        return self.base_pen if self._draw_pen is None else self._draw_pen

    def paint(self, painter: QPainter, option, widget=None) -> None:
        # the 'x12' count is drawn over the canvas at a readable size, clear of the others (LinkLabels)
        pen = self.drawn_pen()
        if self.isSelected():
            pen = QPen(pen)
            pen.setColor(SELECTED)
        painter.setPen(pen)
        if self._line is not None:
            painter.drawLine(self._line)
        else:
            painter.drawPath(self.path())

    def label_color(self) -> QColor:
        return SELECTED if self.isSelected() else self.drawn_pen().color()
