"""A diagram-editor review of the canvas (session 32): gestures a draw.io, Visio or yEd user expects,
driven with real keys and mouse events on the real widgets."""

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication, QLabel

from dgxstudio.model import dumps

from .conftest import send_mouse
from .test_editor import view_pos


def _key(qtbot, w, key, mods=Qt.KeyboardModifier.NoModifier):
    w.view.setFocus()
    qtbot.keyClick(w.view, key, mods)
    QApplication.processEvents()


CTRL = Qt.KeyboardModifier.ControlModifier


def test_undo_and_redo_bring_back_the_selection_of_their_moment(make_window, qtbot):
    """Undo of a delete selected nothing (the restored devices had to be picked again), redo of a
    duplicate left the copy unselected, undo of a group selected nothing."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    w.scene.select_ids(["gpu0", "gpu1"])
    _key(qtbot, w, Qt.Key.Key_Delete)
    assert "gpu0" not in topo.devices and w.scene.selected_ids() == []
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu1"]
    _key(qtbot, w, Qt.Key.Key_Y, CTRL)   # redo the delete: nothing left to select
    assert w.scene.selected_ids() == []
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu1"]

    w.scene.select_ids(["gpu3"])
    _key(qtbot, w, Qt.Key.Key_D, CTRL)
    (copy,) = w.scene.selected_ids()
    assert copy != "gpu3" and copy in topo.devices
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert w.scene.selected_ids() == ["gpu3"] and copy not in topo.devices
    _key(qtbot, w, Qt.Key.Key_Z, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert w.scene.selected_ids() == [copy]

    lid = next(iter(topo.links))
    w.scene.select_ids([lid])
    _key(qtbot, w, Qt.Key.Key_Delete)
    assert lid not in topo.links
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert w.scene.selected_ids() == [lid]


def test_undo_of_a_group_selects_its_devices_again(make_window, qtbot):
    from dgxstudio.model.topology import Topology

    from .test_editor import drop_from_palette

    w = make_window(topology=Topology("t"))
    drop_from_palette(w, "part:tesla-v100-sxm2", QPoint(300, 250))
    drop_from_palette(w, "part:tesla-v100-sxm2", QPoint(600, 250))
    topo = w.document.topology
    gpus = sorted(topo.devices)
    before = dumps(topo)
    w.scene.select_ids(gpus)
    _key(qtbot, w, Qt.Key.Key_G, CTRL)   # Ctrl+G groups, as in draw.io, Visio and Inkscape (it was snap to grid)
    assert not w.snap_action.isChecked()
    (gid,) = topo.groups
    assert w.scene.selected_ids() == [gid]
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert dumps(topo) == before and sorted(w.scene.selected_ids()) == gpus
    _key(qtbot, w, Qt.Key.Key_Y, CTRL)
    assert w.scene.selected_ids() == [gid]


def test_escape_during_a_move_puts_the_items_back_and_moves_nothing(make_window, qtbot):
    """Escape in the middle of dragging devices cleared the selection and left the dragged device where
    the mouse was, while the document kept its old place: the canvas showed one drawing and Save wrote
    another. Now the devices go back, nothing is pushed, and the selection stays."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    before = dumps(topo)
    w.scene.select_ids(["gpu0", "gpu1"])
    at = {d: w.scene.device_items[d].pos() for d in ("gpu0", "gpu1")}
    vp = w.view.viewport()
    start = view_pos(w, "gpu0")
    w.view.setFocus()
    send_mouse(vp, QEvent.Type.MouseButtonPress, start)
    for i in range(1, 6):
        send_mouse(vp, QEvent.Type.MouseMove, start + QPoint(25 * i, 12 * i), button=Qt.MouseButton.NoButton)
    assert w.scene.device_items["gpu0"].pos() != at["gpu0"]   # the drag is under way
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    assert {d: w.scene.device_items[d].pos() for d in at} == at
    assert "Move cancelled" in w.status.text()
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu1"]
    for i in range(6, 9):   # the hand goes on moving before it lets go: nothing follows it
        send_mouse(vp, QEvent.Type.MouseMove, start + QPoint(25 * i, 12 * i), button=Qt.MouseButton.NoButton)
    send_mouse(vp, QEvent.Type.MouseButtonRelease, start + QPoint(200, 96), buttons=Qt.MouseButton.NoButton)
    QApplication.processEvents()
    assert {d: w.scene.device_items[d].pos() for d in at} == at
    assert w.document.undo_stack.count() == 0 and dumps(topo) == before
    for d, p in at.items():   # the drawing and the document agree
        assert topo.layout.positions[d] == (p.x(), p.y())


