"""The topology canvas: devices, links and groups on a QGraphicsScene, edited through commands.

Items exist only for what is visible: the insides of a collapsed group get no items at all, and the
links from a collapsed group to the outside are drawn as one bundle with a count, so the cost of a
frame does not grow with hidden items. Positions come from the document's layout.
"""

from __future__ import annotations

import math
import time
from itertools import chain

from PySide6.QtCore import QLineF, QPointF, QRectF, QTimer, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene
from shiboken6 import isValid

from ..model.commands import Macro, Move, SetCollapsed
from ..model.layout import default_position, drawn_links, group_position, hidden_by_collapsed
from ..model.topology import Topology
from . import canvas_drop, drag_end
from .canvas_lod import LevelOfDetail
from .canvas_lod_sync import sync as lod_sync
from .canvas_paint import fill_background
from .canvas_text import LinkLabels
from .canvas_sync import drawn_key, group_signature, members, sync, visible_groups
from ..analysis.cluster_overview import build_overview
from .canvas_items import MIME_PALETTE, SELECTED, DeviceItem, GroupItem, LinkItem  # noqa: F401  (importable from here)
from .document import Document
from .drag_end import DragStart
from .group_region import DrawnBoxes, frame_region


RECACHE_BATCH = 24      # boxes given their cached picture back per frame once a zoom rests
RECACHE_PAUSE_MS = 20   # between those batches: time for the frame to be drawn
TEXT_AFTER_MS = 5       # a window's first frame drawn, its names and counts follow (see hold_text)
SETTLE_S = 0.03         # names released or pictures given back are drawn in the next turn or two (catching_up)


