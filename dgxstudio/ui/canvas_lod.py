"""Level of detail for large clusters: the canvas draws what a person can see at the current zoom.

At fit a cluster is its structure (see cluster_overview): blocks of systems and switches in tier rows,
one bundle per pair of blocks. Zooming in (or double-clicking) opens a block that fills enough of the
screen into its systems and switches, drawn inside the block; zooming further opens a system into its
devices and internal links. Only what intersects the visible area is opened; what leaves the view or
gets too small on screen is closed again, so the item count follows the screen, not the cluster.

In the overview, positions are the overview's own (the document's layout is left untouched): items
are selectable and inspectable but not dragged.
"""

from __future__ import annotations

import time

from typing import TYPE_CHECKING

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem
from shiboken6 import isValid

from .canvas_items import SELECTED, DeviceItem, GroupItem, LinkItem
from .canvas_text import LABEL_BOLD, LABEL_FONT, LABEL_SMALL, ScreenText, Taken, draw_placed, metrics
from .cluster_overview import BLOCK_W, GAP_X, TIER_GAP, Block, Bundle, Overview, grid
from .cluster_overview import _bw as _bw_text
from .style import FAMILY_COLORS, link_width

if TYPE_CHECKING:
    from .canvas import TopologyScene

OPEN_BLOCK_PX = 420.0     # a block opens into its members when drawn at least this wide on screen
OPEN_SYSTEM_PX = 300.0    # a system box opens into its devices at this width on screen
OPEN_BUDGET_S = 0.006     # opening work per turn of the event loop (the first opening always happens)
OPEN_BUDGET_ITEMS = 24    # and new items per turn: each is painted for the first time in that frame too
NEXT_TURN_MS = 25         # opening that goes on waits this long, so the frame in between is drawn first
SETTLE_MS = 150           # zooming out: opening waits until the zoom has rested this long
MAX_ZOOM = 400.0          # deep enough to read one device inside a system inside a block
LABEL_MARGIN = 700.0       # scene units left of the blocks for the tier names
TITLE = 0.16              # share of a block's height its title takes when open
TIER_FILL = {0: QColor("#eef3fb"), 1: QColor("#f3f0e6"), 2: QColor("#efe8f5"), 3: QColor("#e8f2ec")}
_EDGE_PEN = QPen(QColor("#404040"), 0)
_OPEN_PEN = QPen(QColor("#606060"), 0, Qt.PenStyle.DashLine)
_TITLE_FILL = QColor(230, 230, 230, 220)


