"""Habits of every diagram editor (issue 15, item 10), driven with real mouse and key events."""

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QDialog, QMenu, QTableWidget

from dgxstudio.ui.window_habits import unique_names

from .conftest import drag


def _menu(w, name="canvasMenu") -> QMenu:
    menus = [m for m in w.findChildren(QMenu, name) if m.isVisible()]
    assert menus, "no context menu opened"
    return menus[-1]


def _close_menus(w):
    for m in w.findChildren(QMenu):
        if m.isVisible():
            m.close()
    QApplication.processEvents()


def right_click(qtbot, widget, pos: QPoint) -> None:
    """A right click as the platform delivers it: press, release, then the context-menu event."""
    qtbot.mouseClick(widget, Qt.MouseButton.RightButton, pos=pos)
    QApplication.sendEvent(widget, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, widget.mapToGlobal(pos)))
    QApplication.processEvents()


def _at(w, item) -> QPoint:
    return w.view.mapFromScene(item.scenePos())


def test_right_click_menus_on_device_link_group_canvas_and_palette(make_window, qtbot):
    w = make_window("dgx1-v100")
    gpu = w.scene.device_items["gpu0"]
    right_click(qtbot, w.view.viewport(), _at(w, gpu))
    texts = [a.text() for a in _menu(w).actions()]
    assert "Delete" in texts and "Duplicate" in texts and any(t.startswith("Select every gpu") for t in texts)
    assert w.scene.selected_ids() == ["gpu0"]
    _close_menus(w)
    link = next(i for i in w.scene.link_items if not i.bundle)
    mid = (link.a.scenePos() + link.b.scenePos()) / 2
    right_click(qtbot, w.view.viewport(), w.view.mapFromScene(mid))
    menu = _menu(w)
    assert "Delete link" in [a.text() for a in menu.actions()]
    before = len(w.document.topology.links)
    next(a for a in menu.actions() if a.text() == "Delete link").trigger()
    assert len(w.document.topology.links) == before - 1
    _close_menus(w)
    frame = next(iter(w.scene.group_items.values()))
    title = frame.mapToScene(frame.frame.left() + 60, frame.frame.top() - frame.TITLE / 2)
    right_click(qtbot, w.view.viewport(), w.view.mapFromScene(title))
    assert "Collapse" in [a.text() for a in _menu(w).actions()]
    _close_menus(w)
    w.view.centerOn(w.scene.itemsBoundingRect().bottomRight())
    empty = w.view.mapFromScene(w.scene.itemsBoundingRect().bottomRight()) + QPoint(30, 30)
    right_click(qtbot, w.view.viewport(), empty)
    assert {"Paste here", "Select all", "Fit to view"} <= {a.text() for a in _menu(w).actions()}
    _close_menus(w)
    tree = w.palette.tree
    item = w.palette.item_for("part:" + next(p.id for p in w.document.topology.catalog.parts.values() if p.kind == "gpu"))
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    right_click(qtbot, tree.viewport(), rect.center())
    menu = _menu(w, "paletteMenu")
    n = len(w.document.topology.devices)
    menu.actions()[0].trigger()
    assert len(w.document.topology.devices) == n + 1
    _close_menus(w)


def test_snap_to_grid_and_arrow_key_nudge(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.view.resetTransform()
    gpu = w.scene.device_items["gpu0"]
    w.view.centerOn(gpu)
    qtbot.keyClick(w, Qt.Key.Key_Apostrophe, Qt.KeyboardModifier.ControlModifier)
    assert w.snap_action.isChecked() and w.scene.grid == 20
    start = _at(w, gpu)
    drag(w.view, start, start + QPoint(33, 17))
    x, y = w.document.topology.layout.positions["gpu0"]
    assert x % 20 == 0 and y % 20 == 0 and (x, y) == (gpu.pos().x(), gpu.pos().y())
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Right)
    qtbot.keyClick(w.view, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert w.document.topology.layout.positions["gpu0"] == (x + 10, y + 1)
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.document.topology.layout.positions["gpu0"] == (x + 10, y)


def test_align_and_distribute(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu0", "gpu1", "gpu2"])
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)
    ys = {w.document.topology.layout.positions[g][1] for g in ("gpu0", "gpu1", "gpu2")}
    assert len(ys) == 1
    w.distribute("x")
    xs = sorted(w.document.topology.layout.positions[g][0] for g in ("gpu0", "gpu1", "gpu2"))
    assert abs((xs[1] - xs[0]) - (xs[2] - xs[1])) < 1e-6


def test_editing_many_selected_devices_at_once(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.view.resetTransform()
    w.view.centerOn(w.scene.device_items["gpu0"])
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=_at(w, w.scene.device_items["gpu0"]))
    for g in ("gpu1", "gpu2"):
        qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                         pos=_at(w, w.scene.device_items[g]))
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu1", "gpu2"]
    combo = w.inspector.fields.get("part")
    assert combo is not None, "the inspector offers one part for all selected GPUs"
    target = next(i for i in range(combo.count()) if combo.itemData(i) and "P100" in combo.itemText(i))
    combo.setFocus()
    combo.setCurrentIndex(target)
    parts = {w.document.topology.devices[g].part for g in ("gpu0", "gpu1", "gpu2")}
    assert parts == {combo.itemData(target)}
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # one undo step for all
    assert len({w.document.topology.devices[g].part for g in ("gpu0", "gpu1", "gpu2")}) == 1
    assert w.document.topology.devices["gpu0"].part != combo.itemData(target)


