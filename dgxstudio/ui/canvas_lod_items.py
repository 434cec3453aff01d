"""What the cluster overview draws: blocks of systems or switches, tier names, the bundle between two
blocks, and the system box drawn inside an open block (see canvas_lod for when they are made)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsPathItem

from .canvas_items import SELECTED, GroupItem, LinkItem
from .canvas_text import LABEL_BOLD, LABEL_FONT, LABEL_SMALL, LABEL_SMALL_PLAIN, ScreenText, Taken, metrics
from ..analysis.cluster_overview import Block, Bundle
from ..analysis.cluster_overview import _bw as _bw_text
from .style import link_width
from ..units import counted

if TYPE_CHECKING:
    from .canvas import TopologyScene
    from .canvas_lod import LevelOfDetail

# a system box drawn in an open block is placed by the overview, not the document: said when dragged or nudged
SYSTEM_BOX_STAYS = "A system keeps its place in the overview: double-click it to open it and move its devices"
TITLE = 0.16              # share of a block's height its title takes when open
TIER_FILL = {0: QColor("#eef3fb"), 1: QColor("#f3f0e6"), 2: QColor("#efe8f5"), 3: QColor("#e8f2ec")}
_EDGE_PEN = QPen(QColor("#404040"), 0)
_OPEN_PEN = QPen(QColor("#606060"), 0, Qt.PenStyle.DashLine)
_TITLE_FILL = QColor(230, 230, 230, 220)
BLOCK_TEXT_SIDE = 1.5     # px kept clear left and right of a closed block's text, inside its 1 px edge


def _forms(block: Block) -> list[list[tuple[list[str], QFont]]]:
    """A closed block's name and summary, each as forms in a font, longest first (a number is never
    elided: a block whose shortest name does not fit shows none). The name falls back to smaller type:
    at fit a 2,048-system cluster's switch blocks are 42 x 14.7 px on screen, where the bold name's
    line (12.8 px) and its inset do not fit, nor 'Pod 16' (43 px) or '505–512' (51 px) across;
    '505–512' is 39 px in the small plain type."""
    compact = block.short.replace(" ", "")
    name = [([block.label, block.short, compact], LABEL_BOLD), ([block.short, compact], LABEL_SMALL),
            ([compact], LABEL_SMALL_PLAIN)]
    return [name, [([block.summary, *_shorter(block)], LABEL_FONT)]]


def block_text(block: Block, needs: dict | None) -> ScreenText:
    """What a closed block draws: its name and summary, centred (``needs``: see LevelOfDetail.measure_forms)."""
    return ScreenText([[("|".join(forms), font) for forms, font in line] for line in _forms(block)],
                      inset=1.0, elide=False, needs=needs, side=BLOCK_TEXT_SIDE)


def _shorter(block: Block) -> list[str]:
    """Shorter forms of a block's summary: '256 GPUs' for '32 systems, 256 GPUs'; '8 x Quantum-2 QM9700'
    then '8 switches' for '8 x Quantum-2 QM9700 (64 x 400G)'."""
    if block.tier == 0:
        return block.summary.split(", ")[::-1]
    return [block.summary.split(" (")[0], f"{len(block.members)} switch{'es' if len(block.members) > 1 else ''}"]


class BlockItem(QGraphicsItem):
    """A block of the overview: systems of one unit, or switches of one tier serving the same blocks."""

    def __init__(self, lod: "LevelOfDetail", block: Block):
        super().__init__()
        self.lod = lod
        self.block = block
        x, y, w, h = block.rect
        self.rect = QRectF(-w / 2, -h / 2, w, h)
        self.setPos(x + w / 2, y + h / 2)
        self.setZValue(2)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # pan and replay frames reuse it (see TopologyScene.zooming)
        self.open = False
        self.fill: QColor | None = None
        self._text: ScreenText | None = None    # laid out when first drawn
        self._title: ScreenText | None = None
        self._tier_fill = QBrush(TIER_FILL.get(block.tier, QColor("#f2f2f2")))
        self.scene_rect = self.rect.translated(self.pos())   # blocks never move
        r = self.scene_rect
        self.scene_box = (r.x(), r.y(), r.width(), r.height())   # (read by place_bundle_labels)
        self.setToolTip(f"{block.label}\n{block.summary}\nZoom in or double-click to open")

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-2, -2, 2, 2)

    def recount(self) -> None:
        """The block's summary changed (an edit): laid out again when next drawn."""
        self._text = self._title = None
        self.setToolTip(f"{self.block.label}\n{self.block.summary}\nZoom in or double-click to open")
        self.update()

    def inner(self) -> QRectF:
        """Where the members are drawn when open (scene coordinates)."""
        r = self.rect.translated(self.pos())
        title = r.height() * TITLE
        return r.adjusted(2, title, -2, -2)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self.open:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(_OPEN_PEN)
            painter.drawRect(self.rect)
            bar = QRectF(self.rect.left(), self.rect.top(), self.rect.width(), self.rect.height() * TITLE)
            painter.fillRect(bar, _TITLE_FILL)
            if self._title is None:
                self._title = ScreenText([(f"{self.block.label}  ({self.block.summary})|{self.block.label}", LABEL_BOLD)])
            self._title.draw(painter, bar)
            return
        painter.setPen(_EDGE_PEN)
        painter.setBrush(self.fill or self._tier_fill)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)   # an upright box: nothing to smooth
        painter.drawRect(self.rect)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if self._text is None:
            self._text = block_text(self.block, self.lod.form_needs.get(self.block.tier))
        self._text.draw(painter, self.rect)

    def mousePressEvent(self, event) -> None:
        event.accept()   # a press here starts a double-click, not a rubber band


