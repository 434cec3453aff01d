"""Text drawn at a fixed size on screen over a zoomable canvas (the cluster overview's names and labels).

A label is laid out for every frame of a zoom, so what can be measured once is: each line's forms
(the full text and its shorter fallbacks) keep their widths, and the forms chosen for one on-screen
box size are kept until the box changes size.
"""

from __future__ import annotations

import numpy as np

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QStaticText, QTransform

LABEL_FONT = QFont("Sans Serif", 8)
LABEL_BOLD = QFont("Sans Serif", 8, QFont.Weight.Bold)
LABEL_SMALL = QFont("Sans Serif", 7, QFont.Weight.Bold)
LABEL_SMALL_PLAIN = QFont("Sans Serif", 7)
INK = QColor("#1b1b1b")
WHITE = QColor(255, 255, 255, 235)

_METRICS: dict[int, tuple[QFont, QFontMetricsF, float]] = {}


_STATIC: dict[str, QStaticText] = {}
STATIC_KEPT = 4000   # texts kept laid out (an elided name takes a new form at each width it is drawn at)


def static_text(text: str) -> QStaticText:
    """The text laid out once and drawn with the painter's font (QPainter.drawStaticText): a
    fixed-size label drawn at every frame costs a third of drawText into a rectangle, which lays the
    text out again each time (the cluster overview's block names: 18% of a zoom frame)."""
    got = _STATIC.get(text)
    if got is None:
        if len(_STATIC) >= STATIC_KEPT:
            _STATIC.clear()
        got = _STATIC[text] = QStaticText(text)
        got.setTextFormat(Qt.TextFormat.PlainText)
    return got


class DeviceText:
    """A font as drawn on one kind of device: its line height there and each text's width (measured
    once: a measure shapes the text anew, 20 us). drawText centres with these, and they can differ
    from the screen's (``metrics``): offscreen the screen is not 96 dpi, the widgets are."""

    def __init__(self, font: QFont, device):
        self.font = font
        self.fm = QFontMetricsF(font, device)
        self.line_h = self.fm.height()
        self.widths: dict[str, float] = {}

    def width(self, text: str) -> float:
        w = self.widths.get(text)
        if w is None:
            if len(self.widths) >= STATIC_KEPT:
                self.widths.clear()
            w = self.widths[text] = self.fm.horizontalAdvance(text)
        return w


_DEVICE: dict[tuple[int, int, int], DeviceText] = {}


def device_text(painter: QPainter, font: QFont) -> DeviceText:
    """``font`` (one of the labels' constant fonts, just set on ``painter``) on the painter's device."""
    device = painter.device()
    key = (id(font), device.logicalDpiX(), device.logicalDpiY())
    got = _DEVICE.get(key)
    if got is None or got.font is not font:
        got = _DEVICE[key] = DeviceText(font, device)
    return got


def draw_centred(painter: QPainter, box: QRectF, text: str, dt: DeviceText) -> None:
    """One line of ``text`` centred in ``box`` (screen coordinates) at the pixels of
    ``drawText(box, AlignCenter, text)``, drawn from its kept layout in the font ``dt`` describes."""
    painter.drawStaticText(QPointF(box.x() + (box.width() - dt.width(text)) / 2,
                                   box.y() + (box.height() - dt.line_h) / 2), static_text(text))


def need_key(form: str, font: QFont) -> tuple[str, str]:
    """How ``ScreenText``'s ``needs`` names a form drawn in a font."""
    return form, font.key()


_SCREEN: list[QImage] = []


def metrics(font: QFont) -> tuple[QFontMetricsF, float]:
    """The font's metrics and line height, made once per font object (the labels' fonts are constants).

    Measured as on an image at the screen's resolution, which is how the canvas draws them (a
    painter on a widget or a cached picture sets the font for its device): the labels' fonts are
    made when this module is imported, before the application, and a font made then keeps Qt's
    fallback of 100 dpi for its own metrics. At 96 dpi that measured 7 pt text at 10 px where it is
    drawn at 9 ('505–512' 43 px wide where it takes 39)."""
    got = _METRICS.get(id(font))
    if got is None or got[0] is not font:
        if not _SCREEN:
            _SCREEN.append(QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied))
        fm = QFontMetricsF(font, _SCREEN[0])
        got = _METRICS[id(font)] = (font, fm, fm.height())
    return got[1], got[2]


