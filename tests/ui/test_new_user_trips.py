"""What a new user tripped on (issue 15, items 2, 4, 5, 7), driven with real mouse and key events."""

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication

from dgxstudio.model.topology import Topology
from dgxstudio.ui.canvas import GroupItem
from dgxstudio.ui.canvas_items import fit_label
from dgxstudio.ui.main_window import MainWindow

from .conftest import drag, send_mouse


def view_pos(w, scene_point) -> QPoint:
    return w.view.mapFromScene(scene_point)


def test_delete_or_undo_while_dragging_a_link_cancels_it_and_devices_still_move(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.view.resetTransform()
    for key in (Qt.Key.Key_Delete, "undo"):
        gpu0 = w.scene.device_items["gpu0"]
        w.view.centerOn(gpu0)
        qtbot.wait(20)
        other = next(i for d, i in w.scene.device_items.items() if d != "gpu0"
                     and w.view.viewport().rect().contains(view_pos(w, i.scenePos())))
        qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=view_pos(w, other.scenePos()))
        assert w.scene.selected_ids() == [other.device_id]
        handle = view_pos(w, gpu0.mapToScene(gpu0.handle_center()))
        vp = w.view.viewport()
        send_mouse(vp, QEvent.Type.MouseButtonPress, handle)
        send_mouse(vp, QEvent.Type.MouseMove, handle + QPoint(30, 30), button=Qt.MouseButton.NoButton)
        assert w.view._link_line is not None
        if key == "undo":
            qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        else:
            qtbot.keyClick(w.view, key)
        for step in range(3):  # before the fix: RuntimeError ... QGraphicsLineItem already deleted
            send_mouse(vp, QEvent.Type.MouseMove, handle + QPoint(40 + 10 * step, 40), button=Qt.MouseButton.NoButton)
        send_mouse(vp, QEvent.Type.MouseButtonRelease, handle + QPoint(70, 40), buttons=Qt.MouseButton.NoButton)
        QApplication.processEvents()
        assert w.view._link_line is None and "cancelled" in w.status.text()
        # devices still move
        gpu0 = w.scene.device_items["gpu0"]
        before = gpu0.pos()
        start = view_pos(w, gpu0.scenePos())
        drag(w.view, start, start + QPoint(40, 25))
        assert w.scene.device_items["gpu0"].pos() != before
    assert "gpu0" in w.document.topology.devices


def test_expanding_a_system_draws_it_where_its_box_was_and_the_view_follows(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    topo = w.document.topology
    gid = next(g.id for g in topo.groups.values() if g.kind == "system" and g.id in topo.layout.collapsed
               and g.name.endswith("#6"))
    box = w.scene.group_items[gid]
    w.view.resetTransform()
    w.view.centerOn(box)
    qtbot.wait(20)
    box_at = box.scenePos()
    qtbot.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=view_pos(w, box_at))
    QApplication.processEvents()
    frame = w.scene.group_items[gid]
    assert not frame.collapsed
    assert abs(frame.frame.center().x() - box_at.x()) < 60 and abs(frame.frame.center().y() - box_at.y()) < 60
    visible = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert visible.contains(frame.frame.center())
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # one undo step
    assert gid in topo.layout.collapsed