class TierLabel(QGraphicsItem):
    """The name of a tier row ('Leaf switches'), left of its blocks, at a readable size: whole, else
    wrapped, else its first word ('Spine'), smaller if need be, else that word along the row's height
    (a narrow window at fit leaves the margin a few dozen pixels wide), eliding only as a last resort."""

    def __init__(self, name: str, rect: QRectF):
        super().__init__()
        self.name, self.rect = name, rect
        words = name.split()
        wrapped = [" ".join(words[:k]) + "\n" + " ".join(words[k:]) for k in range(len(words) - 1, 0, -1)]
        self.texts = [ScreenText([("|".join([name, *wrapped, words[0]]), LABEL_BOLD)], inset=0.0),
                      ScreenText([(words[0], LABEL_SMALL)], inset=0.0)]
        self.word = words[0]
        fm, self._line_h = metrics(LABEL_BOLD)
        self._word_w = fm.horizontalAdvance(self.word)
        self.setZValue(1)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:
        return self.rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        for text in self.texts:
            if text.fits(painter, self.rect):
                text.draw(painter, self.rect)
                return
        box = painter.worldTransform().mapRect(self.rect)
        if box.height() - 6 >= self._word_w and box.width() - 4 >= self._line_h:   # along the row
            painter.save()
            painter.resetTransform()
            painter.translate(box.center())
            painter.rotate(-90)
            painter.setPen(QColor("#1b1b1b"))
            painter.setFont(LABEL_BOLD)
            painter.drawText(QRectF(-box.height() / 2, -box.width() / 2, box.height(), box.width()),
                             Qt.AlignmentFlag.AlignCenter, self.word)
            painter.restore()
            return
        self.texts[0].draw(painter, self.rect)