def _forms(block: Block) -> tuple[list[str], list[str]]:
    """A closed block's name and summary, each longest first (a number is never elided: a block
    whose shortest name does not fit shows none)."""
    short = block.short.split("|")[0]
    return [block.label, short, short.replace(" ", "")], [block.summary, *_shorter(block)]


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
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # pan and replay frames reuse it (see zooming)
        self.open = False
        self.fill: QColor | None = None
        self._text: ScreenText | None = None    # laid out when first drawn
        self._title: ScreenText | None = None
        self._tier_fill = QBrush(TIER_FILL.get(block.tier, QColor("#f2f2f2")))
        self.scene_rect = self.rect.translated(self.pos())   # blocks never move
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
            self._text = ScreenText([("|".join(f), font) for f, font in zip(_forms(self.block), (LABEL_BOLD, LABEL_FONT))],
                                    inset=1.0, elide=False, needs=self.lod.form_needs.get(self.block.tier))
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
        self.setPen(self.base_pen)

    def recount(self) -> None:
        """The bundle's links changed (an edit): its count, bandwidth and label; hidden while empty."""
        bundle = self.info
        self.link_ids = bundle.link_ids
        self.count = bundle.count
        for lid in bundle.link_ids:
            self.a.scene().items_by_link[lid] = self
        self._texts(bundle)
        self.base_pen.setWidthF(min(link_width(bundle.bandwidth_Bps) / 3, 4.0))
        self._overlay_key = None
        self.setPen(self.base_pen)
        self.setToolTip(f"bundle: {bundle.label}")
        self.setVisible(bundle.count > 0)

    def _texts(self, bundle: Bundle) -> None:
        fm, self._line_h = metrics(LABEL_FONT)
        per_dir = bundle.label.split(", ", 1)[1]
        self.texts = [(text, fm.horizontalAdvance(text) + 8)
                      for text in (f"x{bundle.count:,}  {per_dir}", f"x{bundle.count:,}  {_bw_text(bundle.bandwidth_Bps)}/dir",
                                   f"x{bundle.count:,}")]

    def update_path(self) -> None:
        ra, rb = self.a.sceneBoundingRect(), self.b.sceneBoundingRect()
        pa, pb = self.a.scenePos(), self.b.scenePos()
        # from the facing edges: bottom of the upper block to the top of the lower one
        if abs(pa.y() - pb.y()) > 1:
            up, down = (ra, rb) if pa.y() < pb.y() else (rb, ra)
            pa, pb = QPointF(up.center().x(), up.bottom() - 2), QPointF(down.center().x(), down.top() + 2)
        self.line = QLineF(pa, pb)
        self.line_rect = QRectF(pa, pb).normalized().adjusted(-1, -1, 1, 1)
        path = QPainterPath(pa)
        path.lineTo(pb)
        self.setPath(path)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setPen(self.pen())   # the label comes on top, see LevelOfDetail.draw_labels
        painter.drawLine(self.line)

    def place_label(self, t, taken: Taken) -> tuple[QRectF, str] | None:
        """Where the count and bandwidth per direction go on screen (transform ``t``), at a readable
        size, covering no block and no other label (``taken``: what is already there); None if nowhere."""
        a, b = self.line.p1(), self.line.p2()
        sa, sb = t.map(a), t.map(b)
        length = ((sa.x() - sb.x()) ** 2 + (sa.y() - sb.y()) ** 2) ** 0.5
        if length < 40:
            return None
        # on the lower part, where bundles from one block fan apart; the longest text that fits along
        # the line without covering a block or another label
        mid = t.map(a + (b - a) * (0.7 if a.y() < b.y() else 0.3))
        line_h = self._line_h
        for text, w in self.texts:
            if w > length * 0.9:
                continue
            box = QRectF(mid.x() - w / 2, mid.y() - line_h / 2 - 1, w, line_h + 2)
            if taken.claim(box):
                return box, text
        return None

    def boundingRect(self) -> QRectF:
        return QGraphicsPathItem.boundingRect(self).adjusted(-60, -12, 60, 12)


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
        self.summary = f"{ov.system_gpus[self.group_id]} GPUs, {len(ov.system_devices[self.group_id])} devices"
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
        QGraphicsItem.mousePressEvent(self, event)

    def itemChange(self, change, value):
        return QGraphicsItem.itemChange(self, change, value)