def test_a_second_paste_or_duplicate_lands_beside_the_first_not_on_it(make_window, qtbot):
    """Ctrl+V twice with the mouse off the canvas, or Ctrl+D twice on the same original, put the second
    copy exactly over the first: one copy seen, two in the design."""
    from unittest import mock

    w = make_window("dgx1-v100")
    topo = w.document.topology

    def spots(ids):
        return [topo.layout.positions[i] for i in ids]

    w.scene.select_ids(["gpu0"])
    _key(qtbot, w, Qt.Key.Key_C, CTRL)
    with mock.patch("dgxstudio.ui.window_editing.cursor_scene_pos", return_value=None):   # mouse off the canvas
        seen = []
        for _ in range(3):
            _key(qtbot, w, Qt.Key.Key_V, CTRL)
            (copy,) = w.scene.selected_ids()
            seen.append(topo.layout.positions[copy])
    assert len(set(seen)) == 3, seen
    x0, y0 = topo.layout.positions["gpu0"]
    assert seen == [(x0 + 60, y0 + 60), (x0 + 120, y0 + 120), (x0 + 180, y0 + 180)]
    dups = []
    for _ in range(2):
        w.scene.select_ids(["gpu5"])
        _key(qtbot, w, Qt.Key.Key_D, CTRL)
        dups += w.scene.selected_ids()
    assert len(set(spots(dups))) == 2
    second = topo.layout.positions[dups[1]]
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)   # the second duplicate undone: a third lands where it was
    w.scene.select_ids(["gpu5"])
    _key(qtbot, w, Qt.Key.Key_D, CTRL)
    (third,) = w.scene.selected_ids()
    assert topo.layout.positions[third] == second != topo.layout.positions[dups[0]]


def test_a_duplicated_or_second_dropped_system_gets_a_name_of_its_own(make_window, qtbot):
    """Ctrl+D on a collapsed "DGX H100 #1" of a generated fat tree made a second "DGX H100 #1", and two
    DGX H100 dragged from the palette were both "DGX H100": the Inspector, findings and
    ``export --system NAME`` could not tell them apart."""
    from dgxstudio.model.topology import Topology
    from dgxstudio.model.fabrics import build_fat_tree

    from .test_editor import drop_from_palette

    w = make_window(topology=build_fat_tree(4, "dgx-h100", rail_optimized=True))
    topo = w.document.topology
    first = next(g for g in topo.groups.values() if g.kind == "system")
    w.scene.select_ids([first.id])
    _key(qtbot, w, Qt.Key.Key_D, CTRL)
    (copy,) = w.scene.selected_ids()
    names = [g.name for g in topo.groups.values() if g.kind == "system"]
    assert len(names) == len(set(names)) == 5, names
    assert topo.groups[copy].name == first.name.rstrip("0123456789") + "5"
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert copy not in topo.groups

    w = make_window(topology=Topology("t"))
    drop_from_palette(w, "system:dgx-h100", QPoint(250, 250))
    drop_from_palette(w, "system:dgx-h100", QPoint(650, 250))
    names = sorted(g.name for g in w.document.topology.groups.values())
    assert names == ["DGX H100", "DGX H100 #2"]


def test_escape_during_a_selection_rectangle_drops_it_and_gives_the_selection_back(make_window, qtbot):
    """Escape while dragging a selection rectangle cleared the selection, and the rectangle went on
    selecting whatever the mouse swept afterwards."""
    w = make_window("dgx-h100")
    w.view.fit()
    QApplication.processEvents()
    w.scene.select_ids(["gpu0"])
    vp = w.view.viewport()
    corner = w.view.mapFromScene(w.scene.itemsBoundingRect().topLeft()) - QPoint(10, 10)
    w.view.setFocus()
    send_mouse(vp, QEvent.Type.MouseButtonPress, corner)
    for i in range(1, 5):
        send_mouse(vp, QEvent.Type.MouseMove, corner + QPoint(90 * i, 70 * i), button=Qt.MouseButton.NoButton)
    assert len(w.scene.selected_ids()) > 5 and not w.view.rubberBandRect().isNull()
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    assert w.view.rubberBandRect().isNull()
    assert w.scene.selected_ids() == ["gpu0"]
    assert "cancelled" in w.status.text()
    send_mouse(vp, QEvent.Type.MouseMove, corner + QPoint(600, 450), button=Qt.MouseButton.NoButton)
    send_mouse(vp, QEvent.Type.MouseButtonRelease, corner + QPoint(600, 450), buttons=Qt.MouseButton.NoButton)
    QApplication.processEvents()
    assert w.scene.selected_ids() == ["gpu0"] and w.document.undo_stack.count() == 0