class BundleItem(LinkItem):
    """The cabling between two blocks: one line with its count and bandwidth per direction."""

    def __init__(self, a: QGraphicsItem, b: QGraphicsItem, bundle: Bundle):
        super().__init__(a, b, bundle.link_ids, bundle.count, bundle.bandwidth_Bps, bundle.family, True,
                         f"bundle: {bundle.label}")
        self.info = bundle
        self._texts(bundle)
        self.base_pen.setStyle(Qt.PenStyle.SolidLine)
        self.base_pen.setCosmetic(True)
        self.base_pen.setWidthF(min(self.base_pen.widthF() / 3, 4.0))
        self.use_base_pen()

    def recount(self) -> None:
        """The bundle's links changed (an edit): its count, bandwidth and label; hidden while empty."""
        bundle = self.info
        self.link_ids = bundle.link_ids
        self.count = bundle.count
        for lid in bundle.link_ids:
            self.a.scene().items_by_link[lid] = self
        self._texts(bundle)
        self.base_pen.setWidthF(min(link_width(bundle.bandwidth_Bps) / 3, 4.0))
        self.use_base_pen()
        self.setToolTip(f"bundle: {bundle.label}")
        self.setVisible(bundle.count > 0)

    def _texts(self, bundle: Bundle) -> None:
        fm, self._line_h = metrics(LABEL_FONT)
        per_dir = bundle.label.split(", ", 1)[1]
        self.texts = [(text, fm.horizontalAdvance(text) + 8)
                      for text in (f"x{bundle.count:,}  {per_dir}", f"x{bundle.count:,}  {_bw_text(bundle.bandwidth_Bps)}/dir",
                                   f"x{bundle.count:,}")]
        self.widths = [w for _text, w in self.texts]

    def update_path(self) -> None:
        ra, rb = self.a.sceneBoundingRect(), self.b.sceneBoundingRect()
        pa, pb = self.a.scenePos(), self.b.scenePos()
        # from the facing edges: bottom of the upper block to the top of the lower one
        if abs(pa.y() - pb.y()) > 1:
            up, down = (ra, rb) if pa.y() < pb.y() else (rb, ra)
            pa, pb = QPointF(up.center().x(), up.bottom() - 2), QPointF(down.center().x(), down.top() + 2)
        self.line = QLineF(pa, pb)
        self.line_rect = QRectF(pa, pb).normalized().adjusted(-1, -1, 1, 1)
        r = self.line_rect
        self.line_box = (r.x(), r.y(), r.width(), r.height())   # (the numbers place_bundle_labels reads)
        self.ends = (pa.x(), pa.y(), pb.x(), pb.y())
        path = QPainterPath(pa)
        path.lineTo(pb)
        self.set_line(path)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setPen(self.drawn_pen())   # the label comes on top, see LevelOfDetail.draw_labels
        painter.drawLine(self.line)

    def place_label(self, t, taken: Taken, form: int) -> tuple[QRectF, str] | None:
        """Where the count and bandwidth per direction go on screen (transform ``t``), at a readable
        size, covering no block and no other label (``taken``: what is already there); None if nowhere.
        ``form``: which of its texts (every label of a view takes one form, see ``one_form``)."""
        a, b = self.line.p1(), self.line.p2()
        sa, sb = t.map(a), t.map(b)
        length = ((sa.x() - sb.x()) ** 2 + (sa.y() - sb.y()) ** 2) ** 0.5
        if length < 40:
            return None
        # on the lower part, where bundles from one block fan apart; the text if it fits along the
        # line without covering a block or another label
        mid = t.map(a + (b - a) * (0.7 if a.y() < b.y() else 0.3))
        line_h = self._line_h
        text, w = self.texts[form]
        if w > length * 0.9:
            return None
        box = QRectF(mid.x() - w / 2, mid.y() - line_h / 2 - 1, w, line_h + 2)
        return (box, text) if taken.claim(box) else None

    def boundingRect(self) -> QRectF:
        return QGraphicsPathItem.boundingRect(self).adjusted(-60, -12, 60, 12)


