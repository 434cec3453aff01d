"""The palette: every catalog part by kind and whole systems, with a filter; drag one onto the canvas."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ..model.builders import SYSTEM_BUILDERS, SYSTEM_LABELS
from ..model.catalog import DEVICE_KINDS, KIND_LABELS, Catalog
from .canvas import MIME_PALETTE
from .style import icon

PAYLOAD_ROLE = Qt.ItemDataRole.UserRole + 1


class PaletteTree(QTreeWidget):
    def __init__(self):
        super().__init__()
        self.setHeaderHidden(True)
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Every row is an icon and a line in one font: the view takes one row's height for all, where it
        # measured each row's text in every layout and paint (the window's first frame included).
        self.setUniformRowHeights(True)

    def mimeTypes(self) -> list[str]:
        return [MIME_PALETTE]

    def mimeData(self, items) -> QMimeData:
        """Qt's drag asks this; the drag then owns the data."""
        return self.drag_data(items)

    def drag_data(self, items) -> QMimeData:
        """What a drag from the palette carries: ``part:<id>`` or ``system:<name>``."""
        data = QMimeData()
        payloads = [i.data(0, PAYLOAD_ROLE) for i in items if i.data(0, PAYLOAD_ROLE)]
        if payloads:
            data.setData(MIME_PALETTE, payloads[0].encode("utf-8"))
            data.setText(payloads[0])
        return data

    def supportedDropActions(self):
        return Qt.DropAction.CopyAction


class Palette(QWidget):
    contextMenuRequested = Signal(str, QPoint)  # payload of the part or system, where to show the menu

    def __init__(self, catalog: Catalog):
        super().__init__()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter parts…")
        self.filter.setToolTip("Show only the parts and systems whose name or id contains this text")
        self.filter.setClearButtonEnabled(True)
        self.tree = PaletteTree()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.filter.textChanged.connect(self.apply_filter)
        self.populate(catalog)

    def populate(self, catalog: Catalog) -> None:
        self.tree.clear()
        systems = QTreeWidgetItem(self.tree, ["Systems"])
        systems.setIcon(0, icon("system"))
        for name in SYSTEM_BUILDERS:
            item = QTreeWidgetItem(systems, [SYSTEM_LABELS[name]])
            item.setIcon(0, icon("system"))
            item.setData(0, PAYLOAD_ROLE, f"system:{name}")
            item.setToolTip(0, f"A whole {SYSTEM_LABELS[name]}: drop to add its group with all its insides")
        for kind in DEVICE_KINDS:
            parts = catalog.parts_of_kind(kind)
            if not parts:
                continue
            top = QTreeWidgetItem(self.tree, [KIND_LABELS[kind] + ("es" if kind.endswith("switch") else "s")])
            top.setIcon(0, icon(kind))
            for part in parts:
                item = QTreeWidgetItem(top, [part.label])
                item.setIcon(0, icon(kind))
                item.setData(0, PAYLOAD_ROLE, f"part:{part.id}")
                ports = ", ".join(f"{g.count} x {g.name} ({'/'.join(g.accepts)})" for g in part.ports)
                item.setToolTip(0, f"{part.label}\nports: {ports}\nsource: {part.source}")
        self.tree.expandAll()

    def _context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        payload = item.data(0, PAYLOAD_ROLE) if item is not None else None
        if payload:
            self.contextMenuRequested.emit(payload, self.tree.viewport().mapToGlobal(pos))

    def item_for(self, payload: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                if top.child(j).data(0, PAYLOAD_ROLE) == payload:
                    return top.child(j)
        return None

    def apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            shown = 0
            for j in range(top.childCount()):
                child = top.child(j)
                match = not needle or needle in child.text(0).lower() or needle in (child.data(0, PAYLOAD_ROLE) or "")
                child.setHidden(not match)
                shown += match
            top.setHidden(shown == 0)