def test_find_next_and_previous(make_window, qtbot):
    w = make_window("dgx1-v100")
    qtbot.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(w.find_edit, "GPU")
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    first = w.scene.selected_ids()
    qtbot.keyClick(w, Qt.Key.Key_F3)
    second = w.scene.selected_ids()
    qtbot.keyClick(w, Qt.Key.Key_F3)
    third = w.scene.selected_ids()
    assert len({tuple(first), tuple(second), tuple(third)}) == 3
    qtbot.keyClick(w, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert w.scene.selected_ids() == second
    assert "of 8" in w.status.text()


def test_paste_at_the_cursor_gives_copies_their_own_names(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu0", "gpu1"])
    qtbot.keyClick(w.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    corner = w.scene.itemsBoundingRect().bottomRight()
    w.view.centerOn(corner)
    at = w.view.mapFromScene(corner) + QPoint(60, 60)
    target = w.view.mapToScene(at)
    right_click(qtbot, w.view.viewport(), at)
    next(a for a in _menu(w).actions() if a.text() == "Paste here").trigger()
    _close_menus(w)
    new = w.scene.selected_ids()
    topo = w.document.topology
    names = [topo.devices[d].name for d in new if d in topo.devices]
    assert len(names) == 2 and not set(names) & {"GPU0", "GPU1"}
    assert len({d.name for d in topo.devices.values()}) == len(topo.devices)
    cx = sum(topo.layout.positions[d][0] for d in new if d in topo.devices) / 2
    assert abs(cx - target.x()) < 200
    assert unique_names({"GPU 3", "GPU 4"}, ["GPU 3", "Leaf"]) == ["GPU 5", "Leaf copy"]


def test_zoom_shortcuts_shortcut_list_and_user_guide(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.view.resetTransform()
    qtbot.keyClick(w.view, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert w.view.transform().m11() > 1.2
    qtbot.keyClick(w.view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert w.view.transform().m11() == 1.0
    qtbot.keyClick(w, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    dialog = w.findChild(QDialog, "shortcutList")
    assert dialog is not None and dialog.isVisible()
    table = dialog.findChild(QTableWidget)
    keys = {table.item(r, 0).text() for r in range(table.rowCount())}
    assert {"Ctrl+Z", "Ctrl+'", "F3", "Ctrl+0"} <= keys
    dialog.close()
    guide = w.user_guide()
    text = w.guide_browser.toPlainText()
    assert "short tour" in text and "legend" in text
    doc = w.guide_browser.document()
    assert doc.resource(doc.ResourceType.ImageResource.value, "window.png") is not None
    guide.close()


def test_link_count_is_limited_by_free_ports(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    lid = next(lk.id for lk in topo.links.values() if topo.devices[lk.a].kind == "nic" or topo.devices[lk.b].kind == "nic")
    w.select_and_center([lid])
    spin = w.inspector.fields["count"]
    assert spin.maximum() == topo.links[lid].count


def nic_and_switch(w):
    """A NIC and an InfiniBand switch dropped side by side on an empty canvas at actual size: (NIC id,
    switch id, the viewport, the NIC's link handle and the switch's centre in viewport points)."""
    from PySide6.QtCore import QPointF

    w.view.resetTransform()
    centre = w.view.mapToScene(w.view.viewport().rect().center())
    nic = w.scene.drop("part:connectx-6-hdr", centre - QPointF(150, 0))[0]
    switch = w.scene.drop("part:ib-switch-hdr-40", centre + QPointF(150, 0))[0]
    a, b = w.scene.device_items[nic], w.scene.device_items[switch]
    handle = w.view.mapFromScene(a.mapToScene(a.handle_center()))
    return nic, switch, w.view.viewport(), handle, w.view.mapFromScene(b.scenePos())


def test_dragging_a_link_shows_free_ports_and_shift_chooses_type_and_port_group(make_window, qtbot):
    from PySide6.QtCore import QEvent, QPointF
    from PySide6.QtGui import QMouseEvent

    from dgxstudio.model.topology import Topology
    from .conftest import send_mouse

    w = make_window(topology=Topology("t"))
    _nic, _switch, vp, handle, target = nic_and_switch(w)
    send_mouse(vp, QEvent.Type.MouseButtonPress, handle)
    send_mouse(vp, QEvent.Type.MouseMove, target, button=Qt.MouseButton.NoButton)
    hint = w.view._port_hint
    assert hint is not None and "free" in hint.text() and "2 ways fit" in w.status.text()
    release = QMouseEvent(QEvent.Type.MouseButtonRelease, QPointF(target), QPointF(vp.mapToGlobal(target)),
                          Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.ShiftModifier)
    QApplication.sendEvent(vp, release)
    menu = w.view.link_menu
    assert menu.isVisible() and w.view._port_hint is None
    choices = [a for a in menu.actions() if "between" in a.text()]
    assert [c.text().split(" between")[0] for c in choices] == ["InfiniBand HDR", "InfiniBand EDR"]
    choices[1].trigger()
    (link,) = w.document.topology.links.values()
    assert link.type == w.document.topology.catalog.link_type(link.type).id and "edr" in link.type.lower()
    menu.close()
