"""The canvas view: zoom, pan, rubber-band selection, linking by dragging from a device's handle,
and drops from the palette."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QCursor, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsSimpleTextItem, QGraphicsView, QMenu

from ..model.connect import link_options
from .bundle_links import open_around
from .canvas_items import MIME_PALETTE, DeviceItem, GroupItem, LinkItem
from .canvas_lod import MAX_ZOOM
from .canvas_paint import opaque_viewport

class CanvasView(QGraphicsView):
    """Zoom with the wheel or keys, pan with the middle button (or Space + drag), rubber-band select
    with the left button on empty canvas, and drag from a device's round handle to link it."""

    zoomChanged = Signal(float)
    resized = Signal()
    contextMenuRequested = Signal(object, QPointF, object)  # item under the mouse (or None), scene point, global point

    def __init__(self, scene):
        super().__init__(scene)
        self.canvas = scene
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        opaque_viewport(self.viewport())
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setAcceptDrops(True)
        self._link_from: str | None = None
        self._link_line: QGraphicsLineItem | None = None
        self._panning: QPointF | None = None
        self._space = False
        self._port_hint: QGraphicsSimpleTextItem | None = None
        self._band_from: list[str] = []
        scene.rebuilt.connect(self._scene_rebuilt)
        scene.updated.connect(self._scene_updated)
        # the overview of a large cluster opens and closes what the view shows
        self.zoomChanged.connect(lambda _z: self.canvas.view_changed(self))
        self.zoomChanged.connect(lambda _z: self.canvas.zooming())
        self.horizontalScrollBar().valueChanged.connect(lambda _v: self.canvas.view_changed(self))
        self.verticalScrollBar().valueChanged.connect(lambda _v: self.canvas.view_changed(self))
        self.resized.connect(lambda: self.canvas.view_changed(self))

    def _scene_rebuilt(self) -> None:
        """The scene dropped every item (an edit, undo or delete while a link was being dragged): the
        rubber line is gone with them, so the drag ends here instead of using a deleted item."""
        self._port_hint = None  # gone with the other items
        if self._link_line is not None:
            self._link_line = None
            self._link_from = None
            self.canvas.statusMessage.emit("Link cancelled: the design changed while the link was being dragged")

    def escape(self) -> None:
        """Escape on the canvas: a link being dragged is dropped (nothing is connected), items being
        dragged go back where they were, else the selection is cleared."""
        if self._link_line is not None:
            self._drop_link("Link cancelled (Escape)")
            return
        if self.canvas.cancel_move():
            self.canvas.statusMessage.emit("Move cancelled (Escape): the items are back where they were")
            return
        if not self.rubberBandRect().isNull():   # a selection rectangle being dragged
            self._cancel_band()
            return
        self.canvas.select_ids([])

    def _cancel_band(self) -> None:
        """Escape while dragging a selection rectangle: the rectangle goes and the selection is what it
        was before the press (it cleared the selection and the rectangle went on selecting)."""
        at = self.viewport().mapFromGlobal(QCursor.pos())
        end = QMouseEvent(QEvent.Type.MouseButtonRelease, QPointF(at), QPointF(self.viewport().mapToGlobal(at)),
                          Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        super().mouseReleaseEvent(end)   # Qt ends its rectangle (a release selects nothing by itself)
        self.canvas.select_ids(self._band_from)
        self.canvas.statusMessage.emit("Selection rectangle cancelled (Escape)")

    def _scene_updated(self) -> None:
        """An edit changed some items: a link being dragged from a device that is gone ends here."""
        if self._link_from is not None and self._link_from not in self.canvas.device_items:
            self._drop_link("Link cancelled: the device it started from is gone")

    def _drop_link(self, message: str) -> None:
        """End a link drag without connecting: its dashed line and port hint go, the status says why."""
        if self._link_line is not None:
            self.scene().removeItem(self._link_line)
        self._show_port_hint(None)
        self._link_line = None
        self._link_from = None
        self.canvas.statusMessage.emit(message)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.resized.emit()

    def contextMenuEvent(self, event) -> None:
        scene_pos = self.mapToScene(event.pos())
        item = next((i for i in self.scene().items(scene_pos) if isinstance(i, (DeviceItem, GroupItem, LinkItem))), None)
        self.contextMenuRequested.emit(item, scene_pos, event.globalPos())
        event.accept()

    # zoom
    def zoom(self, factor: float) -> None:
        current = self.transform().m11()
        deepest = MAX_ZOOM if self.canvas.lod is not None else 8.0
        factor = min(max(factor, 0.02 / current), deepest / current)
        self.scale(factor, factor)
        self.zoomChanged.emit(self.transform().m11())

    def wheelEvent(self, event) -> None:
        self.zoom(1.0015 ** event.angleDelta().y())

    def fit(self) -> None:
        self.fit_rect(self.scene().itemsBoundingRect())

    def fit_rect(self, rect, at_most: float | None = None) -> None:
        """Fit ``rect`` (scene units) in the view with a margin; with ``at_most``, zoomed no further
        in than that (centred on it instead: one small device is not blown up past actual size)."""
        if rect.isNull():
            return
        self.fitInView(rect.adjusted(-40, -40, 40, 40), Qt.AspectRatioMode.KeepAspectRatio)
        if at_most is not None and self.transform().m11() > at_most:
            self.resetTransform()
            self.scale(at_most, at_most)
            self.centerOn(rect.center())
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
            self._band_from = self.canvas.selected_ids()   # what Escape during a selection rectangle gives back
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
                options = link_options(self.canvas.topology, self._link_from, target)
                ok = options[0].ok
                color = QColor("#2e9c2e") if ok else QColor("#d00000")
                self._link_line.setPen(QPen(color, 2.5, Qt.PenStyle.DashLine))
                self._show_port_hint(target)
                more = f" — {len(options)} ways fit: hold Shift when releasing to choose" if ok and len(options) > 1 else ""
                self.canvas.statusMessage.emit(options[0].description + more if ok else f"Cannot link: {options[0].reason}")
            else:
                self._show_port_hint(None)
            return
        super().mouseMoveEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        """In a cluster's overview, double-clicking a block or a system opens it, centred; elsewhere a
        double-click on a collapsed system's bundle opens the systems at its ends."""
        lod = self.canvas.lod
        if lod is not None and lod.open_at(self.mapToScene(event.position().toPoint())):
            event.accept()
            return
        top = self.itemAt(event.position().toPoint())
        if lod is None and isinstance(top, LinkItem) and top.bundle:   # opens the systems at its ends (bundle_links)
            open_around(self.canvas, list(top.link_ids))
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._panning is not None:
            self._panning = None
            self.unsetCursor()
            return
        if self._link_line is not None:
            scene_pos = self.mapToScene(event.position().toPoint())
            self.scene().removeItem(self._link_line)
            self._link_line = None
            self._show_port_hint(None)
            source, self._link_from = self._link_from, None
            target = self._device_at(scene_pos)
            if target is None or target == source:
                self.canvas.statusMessage.emit(self._missed_link_words(scene_pos, target))
                return
            options = link_options(self.canvas.topology, source, target)
            if not options[0].ok:
                self.canvas.statusMessage.emit(f"Link refused: {options[0].reason}")
            elif len(options) > 1 and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self._choose_link(options, event.globalPosition().toPoint())
            else:
                self._connect(options[0])
            return
        super().mouseReleaseEvent(event)

    def _missed_link_words(self, scene_pos: QPointF, target: str | None) -> str:
        """Why a link released here connects nothing: on a collapsed system's box (which stands for its
        devices, not one of them) it says how to reach them, instead of only "release over a device"."""
        box = next((i for i in self.scene().items(scene_pos) if getattr(i, "collapsed", False)
                    and getattr(i, "group_id", None) in self.canvas.topology.groups), None)
        if target is None and box is not None:
            name = self.canvas.topology.groups[box.group_id].name
            return (f"Link cancelled: {name} is drawn collapsed, a box for all its devices; double-click it "
                    "to open it, then drag to one of its devices (a GPU, a NIC, a switch)")
        return "Link cancelled: release over another device to connect"

    def _connect(self, proposal) -> None:
        self.canvas.document.push(proposal.command)
        self.canvas.statusMessage.emit(f"Connected: {proposal.done or proposal.description}")   # (free counts after it)

    def _choose_link(self, options, global_pos) -> QMenu:
        """A small menu of every link type and port group that fits; choosing one connects."""
        menu = QMenu(self)
        menu.setObjectName("linkChoiceMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addSection("Connect with")
        for proposal in options:
            menu.addAction(proposal.description, lambda p=proposal: self._connect(p))
        menu.popup(global_pos)
        self.link_menu = menu
        return menu

    def _show_port_hint(self, device_id: str | None) -> None:
        """Beside the device under the dragged link: its port groups and how many of each are free."""
        if self._port_hint is not None:
            try:
                self.scene().removeItem(self._port_hint)
            except RuntimeError:
                pass
            self._port_hint = None
        item = self.canvas.device_items.get(device_id) if device_id else None
        part = self.canvas.topology.part_of(device_id) if device_id else None
        if item is None or part is None:
            return
        free = self.canvas.topology.free_ports(device_id)
        text = "\n".join(f"{g.name}: {free.get(g.name, 0)} of {g.count} free" for g in part.ports)
        hint = QGraphicsSimpleTextItem(text)
        hint.setBrush(QColor("#1b1b1b"))
        hint.setPos(item.scenePos() + QPointF(DeviceItem.W / 2 + 14, -DeviceItem.H / 2))
        hint.setZValue(11)
        self.scene().addItem(hint)
        self._port_hint = hint

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