def test_f2_or_a_double_click_on_a_device_renames_it_in_one_undo_step(make_window, qtbot):
    """Every diagram tool renames with F2 or a double-click on a shape; here both did nothing and the
    name had to be found in the Inspector by mouse."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    w.inspector_dock.hide()
    w.scene.select_ids(["gpu2"])
    _key(qtbot, w, Qt.Key.Key_F2)
    field = QApplication.focusWidget()
    assert field is w.inspector.fields["name"] and w.inspector_dock.isVisible()
    assert field.selectedText() == topo.devices["gpu2"].name
    qtbot.keyClicks(field, "Left GPU")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert topo.devices["gpu2"].name == "Left GPU" and w.document.undo_stack.count() == 1

    w.view.fit()
    QApplication.processEvents()
    at = view_pos(w, "gpu5")
    w.view.setFocus()
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease,   # what a mouse sends
                 QEvent.Type.MouseButtonDblClick, QEvent.Type.MouseButtonRelease):
        held = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else Qt.MouseButton.LeftButton
        send_mouse(w.view.viewport(), kind, at, buttons=held)
    QApplication.processEvents()
    field = QApplication.focusWidget()
    assert w.scene.selected_ids() == ["gpu5"] and field is w.inspector.fields["name"]
    assert field.selectedText() == topo.devices["gpu5"].name
    qtbot.keyClicks(field, "Right GPU")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert topo.devices["gpu5"].name == "Right GPU" and w.document.undo_stack.count() == 2
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert topo.devices["gpu5"].name == "GPU5" and w.scene.selected_ids() == ["gpu5"]

    w.scene.select_ids(["gpu0", "gpu1"])
    _key(qtbot, w, Qt.Key.Key_F2)
    assert "Select one device or group" in w.status.text() and QApplication.focusWidget() is w.view


def test_arrow_key_nudges_of_one_selection_along_one_axis_are_one_undo_step(make_window, qtbot, tmp_path):
    """Holding an arrow key pushed one undo step per auto-repeat (thirty Ctrl+Z for one gesture);
    as in Inkscape, nudges of the same selection along one axis merge until something else happens."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    stack = w.document.undo_stack
    start = {d: topo.layout.positions[d] for d in ("gpu0", "gpu1")}
    w.scene.select_ids(["gpu0", "gpu1"])
    for _ in range(5):
        _key(qtbot, w, Qt.Key.Key_Right)
    assert stack.count() == 1
    assert topo.layout.positions["gpu0"] == (start["gpu0"][0] + 50, start["gpu0"][1])
    for _ in range(2):
        _key(qtbot, w, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert stack.count() == 2   # the other axis: a step of its own
    w.document.save(str(tmp_path / "a.dgxs"))
    _key(qtbot, w, Qt.Key.Key_Down)
    assert stack.count() == 3   # never merged into the saved step
    w.scene.select_ids(["gpu0"])
    _key(qtbot, w, Qt.Key.Key_Down)
    assert stack.count() == 4   # another selection
    for _ in range(4):
        _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert {d: topo.layout.positions[d] for d in start} == start
    assert {d: (w.scene.device_items[d].pos().x(), w.scene.device_items[d].pos().y()) for d in start} == start
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu1"]


def test_a_part_dropped_inside_a_systems_frame_joins_that_system(make_window, qtbot):
    """A GPU dragged from the palette into the DGX-1's frame was drawn inside it but belonged to no
    group (the Inspector said "Group —", the frame still counted 8 GPUs, a run left it out of the
    system), while the cluster overview already made a part dropped into an open system join it."""
    from .test_editor import drop_from_palette

    w = make_window("dgx1-v100")
    w.view.fit()
    QApplication.processEvents()
    topo = w.document.topology
    before = dumps(topo)
    (gid,) = topo.groups
    frame = w.scene.group_items[gid]
    inside = w.view.mapFromScene(frame.mapToScene(frame.frame.center() + (frame.frame.bottomLeft() - frame.frame.center()) * 0.2))
    drop_from_palette(w, "part:tesla-v100-sxm2", inside)
    (gpu,) = w.scene.selected_ids()
    assert gpu in topo.groups[gid].devices
    assert w.scene.group_items[gid].summary == "9 GPUs, 20 devices"
    assert w.inspector.findChildren(QLabel) and any(lbl.text() == topo.groups[gid].name for lbl in w.inspector.findChildren(QLabel)
                                                    if lbl.isVisible())
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert dumps(topo) == before
    outside = w.view.mapFromScene(frame.mapToScene(frame.frame.topRight()) + QPointF(150, 0))
    drop_from_palette(w, "part:tesla-v100-sxm2", outside)
    (gpu,) = w.scene.selected_ids()
    assert all(gpu not in g.devices for g in topo.groups.values())


def test_a_link_released_on_a_collapsed_system_says_how_to_reach_its_devices(make_window, qtbot):
    """Dragging a link from a leaf switch onto a collapsed DGX H100 box said only "release over another
    device", though the user had released over what looks like one."""
    from dgxstudio.model.fabrics import build_fat_tree

    from .conftest import drag

    w = make_window(topology=build_fat_tree(4, "dgx-h100", rail_optimized=True))
    w.view.fit()
    QApplication.processEvents()
    topo = w.document.topology
    links = len(topo.links)
    leaf = next(d for d in w.scene.device_items if topo.devices[d].kind == "ib_switch")
    box = next(g for g in w.scene.group_items.values() if g.collapsed)
    drag(w.view, view_pos(w, leaf, handle=True), w.view.mapFromScene(box.sceneBoundingRect().center()))
    name = topo.groups[box.group_id].name
    assert f"{name} is drawn collapsed" in w.status.text() and "double-click it" in w.status.text()
    assert len(topo.links) == links


def test_collapsing_a_system_in_the_inspector_keeps_it_selected(make_window, qtbot):
    """Ticking the Inspector's "Drawn: collapsed" replaced the frame by a box that was not selected:
    the Inspector jumped to "Nothing selected", taking away the box just ticked."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    (gid,) = topo.groups
    w.scene.select_ids([gid])
    QApplication.processEvents()
    box = w.inspector.fields["collapsed"]
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Space)   # (the box toggles on the key's release)
    QApplication.processEvents()
    assert gid in topo.layout.collapsed and w.scene.group_items[gid].collapsed
    assert w.scene.selected_ids() == [gid]
    box = w.inspector.fields["collapsed"]
    assert box.isVisible() and box.isChecked()
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Space)   # and back, from the same place
    QApplication.processEvents()
    assert gid not in topo.layout.collapsed and w.scene.selected_ids() == [gid]


def test_a_cut_pasted_with_the_mouse_off_the_canvas_goes_back_in_place(make_window, qtbot):
    """Ctrl+X then Ctrl+V (the mouse off the canvas) put the device 60 units away from where it was cut
    from; a cut and paste moves nothing in draw.io. A copy still lands beside its original."""
    from unittest import mock

    w = make_window("dgx1-v100")
    topo = w.document.topology
    at = topo.layout.positions["gpu4"]
    w.scene.select_ids(["gpu4"])
    _key(qtbot, w, Qt.Key.Key_X, CTRL)
    assert "gpu4" not in topo.devices
    with mock.patch("dgxstudio.ui.window_editing.cursor_scene_pos", return_value=None):
        _key(qtbot, w, Qt.Key.Key_V, CTRL)
        (back,) = w.scene.selected_ids()
        assert topo.layout.positions[back] == at
        _key(qtbot, w, Qt.Key.Key_C, CTRL)
        _key(qtbot, w, Qt.Key.Key_V, CTRL)
        (copy,) = w.scene.selected_ids()
    assert topo.layout.positions[copy] == (at[0] + 60, at[1] + 60)


def test_connected_says_the_free_ports_left_after_the_link(make_window, qtbot):
    """After a link was drawn the status bar said "GPU 0 nvlink, 6 free" (the count before it), beside
    the device's own "nvlink 1/6"."""
    from dgxstudio.model.topology import Topology

    from .conftest import drag
    from .test_editor import drop_from_palette

    w = make_window(topology=Topology("t"))
    drop_from_palette(w, "part:tesla-v100-sxm2", QPoint(250, 250))
    drop_from_palette(w, "part:tesla-v100-sxm2", QPoint(600, 250))
    a, b = sorted(w.document.topology.devices)
    drag(w.view, view_pos(w, a, handle=True), view_pos(w, b))
    assert w.status.text().startswith("Connected: NVLink 2.0 between")
    assert "nvlink, 5 free" in w.status.text() and "6 free" not in w.status.text()
    drag(w.view, view_pos(w, a, handle=True), view_pos(w, b))
    assert "x2" in w.status.text() and "nvlink, 4 free" in w.status.text()


def _type_and_enter(qtbot, field, text: str) -> None:
    """Replace a field's text by typing, then Enter; the Inspector then shows the edited object again."""
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.wait(20)


def test_ctrl_z_in_an_inspector_field_after_enter_undoes_the_edit(make_window, qtbot):
    """After typing a name and Enter the focus stays in the Inspector's field, which claimed Ctrl+Z with
    nothing of its own left to undo: the key did nothing. It now undoes the rename (and Ctrl+Shift+Z
    redoes it); while the field holds typing of its own, Ctrl+Z stays the field's."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    w.scene.select_ids(["gpu0"])
    QApplication.processEvents()
    _type_and_enter(qtbot, w.inspector.fields["name"], "Alpha")
    assert topo.devices["gpu0"].name == "Alpha" and QApplication.focusWidget() is w.inspector.fields["name"]
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL)
    qtbot.wait(20)
    assert topo.devices["gpu0"].name == "GPU0" and w.inspector.fields["name"].text() == "GPU0"
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL | Qt.KeyboardModifier.ShiftModifier)
    qtbot.wait(20)
    assert topo.devices["gpu0"].name == "Alpha"
    qtbot.keyClicks(QApplication.focusWidget(), "x")   # typing of the field's own: its own undo
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL)
    assert w.inspector.fields["name"].text() == "Alpha" and topo.devices["gpu0"].name == "Alpha"

    lid = next(lk.id for lk in topo.links.values() if lk.count > 1)
    w.select_and_center([lid])
    QApplication.processEvents()
    _type_and_enter(qtbot, w.inspector.fields["count"], "1")
    assert topo.links[lid].count == 1
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL)
    qtbot.wait(20)
    assert topo.links[lid].count == 2


def test_a_ctrl_drag_from_an_unselected_device_copies_it_and_the_selection(make_window, qtbot):
    """Ctrl+pressing a device outside the selection and dragging moved it on the canvas with the
    selection (Qt drags the pressed item too), but only the selection's places reached the document:
    the device was drawn 200 units from where the file put it. Ctrl+drag now copies (as draw.io, Visio,
    Inkscape and yEd do, test_drag_ends.py): the originals are drawn where the file has them, the
    copies of both where the mouse let go."""
    from PySide6.QtGui import QMouseEvent

    w = make_window("dgx1-v100")
    topo = w.document.topology
    before = dumps(topo)
    vp = w.view.viewport()
    w.scene.select_ids(["gpu1"])
    start = view_pos(w, "gpu0")
    held, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton

    def ctrl_mouse(kind, pos, buttons, button):
        QApplication.sendEvent(vp, QMouseEvent(kind, QPointF(pos), QPointF(vp.mapToGlobal(pos)), button, buttons, CTRL))

    ctrl_mouse(QEvent.Type.MouseButtonPress, start, held, held)
    for i in range(1, 6):
        ctrl_mouse(QEvent.Type.MouseMove, start + QPoint(20 * i, 10 * i), held, none)
    ctrl_mouse(QEvent.Type.MouseButtonRelease, start + QPoint(100, 50), none, held)
    QApplication.processEvents()
    copies = w.scene.selected_ids()
    assert len(copies) == 2 and not {"gpu0", "gpu1"} & set(copies)
    for d in ("gpu0", "gpu1", *copies):
        item = w.scene.device_items[d]
        assert topo.layout.positions[d] == (round(item.pos().x(), 3), round(item.pos().y(), 3))
    assert topo.layout.positions["gpu0"] == (0.0, 0.0)
    assert w.document.undo_stack.count() == 1
    _key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert dumps(topo) == before and w.scene.device_items["gpu0"].pos() == QPointF(0, 0)