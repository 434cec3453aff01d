"""What a drag on the canvas ends as (ui/drag_end.py): dragged out of a system's frame a device leaves
the system, dropped in a frame it joins it, one undo step with the move; Ctrl+drag copies, as in
draw.io, Visio, Inkscape and yEd. Driven with real mouse events on the real window."""

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.model import dumps

from .conftest import drag
from .test_editor import view_pos

CTRL = Qt.KeyboardModifier.ControlModifier


def _outside_frame(w, gid: str, device: str) -> QPoint:
    """A view point level with the device, 60 px left of the system's frame as drawn."""
    w.view.zoom(0.6)
    QApplication.processEvents()
    frame = w.view.mapFromScene(w.scene.group_items[gid].frame).boundingRect()
    at = QPoint(frame.left() - 60, view_pos(w, device).y())
    assert w.view.viewport().rect().contains(at)
    return at


def test_a_device_dragged_out_of_its_systems_frame_leaves_the_system_in_one_undo_step(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    before = dumps(topo)
    end = _outside_frame(w, "system", "gpu0")
    drag(w.view, view_pos(w, "gpu0"), end)
    assert "gpu0" not in topo.groups["system"].devices and topo.group_of("gpu0") is None
    assert topo.layout.positions["gpu0"] == tuple(round(v, 3) for v in (w.scene.device_items["gpu0"].x(),
                                                                        w.scene.device_items["gpu0"].y()))
    # the frame no longer reaches out to it
    qtbot.waitUntil(lambda: not w.scene.group_items["system"].frame.contains(w.scene.device_items["gpu0"].pos()), timeout=2000)
    assert w.document.undo_stack.count() == 1
    assert "out of DGX-1 (V100)" in w.document.undo_stack.text(0)
    w.document.undo_stack.undo()
    assert dumps(topo) == before
    # dragged back in, it joins again
    w.document.undo_stack.redo()
    QApplication.processEvents()
    drag(w.view, view_pos(w, "gpu0"), view_pos(w, "gpu5") + QPoint(0, 30))
    assert topo.group_of("gpu0").id == "system"
    assert "into DGX-1 (V100)" in w.document.undo_stack.text(1)


def test_a_drag_inside_the_frame_or_of_the_whole_system_keeps_every_member(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    members = list(topo.groups["system"].devices)
    drag(w.view, view_pos(w, "gpu0"), view_pos(w, "gpu0") + QPoint(15, 10))   # a small move near the edge
    assert topo.groups["system"].devices == members
    w.scene.select_ids(members)   # the whole system, carried far away: its frame goes with it
    end = _outside_frame(w, "system", "gpu0")
    drag(w.view, view_pos(w, "gpu0"), end)
    assert topo.groups["system"].devices == members
    assert w.document.undo_stack.count() == 2


def test_ctrl_drag_copies_and_leaves_the_original_in_place(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    before = dumps(topo)
    n = len(topo.devices)
    was = topo.layout.positions["gpu0"]
    drag(w.view, view_pos(w, "gpu0"), view_pos(w, "gpu0") + QPoint(40, 70), modifiers=CTRL)
    assert len(topo.devices) == n + 1
    assert topo.layout.positions["gpu0"] == was and w.scene.device_items["gpu0"].pos() == QPointF(*was)
    (copy,) = w.scene.selected_ids()
    assert copy != "gpu0" and topo.devices[copy].part == topo.devices["gpu0"].part
    assert topo.devices[copy].name != topo.devices["gpu0"].name
    x, y = topo.layout.positions[copy]
    assert x > was[0] + 20 and y > was[1] + 40
    assert topo.group_of(copy).id == "system"   # let go inside the system's frame: one of its devices
    assert w.document.undo_stack.count() == 1
    w.document.undo_stack.undo()
    assert dumps(topo) == before


def test_ctrl_drag_of_two_devices_copies_them_with_the_links_between_them(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    a, b = "gpu0", "gpu3"   # one above the other: both let go left of the frame
    between = [lk for lk in topo.links.values() if {lk.a, lk.b} == {a, b}]
    assert between
    w.scene.select_ids([a, b])
    end = _outside_frame(w, "system", a)
    drag(w.view, view_pos(w, a), end, modifiers=CTRL)
    copies = w.scene.selected_ids()
    assert len(copies) == 2 and a in topo.groups["system"].devices and b in topo.groups["system"].devices
    assert all(topo.group_of(c) is None for c in copies)   # let go outside every frame: in no system
    assert sum(1 for lk in topo.links.values() if {lk.a, lk.b} == set(copies)) == len(between)


def test_a_ctrl_click_without_a_drag_still_adds_to_the_selection(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu1"])
    drag(w.view, view_pos(w, "gpu0"), view_pos(w, "gpu0"), steps=0, modifiers=CTRL)   # a click
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu1"]
    assert w.document.undo_stack.count() == 0


def test_ctrl_drag_of_a_collapsed_system_copies_it_into_the_frame_it_is_let_go_in(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    topo = w.document.topology
    before = dumps(topo)
    gid = "s001.system"
    item = w.scene.group_items[gid]
    w.view.fit_rect(item.sceneBoundingRect().adjusted(-300, -300, 300, 300))
    QApplication.processEvents()
    start = w.view.mapFromScene(item.scenePos())
    drag(w.view, start, start + QPoint(40, 160), modifiers=CTRL)
    (copy,) = w.scene.selected_ids()
    assert copy != gid and topo.groups[copy].kind == "system" and topo.groups[copy].name == "DGX-1 #125"
    assert topo.groups[copy].parent == topo.groups[gid].parent == "cluster"   # in the cluster's frame, as it was
    assert len(topo.devices_in_group(copy)) == len(topo.devices_in_group(gid))
    assert item.scenePos() == QPointF(*topo.layout.positions[gid])   # the original where it was
    w.document.undo_stack.undo()
    assert dumps(topo) == before


def test_a_collapsed_system_dragged_out_of_the_clusters_frame_leaves_the_cluster(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    topo = w.document.topology
    before = dumps(topo)
    gid = "s001.system"
    item, frame = w.scene.group_items[gid], w.scene.group_items["cluster"].frame
    w.view.fit()
    w.view.zoom(0.6)   # room around the whole design
    QApplication.processEvents()
    home = item.scenePos()
    start = w.view.mapFromScene(home)
    end = QPoint(start.x(), w.view.mapFromScene(QPointF(home.x(), frame.top())).y() - 40)
    assert w.view.viewport().rect().contains(end)
    drag(w.view, start, end)
    assert topo.groups[gid].parent is None
    assert w.document.undo_stack.count() == 1 and "out of 124 x DGX-1" in w.document.undo_stack.text(0)
    w.document.undo_stack.undo()
    assert dumps(topo) == before
    w.document.undo_stack.redo()
    QApplication.processEvents()
    item = w.scene.group_items[gid]
    drag(w.view, w.view.mapFromScene(item.scenePos()), w.view.mapFromScene(home))   # back in: the cluster's again
    assert topo.groups[gid].parent == "cluster"


def test_ctrl_drag_in_a_clusters_overview_copies_into_the_open_system(make_window, qtbot):
    """In a cluster's overview the copy of a device joins the system opened under the spot (without it
    the copy went, unselected, to the 'Not connected' row, out of sight)."""
    from dgxstudio.model.fabrics import build_fat_tree

    topo = build_fat_tree(512, "dgx-h100", rail_optimized=True)
    w = make_window(topology=topo)
    w.select_and_center(["s300.gpu3"])
    qtbot.wait(20)
    item = w.scene.device_items["s300.gpu3"]
    was, at = topo.layout.positions["s300.gpu3"], item.scenePos()
    n = len(topo.devices)
    start = w.view.mapFromScene(item.scenePos())
    drag(w.view, start, start + QPoint(30, 40), modifiers=CTRL)
    (copy,) = w.scene.selected_ids()
    assert len(topo.devices) == n + 1 and topo.group_of(copy).id == "s300.system"
    assert copy in w.scene.device_items and topo.devices[copy].name == "DGX H100 #300 GPU8"
    assert topo.layout.positions["s300.gpu3"] == was and item.scenePos() == at
    w.document.undo_stack.undo()
    assert len(topo.devices) == n and copy not in topo.devices
