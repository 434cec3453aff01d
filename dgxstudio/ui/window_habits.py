"""Habits of every diagram editor, mixed into the main window: right-click menus, grid and snap,
align and distribute, arrow-key nudge, paste at the cursor with renamed copies, find next and
previous, zoom shortcuts, and the shortcut list."""

from __future__ import annotations

import re

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QAction, QCursor, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMenu, QTableWidget, QTableWidgetItem, QVBoxLayout

from ..model.clipboard import paste_command
from ..model.commands import Move, RemoveItems
from ..model.grouping import GroupItems, grouping_kind, grouping_plan
from ..model.topology import ModelError
from .bundle_links import links_menu
from .canvas_items import DeviceItem, GroupItem, LinkItem
from .canvas_lod_items import SYSTEM_BOX_STAYS, SystemBoxItem
from .nudge import Nudge

NUDGE = 10.0        # arrow keys; with Shift one unit
GRID = 20.0


def unique_names(taken: set[str], names: list[str]) -> list[str]:
    """Names for copies that read as copies and clash with nothing: ``GPU 3`` -> the next free number
    (``GPU 8``), a name without a number gets `` copy`` (then `` copy 2``...)."""
    out = []
    for name in names:
        m = re.match(r"^(.*?)(\d+)$", name)
        if m:
            stem, n = m.group(1), int(m.group(2))
            while f"{stem}{n}" in taken:
                n += 1
            candidate = f"{stem}{n}"
        else:
            candidate, k = f"{name} copy", 2
            while candidate in taken:
                candidate, k = f"{name} copy {k}", k + 1
        taken.add(candidate)
        out.append(candidate)
    return out


def name_copies(topo, cmd) -> None:
    """Pasted or duplicated devices and groups get names of their own (``GPU 3`` -> the next free
    number), so finds, findings, reports and ``export --system NAME`` never meet two of one name."""
    taken = {d.name for d in topo.devices.values()}
    for dev, name in zip(cmd.devices, unique_names(taken, [d.name for d in cmd.devices])):
        dev.name = name
    taken = {g.name for g in topo.groups.values()}   # a duplicated system too: "DGX H100 #1" -> "DGX H100 #17"
    for grp, name in zip(cmd.groups, unique_names(taken, [g.name for g in cmd.groups])):
        grp.name = name


def copy_words(cmd) -> str:
    """What a copy, cut, paste, duplicate or Ctrl+drag takes or adds (``cmd``: its command, or the
    clipboard's dict), for its History row and the status bar: "3 devices and 2 links" (the History
    named them all "paste" or "duplicate" alike)."""
    n, m = (len(cmd["devices"]), len(cmd["links"])) if isinstance(cmd, dict) else (len(cmd.devices), len(cmd.links))
    devices = f"{n} device{'s' if n != 1 else ''}"
    return f"{devices} and {m} link{'s' if m != 1 else ''}" if m else devices