class TopologyScene(QGraphicsScene):
    statusMessage = Signal(str)
    rebuilt = Signal()   # every item was replaced
    updated = Signal()   # some items were added, removed or refreshed after an edit (see canvas_sync)
    detailChanged = Signal()   # the overview opened or closed blocks or systems as the view moved
    renameRequested = Signal()   # a device was double-clicked: the window offers its name for editing

    def __init__(self, document: Document):
        super().__init__()
        self.document = document
        self.device_items: dict[str, DeviceItem] = {}
        self.group_items: dict[str, GroupItem] = {}
        self.link_items: list[LinkItem] = []
        self.items_by_link: dict[str, LinkItem] = {}
        self._links_at: dict[QGraphicsItem, list[LinkItem]] = {}
        self._press_positions: dict[str, tuple[float, float]] = {}
        self._pressed: list[QGraphicsItem] = []   # the items a drag from the last press moves
        self._drag: DragStart | None = None   # its frames and Ctrl (see drag_end)
        self._syncing = False
        self._frames_pending = False
        self._hidden: dict[str, str] = {}
        self.lod: LevelOfDetail | None = None  # set while a large cluster is drawn as its overview
        self._lod_pending = False
        self._groups: tuple | None = None   # the group signature the items were built for
        self.link_labels = LinkLabels()
        self.label_version = 0
        self._cached = True   # boxes keep a cached picture of themselves while the view rests (see zooming)
        self.text_held = False   # devices' names and link counts wait for the next frame (see hold_text)
        self._cache_turn = 0  # counts switches, so batches of a rest that a new zoom interrupted stop
        self._recaching = False   # batches of cached pictures still to come back (see _cache_boxes)
        self._settled_at = 0.0    # (time.monotonic) when what was left to later turns will have been drawn
        self._recache = QTimer(self)
        self._recache.setSingleShot(True)
        self._recache.setInterval(150)
        self._recache.timeout.connect(lambda: self._cache_boxes(True))
        self._members: dict[str, tuple] = {}
        self.groups_around: tuple | None = None   # (document state, device -> groups it is in): group_region
        self.grid = 0.0  # snap moved items to this grid (0: off)
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
        self._cached = True   # the new items start with their cached pictures
        self._cache_turn += 1   # and batches for the old ones stop
        self._recaching = False
        self.clear()
        self.device_items.clear()
        self.group_items.clear()
        self.link_items.clear()
        self.items_by_link.clear()
        self._links_at.clear()
        topo = self.topology
        if self.lod is not None:
            self.lod.dispose()
        self.lod = None
        overview = build_overview(topo)
        if overview is not None:  # a large cluster: its structure, opened where the view looks
            self._hidden = {}
            self.lod = LevelOfDetail(self, overview)
            self.lod.build()
            self.select_ids(selected)
            self._syncing = False
            self.rebuilt.emit()
            for view in self.views():
                self.view_changed(view)
            return
        hidden = self._hidden = hidden_by_collapsed(topo)
        for i, dev in enumerate(topo.devices.values()):
            if dev.id in hidden:
                continue
            item = DeviceItem(self, dev.id)
            item.setPos(*topo.layout.positions.get(dev.id, default_position(i)))
            self.addItem(item)
            self.device_items[dev.id] = item
        for gid, collapsed in visible_groups(topo).items():   # a group is drawn unless a collapsed ancestor hides it
            item = GroupItem(self, gid, collapsed)
            if collapsed:
                item.setPos(*group_position(topo, gid))
            self.addItem(item)
            self.group_items[gid] = item
        self._build_links(hidden)
        self._update_frames()
        self.select_ids(selected)
        self._groups = group_signature(self)
        self._members = members(self)
        self._syncing = False
        self.label_version += 1
        self.rebuilt.emit()

    def _build_links(self, hidden: dict[str, str]) -> None:
        for a_id, b_id, links, bundle in drawn_links(self.topology, hidden):
            self._make_link(a_id, b_id, links, bundle)

    def _make_link(self, a_id: str, b_id: str, links: list, bundle: bool) -> LinkItem | None:
        """The item for one drawn link or bundle (see layout.drawn_links), added to the scene."""
        topo = self.topology
        a = self.device_items.get(a_id) or self.group_items.get(a_id)
        b = self.device_items.get(b_id) or self.group_items.get(b_id)
        if a is None or b is None:
            return None
        lt = topo.link_type_of(links[0])
        bw = sum(topo.link_bandwidth_per_direction_Bps(lk) for lk in links)
        count = sum(lk.count for lk in links)
        if bundle:
            tip = f"bundle of {len(links)} links ({count} physical), {bw / 1e9:.1f} GB/s per direction"
        else:
            lk = links[0]
            tip = (f"{lk.id}: {topo.devices[lk.a].name} - {topo.devices[lk.b].name}\n"
                   f"{lt.label if lt else lk.type} x{lk.count}, {bw / 1e9:.1f} GB/s per direction")
        item = LinkItem(a, b, [lk.id for lk in links], count, bw, lt.family if lt else None, bundle, tip)
        item.key = drawn_key(a_id, b_id, links, bundle)
        self._add_link_item(item)
        return item

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
        fixed = self._drag.fixed if self._drag is not None else ()   # frames a drag may take devices out of
        drawn = DrawnBoxes(self) if order else None
        for item in order:
            if item.group_id in fixed:
                continue
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
            frame = GroupItem.frame_around(rect)
            item.set_frame(frame, frame_region(drawn, item.group_id, frame))

    # ---- model -> scene --------------------------------------------------------------------------
    def view_changed(self, view, later_ms: int = 0) -> None:
        """The view zoomed, scrolled or resized: the overview opens or closes what it shows (once per
        turn of the event loop however many signals arrive; ``later_ms`` leaves time for a frame to be
        drawn first, when opening goes on over several turns; a view change meanwhile is not held up
        by it)."""
        if self.lod is None:
            return
        flag = "_lod_later" if later_ms else "_lod_pending"
        if getattr(self, flag, False):
            return
        setattr(self, flag, True)

        def run():
            setattr(self, flag, False)
            if isValid(self) and isValid(view) and self.lod is not None and view.scene() is self:   # either may be closed by now
                self.lod.update(view)
        QTimer.singleShot(later_ms, run)

    def overview_now(self) -> None:
        """In a cluster's overview, what it draws brought up to the document at once, not in the next
        turn as ``view_changed`` does: an edit just added items that are to be selected."""
        if self.lod is not None:
            for view in self.views()[:1]:
                self.lod.update(view)

    def zooming(self) -> None:
        """The view zooms: devices, collapsed boxes and the overview's blocks draw straight to the
        screen until it rests, since a cached one is rendered into a new picture at every zoom step
        before being drawn (the DGX presets' zoom frames; 145 blocks at fit on 2,048 systems); pans and
        replay frames reuse the pictures again afterwards."""
        self._cache_boxes(False)
        self._recache.start()

    def _boxes(self) -> list:
        """The items that keep cached pictures while the view rests."""
        boxes = list(self.device_items.values())
        boxes += [g for g in self.group_items.values() if g.collapsed]
        if self.lod is not None:
            boxes += self.lod.block_items.values()
        return boxes

    def _cache_boxes(self, on: bool) -> None:
        """Cached pictures off at once (a zoom starts), or back on a batch at a time once the view
        rests: every box given its picture back is redrawn, into the picture, in the next frame, and
        all of them in one frame cost a DGX preset's rest after a zoom 15-30 ms."""
        if on == self._cached:
            return
        self._cached = on
        self._cache_turn += 1
        self._recaching = False   # (the batches of an earlier rest stop here)
        if not on:
            for item in self._boxes():
                item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
            return
        turn, waiting = self._cache_turn, self._boxes()

        def batch() -> None:
            if not isValid(self) or turn != self._cache_turn:   # closed, or zooming again
                return
            for item in waiting[:RECACHE_BATCH]:
                if isValid(item) and item.scene() is self:
                    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            del waiting[:RECACHE_BATCH]
            self._recaching = bool(waiting)
            self._settled_at = time.monotonic() + SETTLE_S
            if waiting:
                QTimer.singleShot(RECACHE_PAUSE_MS, batch)
        batch()

    def catching_up(self) -> bool:
        """The canvas is still drawing what it left to later turns: its boxes' cached pictures coming
        back once a zoom rests (a batch per turn, see _cache_boxes), or the names and counts a window's
        first frame left out (hold_text), and the turn or two that draws the last of them. A picture of the whole
        scene taken now (the overview's, MiniMap) would be drawn in the same turn as that work: on GB200
        NVL72 the overview's 4 ms on top of a batch of 24 boxes made rest frames 10-13 ms."""
        return (self.text_held or self._recaching or self._recache.isActive()
                or time.monotonic() < self._settled_at)

    def _on_model_event(self, event) -> None:
        if self.lod is not None and self._lod_event(event):
            return
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
        if self.lod is None:
            sync(self, event)   # only the items the edit touched change, group boxes included
            self.labels_moved()
            self.updated.emit()
            return
        self.rebuild()

    def _lod_event(self, event) -> bool:
        """An edit seen by the overview: a moved device that is drawn follows its document position; a
        renamed or retyped device refreshes its item if it has one; deletes, new links and undos change
        only the blocks, bundles and open systems they touch (canvas_lod_sync); a group collapsed or
        expanded (the Inspector's "Drawn") changes nothing it draws. True when handled."""
        if event.kind == "moved":
            self.lod.moved(event.ids)
            return True
        if event.kind == "changed" and all(i in self.topology.devices for i in event.ids):
            for i in event.ids:
                item = self.device_items.get(i)
                if item is not None:
                    item.refresh()
            return True
        if event.kind == "collapsed":   # the overview opens systems by zoom, never by this flag: nothing it draws changes
            return True
        views = [(v, v.mapToScene(v.viewport().rect().center())) for v in self.views()]
        handled = lod_sync(self.lod, event)
        if handled:
            for view, centre in views:   # a row that came or went grows the scene: the view stays on what it showed
                if view.mapToScene(view.viewport().rect().center()) != centre:
                    view.centerOn(centre)
            self.updated.emit()
        return handled

    # ---- scene -> model --------------------------------------------------------------------------
    def item_moved(self, item: QGraphicsItem) -> None:
        links = self._links_at.get(item, ())
        for link in links:
            link.update_path()
        if links:
            self.labels_moved()
        if self.lod is not None and isinstance(item, DeviceItem):
            self.lod.device_moved(item)
        if not self._frames_pending and not self._syncing:   # (a rebuild or a model move updates them itself)
            self._frames_pending = True
            QTimer.singleShot(0, self._update_frames)

    def mousePressEvent(self, event) -> None:
        super().mousePressEvent(event)
        # what a drag moves: the selection and the item pressed, selected or not (a Ctrl+press selects
        # nothing until the release, yet Qt drags the item with the selection)
        self._pressed = [i for i in dict.fromkeys([*self.selectedItems(), self.mouseGrabberItem()]) if self._key(i)]
        self._press_positions = {self._key(i): (i.pos().x(), i.pos().y()) for i in self._pressed}
        self._drag = DragStart(self, list(self._press_positions), event.modifiers())

    def press_position(self, key: str) -> tuple[float, float]:
        return self._press_positions[key]

    def cancel_move(self) -> bool:
        """Escape while items are being dragged: they go back where the press found them and the rest
        of the drag moves nothing (they stayed where the mouse left them, while the document kept the
        old places: the file saved another drawing than the one shown). True when a drag was cancelled."""
        grabber = self.mouseGrabberItem()
        back = {i: self._press_positions[k] for i in self._pressed if isValid(i) and i.scene() is self
                if (k := self._key(i)) in self._press_positions and (i.pos().x(), i.pos().y()) != self._press_positions[k]}
        if grabber is None or not back:
            return False
        for item, xy in back.items():
            item.setPos(*xy)
        grabber.ungrabMouse()
        self._press_positions, self._drag = {}, None
        self._update_frames()
        return True

    def set_grid(self, size: float) -> None:
        self.grid = size
        self.update()

    def drawBackground(self, painter, rect) -> None:
        fill_background(painter, rect, self.backgroundBrush())   # (see canvas_paint: QGraphicsScene.drawBackground, unsmoothed)
        if not self.grid:
            return
        g = self.grid
        painter.setPen(QPen(QColor("#e4e4e4"), 0))
        x = math.floor(rect.left() / g) * g
        lines = []
        while x < rect.right() and len(lines) < 4000:
            lines.append(QLineF(x, rect.top(), x, rect.bottom()))
            x += g
        y = math.floor(rect.top() / g) * g
        while y < rect.bottom() and len(lines) < 8000:
            lines.append(QLineF(rect.left(), y, rect.right(), y))
            y += g
        painter.drawLines(lines)

    def hold_text(self) -> None:
        """The next frame draws the devices' and collapsed groups' boxes, icons and links but not their
        names, ports and link counts, which follow in the frame after: a window's first frame lays out
        every label for the first time (6-9 ms of a DGX preset's 10-14 ms canvas; GB200 NVL72's 27 tray
        boxes 2 ms), on top of every dock's first layout and paint."""
        self.text_held = True

    def release_text(self) -> None:
        """The held names and counts are drawn from now on (at once for an export)."""
        if not isValid(self) or not self.text_held:
            return
        self.text_held = False
        self._settled_at = time.monotonic() + SETTLE_S
        for item in self.device_items.values():
            item.lay_out_text()   # laid out in this turn, drawn in the next: the two share the work
            item.update()   # a cached picture drawn without its name is drawn again
        for item in self.group_items.values():
            if item.collapsed:   # a collapsed system's or tray's box: its name and counts likewise
                item.lay_out_text()
                item.update()
        self.invalidate(QRectF(), QGraphicsScene.SceneLayer.ForegroundLayer)
        for view in self.views():
            view.viewport().update()   # drawn in the next turn, not after the scene's own queued update

    def drawForeground(self, painter, rect) -> None:
        super().drawForeground(painter, rect)
        if self.text_held:
            QTimer.singleShot(TEXT_AFTER_MS, self.release_text)
            return
        if self.lod is not None:
            self.lod.draw_labels(painter, rect)
        else:
            boxes = chain(self.device_items.values(), (g for g in self.group_items.values() if g.collapsed))
            self.link_labels.draw(painter, rect, self.link_items, boxes, self.label_version)

    def labels_moved(self) -> None:
        """Links moved, came or went: their counts are placed again, wherever they were drawn before."""
        self.label_version += 1
        self.invalidate(QRectF(), QGraphicsScene.SceneLayer.ForegroundLayer)

    def snapped(self, x: float, y: float) -> tuple[float, float]:
        if not self.grid:
            return (round(x, 3), round(y, 3))
        return (round(x / self.grid) * self.grid, round(y / self.grid) * self.grid)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        moved, old, items = {}, {}, {}
        for i in [i for i in self._pressed if isValid(i) and i.scene() is self]:   # (a rebuild deletes items)
            key = self._key(i)
            if key is None or key not in self._press_positions:
                continue
            before = self._press_positions[key]
            if self.lod is not None:   # drawn scaled at the overview's place: moved in document units
                if getattr(i, "doc_map", None) is None or (i.pos().x(), i.pos().y()) == before:
                    continue
                now, before = self.lod.document_position(i), self.topology.layout.positions.get(key, (0.0, 0.0))
            else:
                now = self.snapped(i.pos().x(), i.pos().y())
            if self.grid and self.lod is None and (now[0], now[1]) != (i.pos().x(), i.pos().y()):
                i.setPos(*now)
            if abs(now[0] - before[0]) > 0.5 or abs(now[1] - before[1]) > 0.5:
                moved[key], old[key], items[key] = now, self.topology.layout.positions.get(key), i
        ended = drag_end.finish(self, self._drag, moved, old, items)   # a move, out of or into a frame, or a copy
        held = self._drag is not None and bool(self._drag.fixed)   # frames the drag held still
        self._press_positions, self._drag = {}, None
        if ended is not None:
            self._syncing = True
            self.document.push(ended[0])
            self._syncing = False
        if held:
            self._update_frames()
        if ended is not None and ended[1] is not None:   # copies: selected (in the overview, once drawn)
            self.overview_now()
            self.select_ids(ended[1])
            # said in the status bar as a paste or duplicate is (it kept the last edit's message)
            self.statusMessage.emit(ended[0].text.replace("copy", "Copied", 1))

    @staticmethod
    def _key(item: QGraphicsItem) -> str | None:
        if isinstance(item, DeviceItem):
            return item.device_id
        if isinstance(item, GroupItem) and item.collapsed:
            return item.group_id
        return None

    def toggle_group(self, gid: str) -> None:
        """Collapse or expand a group. Expanding draws the insides where the box was (one undo step with
        the expand) and brings them into view."""
        topo = self.topology
        if self.lod is not None:   # the overview draws positions of its own: expanding is opening in view
            item = self.lod.item_for(gid)
            if item is not None:
                self.lod.zoom_to(item.sceneBoundingRect())
            return
        if gid not in topo.layout.collapsed:
            self.document.push(SetCollapsed(gid, True))
            return
        name = topo.groups[gid].name
        box = group_position(topo, gid)
        members = [d for d in topo.devices_in_group(gid) if d in topo.layout.positions]
        cmds = [SetCollapsed(gid, False)]
        if members:
            xs = [topo.layout.positions[d][0] for d in members]
            ys = [topo.layout.positions[d][1] for d in members]
            dx, dy = box[0] - (min(xs) + max(xs)) / 2, box[1] - (min(ys) + max(ys)) / 2
            if abs(dx) > 1 or abs(dy) > 1:
                moved = {d: (topo.layout.positions[d][0] + dx, topo.layout.positions[d][1] + dy) for d in members}
                cmds.append(Move(moved, {d: topo.layout.positions[d] for d in members}))
        self.document.push(Macro(cmds, f"expand {name}") if len(cmds) > 1 else cmds[0])
        item = self.group_items.get(gid)
        if item is not None:
            rect = item.frame.adjusted(-20, -GroupItem.TITLE - 20, 20, 20)
            for view in self.views():
                view.centerOn(rect.center())

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
        if self.lod is not None:
            item = self.items_by_link.get(obj_id) or self.lod.item_for(obj_id)
            if item is None and obj_id in self.topology.links:
                return self.lod.item_for(self.topology.links[obj_id].a)
            return item
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
        """Add what the palette carries (a part or a whole system) at a scene position (canvas_drop)."""
        return canvas_drop.drop(self, payload, pos)


from .canvas_view import CanvasView  # noqa: E402,F401  (importable from here)
