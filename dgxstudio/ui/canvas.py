"""The topology canvas: devices, links and groups on a QGraphicsScene, edited through commands.

Items exist only for what is visible: the insides of a collapsed group get no items at all, and the
links from a collapsed group to the outside are drawn as one bundle with a count, so the cost of a
frame does not grow with hidden items. Positions come from the document's layout.
"""

from __future__ import annotations


from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsLineItem, QGraphicsPathItem, QGraphicsScene, QGraphicsView,
                               QStyle)

from ..model.builders import SYSTEM_BUILDERS, SYSTEM_LABELS
from ..model.catalog import KIND_LABELS
from ..model.clipboard import copy_selection, paste_command
from ..model.commands import AddItems, Move, SetCollapsed
from ..model.connect import propose_link
from ..model.layout import default_position, drawn_links, group_position, hidden_by_collapsed
from ..model.topology import Device, Topology
from .document import Document
from .style import FAMILY_COLORS, KIND_COLORS, icon_pixmap, link_width

MIME_PALETTE = "application/x-dgxstudio-palette"
SELECTED = QColor("#1e6fd9")
_FONT = QFont("Sans Serif", 8)
_FONT_BOLD = QFont("Sans Serif", 9, QFont.Weight.Bold)


class DeviceItem(QGraphicsItem):
    W, H = 112.0, 60.0
    HANDLE = 7.0

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
        self.ports = " ".join(f"{g.name} {used.get(g.name, 0)}/{g.count}" for g in part.ports) if part else "unknown part"
        self.setToolTip(f"{dev.name} ({dev.id})\n{part.label if part else dev.part}\n{self.ports}")
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(-self.W / 2 - 2, -self.H / 2 - 2, self.W + self.HANDLE * 2 + 4, self.H + 4)

    def handle_center(self) -> QPointF:
        return QPointF(self.W / 2 + self.HANDLE * 0.6, 0)

    def on_handle(self, scene_pos: QPointF) -> bool:
        p = self.mapFromScene(scene_pos) - self.handle_center()
        return p.x() ** 2 + p.y() ** 2 <= (self.HANDLE + 3) ** 2

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        color = KIND_COLORS.get(self.kind, QColor("#888"))
        rect = QRectF(-self.W / 2, -self.H / 2, self.W, self.H)
        painter.setPen(QPen(SELECTED if selected else color, 3 if selected else 1.5))
        painter.setBrush(QBrush(self.state_color or QColor("#ffffff")))
        if lod < 0.3:
            painter.drawRect(rect)
            return
        painter.drawRoundedRect(rect, 6, 6)
        painter.drawPixmap(int(-self.W / 2 + 4), int(-self.H / 2 + 4), icon_pixmap(self.kind, 28))
        painter.setPen(QColor("#1b1b1b"))
        painter.setFont(_FONT_BOLD)
        name_rect = QRectF(-self.W / 2 + 34, -self.H / 2 + 4, self.W - 38, 28)
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         painter.fontMetrics().elidedText(self.name, Qt.TextElideMode.ElideMiddle, int(name_rect.width())))
        if lod > 0.6:
            painter.setFont(_FONT)
            painter.setPen(QColor("#555555"))
            painter.drawText(QRectF(-self.W / 2 + 4, 2, self.W - 8, self.H / 2 - 4),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.ports)
        painter.setPen(QPen(color, 1.5))
        painter.setBrush(QBrush(QColor("#ffffff")))
        painter.drawEllipse(self.handle_center(), self.HANDLE, self.HANDLE)

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            self.canvas.item_moved(self)
        return super().itemChange(change, value)