def _meets(r, left: float, top: float, right: float, bottom: float):
    """Which rectangles (rows of x, y, width, height; none empty or flipped) overlap the given box,
    as QRectF.intersects decides: touching is not overlapping."""
    return (r[:, 0] < right) & (left < r[:, 0] + r[:, 2]) & (r[:, 1] < bottom) & (top < r[:, 1] + r[:, 3])


BUNDLE_FORMS = 3   # a bundle's texts: count and bandwidth per direction, count and bandwidth "/dir", count


def one_form(place) -> list:
    """Every bundle label of a view in one form: the longest form (``place(k)``: the labels placed with
    text k alone) that labels as many bundles as the shortest does. The SuperPOD presets at fit read
    "x256  12.8 TB/s per direction", "x256" and "x256  12.8 TB/s/dir" side by side, each bundle taking
    the longest of its texts that fitted where the labels before it had left room."""
    most = place(BUNDLE_FORMS - 1)
    for k in range(BUNDLE_FORMS - 1):
        got = place(k)
        if len(got) >= len(most):
            return got
    return most


def place_bundle_labels(t, area: QRectF, blocks, bundles) -> list:
    """Every bundle's label placed as ``BundleItem.place_label`` places them one by one, for a view
    that only scales and shifts (``t``, positive scales): each closed block in ``area`` covers its
    part of the screen, then each bundle in turn takes its text of the view's one form (``one_form``)
    where it fits along its line and covers no block and no label placed before. The spots and which blocks
    cover them are worked out for all bundles at once, with the same arithmetic (a 1,000-system
    tree's zoom frame placed 117 labels past 100 blocks one check at a time: about 5 ms).
    Returns (bundle item, box on screen, text)."""
    sx, sy, dx, dy = t.m11(), t.m22(), t.dx(), t.dy()
    screen = t.mapRect(area)
    s_l, s_t = screen.left(), screen.top()
    s_r, s_b = s_l + screen.width(), s_t + screen.height()
    a_l, a_t = area.x(), area.y()
    a_r, a_b = a_l + area.width(), a_t + area.height()
    r = np.array([b.scene_box for b in blocks if not b.open], dtype=float).reshape(-1, 4)
    r = r[_meets(r, a_l, a_t, a_r, a_b)]   # as QRectF.intersects decides
    # each block's screen rectangle clipped to the screen, as QRectF.intersected computes it
    x, y, w, h = sx * r[:, 0] + dx, sy * r[:, 1] + dy, sx * r[:, 2], sy * r[:, 3]
    bl, bt = np.maximum(x, s_l), np.maximum(y, s_t)
    br, bb = bl + (np.minimum(x + w, s_r) - bl), bt + (np.minimum(y + h, s_b) - bt)
    keep = (w != 0) & (h != 0) & (x < s_r) & (s_l < x + w) & (y < s_b) & (s_t < y + h) & (bl < br) & (bt < bb)
    bl, bt, br, bb = bl[keep], bt[keep], br[keep], bb[keep]
    items = [b for b in bundles if b.count]
    if not items:
        return []
    near = _meets(np.array([b.line_box for b in items], dtype=float), a_l, a_t, a_r, a_b).tolist()
    items = [b for b, n in zip(items, near) if n]
    if not items:
        return []
    ends = np.array([b.ends for b in items], dtype=float)
    ax, ay, bx, by = ends[:, 0], ends[:, 1], ends[:, 2], ends[:, 3]
    sax, say, sbx, sby = sx * ax + dx, sy * ay + dy, sx * bx + dx, sy * by + dy
    length = np.power((sax - sbx) ** 2 + (say - sby) ** 2, 0.5)
    f = np.where(ay < by, 0.7, 0.3)
    mx, my = sx * (ax + (bx - ax) * f) + dx, sy * (ay + (by - ay) * f) + dy
    widths = np.array([b.widths for b in items], dtype=float)
    line_h = np.array([b._line_h for b in items], dtype=float)
    left = mx[:, None] - widths / 2
    top = (my - line_h / 2 - 1)[:, None]
    height = (line_h + 2)[:, None]
    right, bottom = left + widths, top + height
    usable = (length >= 40)[:, None] & ~(widths > (length * 0.9)[:, None])
    covered = ((left[..., None] < br) & (bl < right[..., None]) & (top[..., None] < bb) & (bt < bottom[..., None])).any(axis=2)
    free = (usable & ~covered).tolist()
    left, right, top, bottom, widths = left.tolist(), right.tolist(), top[:, 0].tolist(), bottom[:, 0].tolist(), widths.tolist()
    heights = height[:, 0].tolist()

    def place(k: int) -> list:
        claim = Taken().claim_box
        out = []
        for i, item in enumerate(items):
            if free[i][k] and claim(left[i][k], top[i], right[i][k], bottom[i]):
                out.append((item, QRectF(left[i][k], top[i], widths[i][k], heights[i]), item.texts[k][0]))
        return out

    return one_form(place)


