"""The inspector: the selection's properties, editable, each change an undoable command."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QFrame, QLabel, QLineEdit, QScrollArea, QSpinBox,
                               QVBoxLayout, QWidget)

from ..model import fileio
from ..model.commands import ChangeLinkType, Macro, SetAttribute, SetCollapsed
from ..model.names import device_words, ends_words, name_taken, several_systems
from ..model.topology import Topology
from .choice_box import ChoiceBox
from .document import Document
from .field_undo import UndoKeysToDocument
from ..units import counted

# A row name longer than this many letters goes above its field, both as wide as the form: beside it,
# "Bandwidth per direction, GB/s (per link)" widened the name column for every row, and at the dock's
# default width a link's Type box showed "NVLink ..." (87 px of the dock's 260).
SPAN_AFTER = 20


class Inspector(QWidget):
    refused = Signal(str)   # an edit that was not accepted, in words naming the object and field (status bar)

    def __init__(self, document: Document):
        super().__init__()
        self.document = document
        self.ids: list[str] = []
        self.outer = QVBoxLayout(self)
        self.title = QLabel("Nothing selected")
        self.title.setWordWrap(True)
        self.outer.addWidget(self.title)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.form.setContentsMargins(0, 0, 0, 0)   # the rows line up with the title: 18 px more for the fields
        self.outer.addWidget(self.form_host)
        self.outer.addStretch(1)
        self.fields: dict[str, QWidget] = {}
        self._undo_keys = UndoKeysToDocument(self)
        self._pool: dict[type, list[QWidget]] = {}   # field widgets kept for the next selection (see _clear)
        self._used: dict[type, int] = {}
        self._names: list[QLabel] = []   # the rows' name labels, likewise
        self._used_names: list[QLabel] = []
        self._rows: list[tuple[QLabel, QWidget]] = []   # (name, field) of the rows the form shows
        self._new_rows: list[tuple[QLabel, QWidget]] = []
        self._spans: list[bool] = []   # per row shown: its name above its field (SPAN_AFTER)
        self._combos: dict[tuple, QComboBox] = {}   # the choice lists the form shows, by their items
        # Rebuilt after the event that changed the model has finished: an edit field must not be
        # deleted while it is still emitting the signal that made the edit.
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(0)
        self._refresh.timeout.connect(lambda: self.show_ids(self.ids))
        document.modelChanged.connect(lambda e: self._refresh.start())
        document.topologyReplaced.connect(lambda: self.show_ids([]))

    @property
    def topo(self) -> Topology:
        return self.document.topology

    # Each field's signal connected for the selection shown, so a reused widget is cut off from the last one
    _SIGNALS = {QLineEdit: "editingFinished", QSpinBox: "editingFinished", QCheckBox: "toggled"}

    def _clear(self) -> None:
        """Ready for the rows of a new selection. Their widgets are the ones shown before wherever the
        rows are alike (see _take), and the form is only changed where they differ (see _finish):
        making, polishing, showing and deleting a dozen widgets per click, and the window's layout
        passes that caused, were most of a selection's frame (8-10 of its 20-26 ms on the DGX presets)."""
        self._used = {}
        self._used_names = []
        self._new_rows = []
        self.fields.clear()

    def _finish(self) -> None:
        """The form shows the new rows: unchanged when they are the rows it shows (a device after a
        device), else rebuilt from them, hiding the widgets left over."""
        new, old = self._new_rows, self._rows
        if new == old:   # (the choice lists included: the same ones, see _choices)
            return
        spans = [len(n.text()) > SPAN_AFTER for n, _w in new]
        if [n for n, _w in new] == [n for n, _w in old] and spans == self._spans and \
                all(a is b or isinstance(a, QComboBox) for (_n, a), (_m, b) in zip(new, old)):
            for (_n, widget), (_m, before) in zip(new, old):   # only the choice lists are new
                if widget is not before:
                    self.form.replaceWidget(before, widget)
                    before.hide()
                    before.deleteLater()
                    widget.show()
            self._rows = new
            self._keep_choices()
            return
        # Hidden while its rows change: the widgets shown again then cost one layout pass, not one each.
        self.form_host.hide()
        while self.form.rowCount():
            self.form.takeRow(0)
        keep = {id(w) for pair in new for w in pair}
        for pair in self._rows:
            for w in pair:
                if id(w) not in keep:
                    w.hide()
                    if isinstance(w, QComboBox):
                        w.deleteLater()
        for (name, widget), span in zip(new, spans):
            if span:   # above its field, both the form's whole width (see SPAN_AFTER)
                self.form.addRow(name)
                self.form.addRow(widget)
            else:
                self.form.addRow(name, widget)
            for w in (name, widget):
                if w.isHidden():
                    w.show()
        self.form_host.show()
        self._rows, self._spans = new, spans
        self._keep_choices()

    def _keep_choices(self) -> None:
        self._combos = {w._choice_key: w for _n, w in self._rows if isinstance(w, QComboBox)}

    def _take(self, cls: type) -> QWidget:
        """A widget of this class for the next row: one shown before if one is free, reset to blank."""
        if cls is QComboBox:   # see _choices
            raise TypeError("choice lists come from _choices")
        pool = self._pool.setdefault(cls, [])
        k = self._used.get(cls, 0)
        self._used[cls] = k + 1
        if k == len(pool):
            widget = cls()
            widget.setParent(self.form_host)
            if cls in (QLineEdit, QSpinBox):
                widget.installEventFilter(self._undo_keys)   # Ctrl+Z with nothing typed: the document's (field_undo)
            pool.append(widget)
            return widget
        widget = pool[k]
        signal = self._SIGNALS.get(cls)
        if signal is not None and getattr(widget, "_wired", False):
            getattr(widget, signal).disconnect()
            widget._wired = False
        widget.setToolTip("")
        if widget.styleSheet():   # a refused entry's red background
            widget.setStyleSheet("")
        if cls is QLineEdit:
            widget.setPlaceholderText("")
        return widget

    def _choices(self, items: list[tuple[str, object]]) -> QComboBox:
        """A choice list of these (label, data) items: the one the form shows already when it lists
        the same (a device after a device of its kind: no widget to make, polish, lay out and show,
        1-2 ms of a selection's frame), else a new one (a combo box keeps the size it had for its
        first list, so one is never refilled with another)."""
        key = tuple(items)
        combo = self._combos.get(key)
        if combo is not None and all(w is not combo for _n, w in self._new_rows):
            if getattr(combo, "_wired", False):
                combo.currentIndexChanged.disconnect()
                combo._wired = False
            combo.setToolTip("")
            return combo
        combo = ChoiceBox()
        combo.setParent(self.form_host)
        for label, data in items:
            combo.addItem(label, data)
        combo._choice_key = key
        return combo

    def _label(self, text: str) -> QLabel:
        label = self._take(QLabel)
        label.setText(text)
        return label

    @staticmethod
    def _wire(widget: QWidget, signal: str, slot) -> None:
        getattr(widget, signal).connect(slot)
        widget._wired = True

    def _row(self, label: str, widget: QWidget, key: str | None = None) -> None:
        if isinstance(widget, QLabel):  # long figures wrap instead of widening the dock for good
            widget.setWordWrap(True)
        if not widget.toolTip():
            widget.setToolTip(f"{label} of the selection" + ("" if isinstance(widget, QLabel) else "; changes are undoable"))
        name = self._names[len(self._used_names)] if len(self._used_names) < len(self._names) else None
        if name is None:
            name = QLabel()
            name.setWordWrap(True)  # "Bandwidth per direction, GB/s (per link)" wraps, the dock keeps its width
            name.setParent(self.form_host)
            self._names.append(name)
        self._used_names.append(name)
        name.setText(label)
        self._new_rows.append((name, widget))
        if key:
            self.fields[key] = widget

    def show_ids(self, ids: list[str]) -> None:
        self.ids = [i for i in ids if i in self.topo.devices or i in self.topo.links or i in self.topo.groups]
        self._clear()
        self._fill()
        self._finish()

    def _fill(self) -> None:
        if not self.ids:
            self.title.setText("Nothing selected")
            return
        if len(self.ids) > 1:
            self.title.setText(f"{len(self.ids)} items selected")
            self._many(self.ids)
            return
        oid = self.ids[0]
        if oid in self.topo.devices:
            self._device(oid)
        elif oid in self.topo.links:
            self._link(oid)
        else:
            self._group(oid)

    def _many(self, ids: list[str]) -> None:
        """Edit every selected device at once: when they are all of one kind, one part for all of them
        (one undo step)."""
        devices = [i for i in ids if i in self.topo.devices]
        kinds = {self.topo.devices[d].kind for d in devices}
        if len(kinds) != 1 or len(devices) < 2:
            return
        kind = kinds.pop()
        parts = {self.topo.devices[d].part for d in devices}
        combo = self._choices(([("(several parts)", None)] if len(parts) > 1 else [])
                              + [(p.label, p.id) for p in self.topo.catalog.parts.values() if p.kind == kind])
        combo.setToolTip(f"the part of all {len(devices)} selected devices")
        if len(parts) == 1:
            combo.setCurrentIndex(combo.findData(next(iter(parts))))

        def apply(_i) -> None:
            part = combo.currentData()
            cmds = [SetAttribute(d, "part", part, f"change part of {d}") for d in devices
                    if part and self.topo.devices[d].part != part]
            if cmds:
                self.document.push(Macro(cmds, f"change part of {len(cmds)} devices"))
        self._wire(combo, "currentIndexChanged", apply)
        self._row(f"Part of all {len(devices)}", combo, "part")

    def _text_field(self, obj_id: str, attribute: str, value: str, key: str) -> QLineEdit:
        edit = self._take(QLineEdit)
        edit.setText(value)

        def commit() -> None:
            problem = fileio.field_problem(attribute, edit.text())
            if problem:  # the file rules: what an edit accepts, save and reopen accept
                self._refuse(edit, f"{self._what(obj_id)}: {attribute} {edit.text()!r} not accepted: {problem}")
                return
            # spaces at the ends are slips of typing or pasting, not part of a name (the canvas, Find and
            # reports showed "   GPU  one  " as typed); the spaces inside stay
            text = edit.text().strip()
            other = name_taken(self.topo, obj_id, text) if attribute == "name" and obj_id in self.topo.devices else None
            if other is not None and text != value:
                self._refuse(edit, f"{self._what(obj_id)}: name {text!r} not accepted: {device_words(self.topo, other)} "
                                   f"({other}) has it, and names tell devices apart within a system")
                return
            if text != value:
                self.document.push(SetAttribute(obj_id, attribute, text, f"rename {obj_id}"))
            elif edit.text() != text:
                edit.setText(text)   # only spaces added: nothing changes, the field shows the name kept
        self._wire(edit, "editingFinished", commit)
        self._row(attribute.capitalize(), edit, key)
        return edit

    def _device(self, did: str) -> None:
        dev = self.topo.devices[did]
        part = self.topo.part_of(did)
        self.title.setText(f"<b>{dev.name}</b> — device {did}")
        self._text_field(did, "name", dev.name, "name")
        combo = self._choices([(p.label, p.id) for p in self.topo.catalog.parts.values() if p.kind == dev.kind]
                              + ([(f"unknown: {dev.part}", dev.part)] if part is None else []))
        combo.setCurrentIndex(combo.findData(dev.part))
        self._wire(combo, "currentIndexChanged",
            lambda _i: combo.currentData() != dev.part and self.document.push(
                SetAttribute(did, "part", combo.currentData(), f"change part of {dev.name}")))
        self._row("Part", combo, "part")
        self._row("Kind", self._label(dev.kind))
        group = self.topo.group_of(did)
        self._row("Group", self._label(group.name if group else "—"))
        if part is not None:
            used = self.topo.used_ports(did)
            self._row("Ports", self._label("\n".join(f"{g.name}: {used.get(g.name, 0)} of {g.count} used ({', '.join(g.accepts)})"
                                                for g in part.ports)))
            if part.hop_latency_s:
                self._row("Traversal latency", self._label(f"{part.hop_latency_s * 1e6:.3f} us"))
        if dev.properties:
            self._row("Properties", self._label(json.dumps(dev.properties)))

    def _link(self, lid: str) -> None:
        lk = self.topo.links[lid]
        lt = self.topo.link_type_of(lk)
        # its ends as the canvas names them: in a cluster "DGX H100 #2 IB0 — Leaf 1", not "IB0 — Leaf 1"
        self.title.setText(f"<b>Link {lid}</b>: {html.escape(ends_words(self.topo, lk.a, lk.b, '—'))}")
        pa, pb = self.topo.part_of(lk.a), self.topo.part_of(lk.b)
        options = []
        if pa and pb:
            options = [t for g in pa.ports for t in g.accepts if pb.port_group_for(t)]
        if lk.type not in options:
            options.append(lk.type)
        labels = {t: self.topo.catalog.link_type(t) for t in dict.fromkeys(options)}
        combo = self._choices([(t_obj.label if t_obj else t, t) for t, t_obj in labels.items()])
        combo.setCurrentIndex(combo.findData(lk.type))
        self._wire(combo, "currentIndexChanged",
            lambda _i: combo.currentData() != lk.type and self.document.push(ChangeLinkType(lid, combo.currentData())))
        self._row("Type", combo, "type")
        count = self._take(QSpinBox)
        count.setRange(1, max(lk.count, self._free_count(lk)))
        count.setToolTip(f"at most {count.maximum()}: the free ports of both ends allow no more")
        count.setValue(lk.count)
        self._wire(count, "editingFinished", lambda: count.value() != lk.count and self.document.push(
            SetAttribute(lid, "count", count.value(), f"set count of {lid}")))
        self._row("Count", count, "count")
        if lt is not None and lt.per_lane:
            width = self._take(QSpinBox)
            width.setRange(1, 32)
            width.setValue(lk.width or lt.default_width or 16)
            self._wire(width, "editingFinished", lambda: width.value() != lk.width and self.document.push(
                SetAttribute(lid, "width", width.value(), f"set width of {lid}")))
            self._row("Lanes", width, "width")
        catalog_bw = lt.bandwidth_per_direction_Bps(lk.width) if lt else 0.0
        bw = self._take(QLineEdit)
        bw.setText("" if lk.bandwidth_per_direction_Bps is None else f"{lk.bandwidth_per_direction_Bps / 1e9:g}")
        bw.setPlaceholderText(f"{catalog_bw / 1e9:g} (catalog)")
        self._wire(bw, "editingFinished", lambda: self._override(lid, "bandwidth_per_direction_Bps", bw, 1e9))
        self._row("Bandwidth per direction, GB/s (per link)", bw, "bandwidth")
        lat_default = lt.latency_s if lt else 0.0
        lat = self._take(QLineEdit)
        lat.setText("" if lk.latency_s is None else f"{lk.latency_s * 1e6:g}")
        lat.setPlaceholderText(f"{lat_default * 1e6:g} (catalog)")
        self._wire(lat, "editingFinished", lambda: self._override(lid, "latency_s", lat, 1e-6))
        self._row("Latency, us", lat, "latency")
        total = self.topo.link_bandwidth_per_direction_Bps(lk)
        self._row("Capacity", self._label(f"{total / 1e9:.2f} GB/s per direction, {2 * total / 1e9:.2f} GB/s bidirectional"))
        # each end as the canvas names its device, then the port group it takes ("GPU0: nvlink"); the ids
        # the file holds in the tooltip ("gpu0.nvlink" read like a name nobody sees on the canvas)
        several = several_systems(self.topo)
        ports = self._label(" — ".join(f"{device_words(self.topo, dev, several)}: {port or 'no port'}"
                                       for dev, port in ((lk.a, lk.a_port), (lk.b, lk.b_port))))
        ports.setToolTip(f"in the file: {lk.a}.{lk.a_port} — {lk.b}.{lk.b_port}")
        self._row("Ports", ports)

    def _free_count(self, lk) -> int:
        """How many links of this kind its two ports could take: the free ports of the fuller end."""
        best = 64
        for dev, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
            part = self.topo.part_of(dev)
            group = part.port_group(port) if part and port else None
            if group is not None:
                used = self.topo.used_ports(dev).get(group.name, 0)
                best = min(best, group.count - used + lk.count)
        return best

    def _override(self, lid: str, attribute: str, edit: QLineEdit, scale: float) -> None:
        text = edit.text().strip()
        current = getattr(self.topo.links[lid], attribute)
        if not text:
            value = None
        else:
            try:
                value = float(text) * scale
                if fileio.field_problem(attribute, value):  # NaN, infinite, negative, beyond the file's range
                    raise ValueError
            except ValueError:
                field = {"bandwidth_per_direction_Bps": "bandwidth per direction (GB/s)",
                         "latency_s": "latency (us)"}.get(attribute, attribute)
                self._refuse(edit, f"{self._what(lid)}: {field} {text!r} not accepted: expected a positive number, "
                                   f"or empty for the catalog value")
                return
        if value != current:
            # the step's name is what the History panel and the status bar show: words, not the field's code name
            words = {"bandwidth_per_direction_Bps": "bandwidth per direction", "latency_s": "latency"}[attribute]
            self.document.push(SetAttribute(lid, attribute, value, f"set {words} of {lid}"))

    def _what(self, obj_id: str) -> str:
        """The object an edit was for, as the inspector's title names it."""
        topo = self.topo
        if obj_id in topo.links:
            lk = topo.links[obj_id]
            return f"link {obj_id} ({ends_words(topo, lk.a, lk.b, '—')})"
        if obj_id in topo.devices:
            return f"device {obj_id} ({topo.devices[obj_id].name})"
        return f"group {obj_id} ({topo.groups[obj_id].name})" if obj_id in topo.groups else obj_id

    def _refuse(self, edit: QLineEdit, message: str) -> None:
        """A refused entry: the field turns red with the reason as its tip, the status bar says it
        (a tip alone is only read by hovering), and nothing changes."""
        edit.setStyleSheet("background: #ffd6d6")
        edit.setToolTip(message)
        self.refused.emit(f"{message[0].upper()}{message[1:]}; nothing changed")

    def _group(self, gid: str) -> None:
        g = self.topo.groups[gid]
        inside = self.topo.devices_in_group(gid)
        self.title.setText(f"<b>{g.name}</b> — group {gid}")
        self._text_field(gid, "name", g.name, "name")
        self._row("Kind", self._label(g.kind))
        self._row("Contents", self._label(f"{counted(len(inside), 'device')}, "
                                                f"{counted(sum(self.topo.devices[d].kind == 'gpu' for d in inside), 'GPU')}"))
        box = self._take(QCheckBox)
        box.setText("collapsed")
        box.setChecked(gid in self.topo.layout.collapsed)
        self._wire(box, "toggled", lambda on: self.document.push(SetCollapsed(gid, on)))
        self._row("Drawn", box, "collapsed")


class InspectorScroll(QScrollArea):
    """The inspector in its dock: a short dock scrolls the rows instead of squeezing them into each
    other, while the dock stays as wide as the rows need (nothing is cut off on the right; there is
    no horizontal scrolling)."""

    def __init__(self, inspector: Inspector):
        super().__init__()
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(inspector)
        inspector.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:
        inner = self.widget().minimumSizeHint()
        return QSize(inner.width() + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth(),
                     super().minimumSizeHint().height())

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()   # the rows changed: the dock rereads how wide they need to be
        return False