class GroupItem(QGraphicsItem):
    """A group: a frame around its members when expanded, a box standing for them when collapsed."""

    BOX_W, BOX_H = 130.0, 64.0
    TITLE = 22.0

    def __init__(self, scene: "TopologyScene", group_id: str, collapsed: bool):
        super().__init__()
        self.canvas = scene
        self.group_id = group_id
        self.collapsed = collapsed
        self.frame = QRectF()
        self.fill: QColor | None = None
        flags = QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
        if collapsed:
            flags |= QGraphicsItem.GraphicsItemFlag.ItemIsMovable | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges
            self.setZValue(2)
        else:
            self.setZValue(-5)
        self.setFlags(flags)
        topo = scene.document.topology
        g = topo.groups[group_id]
        inside = topo.devices_in_group(group_id)
        self.title = g.name
        self.summary = f"{sum(topo.devices[d].kind == 'gpu' for d in inside)} GPUs, {len(inside)} devices"
        self.setToolTip(f"{g.name} ({g.kind}, {g.id}): {self.summary}\nDouble-click to {'expand' if collapsed else 'collapse'}")

    def set_frame(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self.frame = rect

    def boundingRect(self) -> QRectF:
        if self.collapsed:
            return QRectF(-self.BOX_W / 2 - 2, -self.BOX_H / 2 - 2, self.BOX_W + 4, self.BOX_H + 4)
        return self.frame.adjusted(-2, -self.TITLE - 2, 2, 2)

    def toggle_rect(self) -> QRectF:
        if self.collapsed:
            return QRectF(self.BOX_W / 2 - 20, -self.BOX_H / 2 + 2, 18, 18)
        return QRectF(self.frame.left() + 4, self.frame.top() - self.TITLE + 2, 18, 18)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        if self.collapsed:
            path.addRect(self.boundingRect())
        else:  # only the title bar picks the frame, so clicks inside reach the members
            path.addRect(QRectF(self.frame.left(), self.frame.top() - self.TITLE, self.frame.width(), self.TITLE))
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        pen = QPen(SELECTED if selected else QColor("#404040"), 2.5 if selected else 1.2)
        if self.collapsed:
            rect = QRectF(-self.BOX_W / 2, -self.BOX_H / 2, self.BOX_W, self.BOX_H)
            painter.setPen(pen)
            painter.setBrush(self.fill or QColor("#f2f2f2"))
            painter.drawRoundedRect(rect, 6, 6)
            painter.drawPixmap(int(rect.left() + 4), int(rect.top() + 6), icon_pixmap("system", 28))
            painter.setPen(QColor("#1b1b1b"))
            painter.setFont(_FONT_BOLD)
            painter.drawText(QRectF(rect.left() + 36, rect.top() + 4, rect.width() - 58, 28),
                             Qt.AlignmentFlag.AlignVCenter, self.title)
            painter.setFont(_FONT)
            painter.drawText(QRectF(rect.left() + 4, rect.top() + 36, rect.width() - 8, 24),
                             Qt.AlignmentFlag.AlignCenter, self.summary)
            painter.drawText(self.toggle_rect(), Qt.AlignmentFlag.AlignCenter, "+")
            return
        painter.setPen(QPen(pen.color(), pen.widthF(), Qt.PenStyle.DashLine))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self.frame, 8, 8)
        bar = QRectF(self.frame.left(), self.frame.top() - self.TITLE, self.frame.width(), self.TITLE)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(230, 230, 230, 220))
        painter.drawRect(bar)
        painter.setPen(QColor("#1b1b1b"))
        painter.setFont(_FONT_BOLD)
        painter.drawText(bar.adjusted(26, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, f"{self.title}  ({self.summary})")
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

    def __init__(self, a: QGraphicsItem, b: QGraphicsItem, link_ids: list[str], count: int, bandwidth: float,
                 family: str | None, bundle: bool, tooltip: str):
        super().__init__()
        self.a, self.b = a, b
        self.link_ids = link_ids
        self.count = count
        self.bundle = bundle
        self.family = family
        self.base_pen = QPen(FAMILY_COLORS.get(family, FAMILY_COLORS[None]), link_width(bandwidth))
        self.base_pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        if bundle:
            self.base_pen.setStyle(Qt.PenStyle.DashLine)
        self.setPen(self.base_pen)
        self.setZValue(0)
        self.setToolTip(tooltip)
        if not bundle:
            self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.update_path()

    def update_path(self) -> None:
        path = QPainterPath(self.a.scenePos())
        path.lineTo(self.b.scenePos())
        self.setPath(path)

    def set_overlay(self, color: QColor | None, width: float | None = None) -> None:
        key = (color.rgba(), width) if color is not None else None
        if key == getattr(self, "_overlay_key", None):
            return
        self._overlay_key = key
        if color is None:
            self.setPen(self.base_pen)
        else:
            pen = QPen(self.base_pen)
            pen.setColor(color)
            if width:
                pen.setWidthF(width)
            self.setPen(pen)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if option.state & QStyle.StateFlag.State_Selected:
            pen = QPen(self.pen())
            pen.setColor(SELECTED)
            painter.setPen(pen)
            painter.drawPath(self.path())
        else:
            super().paint(painter, option, widget)
        if self.count > 1 or self.bundle:
            lod = option.levelOfDetailFromTransform(painter.worldTransform())
            if lod > 0.4:
                mid = (self.a.scenePos() + self.b.scenePos()) / 2
                text = f"x{self.count}"
                painter.setFont(_FONT_BOLD)
                box = QRectF(mid.x() - 14, mid.y() - 9, 28, 18)
                painter.setPen(QPen(self.pen().color(), 1))
                painter.setBrush(QColor("#ffffff"))
                painter.drawRoundedRect(box, 4, 4)
                painter.setPen(QColor("#1b1b1b"))
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    def boundingRect(self) -> QRectF:
        return super().boundingRect().adjusted(-16, -12, 16, 12)


class TopologyScene(QGraphicsScene):
    statusMessage = Signal(str)
    rebuilt = Signal()

    def __init__(self, document: Document):
        super().__init__()
        self.document = document
        self.device_items: dict[str, DeviceItem] = {}
        self.group_items: dict[str, GroupItem] = {}
        self.link_items: list[LinkItem] = []
        self.items_by_link: dict[str, LinkItem] = {}
        self._links_at: dict[QGraphicsItem, list[LinkItem]] = {}
        self._press_positions: dict[str, tuple[float, float]] = {}
        self._syncing = False
        self._frames_pending = False
        self._hidden: dict[str, str] = {}
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setBackgroundBrush(QColor("#fbfbfb"))
        document.modelChanged.connect(self._on_model_event)
        document.topologyReplaced.connect(self.rebuild)
        self.rebuild()

    # ---- building -------------------------------------------------------------------------------
    @property
    def topology(self) -> Topology:
        return self.document.topology

    def rebuild(self) -> None:
        selected = self.selected_ids()
        self._syncing = True
        self.clear()
        self.device_items.clear()
        self.group_items.clear()
        self.link_items.clear()
        self.items_by_link.clear()
        self._links_at.clear()
        topo = self.topology
        hidden = self._hidden = hidden_by_collapsed(topo)
        visible_groups = set()
        for gid in topo.groups:
            # a group is drawn unless a collapsed ancestor hides it
            ancestors = [g.id for g in topo.group_chain(gid)[1:]]
            if any(a in topo.layout.collapsed for a in ancestors):
                continue
            visible_groups.add(gid)
        for i, dev in enumerate(topo.devices.values()):
            if dev.id in hidden:
                continue
            item = DeviceItem(self, dev.id)
            item.setPos(*topo.layout.positions.get(dev.id, default_position(i)))
            self.addItem(item)
            self.device_items[dev.id] = item
        for gid in visible_groups:
            collapsed = gid in topo.layout.collapsed
            item = GroupItem(self, gid, collapsed)
            if collapsed:
                item.setPos(*group_position(topo, gid))
            self.addItem(item)
            self.group_items[gid] = item
        self._build_links(hidden)
        self._update_frames()
        self.select_ids(selected)
        self._syncing = False
        self.rebuilt.emit()

    def _build_links(self, hidden: dict[str, str]) -> None:
        topo = self.topology
        for a_id, b_id, links, bundle in drawn_links(topo, hidden):
            a = self.device_items.get(a_id) or self.group_items.get(a_id)
            b = self.device_items.get(b_id) or self.group_items.get(b_id)
            if a is None or b is None:
                continue
            lt = topo.link_type_of(links[0])
            bw = sum(topo.link_bandwidth_per_direction_Bps(lk) for lk in links)
            count = sum(lk.count for lk in links)
            if bundle:
                tip = f"bundle of {len(links)} links ({count} physical), {bw / 1e9:.1f} GB/s per direction"
            else:
                lk = links[0]
                tip = (f"{lk.id}: {topo.devices[lk.a].name} - {topo.devices[lk.b].name}\n"
                       f"{lt.label if lt else lk.type} x{lk.count}, {bw / 1e9:.1f} GB/s per direction")
            self._add_link_item(LinkItem(a, b, [lk.id for lk in links], count, bw, lt.family if lt else None, bundle, tip))

    def _add_link_item(self, item: LinkItem) -> None:
        self.addItem(item)
        self.link_items.append(item)
        for lid in item.link_ids:
            self.items_by_link[lid] = item
        self._links_at.setdefault(item.a, []).append(item)
        self._links_at.setdefault(item.b, []).append(item)

    def _update_frames(self) -> None:
        self._frames_pending = False
        topo = self.topology
        # innermost groups first, so outer frames can include inner ones
        order = sorted((g for g in self.group_items.values() if not g.collapsed),
                       key=lambda g: -len(topo.group_chain(g.group_id)))
        for item in order:
            rect = QRectF()
            for gid in [g.id for g in topo.groups.values() if g.parent == item.group_id]:
                child = self.group_items.get(gid)
                if child is not None:
                    r = child.sceneBoundingRect() if child.collapsed else child.frame.adjusted(0, -GroupItem.TITLE, 0, 0)
                    rect = rect.united(r)
            for d in topo.groups[item.group_id].devices:
                di = self.device_items.get(d)
                if di is not None:
                    rect = rect.united(di.sceneBoundingRect())
            item.set_frame(rect.adjusted(-24, -16, 24, 16) if not rect.isNull() else QRectF(0, 0, 60, 40))

    # ---- model -> scene --------------------------------------------------------------------------
    def _on_model_event(self, event) -> None:
        if event.kind == "moved" and not self._syncing:
            self._syncing = True
            for key in event.ids:
                item = self.device_items.get(key) or self.group_items.get(key)
                xy = self.topology.layout.positions.get(key)
                if item is not None and xy is not None:
                    item.setPos(*xy)
            self._syncing = False
            self._update_frames()
            return
        if event.kind == "moved":
            return
        if event.kind == "changed" and all(i in self.device_items for i in event.ids) and \
                event.detail.get("attribute") == "name":
            for i in event.ids:
                self.device_items[i].refresh()
            return
        self.rebuild()

    # ---- scene -> model --------------------------------------------------------------------------
    def item_moved(self, item: QGraphicsItem) -> None:
        for link in self._links_at.get(item, ()):
            link.update_path()
        if not self._frames_pending:
            self._frames_pending = True
            QTimer.singleShot(0, self._update_frames)

    def mousePressEvent(self, event) -> None:
        super().mousePressEvent(event)
        self._press_positions = {self._key(i): (i.pos().x(), i.pos().y()) for i in self.selectedItems()
                                 if self._key(i) is not None}

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        moved, old = {}, {}
        for i in self.selectedItems():
            key = self._key(i)
            if key is None or key not in self._press_positions:
                continue
            before = self._press_positions[key]
            now = (round(i.pos().x(), 3), round(i.pos().y(), 3))
            if abs(now[0] - before[0]) > 0.5 or abs(now[1] - before[1]) > 0.5:
                moved[key] = now
                old[key] = self.topology.layout.positions.get(key)
        self._press_positions = {}
        if moved:
            self._syncing = True
            self.document.push(Move(moved, old, f"move {len(moved)} item{'s' if len(moved) > 1 else ''}"))
            self._syncing = False

    @staticmethod
    def _key(item: QGraphicsItem) -> str | None:
        if isinstance(item, DeviceItem):
            return item.device_id
        if isinstance(item, GroupItem) and item.collapsed:
            return item.group_id
        return None

    def toggle_group(self, gid: str) -> None:
        collapsed = gid in self.topology.layout.collapsed
        self.document.push(SetCollapsed(gid, not collapsed))

    # ---- selection -------------------------------------------------------------------------------
    def selected_ids(self) -> list[str]:
        out = []
        for item in self.selectedItems():
            if isinstance(item, DeviceItem):
                out.append(item.device_id)
            elif isinstance(item, GroupItem):
                out.append(item.group_id)
            elif isinstance(item, LinkItem) and not item.bundle:
                out.extend(item.link_ids)
        return out

    def selected_device_ids(self) -> list[str]:
        """Devices selected directly or through a selected group (for copy and delete)."""
        out = []
        for item in self.selectedItems():
            if isinstance(item, DeviceItem):
                out.append(item.device_id)
            elif isinstance(item, GroupItem):
                out.extend(self.topology.devices_in_group(item.group_id))
        return list(dict.fromkeys(out))

    def select_ids(self, ids) -> None:
        ids = set(ids)
        self.clearSelection()
        for key, item in [*self.device_items.items(), *self.group_items.items()]:
            if key in ids:
                item.setSelected(True)
        for lid in ids:
            item = self.items_by_link.get(lid)
            if item is not None and not item.bundle:
                item.setSelected(True)

    def item_for(self, obj_id: str) -> QGraphicsItem | None:
        """The item showing a device, group or link, or the collapsed group hiding it."""
        if obj_id in self.device_items:
            return self.device_items[obj_id]
        if obj_id in self.group_items:
            return self.group_items[obj_id]
        if obj_id in self.items_by_link:
            return self.items_by_link[obj_id]
        if obj_id in self._hidden:
            return self.group_items.get(self._hidden[obj_id])
        lk = self.topology.links.get(obj_id)
        if lk is not None:
            return self.item_for(lk.a)
        return None

    # ---- adding ----------------------------------------------------------------------------------
    def drop(self, payload: str, pos: QPointF) -> list[str]:
        """Add what the palette carries (a part or a whole system) at a scene position."""
        topo = self.topology
        kind_of, _, what = payload.partition(":")
        if kind_of == "part":
            part = topo.catalog.part(what)
            if part is None:
                self.statusMessage.emit(f"unknown part {what!r}")
                return []
            prefix = {"gpu": "gpu", "nvswitch": "nvswitch", "nic": "nic", "ib_switch": "ibsw", "eth_switch": "ethsw",
                      "pcie_switch": "pcie", "cpu": "cpu"}[part.kind]
            did = topo.new_id(prefix)
            n = sum(1 for d in topo.devices.values() if d.kind == part.kind)
            dev = Device(did, part.kind, part.id, f"{KIND_LABELS[part.kind]} {n}")
            self.document.push(AddItems([dev], positions={did: (pos.x(), pos.y())}, text=f"add {part.label}"))
            self.select_ids([did])
            return [did]
        if kind_of == "system":
            if what not in SYSTEM_BUILDERS:
                self.statusMessage.emit(f"unknown system {what!r}")
                return []
            scratch = Topology("scratch", topo.catalog)
            SYSTEM_BUILDERS[what](scratch, origin=(0.0, 0.0))
            xs = [p[0] for p in scratch.layout.positions.values()]
            ys = [p[1] for p in scratch.layout.positions.values()]
            offset = (pos.x() - (min(xs) + max(xs)) / 2, pos.y() - (min(ys) + max(ys)) / 2)
            cmd, mapping = paste_command(topo, copy_selection(scratch, list(scratch.devices)), offset,
                                         text=f"add {SYSTEM_LABELS[what]}")
            self.document.push(cmd)
            new = [mapping[d] for d in scratch.devices]
            self.select_ids([mapping["system"]])
            return new
        self.statusMessage.emit(f"cannot drop {payload!r}")
        return []


class CanvasView(QGraphicsView):
    """Zoom with the wheel or keys, pan with the middle button (or Space + drag), rubber-band select
    with the left button on empty canvas, and drag from a device's round handle to link it."""

    zoomChanged = Signal(float)

    def __init__(self, scene: TopologyScene):
        super().__init__(scene)
        self.canvas = scene
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setAcceptDrops(True)
        self._link_from: str | None = None
        self._link_line: QGraphicsLineItem | None = None
        self._panning: QPointF | None = None
        self._space = False

    # zoom
    def zoom(self, factor: float) -> None:
        current = self.transform().m11()
        factor = min(max(factor, 0.02 / current), 8.0 / current)
        self.scale(factor, factor)
        self.zoomChanged.emit(self.transform().m11())

    def wheelEvent(self, event) -> None:
        self.zoom(1.0015 ** event.angleDelta().y())

    def fit(self) -> None:
        rect = self.scene().itemsBoundingRect()
        if not rect.isNull():
            self.fitInView(rect.adjusted(-40, -40, 40, 40), Qt.AspectRatioMode.KeepAspectRatio)
            self.zoomChanged.emit(self.transform().m11())

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
        super().keyReleaseEvent(event)

    # linking and panning
    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.MiddleButton or (event.button() == Qt.MouseButton.LeftButton and self._space):
            self._panning = event.position()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            return
        if event.button() == Qt.MouseButton.LeftButton:
            scene_pos = self.mapToScene(event.position().toPoint())
            for item in self.scene().items(scene_pos):
                if isinstance(item, DeviceItem) and item.on_handle(scene_pos):
                    self._link_from = item.device_id
                    self._link_line = QGraphicsLineItem(item.scenePos().x(), item.scenePos().y(), scene_pos.x(), scene_pos.y())
                    self._link_line.setPen(QPen(QColor("#1e6fd9"), 2, Qt.PenStyle.DashLine))
                    self._link_line.setZValue(10)
                    self.scene().addItem(self._link_line)
                    return
        super().mousePressEvent(event)

    def _device_at(self, scene_pos: QPointF) -> str | None:
        for item in self.scene().items(scene_pos):
            if isinstance(item, DeviceItem):
                return item.device_id
        return None

    def mouseMoveEvent(self, event) -> None:
        if self._panning is not None:
            delta = event.position() - self._panning
            self._panning = event.position()
            self.horizontalScrollBar().setValue(int(self.horizontalScrollBar().value() - delta.x()))
            self.verticalScrollBar().setValue(int(self.verticalScrollBar().value() - delta.y()))
            return
        if self._link_line is not None:
            scene_pos = self.mapToScene(event.position().toPoint())
            line = self._link_line.line()
            self._link_line.setLine(line.x1(), line.y1(), scene_pos.x(), scene_pos.y())
            target = self._device_at(scene_pos)
            if target is not None and target != self._link_from:
                proposal = propose_link(self.canvas.topology, self._link_from, target)
                color = QColor("#2e9c2e") if proposal.ok else QColor("#d00000")
                self._link_line.setPen(QPen(color, 2.5, Qt.PenStyle.DashLine))
                self.canvas.statusMessage.emit(proposal.description if proposal.ok else f"Cannot link: {proposal.reason}")
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._panning is not None:
            self._panning = None
            self.unsetCursor()
            return
        if self._link_line is not None:
            scene_pos = self.mapToScene(event.position().toPoint())
            self.scene().removeItem(self._link_line)
            self._link_line = None
            source, self._link_from = self._link_from, None
            target = self._device_at(scene_pos)
            if target is None or target == source:
                self.canvas.statusMessage.emit("Link cancelled: release over another device to connect")
                return
            proposal = propose_link(self.canvas.topology, source, target)
            if proposal.ok:
                self.canvas.document.push(proposal.command)
                self.canvas.statusMessage.emit(f"Connected: {proposal.description}")
            else:
                self.canvas.statusMessage.emit(f"Link refused: {proposal.reason}")
            return
        super().mouseReleaseEvent(event)

    # drops from the palette
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME_PALETTE):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME_PALETTE):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        if not event.mimeData().hasFormat(MIME_PALETTE):
            event.ignore()
            return
        payload = bytes(event.mimeData().data(MIME_PALETTE)).decode("utf-8")
        pos = self.mapToScene(event.position().toPoint())
        self.canvas.drop(payload, pos)
        event.acceptProposedAction()