class SystemBoxItem(GroupItem):
    """A system drawn inside an open block: the collapsed system box, scaled to its cell."""

    def __init__(self, scene: "TopologyScene", lod: "LevelOfDetail", system_id: str):
        QGraphicsItem.__init__(self)
        self.canvas = scene
        self.lod = lod
        self.group_id = system_id
        self.collapsed = True
        self.frame = QRectF()
        self.fill = None
        self.open = False
        self._told = False   # this drag's status message given
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(3)
        self.recount()

    def recount(self) -> None:
        """Name and counts from the document (after an edit inside the system)."""
        g = self.canvas.topology.groups.get(self.group_id)
        ov = self.lod.overview
        if g is None:
            return
        self.title = g.name
        self._title_label = None   # fitted when first drawn large enough to read
        self._open_title: ScreenText | None = None
        self.summary = f"{counted(ov.system_gpus[self.group_id], 'GPU')}, {counted(len(ov.system_devices[self.group_id]), 'device')}"
        self.setToolTip(f"{g.name} ({g.kind}, {g.id}): {self.summary}\nZoom in or double-click to see its devices")
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self.open:
            selected = self.isSelected()
            painter.setPen(QPen(SELECTED if selected else QColor("#808080"), 0, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(-self.BOX_W / 2, -self.BOX_H / 2, self.BOX_W, self.BOX_H))
            if self._open_title is None:
                self._open_title = ScreenText([(f"{self.title}  ({self.summary})|{self.title}", LABEL_BOLD)])
            self._open_title.draw(painter, QRectF(-self.BOX_W / 2, -self.BOX_H / 2, self.BOX_W, self.BOX_H * 0.12))
            return
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod * self.BOX_W < 40:   # a few pixels: the box alone
            painter.setPen(QPen(QColor("#404040"), 0))
            painter.setBrush(self.fill or QColor("#f2f2f2"))
            painter.drawRect(QRectF(-self.BOX_W / 2, -self.BOX_H / 2, self.BOX_W, self.BOX_H))
            return
        super().paint(painter, option, widget)

    def mousePressEvent(self, event) -> None:
        if not self.open and self.toggle_rect().contains(event.pos()):   # its '+': open it in view
            self.lod.zoom_later(self.sceneBoundingRect())
            event.accept()
            return
        self._told = False
        QGraphicsItem.mousePressEvent(self, event)

    def mouseMoveEvent(self, event) -> None:
        """A drag moves nothing here (the overview places systems): the status bar says so, once a drag."""
        if not self._told and (event.screenPos() - event.buttonDownScreenPos(Qt.MouseButton.LeftButton)
                               ).manhattanLength() >= QApplication.startDragDistance():
            self._told = True
            self.canvas.statusMessage.emit(SYSTEM_BOX_STAYS)
        QGraphicsItem.mouseMoveEvent(self, event)

    def itemChange(self, change, value):
        return QGraphicsItem.itemChange(self, change, value)