class HabitActions:
    """Mixed into MainWindow."""

    def _build_habits(self, edit_menu, view_menu) -> None:
        e = edit_menu
        e.addSeparator()
        self._action(e, "Find &next", lambda: self.find_next(+1), "F3", "the next device matching the find box")
        self._action(e, "Find pre&vious", lambda: self.find_next(-1), "Shift+F3", "the previous match")
        align = e.addMenu("A&lign")
        for text, mode, key in (("Left edges", "left", "Ctrl+Alt+Left"), ("Right edges", "right", "Ctrl+Alt+Right"),
                                ("Top edges", "top", "Ctrl+Alt+Up"), ("Bottom edges", "bottom", "Ctrl+Alt+Down"),
                                ("Centres horizontally", "hcenter", None), ("Centres vertically", "vcenter", None)):
            self._action(align, text, lambda _c=False, m=mode: self.align(m), key, f"align the selection's {text.lower()}")
        align.addSeparator()
        self._action(align, "Distribute horizontally", lambda: self.distribute("x"), None,
                     "equal gaps between the selected items from left to right")
        self._action(align, "Distribute vertically", lambda: self.distribute("y"), None,
                     "equal gaps between the selected items from top to bottom")
        for key, dx, dy in (("Left", -1, 0), ("Right", 1, 0), ("Up", 0, -1), ("Down", 0, 1)):
            for mod, step in (("", NUDGE), ("Shift+", 1.0)):
                action = QAction(f"Nudge {key.lower()}", self.view)
                action.setShortcut(QKeySequence(mod + key))
                action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # only with the canvas focused
                action.triggered.connect(lambda _c=False, x=dx * step, y=dy * step: self.nudge(x, y))
                self.view.addAction(action)
        deselect = QAction("Select none (or drop the link or move being dragged)", self.view)
        deselect.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        deselect.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # Escape in a field stays the field's
        deselect.triggered.connect(self.view.escape)
        self.view.addAction(deselect)
        self._action(e, "&Rename", self.rename_selection, "F2",
                     "type a new name for the selected device or group (double-click a device does the same)")
        self.scene.renameRequested.connect(self.rename_selection)
        group = self._action(e, "&Group", self.group_selection, "Ctrl+G",
                             "put the selected devices (or groups) in a new group: a system when they are in none")
        group.setShortcuts([QKeySequence("Ctrl+G"), QKeySequence("Ctrl+Alt+G")])   # (Ctrl+Alt+G: before session 32)
        self._action(e, "&Ungroup", self.ungroup, "Ctrl+Shift+G",
                     "dissolve the selected groups (or the selected devices' group); their devices stay")
        view_menu.addSeparator()
        self._action(view_menu, "Zoom to &selection", self.zoom_to_selection, "Shift+F",
                     "fit the selected items in the view")
        # Ctrl+G groups in draw.io, Visio and Inkscape; the grid takes Ctrl+' (Illustrator's grid key)
        self.snap_action = self._action(view_menu, "&Snap to grid", self._toggle_snap, "Ctrl+'",
                                        f"show a {GRID:g}-unit grid and snap moved items to it")
        self.snap_action.setCheckable(True)
        self._action(view_menu, "Actual si&ze (100%)", self._zoom_reset, "Ctrl+0")
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)
        self.view.contextMenuRequested.connect(self.context_menu)
        self.palette.contextMenuRequested.connect(self.palette_menu)

    # ---- view ----------------------------------------------------------------------------------------
    def _zoom_reset(self) -> None:
        self.view.resetTransform()
        self.view.zoomChanged.emit(1.0)

    def zoom_to_selection(self) -> None:
        """Fit the selected items in the view, as *Fit to view* fits everything; one small device is
        not blown up past actual size (its neighbours stay in sight)."""
        rect = QRectF()
        for item in self.scene.selectedItems():
            rect = rect.united(item.sceneBoundingRect())
        if rect.isNull():
            self.show_status("Nothing selected to zoom to")
            return
        self.view.fit_rect(rect, at_most=1.0)

    def rename_selection(self) -> None:
        """F2, or a double-click on a device, as in every diagram tool: the Inspector's Name field, its
        text selected, so typing renames (Enter keeps it, one undo step; Escape on the canvas after)."""
        field = self.inspector.fields.get("name") if len(self.scene.selected_ids()) == 1 else None
        if field is None:
            self.show_status("Select one device or group to rename it")
            return
        self.inspector_dock.show()
        self.inspector_dock.raise_()
        field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        field.selectAll()

    def group_selection(self) -> str | None:
        """A new group around the selection (one undo step): kind ``system`` for devices in no system
        yet (what NCCL XML, ASTRA-sim and the per-system figures look for), else a plain group."""
        topo = self.document.topology
        if self.scene.lod is not None:
            self.show_status("Group works where the design is drawn whole; this cluster is drawn as its structure")
            return None
        ids = self.scene.selected_ids()
        try:
            _devices, groups, container = grouping_plan(topo, ids)
        except ModelError as exc:
            self.show_status(f"Cannot group: {exc}")
            return None
        kind = grouping_kind(topo, groups, container)
        gid = topo.new_id("system" if kind == "system" else "group")
        (name,) = unique_names({g.name for g in topo.groups.values()}, ["System 1" if kind == "system" else "Group 1"])
        cmd = GroupItems(ids, gid, name)
        self.document.push(cmd)
        self.scene.select_ids([gid])
        self.show_status(f"Grouped {len(ids)} items as {name} ({kind})")
        return gid

    def ungroup(self) -> None:
        """Dissolve the selected groups (one undo step): their devices and inner groups move to the group
        around them, links and positions untouched. *Delete* takes a group's devices with it. With no
        group selected, the innermost group of the selected devices, if they share one (PowerPoint,
        draw.io and Visio ungroup the group a selected member is in)."""
        topo = self.document.topology
        if self.scene.lod is not None:
            self.show_status("Ungroup works where the design is drawn whole; this cluster is drawn as its structure")
            return
        ids = self.scene.selected_ids()
        groups = [i for i in ids if i in topo.groups]
        around = ""
        if not groups:
            devices = [i for i in ids if i in topo.devices]
            shared = {g.id if (g := topo.group_of(d)) else None for d in devices}
            if len(shared) != 1 or None in shared:
                why = ("The selected devices share no group. " if len(devices) > 1 else
                       f"{topo.devices[devices[0]].name} is in no group. " if devices else "")
                self.show_status(f"{why}Select a group (a system's frame or box) to ungroup it")
                return
            groups = list(shared)
            around = (f" (the group around {topo.devices[devices[0]].name})" if len(devices) == 1 else
                      f" (the group around the {len(devices)} selected devices)")
        names = ", ".join(topo.groups[g].name for g in groups)
        self.document.push(RemoveItems(groups, f"ungroup {names}"))
        self.show_status(f"Ungrouped {names}{around}")

    def _toggle_snap(self, on: bool) -> None:
        self.scene.set_grid(GRID if on else 0.0)
        self.show_status(f"Snap to a {GRID:g}-unit grid" if on else "Snap off")

    # ---- moving --------------------------------------------------------------------------------------
    def _movable(self) -> dict[str, QPointF]:
        """The selected items that move, at their places in the document's layout. In a cluster's
        overview that is the devices drawn in an open system or block (at the overview's scale, so
        their document places are read back); a system box keeps the overview's place."""
        lod = self.scene.lod
        out = {}
        for item in self.scene.selectedItems():
            key = self.scene._key(item)
            if key is None:
                continue
            if lod is None:
                out[key] = item.pos()
            elif getattr(item, "doc_map", None) is not None:
                out[key] = QPointF(*lod.document_position(item))
        return out

    def _nothing_movable(self) -> None:
        """Say why a move did nothing when the selection holds only system boxes of the overview."""
        if self.scene.lod is not None and any(isinstance(i, SystemBoxItem) for i in self.scene.selectedItems()):
            self.show_status(SYSTEM_BOX_STAYS)

    def _push_move(self, positions: dict[str, tuple[float, float]], text: str) -> None:
        topo = self.document.topology
        changed = {k: v for k, v in positions.items() if topo.layout.positions.get(k) != v}
        if changed:
            self.document.push(Move(changed, {k: topo.layout.positions.get(k) for k in changed}, text))

    def nudge(self, dx: float, dy: float) -> None:
        items = self._movable()
        if not items:
            self._nothing_movable()
            return
        positions = {k: (p.x() + dx, p.y() + dy) for k, p in items.items()}
        topo = self.document.topology
        self.document.push(Nudge(positions, {k: topo.layout.positions.get(k) for k in positions},
                                 f"nudge {len(items)} item{'s' if len(items) > 1 else ''}", "x" if dx else "y"))

    def align(self, mode: str) -> None:
        items = self._movable()
        if len(items) < 2:
            self.show_status("Select two or more devices to align them")
            return
        xs, ys = [p.x() for p in items.values()], [p.y() for p in items.values()]
        target = {"left": min(xs), "right": max(xs), "hcenter": sum(xs) / len(xs),
                  "top": min(ys), "bottom": max(ys), "vcenter": sum(ys) / len(ys)}[mode]
        horizontal = mode in ("left", "right", "hcenter")
        self._push_move({k: (target, p.y()) if horizontal else (p.x(), target) for k, p in items.items()},
                        f"align {len(items)} items ({mode})")

    def distribute(self, axis: str) -> None:
        items = self._movable()
        if len(items) < 3:
            self.show_status("Select three or more devices to distribute them")
            return
        coord = (lambda p: p.x()) if axis == "x" else (lambda p: p.y())
        order = sorted(items, key=lambda k: coord(items[k]))
        lo, hi = coord(items[order[0]]), coord(items[order[-1]])
        step = (hi - lo) / (len(order) - 1)
        out = {}
        for i, k in enumerate(order):
            p = items[k]
            out[k] = (lo + i * step, p.y()) if axis == "x" else (p.x(), lo + i * step)
        self._push_move(out, f"distribute {len(items)} items")

    # ---- paste at the cursor -------------------------------------------------------------------------
    def paste_at(self, clip: dict, scene_pos: QPointF, what: str = "paste") -> list[str]:
        """Paste centred on a point of the canvas; copies get names of their own."""
        xs = [p[0] for p in clip.get("layout", {}).get("positions", {}).values()] or [0.0]
        ys = [p[1] for p in clip.get("layout", {}).get("positions", {}).values()] or [0.0]
        offset = (scene_pos.x() - (min(xs) + max(xs)) / 2, scene_pos.y() - (min(ys) + max(ys)) / 2)
        topo = self.document.topology
        cmd, mapping = paste_command(topo, clip, self.paste_spots.offset(topo, clip, offset))
        cmd.text = f"{what} {copy_words(cmd)}"
        name_copies(topo, cmd)
        self.document.push(cmd)
        self.paste_spots.remember(topo, mapping.values())
        self.scene.select_ids(mapping.values())
        self.show_status(f"Pasted {copy_words(cmd)}")
        return list(mapping.values())

    # ---- find ----------------------------------------------------------------------------------------
    def find_next(self, direction: int = 1) -> str | None:
        needle = self.find_edit.text().strip().lower()
        if not needle:
            self.focus_find()
            return None
        topo = self.document.topology
        hits = self.find_hits(needle)
        if not hits:
            self.show_status(f"No device matches {self.find_edit.text()!r}")
            return None
        current = self.scene.selected_ids()
        k = hits.index(current[0]) if len(current) == 1 and current[0] in hits else (-1 if direction > 0 else 0)
        hit = hits[(k + direction) % len(hits)]
        self.select_and_center([hit])
        self.show_status(f"{hits.index(hit) + 1} of {len(hits):,}: {topo.devices[hit].name}")
        self._found = (needle, hit)
        return hit

    # ---- context menus -------------------------------------------------------------------------------
    def context_menu(self, item, scene_pos: QPointF, global_pos) -> QMenu:
        """What a right click offers: on a device, a link, a group, or the empty canvas."""
        menu = QMenu(self)
        menu.setObjectName("canvasMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if item is not None and not item.isSelected():
            self.scene.select_ids([])
            item.setSelected(True)
        if isinstance(item, DeviceItem):
            dev = self.document.topology.devices[item.device_id]
            menu.addSection(dev.name)
            menu.addAction("Inspect", lambda: (self.inspector_dock.show(), self.inspector_dock.raise_()))
            menu.addAction("Copy", self.copy)
            menu.addAction("Duplicate", self.duplicate)
            menu.addAction(f"Select every {dev.kind.replace('_', ' ')}", lambda k=dev.kind: self.scene.select_ids(
                [d.id for d in self.document.topology.devices.values() if d.kind == k]))
            menu.addAction("Group the selection", self.group_selection)
            menu.addSeparator()
            menu.addAction("Delete", self.delete)
        elif isinstance(item, LinkItem):
            menu.addSection("Link" if not item.bundle else "Bundle of links")
            if not item.bundle:
                menu.addAction("Inspect", lambda: (self.inspector_dock.show(), self.inspector_dock.raise_()))
                menu.addAction("Select its ends", lambda: self.scene.select_ids(
                    [x for lid in item.link_ids for x in (self.document.topology.links[lid].a,
                                                         self.document.topology.links[lid].b)]))
                menu.addSeparator()
                menu.addAction("Delete link", lambda ids=list(item.link_ids): self.document.push(
                    RemoveItems(ids, f"delete {len(ids)} link{'s' if len(ids) > 1 else ''}")))
            else:   # what the bundle is, and the way to the two things it joins
                menu.addAction(item.toolTip().removeprefix("bundle: ")).setEnabled(False)
                menu.addAction("Zoom to its ends", lambda a=item.a, b=item.b: self.view.fit_rect(
                    a.sceneBoundingRect().united(b.sceneBoundingRect())))
                # a collapsed system's links could not be reached without opening it (the editor review)
                links_menu(menu, self.scene, self.view, item.link_ids)
                menu.addSeparator()
                n = len(item.link_ids)
                menu.addAction(f"Delete its {n:,} link{'s' if n > 1 else ''}", lambda ids=list(item.link_ids): self.document.push(
                    RemoveItems(ids, f"delete {len(ids):,} link{'s' if len(ids) > 1 else ''} of a bundle")))
        elif isinstance(item, GroupItem):
            group = self.document.topology.groups[item.group_id]
            menu.addSection(group.name)
            menu.addAction("Expand" if item.collapsed else "Collapse", lambda g=item.group_id: self.scene.toggle_group(g))
            menu.addAction("Copy", self.copy)
            menu.addAction("Duplicate", self.duplicate)
            menu.addAction("Group the selection", self.group_selection)
            menu.addAction("Ungroup (keep its devices)", self.ungroup)
            menu.addSeparator()
            menu.addAction("Delete group and its devices", self.delete)
        else:
            menu.addAction("Paste here", lambda p=QPointF(scene_pos): self.paste(p))
            menu.addAction("Select all", self.select_all)
            menu.addSeparator()
            menu.addAction("Fit to view", self.view.fit)
            menu.addAction("Auto-layout", self.auto_layout)
            menu.addAction(self.snap_action)
        if global_pos is not None:
            menu.popup(global_pos)
        return menu

    def palette_menu(self, payload: str, global_pos) -> QMenu:
        menu = QMenu(self)
        menu.setObjectName("paletteMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        centre = self.view.mapToScene(self.view.viewport().rect().center())
        menu.addAction("Add at the centre of the canvas", lambda: self.scene.drop(payload, centre))
        if global_pos is not None:
            menu.popup(global_pos)
        return menu

    # ---- help ----------------------------------------------------------------------------------------
    def shortcut_list(self) -> QDialog:
        """Every menu command with a shortcut, in a table."""
        rows = []
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            if menu is None:
                continue
            stack = [(menu_action.text().replace("&", ""), menu)]
            while stack:
                where, m = stack.pop()
                for a in m.actions():
                    if a.menu() is not None:
                        stack.append((f"{where} › {a.text().replace('&', '')}", a.menu()))
                    elif a.shortcuts():
                        text = a.text().replace("&", "")
                        if text.startswith(("Undo ", "Redo ")):   # the undo stack's actions name the next step
                            text = text[:4]
                        rows.append((", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts()),
                                     f"{where} › {text}"))
        rows += [("Arrow keys (Shift: 1 unit)", "Nudge the selection on the canvas"),
                 ("Escape", "Select nothing on the canvas (or drop the link or move being dragged)"),
                 ("Wheel", "Zoom the canvas"), ("Middle drag, or Space + drag", "Pan the canvas"),
                 ("Drag from a device's round handle", "Link it to another device"),
                 ("Ctrl + drag", "Copy what is dragged (a plain drag out of a frame leaves its group)"),
                 ("Double-click a system", "Expand or collapse it"),
                 ("Double-click a bundle", "Open the collapsed systems at its ends"), ("Double-click a device", "Rename it (as F2)"),
                 ("Right click", "What you can do with the item")]
        dialog = QDialog(self)
        dialog.setObjectName("shortcutList")
        dialog.setWindowTitle("Keyboard shortcuts")
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Keys", "Command"])
        for r, (keys, what) in enumerate(rows):
            table.setItem(r, 0, QTableWidgetItem(keys))
            table.setItem(r, 1, QTableWidgetItem(what))
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        layout = QVBoxLayout(dialog)
        layout.addWidget(table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout.addWidget(buttons)
        dialog.resize(560, min(640, self.height() - 40))
        dialog.show()
        return dialog

    def user_guide(self) -> QDialog:
        """The tour of the README, with pictures, in a window of its own."""
        from importlib.resources import files

        from .guide_browser import GuideBrowser

        folder = files("dgxstudio.resources").joinpath("guide")
        browser = GuideBrowser(str(folder))   # (its pictures at its width: guide_browser.py)
        try:
            browser.setMarkdown(folder.joinpath("guide.md").read_text(encoding="utf-8"))
        except OSError as exc:
            browser.setPlainText(f"The user guide is missing from this installation: {exc}")
        dialog = QDialog(self)
        dialog.setObjectName("userGuide")
        dialog.setWindowTitle("DGX Studio — user guide")
        layout = QVBoxLayout(dialog)
        layout.addWidget(browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout.addWidget(buttons)
        screen = self.screen().availableGeometry() if self.screen() else None
        dialog.resize(min(900, screen.width() - 40) if screen else 900, min(700, screen.height() - 60) if screen else 700)
        dialog.show()
        self.guide_browser = browser
        return dialog


def cursor_scene_pos(view) -> QPointF | None:
    """Where the mouse is on the canvas, or None when it is elsewhere."""
    local = view.viewport().mapFromGlobal(QCursor.pos())
    if view.viewport().rect().contains(local):
        return view.mapToScene(local)
    return None
