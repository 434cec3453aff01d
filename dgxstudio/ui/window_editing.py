"""The main window's editing actions: clipboard, delete, layout, find."""

from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QPointF, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from shiboken6 import isValid

from ..model import fileio
from ..model.clipboard import CLIP_FORMAT, copy_selection, paste_command
from ..model.commands import Macro, Move, RemoveItems, SetCollapsed
from ..model.layout import auto_layout

from .canvas_items import DeviceItem
from .paste_spots import PasteSpots
from .window_habits import copy_words, cursor_scene_pos, name_copies

READABLE = 0.6   # a device found in a cluster's overview is drawn at least at this scale: its name and ports show

MIME_CLIP = "application/x-dgxstudio-clip"


def with_insides(topo, ids: list[str]) -> list[str]:
    """The ids, and for each group among them every group and device inside it (at any depth)."""
    groups = {i for i in ids if i in topo.groups}
    if not groups:
        return list(ids)
    children: dict[str, list[str]] = {}
    for g in topo.groups.values():
        if g.parent is not None:
            children.setdefault(g.parent, []).append(g.id)
    inside, todo = set(), list(groups)
    while todo:
        gid = todo.pop()
        for c in children.get(gid, ()):
            if c not in inside and c not in groups:
                inside.add(c)
                todo.append(c)
    devices = [d for gid in (*groups, *inside) for d in topo.groups[gid].devices]
    return list(dict.fromkeys([*ids, *devices, *(g for g in topo.groups if g in inside)]))


def select_all_words(topo, ids: list[str], lod) -> str:
    """What Select all selected, and in an overview what it could not: the closed blocks' systems
    and switches (zooming in or double-clicking a block draws them, and Select all then takes them)."""
    systems = sum(1 for i in ids if i in topo.groups and topo.groups[i].kind == "system")
    counts = ((sum(1 for i in ids if i in topo.devices), "device", "devices"), (systems, "system", "systems"),
              (sum(1 for i in ids if i in topo.groups) - systems, "group", "groups"),
              (sum(1 for i in ids if i in topo.links), "link", "links"))
    parts = [f"{n:,} {one if n == 1 else many}" for n, one, many in counts if n]
    said = f"Selected {', '.join(parts)}" if parts else "Selected nothing"
    closed = [b.block for bid, b in lod.block_items.items() if bid not in lod.open_blocks] if lod is not None else []
    if not closed:
        return said
    inside = ", ".join(f"{n:,} {w}" for n, w in ((sum(len(b.members) for b in closed if b.tier == 0), "systems"),
                                                 (sum(len(b.members) for b in closed if b.tier != 0), "switches")) if n)
    return (f"{said}{' drawn in open blocks' if parts else ''}; {len(closed):,} closed "
            f"block{'s' if len(closed) != 1 else ''} ({inside}) cannot be selected: zoom in or double-click one to open it")