def test_names_are_never_cut_into_another_name(make_window, qtbot):
    width = 74.0
    for name in ("DGX-1 #110", "NVSwitch 0", "DGX-1 #1 GPU0", "DGX-1 #48", "DGX-1 #488"):
        font, lines = fit_label(name, width)
        shown = " ".join(lines)
        assert shown == name or "…" in shown, f"{name!r} drawn as {shown!r}"
        assert all(QFontMetricsF(font).horizontalAdvance(line) <= width for line in lines)
    assert fit_label("NVSwitch 0", width)[1] == ["NVSwitch 0"]
    font, lines = fit_label("a very long device name that goes on 110", width)
    assert lines[-1].endswith("on 110") and "…" in lines[0]   # the end kept whole, the start elided
    # on the canvas: a system box and a device show whole names (or marked elisions) with the full name on hover
    topo = Topology("t")
    w = make_window(topology=topo)
    w.view.resetTransform()
    payload = "part:" + next(p.id for p in topo.catalog.parts.values() if p.kind == "nvswitch")
    w.scene.drop(payload, w.view.mapToScene(w.view.viewport().rect().center()))
    item = next(iter(w.scene.device_items.values()))
    assert " ".join(item.label_lines) == item.name and item.name in item.toolTip()
    w.document.undo_stack.setClean()
    w.open_preset("dgx1-fat-tree-124")
    for g in w.scene.group_items.values():
        if isinstance(g, GroupItem) and g.collapsed:
            shown = " ".join(g.title_lines)
            assert shown == g.title or "…" in shown


def test_the_window_fits_a_1280x800_screen(qtbot):
    w = MainWindow(Topology("Untitled"))
    qtbot.addWidget(w)
    avail = w.screen().availableGeometry()
    assert w.width() <= avail.width() and w.height() <= avail.height()
    w.resize(1280, 768)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(50)  # the default dock layout is made once the window is shown
    hint = w.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 800 - 32, hint
    assert w.height() <= 768
    assert w.statusBar().isVisible() and w.statusBar().geometry().bottom() <= w.height()
    w.document.undo_stack.setClean()
    w.close()


def test_nvl72_tray_names_read_whole_at_the_zoom_that_fits_the_rack(make_window, qtbot):
    """Issue 12: the GB200 NVL72 opens collapsed by tray, every tray name on one line at 10 pt, at a zoom
    where that is 8 screen pixels or more; other presets' system boxes keep their size and fonts."""
    w = make_window("gb200-nvl72")
    w.view.fit()
    QApplication.processEvents()
    zoom = w.view.transform().m11()
    trays = [g for g in w.scene.group_items.values()
             if g.collapsed and w.document.topology.groups[g.group_id].kind == "tray"]
    assert len(trays) == 27
    for g in trays:
        assert g.title_lines == [g.title] and g.title_font.pointSize() == 10, g.title
        assert QFontMetricsF(g.title_font).height() * zoom >= 8, zoom
    visible = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert all(visible.contains(g.sceneBoundingRect()) for g in trays)
    # rack order: compute trays 1-10 above the switch trays, 11-18 below
    y = {w.document.topology.groups[g.group_id].name: g.scenePos().y() for g in trays}
    assert max(y[f"Compute tray {i}"] for i in range(1, 11)) < min(y[f"Switch tray {i}"] for i in range(1, 10))
    assert max(y[f"Switch tray {i}"] for i in range(1, 10)) < min(y[f"Compute tray {i}"] for i in range(11, 19))
    w.document.undo_stack.setClean()
    w.open_preset("dgx1-fat-tree-124")
    boxes = [g for g in w.scene.group_items.values() if g.collapsed]
    assert boxes and all(g.box_w == GroupItem.BOX_W for g in boxes)


def test_a_port_group_keeps_its_name_and_count_on_one_line(make_window):
    """Zoomed in on a DGX H100, a GPU box read 'nvlink 18/18 pcie' over '1/1': the break parted a
    port group's name from its count (review). Lines break between groups only."""
    from dgxstudio.ui.canvas_items import _FONT, metrics, wrap_words

    w = make_window("dgx-h100")
    item = w.scene.device_items["gpu0"]
    fm = metrics(_FONT)[0]
    for width in (fm.horizontalAdvance("nvlink 18/18 pcie"), fm.horizontalAdvance("nvlink 18/18"), 10.0):
        lines = wrap_words(item.ports, fm, width)
        assert [line.replace("\u00a0", " ") for line in lines] == ["nvlink 18/18", "pcie 1/1"], width