class ScreenText:
    """Lines of text drawn at a fixed size on screen inside a scene rectangle: readable at any zoom,
    left out line by line (from the last) where the rectangle is too small on screen to hold them.
    A line offers shorter forms after '|' for when the long one does not fit; a form may break into
    several lines with '\\n' (a name wrapped in a narrow margin); the last resort is eliding, or with
    ``elide`` off, leaving the line and those after it out. A line given as a list of (forms, font)
    pairs tries each font's forms in turn: a smaller font for when no form fits in the first (a switch
    block 42 x 15 px on screen). ``needs`` may ask more width for a form in a font (keyed by
    ``need_key``) than it takes (labels of one row that should switch to their shorter forms together).
    ``side`` is kept clear left and right, on screen."""

    def __init__(self, lines: list, inset: float = 2.0, elide: bool = True,
                 needs: dict[tuple[str, str], float] | None = None, side: float = 3.0):
        self.inset = inset   # kept clear above and below the text, on screen
        self.side = side
        self.elide = elide
        self.lines = []
        for line in lines:
            forms = []
            for text, font in ([line] if isinstance(line, tuple) else line):
                fm, line_h = metrics(font)
                for form in dict.fromkeys(text.split("|")):
                    parts = [(p, fm.horizontalAdvance(p)) for p in form.split("\n")]
                    need = max((needs or {}).get(need_key(form, font), 0.0), *(w for _p, w in parts))
                    forms.append((parts, need, len(parts) * line_h, font, fm, line_h))
            self.lines.append(forms)
        self._size: tuple[float, float] | None = None
        self._shown: list[tuple[str, QFont, float]] = []
        self._height = 0.0
        self._whole = False   # every line shown, none elided

    def _layout(self, width: float, height: float) -> None:
        shown, used, whole = [], 0.0, True
        for forms in self.lines:
            fitting = [f for f in forms if f[2] + used <= height]
            if not fitting:
                whole = False
                break
            parts, _w, h, font, fm, line_h = next((f for f in fitting if f[1] <= width), fitting[-1])
            if not self.elide and _w > width:
                whole = False
                break
            for p, w in parts:
                if w > width:
                    p = fm.elidedText(p, Qt.TextElideMode.ElideMiddle, width)
                    whole = False
                shown.append((p, font, line_h))
            used += h
        self._shown, self._height, self._whole = shown, used, whole

    def _box(self, painter: QPainter, rect: QRectF) -> QRectF | None:
        box = painter.worldTransform().mapRect(rect).adjusted(self.side, self.inset, -self.side, -self.inset)
        if box.width() < 24 or box.height() < 10:
            return None
        size = (box.width(), box.height())
        if size != self._size:
            self._size = size
            self._layout(*size)
        return box

    def fits(self, painter: QPainter, rect: QRectF) -> bool:
        """Whether every line shows in the rectangle on screen without eliding."""
        return self._box(painter, rect) is not None and self._whole

    def draw(self, painter: QPainter, rect: QRectF, centred: bool = True) -> None:
        box = self._box(painter, rect)
        if box is None or not self._shown:
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(INK)
        y = box.top() + (box.height() - self._height) / 2 if centred else box.top()
        font = None
        for text, f, h in self._shown:
            if f is not font:
                painter.setFont(f)
                font = f
                dt = device_text(painter, f)
            draw_centred(painter, QRectF(box.left(), y, box.width(), h), text, dt)
            y += h
        painter.restore()