class LevelOfDetail:
    """Builds the overview on a scene and opens or closes blocks and systems as the view moves."""

    def __init__(self, scene: "TopologyScene", overview: Overview):
        self.scene = scene
        self.overview = overview
        self.block_items: dict[str, BlockItem] = {}
        self.bundle_items: list[BundleItem] = []
        self.open_blocks: dict[str, list[QGraphicsItem]] = {}     # block -> its member items
        self.system_items: dict[str, SystemBoxItem] = {}
        self.open_systems: dict[str, list[QGraphicsItem]] = {}    # system -> device items and its links
        self.system_links: dict[str, tuple[QGraphicsPathItem, dict[str, tuple[str, str]]]] = {}   # open system -> its inside links
        self.devices = set(scene.topology.devices)   # what the overview counts (see canvas_lod_sync)
        self.base_positions: dict[str, tuple[float, float]] = {}   # a switch's document position when first opened
        self.system_maps: dict[str, tuple[QPointF, tuple[float, float], float]] = {}   # system opened -> where its document origin is drawn, and the scale
        self.links = set(scene.topology.links)
        self._label_key: tuple | None = None
        self._labels: list = []
        self._last_scale: float | None = None
        self._settle = QTimer()   # zooming out: what comes into view opens once the zoom rests
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle_view = None
        self._settle.timeout.connect(self._settled)
        self._cached = True   # blocks keep a picture of themselves while the zoom rests
        self._recache = QTimer()
        self._recache.setSingleShot(True)
        self._recache.setInterval(SETTLE_MS)
        self._recache.timeout.connect(lambda: self._cache_blocks(True))

    def _cache_blocks(self, on: bool) -> None:
        """While the view zooms, blocks draw straight to the screen: a cached block would be rendered
        into a new picture at every zoom step before being drawn (145 of them at fit on 2,048 systems,
        the zoom frames' largest cost); once the zoom rests they keep one again for pans and replay."""
        if on == self._cached or not isValid(self.scene):
            return
        self._cached = on
        mode = QGraphicsItem.CacheMode.DeviceCoordinateCache if on else QGraphicsItem.CacheMode.NoCache
        for item in self.block_items.values():
            item.setCacheMode(mode)

    def _settled(self) -> None:
        view = self._settle_view
        if view is not None and isValid(view) and isValid(self.scene) and self.scene.lod is self:
            self.update(view)

    def dispose(self) -> None:
        """The scene is rebuilt or closed: nothing may open later on its behalf."""
        self._settle.stop()
        self._recache.stop()
        self._settle_view = None

    # ---- building ---------------------------------------------------------------------------------
    def build(self) -> None:
        scene = self.scene
        self.form_needs = {}   # tier -> form -> the width its kind of form needs in every block of the tier
        for tier in {b.tier for b in self.overview.blocks.values()}:
            blocks = [b for b in self.overview.blocks.values() if b.tier == tier]
            need = self.form_needs.setdefault(tier, {})
            for k, font in enumerate((LABEL_BOLD, LABEL_FONT)):
                fm, _h = metrics(font)
                kinds = [_forms(b)[k] for b in blocks]
                for i in range(max(len(f) for f in kinds)):
                    widest = max(fm.horizontalAdvance(f[i]) for f in kinds if i < len(f))
                    for f in kinds:
                        if i < len(f):
                            need[f[i]] = max(need.get(f[i], 0.0), widest)
        for bid, block in self.overview.blocks.items():
            item = BlockItem(self, block)
            scene.addItem(item)
            self.block_items[bid] = item
        left = min(b.rect[0] for b in self.overview.blocks.values())
        for name, top, height in self.overview.tier_rows:   # the row names, left of each tier
            label = TierLabel(name, QRectF(left - LABEL_MARGIN - 20, top - TIER_GAP / 2 + 1, LABEL_MARGIN, height + TIER_GAP - 2))
            scene.addItem(label)
        for bundle in self.overview.bundles:
            self.add_bundle(bundle)
        # the document's device -> links index, which every device item opened reads for its port
        # counts: built now, with the overview, or the first block opened pays for the whole
        # cluster's (0.3-0.5 s at 2,048 systems) in one zoom frame
        scene.topology.links_of("")

    def add_bundle(self, bundle: Bundle) -> "BundleItem":
        item = BundleItem(self.block_items[bundle.a], self.block_items[bundle.b], bundle)
        self.scene._add_link_item(item)
        self.bundle_items.append(item)
        return item

    def draw_labels(self, painter: QPainter, exposed: QRectF) -> None:
        """Bundle labels over everything, around the blocks and each other."""
        t = painter.worldTransform()
        if t.m11() * (BLOCK_W + GAP_X) < 30:   # a thumbnail (the overview dock): no label would fit
            return
        key = (t.m11(), t.m22(), t.dx(), t.dy(), frozenset(self.open_blocks))
        if key != self._label_key:   # placed once per view position; replay frames only redraw them
            self._label_key, self._labels = key, self._place_labels(t)
        draw_placed(painter, exposed, self._labels)

    def _place_labels(self, t) -> list:
        seen = next(iter(self.scene.views()), None)
        area = t.inverted()[0].mapRect(QRectF(seen.viewport().rect())) if seen is not None else self.scene.sceneRect()
        taken = Taken()
        screen = t.mapRect(area)
        for b in self.block_items.values():   # closed blocks; an open one is a frame around its members
            r = b.scene_rect
            if not b.open and r.intersects(area):
                taken.claim(t.mapRect(r).intersected(screen), force=True)
        out = []
        for item in self.bundle_items:
            if item.line_rect.intersects(area) and item.count:
                placed = item.place_label(t, taken)
                if placed is not None:
                    out.append((item, *placed))
        return out

    def item_for(self, obj_id: str) -> QGraphicsItem | None:
        """The most detailed item showing a device, system or switch right now."""
        ov = self.overview
        item = self.scene.device_items.get(obj_id)
        if item is not None:
            return item
        system = ov.system_of.get(obj_id, obj_id)
        item = self.system_items.get(system)
        if item is not None:
            return item
        bid = ov.block_of.get(system)
        return self.block_items.get(bid) if bid is not None else None

    # ---- following the view -----------------------------------------------------------------------
    def update(self, view) -> None:
        """Open what is visible and large enough on screen; close what is not. Openings go nearest to
        the centre of the view first and stop after OPEN_BUDGET_S; the rest follow on the next turn of
        the event loop, so one frame never pays for a whole screen of new items."""
        visible = view.mapToScene(view.viewport().rect()).boundingRect()
        centre = visible.center()
        scale = view.transform().m11()
        todo = []
        for bid, item in self.block_items.items():
            rect = item.sceneBoundingRect()
            want = rect.intersects(visible) and rect.width() * scale >= OPEN_BLOCK_PX
            if want and bid not in self.open_blocks:
                todo.append((0, rect, item))
            elif not want and bid in self.open_blocks:
                self._close_block(item)
        for sid, item in list(self.system_items.items()):
            rect = item.sceneBoundingRect()
            want = rect.intersects(visible) and rect.width() * scale >= OPEN_SYSTEM_PX
            if want and sid not in self.open_systems:
                todo.append((1, rect, item))
            elif not want and sid in self.open_systems:
                self._close_system(item)
        zooming_out = self._last_scale is not None and scale < self._last_scale * 0.999
        if self._last_scale is not None and scale != self._last_scale:
            self._cache_blocks(False)
            self._recache.start()
        self._last_scale = scale
        if zooming_out and todo:   # on the way out, blocks open only where the zoom stops
            self._settle_view = view
            self._settle.start()
            return
        todo.sort(key=lambda t: (t[0], (t[1].center() - centre).manhattanLength()))
        start = time.perf_counter()
        made = 0
        for k, (_level, _rect, item) in enumerate(todo):
            if k and (time.perf_counter() - start > OPEN_BUDGET_S or made >= OPEN_BUDGET_ITEMS):
                self.scene.view_changed(view, NEXT_TURN_MS)   # the rest after this frame is drawn
                break
            made += len(item.block.members) if isinstance(item, BlockItem) else len(self.overview.system_devices[item.group_id])
            if isinstance(item, BlockItem):
                self._open_block(item)
                self.scene.view_changed(view, NEXT_TURN_MS)   # its systems may be large enough to open in turn
            else:
                self._open_system(item)

    def reveal(self, obj_id: str) -> QGraphicsItem | None:
        """Open the block and the system holding a device (or a system, or a switch) with the view on
        it, so a found or clicked-for item is drawn; returns its item (or the closest one drawn)."""
        for _ in range(3):   # block, then system, then the device itself
            item = self.item_for(obj_id)
            if item is None or item is self.scene.device_items.get(obj_id) or (
                    isinstance(item, SystemBoxItem) and item.group_id == obj_id):
                break
            self.zoom_to(item.sceneBoundingRect())
        item = self.item_for(obj_id)
        if item is not None:
            for view in self.scene.views()[:1]:
                view.centerOn(item)
                self.update(view)
        return item

    def open_at(self, scene_pos: QPointF) -> bool:
        """Double-click: the innermost closed system or block under the pointer opens, in view."""
        for item in self.scene.items(scene_pos):
            if isinstance(item, (SystemBoxItem, BlockItem)) and not item.open:
                self.zoom_later(item.sceneBoundingRect())
                return True
        return False

    def zoom_later(self, rect: QRectF) -> None:
        """zoom_to once the mouse event that asked for it is over (the view moves under the pointer)."""
        def later():
            grabber = self.scene.mouseGrabberItem()
            if grabber is not None:   # the double-click's item keeps the mouse otherwise
                grabber.ungrabMouse()
            if self.scene.lod is self:
                self.zoom_to(rect)
        QTimer.singleShot(0, later)

    def zoom_to(self, rect: QRectF) -> None:
        """Bring a block or system into view, large enough to open it, centred."""
        for view in self.scene.views()[:1]:
            vp = view.viewport().rect()
            fit = min(vp.width() / (rect.width() * 1.15), vp.height() / (rect.height() * 1.15))
            need = max(OPEN_BLOCK_PX, OPEN_SYSTEM_PX) * 1.05 / rect.width()
            target = min(max(fit, need), MAX_ZOOM)
            view.zoom(target / view.transform().m11())
            view.centerOn(rect.center())
            self.update(view)

    # ---- opening and closing ----------------------------------------------------------------------
    def _open_block(self, item: BlockItem) -> None:
        scene, block = self.scene, item.block
        inner = item.inner()
        items: list[QGraphicsItem] = []
        if block.tier == 0:
            cw, ch = GroupItem.BOX_W + 30, GroupItem.BOX_H + 20
        else:
            cw, ch = DeviceItem.W + 40, DeviceItem.H + 20
        cols, s = grid(len(block.members), inner.width(), inner.height(), cw, ch)
        rows = -(-len(block.members) // cols)
        x0 = inner.center().x() - cols * cw * s / 2
        y0 = inner.center().y() - rows * ch * s / 2
        for i, member in enumerate(block.members):
            r, c = divmod(i, cols)
            at = QPointF(x0 + (c + 0.5) * cw * s, y0 + (r + 0.5) * ch * s)
            if block.tier == 0:
                child = SystemBoxItem(scene, self, member)
                self.system_items[member] = child
            else:   # a switch at its place in the grid, moved by as much as it was dragged since
                base = self.base_positions.setdefault(member, scene.topology.layout.positions.get(member, (0.0, 0.0)))
                child = self._device_item(member, at, base, s)
            child.setScale(s)
            child.setPos(at)
            scene.addItem(child)
            items.append(child)
            if isinstance(child, DeviceItem):
                self._place(child)
        item.open = True
        item.update()
        self.open_blocks[block.id] = items

    def _close_block(self, item: BlockItem) -> None:
        for child in self.open_blocks.pop(item.block.id, []):
            if isinstance(child, SystemBoxItem):
                self._close_system(child)
                self.system_items.pop(child.group_id, None)
            elif isinstance(child, DeviceItem):
                self.scene.device_items.pop(child.device_id, None)
            self.scene.removeItem(child)
        item.open = False
        item.update()

    def _device_item(self, device_id: str, origin: QPointF, doc_origin: tuple[float, float], s: float) -> DeviceItem:
        """A device drawn at ``origin + (its document position - doc_origin) * s``: dragging it moves
        it in the document by the drag divided by ``s`` (an undoable move, as on a small design)."""
        item = DeviceItem(self.scene, device_id)
        item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, False)   # on once placed
        item.doc_map = (origin, doc_origin, s)
        self.scene.device_items[device_id] = item
        return item

    def _place(self, item: DeviceItem) -> None:
        """Put a device where its document position maps to (after an undo or a redo of a move)."""
        origin, (ox, oy), s = item.doc_map
        x, y = self.scene.topology.layout.positions.get(item.device_id, (ox, oy))
        item.setPos(origin.x() + (x - ox) * s, origin.y() + (y - oy) * s)
        item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, True)

    def document_position(self, item: DeviceItem) -> tuple[float, float]:
        """Where a device drawn at its item's position is in the document's layout."""
        origin, (ox, oy), s = item.doc_map
        return (round(ox + (item.pos().x() - origin.x()) / s, 3), round(oy + (item.pos().y() - origin.y()) / s, 3))

    def open_system_at(self, pos: QPointF) -> str | None:
        """The open system drawn under a scene point (a part dropped there joins it)."""
        return next((sid for sid in self.open_systems if self.system_items[sid].sceneBoundingRect().contains(pos)), None)

    def to_document(self, system: str, pos: QPointF) -> tuple[float, float]:
        """A scene point inside an open system, in the document's layout."""
        origin, (ox, oy), s = self.system_maps[system]
        return (round(ox + (pos.x() - origin.x()) / s, 3), round(oy + (pos.y() - origin.y()) / s, 3))

    def moved(self, ids) -> None:
        """Devices moved in the document (a drag, an undo, a redo): their items follow."""
        for i in ids:
            item = self.scene.device_items.get(i)
            if item is not None and getattr(item, "doc_map", None) is not None:
                self._place(item)

    def device_moved(self, item: DeviceItem) -> None:
        """A device is being dragged: the links inside its open system follow it."""
        system = self.overview.system_of.get(item.device_id)
        drawn = self.system_links.get(system)
        if drawn is None:
            return
        path_item, ends = drawn
        items = self.scene.device_items
        path = QPainterPath()
        for a, b in ends.values():
            if a in items and b in items:
                path.moveTo(items[a].pos())
                path.lineTo(items[b].pos())
        path_item.setPath(path)

    def _open_system(self, box: SystemBoxItem) -> None:
        """The system's devices where the document draws them, scaled into the box, with the links
        between them as one path (links leaving the system are in the block's bundle)."""
        scene, topo = self.scene, self.scene.topology
        devices = self.overview.system_devices[box.group_id]
        pts = {d: topo.layout.positions.get(d, (0.0, 0.0)) for d in devices}
        if not pts:
            return
        if box.group_id in self.system_maps:   # opened before: drawn as then, so nothing shifts after an edit
            centre, (cx, cy), s = self.system_maps[box.group_id]
        else:   # the devices' extent fitted into the box
            xs = [p[0] for p in pts.values()]
            ys = [p[1] for p in pts.values()]
            bw = max(xs) - min(xs) + DeviceItem.W + 40
            bh = max(ys) - min(ys) + DeviceItem.H + 40
            box_rect = box.sceneBoundingRect().adjusted(2, 2, -2, -2)
            s = min(box_rect.width() / bw, box_rect.height() / bh)
            cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
            centre = box_rect.center()
        items: list[QGraphicsItem] = []
        at: dict[str, QPointF] = {}
        for d in devices:
            p = QPointF(centre.x() + (pts[d][0] - cx) * s, centre.y() + (pts[d][1] - cy) * s)
            at[d] = p
            child = self._device_item(d, centre, (cx, cy), s)
            child.setScale(s)
            child.setPos(p)
            child.setZValue(4)
            scene.addItem(child)
            child.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, True)
            items.append(child)
        members = set(devices)
        path = QPainterPath()
        ends: dict[str, tuple[str, str]] = {}
        for d in devices:
            for lk in topo.links_of(d):
                if lk.id in ends or lk.a not in members or lk.b not in members:
                    continue
                ends[lk.id] = (lk.a, lk.b)
                path.moveTo(at[lk.a])
                path.lineTo(at[lk.b])
        links = QGraphicsPathItem(path)
        links.setPen(QPen(FAMILY_COLORS.get("nvlink", FAMILY_COLORS[None]), 0))
        links.setZValue(3.5)
        links.setToolTip(f"{len(ends)} links inside {box.title}")
        scene.addItem(links)
        items.append(links)
        self.system_links[box.group_id] = (links, ends)
        self.system_maps[box.group_id] = (centre, (cx, cy), s)
        box.open = True
        box.update()
        self.open_systems[box.group_id] = items

    def _close_system(self, box: SystemBoxItem) -> None:
        self.system_links.pop(box.group_id, None)
        for child in self.open_systems.pop(box.group_id, []):
            if isinstance(child, DeviceItem):
                self.scene.device_items.pop(child.device_id, None)
            self.scene.removeItem(child)
        box.open = False
        box.update()

    def count(self) -> dict[str, int]:
        """What exists right now (for tests and the benchmark)."""
        return {"blocks": len(self.block_items), "bundles": len(self.bundle_items),
                "open_blocks": len(self.open_blocks), "systems": len(self.system_items),
                "open_systems": len(self.open_systems), "devices": len(self.scene.device_items),
                "items": len(self.scene.items())}
