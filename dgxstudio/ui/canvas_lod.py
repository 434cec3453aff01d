"""Level of detail for large clusters: the canvas draws what a person can see at the current zoom.

At fit a cluster is its structure (see cluster_overview): blocks of systems and switches in tier rows,
one bundle per pair of blocks. Zooming in (or double-clicking) opens a block that fills enough of the
screen into its systems and switches, drawn inside the block; zooming further opens a system into its
devices and internal links. Only what intersects the visible area is opened; what leaves the view or
gets too small on screen is closed again, so the item count follows the screen, not the cluster.

In the overview, positions are the overview's own: a system's devices are drawn at their document
positions scaled into the system's box, a block's switches on a grid. Devices drawn there are dragged
like on a small design, as undoable moves in document units; edits change only the blocks, bundles
and open systems they touch (canvas_lod_sync). The drawn items are in canvas_lod_items.
"""

from __future__ import annotations

import time

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, QTimer
from PySide6.QtGui import QPainter, QPainterPath, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem
from shiboken6 import isValid

from .canvas_items import DeviceItem, GroupItem
from .canvas_lod_items import BlockItem, BundleItem, SystemBoxItem, TierLabel, _forms, one_form, place_bundle_labels  # noqa: F401  (importable from here)
from .canvas_text import LABEL_BOLD, LABEL_FONT, Taken, draw_placed, metrics, need_key
from ..analysis.cluster_overview import BLOCK_W, GAP_X, TIER_GAP, Block, Bundle, Overview, grid
from .style import FAMILY_COLORS

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
class LevelOfDetail:
    """Builds the overview on a scene and opens or closes blocks and systems as the view moves."""

    def __init__(self, scene: "TopologyScene", overview: Overview):
        self.scene = scene
        self.overview = overview
        self.block_items: dict[str, BlockItem] = {}
        self.tier_labels: dict[str, TierLabel] = {}   # row name -> its label
        self.bundle_items: list[BundleItem] = []
        self.open_blocks: dict[str, list[QGraphicsItem]] = {}     # block -> its member items
        self.system_items: dict[str, SystemBoxItem] = {}
        self.open_systems: dict[str, list[QGraphicsItem]] = {}    # system -> device items and its links
        self.system_links: dict[str, tuple[QGraphicsPathItem, dict[str, tuple[str, str]]]] = {}   # open system -> its inside links
        self.devices = set(scene.topology.devices)   # what the overview counts (see canvas_lod_sync)
        self.base_positions: dict[str, tuple[float, float]] = {}   # a switch's document position when first opened
        self.system_maps: dict[str, tuple[QPointF, tuple[float, float], float]] = {}   # system opened -> where its document origin is drawn, and the scale
        self.links = dict(scene.topology.links)   # what the overview counts: id -> link (a deleted one's ends are read here)
        self.version = 0   # counts openings and closings: what is drawn for a device changed (a replay looks again)
        self._label_key: tuple | None = None
        self._labels: list = []
        self._last_scale: float | None = None
        self._settle = QTimer()   # zooming out: what comes into view opens once the zoom rests
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle_view = None
        self._settle.timeout.connect(self._settled)

    def _settled(self) -> None:
        view = self._settle_view
        if view is not None and isValid(view) and isValid(self.scene) and self.scene.lod is self:
            self.update(view)

    def dispose(self) -> None:
        """The scene is rebuilt or closed: nothing may open later on its behalf."""
        self._settle.stop()
        self._settle_view = None

    # ---- building ---------------------------------------------------------------------------------
    def build(self) -> None:
        scene = self.scene
        self.form_needs = {}   # tier -> form -> the width its kind of form needs in every block of the tier
        for tier in {b.tier for b in self.overview.blocks.values()}:
            self.measure_forms(tier)
        for bid, block in self.overview.blocks.items():
            item = BlockItem(self, block)
            scene.addItem(item)
            self.block_items[bid] = item
        for row in self.overview.tier_rows:   # the row names, left of each tier
            self.add_tier_label(row)
        for bundle in self.overview.bundles:
            self.add_bundle(bundle)
        # the document's device -> links index, which every device item opened reads for its port
        # counts: built now, with the overview, or the first block opened pays for the whole
        # cluster's (0.3-0.5 s at 2,048 systems) in one zoom frame
        scene.topology.links_of("")

    def measure_forms(self, tier: int) -> None:
        """The width each form of a block's name and summary needs, the widest of its tier's (so the
        blocks of a row show the same form)."""
        forms = [_forms(b) for b in self.overview.blocks.values() if b.tier == tier]
        need = self.form_needs[tier] = {}
        for line in range(len(forms[0])):
            for k, (_f, font) in enumerate(forms[0][line]):
                fm, _h = metrics(font)
                kinds = [f[line][k][0] for f in forms]
                for i in range(max(len(f) for f in kinds)):
                    widest = max(fm.horizontalAdvance(f[i]) for f in kinds if i < len(f))
                    for f in kinds:
                        if i < len(f):
                            key = need_key(f[i], font)
                            need[key] = max(need.get(key, 0.0), widest)

    def add_tier_label(self, row: tuple[str, float, float]) -> None:
        """A row's name, left of its row (every row starts at x = 0: see cluster_overview._layout)."""
        name, top, height = row
        label = TierLabel(name, QRectF(-LABEL_MARGIN - 20, top - TIER_GAP / 2 + 1, LABEL_MARGIN, height + TIER_GAP - 2))
        self.scene.addItem(label)
        self.tier_labels[name] = label

    def add_block(self, block: Block) -> BlockItem:
        """A block the overview gained (the 'Not connected' row's, with its row name)."""
        item = self.block_items[block.id] = BlockItem(self, block)
        self.scene.addItem(item)
        self.add_tier_label(next(row for row in self.overview.tier_rows if row[1] == block.rect[1]))
        return item

    def remove_block(self, block: Block, row: str) -> None:
        """A block the overview lost (the 'Not connected' row's last device went), with its row name."""
        item = self.block_items.pop(block.id)
        if block.id in self.open_blocks:
            self._close_block(item)
        self.scene.removeItem(item)
        self.form_needs.pop(block.tier, None)
        label = self.tier_labels.pop(row, None)
        if label is not None:
            self.scene.removeItem(label)

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
        if t.type().value <= QTransform.TransformationType.TxScale.value and t.m11() > 0 and t.m22() > 0:
            return place_bundle_labels(t, area, self.block_items.values(), self.bundle_items)
        return self.place_labels_each(t, area)

    def place_labels_each(self, t, area: QRectF) -> list:
        """Bundle labels placed one at a time, for any transform (``place_bundle_labels`` gives the
        same for the canvas's views, all at once)."""
        screen = t.mapRect(area)
        shown = [t.mapRect(b.scene_rect).intersected(screen) for b in self.block_items.values()
                 if not b.open and b.scene_rect.intersects(area)]   # closed blocks; an open one frames its members
        items = [item for item in self.bundle_items if item.line_rect.intersects(area) and item.count]

        def place(form: int) -> list:
            taken = Taken()
            for r in shown:
                taken.claim(r, force=True)
            out = []
            for item in items:
                placed = item.place_label(t, taken, form)
                if placed is not None:
                    out.append((item, *placed))
            return out

        return one_form(place)

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
        before = self.version
        try:
            self._follow(view)
        finally:
            if self.version != before:
                self.scene.detailChanged.emit()

    def _follow(self, view) -> None:
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
        self.version += 1
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
        self.version += 1
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
        self.version += 1
        for i in ids:
            item = self.scene.device_items.get(i)
            if item is not None and getattr(item, "doc_map", None) is not None:
                self._place(item)

    def device_moved(self, item: DeviceItem) -> None:
        """A device is being dragged: the links inside its open system follow it."""
        self.version += 1
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
        self.version += 1
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
        self.version += 1
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