class EditActions:
    """Mixed into MainWindow: edits of the selection and finding devices."""

    _found: tuple[str | None, str | None] = (None, None)   # the last find's text (lower case) and match
    _paste_spots: PasteSpots | None = None

    @property
    def paste_spots(self) -> PasteSpots:
        """Where this window's copies landed: a further copy of the same goes beside them (paste_spots)."""
        if self._paste_spots is None:
            self._paste_spots = PasteSpots()
        return self._paste_spots

    # ---- editing ----------------------------------------------------------------------------------
    def _selection_changed(self) -> None:
        if isValid(self.scene) and isValid(self.inspector):  # the scene also signals while being destroyed
            self.inspector.show_ids(self.scene.selected_ids())

    def select_all(self) -> None:
        """Select everything drawn that can be selected, and say what that was: in a cluster's
        overview the closed blocks cannot be (they stand for hundreds of systems the canvas has not
        drawn), so at fit Select all selected nothing without a word."""
        for item in self.scene.items():
            if item.flags() & item.GraphicsItemFlag.ItemIsSelectable and item.isVisible():
                item.setSelected(True)
        self.show_status(select_all_words(self.document.topology, self.scene.selected_ids(), self.scene.lod))

    def copy(self) -> dict | None:
        return self._copy_as("Copied")

    def _copy_as(self, verb: str) -> dict | None:
        """Copy the selection to the clipboard; the status bar says ``verb`` ("Copied", "Cut") and what."""
        ids = self.scene.selected_device_ids()
        if not ids:
            self.show_status(f"Nothing to {'cut' if verb == 'Cut' else 'copy'}: select devices or groups")
            return None
        clip = copy_selection(self.document.topology, ids)
        data = QMimeData()
        data.setData(MIME_CLIP, json.dumps(clip).encode("utf-8"))
        data.setText(f"{len(ids)} DGX Studio devices")
        QApplication.clipboard().setMimeData(data)
        self.show_status(f"{verb} {copy_words(clip)}")
        return clip

    def _paste_clip(self, clip: dict, what: str) -> None:
        topo = self.document.topology
        try:
            cmd, mapping = paste_command(topo, clip, self.paste_spots.offset(topo, clip, (0.0, 0.0)))
        except fileio.TopologyFileError as exc:
            self.show_status(f"Cannot paste: {exc}")
            return
        cmd.text = f"{what} {copy_words(cmd)}"   # the History row says what came, as the status bar does
        name_copies(topo, cmd)   # as a paste under the mouse does
        self.document.push(cmd)
        self.paste_spots.remember(topo, mapping.values())
        self.scene.select_ids(mapping.values())
        self.show_status(f"{what.capitalize()}d {copy_words(cmd)}")

    def paste(self, at=None) -> None:
        """Paste the clipboard: at ``at`` (a canvas point, from the context menu), else under the mouse
        when it is over the canvas, else beside the originals. Copies get names of their own."""
        data = QApplication.clipboard().mimeData()
        if data is None or not data.hasFormat(MIME_CLIP):
            self.show_status("Nothing to paste")
            return
        try:
            clip = fileio.parse_json(bytes(data.data(MIME_CLIP)).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):  # the file rules: no inf, no endless numbers
            self.show_status("The clipboard holds no DGX Studio selection")
            return
        if not isinstance(clip, dict) or clip.get("format") != CLIP_FORMAT:
            self.show_status("The clipboard holds no DGX Studio selection")
            return
        where = at if isinstance(at, QPointF) else cursor_scene_pos(self.view)
        if where is None:
            self._paste_clip(clip, "paste")
            return
        try:
            self.paste_at(clip, where)
        except fileio.TopologyFileError as exc:
            self.show_status(f"Cannot paste: {exc}")

    def duplicate(self) -> None:
        ids = self.scene.selected_device_ids()
        if not ids:
            self.show_status("Nothing to duplicate")
            return
        self._paste_clip(copy_selection(self.document.topology, ids), "duplicate")

    def delete(self) -> None:
        """Delete the selection; a selected group goes with its devices and the groups inside it (as its
        context menu says), so a system box deleted in a cluster's overview takes its system away."""
        ids = self.scene.selected_ids()
        if not ids:
            return
        self.document.push(RemoveItems(with_insides(self.document.topology, ids),
                                       f"delete {len(ids)} item{'s' if len(ids) > 1 else ''}"))

    def cut(self) -> None:
        clip = self._copy_as("Cut")   # the status bar said "Copied" for a cut
        if clip is not None:
            ids = self.scene.selected_ids()   # what was copied goes: a group's devices with it
            self.document.push(RemoveItems(with_insides(self.document.topology, ids), f"cut {copy_words(clip)}"))

    def auto_layout(self) -> None:
        if self.scene.lod is not None:   # the overview places blocks, systems and switches itself
            self.show_status("Auto-layout changes nothing in a cluster's overview, which places its blocks, "
                             "systems and switches itself (it would only rearrange the devices inside every "
                             "system); it applies to designs drawn device by device")
            return
        topo = self.document.topology
        positions = auto_layout(topo)
        self.document.push(Move(positions, {k: topo.layout.positions.get(k) for k in positions}, "auto-layout"))
        QTimer.singleShot(0, self.view.fit)

    def set_all_collapsed(self, collapsed: bool) -> None:
        if self.scene.lod is not None:   # the overview opens systems by zoom: an edit here would change nothing drawn
            self.show_status("A cluster's overview opens systems as you zoom in or double-click them; "
                             "Expand and Collapse all apply to designs drawn system by system")
            return
        topo = self.document.topology
        cmds = [SetCollapsed(g.id, collapsed) for g in topo.groups.values()
                if g.kind == "system" and (g.id in topo.layout.collapsed) != collapsed]
        if cmds:
            self.document.push(Macro(cmds, ("collapse" if collapsed else "expand") + " all systems"))

    def focus_find(self) -> None:
        self.find_edit.setFocus()
        self.find_edit.selectAll()

    def find_hits(self, needle: str) -> list[str]:
        """Devices whose name or id holds ``needle`` (lower case), in document order."""
        return [d.id for d in self.document.topology.devices.values() if needle in d.name.lower() or needle in d.id.lower()]

    def find(self, text: str) -> str | None:
        """The device named or numbered ``text``, else the first whose name or id holds it; Enter again
        on the same text (its match still selected) goes on to the next match."""
        needle = text.strip().lower()
        if not needle:
            return None
        if self._found[0] == needle and self.scene.selected_ids() == [self._found[1]]:
            return self.find_next(+1)
        topo = self.document.topology
        hit = next((d.id for d in topo.devices.values() if d.id.lower() == needle or d.name.lower() == needle), None)
        hits = self.find_hits(needle)
        hit = hit or (hits[0] if hits else None)
        if hit is None:
            self.show_status(f"No device matches {text!r}")
            return None
        self.select_and_center([hit])
        more = f": {hits.index(hit) + 1} of {len(hits):,} matches, Enter or F3 for the next" if len(hits) > 1 else ""
        self.show_status(f"Found {topo.devices[hit].name} ({hit}){more}")
        self._found = (needle, hit)
        return hit

    def select_and_center(self, ids: list[str]) -> None:
        if self.scene.lod is not None and ids:   # a cluster's overview: open down to the first one found
            self.scene.lod.reveal(ids[0])
            self.scene.select_ids(ids)
            item = self.scene.item_for(ids[0])
            if item is not None and not item.isSelected():
                item.setSelected(True)
            if isinstance(item, DeviceItem) and item.scale() * self.view.transform().m11() < READABLE:
                # a system opens at 300 px, its devices then about 30 px wide: a bare box, nameless
                self.view.zoom(READABLE / (item.scale() * self.view.transform().m11()))
                self.view.centerOn(item)
            self.inspector.show_ids(list(ids))
            return
        self.scene.select_ids(ids)
        item = next((self.scene.item_for(i) for i in ids if self.scene.item_for(i) is not None), None)
        if item is not None:
            if not item.isSelected():
                item.setSelected(True)
            if self.view.transform().m11() < 0.6:  # zoom in far enough to see what was found
                self.view.resetTransform()
                self.view.zoomChanged.emit(1.0)
            self.view.centerOn(item)
        self.inspector.show_ids([i for i in ids])

    def about(self) -> None:
        from .about import about_text

        QMessageBox.about(self, "About DGX Studio", about_text())