class Taken:
    """Rectangles already drawn on screen, bucketed in 64-pixel cells so a new label checks only its
    neighbours. Kept as plain (left, top, right, bottom) numbers: a zoom frame places every count
    anew, and QRectF objects cost a Python call per comparison."""

    CELL = 64.0

    def __init__(self):
        self.cells: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}

    def claim(self, r: QRectF, force: bool = False) -> bool:
        return self.claim_box(r.left(), r.top(), r.left() + r.width(), r.top() + r.height(), force)

    def claim_box(self, left: float, top: float, right: float, bottom: float, force: bool = False) -> bool:
        """As QRectF.intersects decides: boxes that only touch do not overlap; an empty box claims nothing."""
        if not (left < right and top < bottom):   # an empty box overlaps nothing, nor is it in the way
            return True
        c = self.CELL
        keys = [(i, j) for i in range(int(left // c), int(right // c) + 1)
                for j in range(int(top // c), int(bottom // c) + 1)]
        cells = self.cells
        if not force:
            for k in keys:
                for ol, ot, orr, ob in cells.get(k, ()):
                    if left < orr and ol < right and top < ob and ot < bottom:
                        return False
        box = (left, top, right, bottom)
        for k in keys:
            cells.setdefault(k, []).append(box)
        return True


def draw_placed(painter: QPainter, exposed: QRectF, placed: list, font: QFont = LABEL_FONT) -> None:
    """Labels placed on screen ((link item, box, text)) that meet the exposed scene area, each boxed
    and edged in its link's colour. Placed labels never overlap, so the boxes go in one call per
    colour and then the texts."""
    screen = painter.worldTransform().mapRect(exposed)
    shown = [(item, box, text) for item, box, text in placed if box.intersects(screen)]
    if not shown:
        return
    painter.save()
    painter.resetTransform()
    painter.setFont(font)
    painter.setBrush(WHITE)
    edges: dict[int, tuple[QColor, list[QRectF]]] = {}
    for item, box, _text in shown:
        color = item.label_color()
        edges.setdefault(color.rgba(), (color, []))[1].append(box)
    for color, boxes in edges.values():
        painter.setPen(QPen(color, 1))
        painter.drawRects(boxes)
    painter.setPen(INK)
    dt = device_text(painter, font)
    for _item, box, text in shown:
        draw_centred(painter, box, text, dt)
    painter.restore()


def carries_count(link_item) -> bool:
    """Whether a drawn link or bundle is labelled with its count: when it stands for several physical
    links. A bundle of one (a collapsed system's link to a leaf) is told by its dashed line; its
    'x1's, 128 of them on a 16-system rail-optimized fat tree, crowded the row under the leaves and
    covered the lines (44 placed, the rest not, so it also read as if only some were bundles)."""
    return link_item.count > 1


class LinkLabels:
    """The 'x12' count on links of several physical links and on bundles, drawn over the canvas in
    whole point sizes on screen (8 to 12 as the view zooms: the glyphs drawn at one size are reused
    by the next frame, where a size scaled with the zoom is rasterized anew every frame): each at the
    first point along its line (the middle, then further out) where it covers no device, no
    collapsed group and no other count, or not at all. Placed once per view position and design state (``version``); replay
    frames only redraw them."""

    MIN_SCALE = 0.4   # further out the counts would cover the drawing
    ALONG = (0.5, 0.36, 0.64, 0.24, 0.76)
    FONTS = {size: QFont("Sans Serif", size, QFont.Weight.Bold) for size in range(8, 13)}

    # Up to this many counts, they are placed over the whole scene once per zoom step and a pan only
    # shifts them (a pan placed every count in view anew, and a count could jump when a device it had
    # been placed over scrolled into view): the DGX systems' 1-49 and GB200 NVL72's 162 (placing the
    # whole rack costs a zoom frame about what placing the counts in view did, 2-3 ms since the spots
    # are tested with numpy, and its pans then place nothing). Beyond, only the counts in view are
    # placed, at every view change.
    WHOLE_SCENE_MAX = 200

    def __init__(self):
        self._key = None
        self._placed: list = []   # (link item, box on screen, text) as last drawn
        self._at_scale: list = []   # the same placed over the whole scene at the view's scale, unshifted
        self._shift: tuple[float, float] | None = None
        self._font = LABEL_BOLD
        self._widths: dict[tuple[int, str], float] = {}

    def draw(self, painter: QPainter, exposed: QRectF, links, devices, version: int) -> None:
        t = painter.worldTransform()
        if t.m11() < self.MIN_SCALE:
            return
        if t.type().value <= QTransform.TransformationType.TxScale.value and \
                self._counted(links, version) <= self.WHOLE_SCENE_MAX:
            key = (t.m11(), t.m22(), version)
            if key != self._key:
                self._font = self.FONTS[min(max(round(9 * t.m11()), 8), 12)]
                self._key, self._shift = key, None
                self._at_scale = self._place(QTransform.fromScale(t.m11(), t.m22()), None, links, devices, version)
            shift = (t.dx(), t.dy())
            if shift != self._shift:
                self._shift = shift
                self._placed = [(item, box.translated(*shift), text) for item, box, text in self._at_scale]
        else:
            key = (t.m11(), t.m22(), t.dx(), t.dy(), version)
            if key != self._key:
                self._font = self.FONTS[min(max(round(9 * t.m11()), 8), 12)]
                self._key, self._placed = key, self._place(t, painter.viewport(), links, devices, version)
        draw_placed(painter, exposed, self._placed, self._font)

    def _counted(self, links, version: int) -> int:
        """How many links carry a count (once per design state)."""
        if getattr(self, "_count_version", None) != version:
            self._count_version = version
            self._count = sum(1 for item in links if carries_count(item))
        return self._count

    def _label(self, item, font, fm) -> tuple[str, float]:
        """A link's count label and its box width (measured once per font size and text)."""
        text = f"x{item.count}"
        key = (font.pointSize(), text)
        w = self._widths.get(key)
        if w is None:
            w = self._widths[key] = fm.horizontalAdvance(text) + 8
        return text, w

    def _place(self, t, viewport, links, devices, version: int) -> list:
        """Counts placed on screen through ``t``: those in ``viewport``, or all of them (None)."""
        if viewport is None:
            area = QRectF(-1e12, -1e12, 2e12, 2e12)
        else:
            area = QRectF(viewport)
        al, at = area.left(), area.top()
        ar, ab = al + area.width(), at + area.height()
        taken = Taken()
        out = []
        font = self._font
        fm, line_h = metrics(font)
        h = line_h + 2
        if t.type().value > QTransform.TransformationType.TxScale.value:   # not this canvas's views: the general way
            return self._place_any(t, area, links, devices, taken, out, font, fm, h)
        # scale and shift only: mapped with plain numbers, as QTransform maps them
        sx, sy, dx, dy = t.m11(), t.m22(), t.dx(), t.dy()
        boxes = []
        for d in devices:
            r = d.sceneBoundingRect()
            left, top = sx * r.x() + dx, sy * r.y() + dy
            right, bottom = left + sx * r.width(), top + sy * r.height()
            if left < ar and al < right and top < ab and at < bottom and left < right and top < bottom:
                boxes.append((left, top, right, bottom))
        items, texts, ends, widths = self._counts(links, version, font, fm)
        if not items:
            return out
        ax, ay = ends[:, 0:1] * sx + dx, ends[:, 1:2] * sy + dy
        bx, by = ends[:, 2:3] * sx + dx, ends[:, 3:4] * sy + dy
        near = ((np.minimum(ax, bx) - 20 < ar) & (al < np.maximum(ax, bx) + 20)
                & (np.minimum(ay, by) - 20 < ab) & (at < np.maximum(ay, by) + 20))[:, 0]
        if not near.any():
            return out
        ax, ay, bx, by, w = ax[near], ay[near], bx[near], by[near], widths[near]
        # every spot along every line at once (as placing them one by one computes it, operation for
        # operation), and which of them a device covers; then, in link order, the first spot that no
        # count placed before covers (a GB200 NVL72 zoom frame checked 720 spots one by one: 8 ms)
        f = np.array(self.ALONG)
        left = ax + (bx - ax) * f - w / 2
        top = ay + (by - ay) * f - h / 2
        right, bottom = left + w, top + h
        if boxes:
            d = np.array(boxes)
            covered = ((left[..., None] < d[:, 2]) & (d[:, 0] < right[..., None])
                       & (top[..., None] < d[:, 3]) & (d[:, 1] < bottom[..., None])).any(axis=2)
        else:
            covered = np.zeros(left.shape, dtype=bool)
        claim = taken.claim_box
        free = (~covered).tolist()
        left, top, right, bottom = left.tolist(), top.tolist(), right.tolist(), bottom.tolist()
        for i, (n, wi) in enumerate(zip(np.flatnonzero(near).tolist(), w[:, 0].tolist())):
            for k, ok in enumerate(free[i]):
                if ok and claim(left[i][k], top[i][k], right[i][k], bottom[i][k]):
                    out.append((items[n], QRectF(left[i][k], top[i][k], wi, h), texts[n]))
                    break
        return out

    def _counts(self, links, version: int, font, fm):
        """The links that carry a count, their texts, their ends in the scene (an array of ax, ay, bx, by)
        and their label widths (a column) in ``font``: read from the items once per design state."""
        key = (version, id(links), len(links))
        if getattr(self, "_counts_key", None) != key:
            self._counts_key = key
            items, ends = [], []
            for item in links:
                if not carries_count(item) or not item.isVisible():
                    continue
                pa, pb = item.a.scenePos(), item.b.scenePos()
                items.append(item)
                ends.append((pa.x(), pa.y(), pb.x(), pb.y()))
            self._count_items = items
            self._count_texts = [f"x{item.count}" for item in items]
            self._count_ends = np.array(ends, dtype=float).reshape(-1, 4)
            self._count_widths = {}
        widths = self._count_widths.get(font.pointSize())
        if widths is None:
            widths = self._count_widths[font.pointSize()] = np.array(
                [self._label(item, font, fm)[1] for item in self._count_items], dtype=float).reshape(-1, 1)
        return self._count_items, self._count_texts, self._count_ends, widths

    def _place_any(self, t, area, links, devices, taken, out, font, fm, h) -> list:
        for d in devices:
            r = t.mapRect(d.sceneBoundingRect())
            if r.intersects(area):
                taken.claim(r, force=True)
        for item in links:
            if not carries_count(item) or not item.isVisible():
                continue
            a, b = t.map(item.a.scenePos()), t.map(item.b.scenePos())
            if not QRectF(a, b).normalized().adjusted(-20, -20, 20, 20).intersects(area):
                continue
            text, w = self._label(item, font, fm)
            for f in self.ALONG:
                x, y = a.x() + (b.x() - a.x()) * f, a.y() + (b.y() - a.y()) * f
                box = QRectF(x - w / 2, y - h / 2, w, h)
                if taken.claim(box):
                    out.append((item, box, text))
                    break
        return out
