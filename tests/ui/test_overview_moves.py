"""Moving things in a cluster's overview: a system box keeps the overview's place (a drag or an arrow
key says so, and changes nothing in the document), and a device drawn in an open system is nudged in
the document's units, not to the overview's scene coordinates."""

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction

from dgxstudio.model.fabrics import build_fat_tree

from .conftest import drag


def cluster():
    return build_fat_tree(512, "dgx-h100", rail_optimized=True)


def open_unit(w, qtbot, bid="t0b9"):
    lod = w.scene.lod
    lod.zoom_to(lod.block_items[bid].sceneBoundingRect())
    qtbot.wait(20)
    return lod


def test_an_arrow_key_on_a_system_box_changes_nothing_and_says_why(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    lod = open_unit(w, qtbot)
    box = lod.system_items["s295.system"]
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(box.sceneBoundingRect().center()))
    assert w.scene.selected_ids() == ["s295.system"]
    before = topo.layout.positions.get("s295.system")
    qtbot.keyClick(w.view, Qt.Key.Key_Right)
    # it once pushed 'nudge 1 items', writing the overview's scene position into the document's layout
    assert topo.layout.positions.get("s295.system") == before
    assert w.document.undo_stack.count() == 0 and not w.isWindowModified()
    assert "double-click" in w.status.text()


def test_dragging_a_system_box_says_it_keeps_its_place(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    lod = open_unit(w, qtbot)
    box = lod.system_items["s295.system"]
    at, start = box.scenePos(), w.view.mapFromScene(box.sceneBoundingRect().center())
    drag(w.view, start, start + QPoint(120, 80))
    assert box.scenePos() == at and w.document.undo_stack.count() == 0
    assert "double-click" in w.status.text()


def test_a_device_in_an_open_system_is_nudged_in_document_units(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    w.select_and_center(["s300.gpu3"])
    qtbot.wait(20)
    item = w.scene.device_items["s300.gpu3"]
    w.scene.select_ids(["s300.gpu3"])
    x, y = topo.layout.positions["s300.gpu3"]
    qtbot.keyClick(w.view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)   # one unit
    assert topo.layout.positions["s300.gpu3"] == (x + 1.0, y)
    assert w.document.undo_stack.undoText() == "nudge 1 item"
    assert w.scene.device_items["s300.gpu3"] is item
    w.document.undo_stack.undo()
    assert topo.layout.positions["s300.gpu3"] == (x, y)


def test_expand_all_in_the_overview_is_not_an_invisible_edit(make_window, qtbot):
    w = make_window(topology=cluster())
    action = next(a for a in w.findChildren(QAction) if a.text() == "&Expand all systems")
    action.trigger()
    # it pushed 'expand all systems' (window modified) and the overview drew nothing new
    assert w.document.undo_stack.count() == 0 and not w.isWindowModified()
    assert "zoom in" in w.status.text()
    next(a for a in w.findChildren(QAction) if a.text() == "&Collapse all systems").trigger()
    assert w.document.undo_stack.count() == 0


def test_a_part_dropped_outside_the_systems_says_where_it_went(make_window, qtbot):
    from PySide6.QtCore import QPoint

    from .test_editor import drop_from_palette

    topo = cluster()
    w = make_window(topology=topo)
    w.view.fit()
    qtbot.wait(5)
    before = set(topo.devices)
    drop_from_palette(w, "part:" + topo.devices["leaf1"].part, QPoint(w.view.viewport().width() - 40, 40))
    qtbot.wait(20)
    (new,) = set(topo.devices) - before
    # it was neither selected nor drawn where it was dropped, and nothing said where it went
    assert f"({new})" in w.status.text() and "Not connected" in w.status.text()
    w.find(new)   # and Find does open it there
    qtbot.wait(20)
    assert new in w.scene.device_items and w.scene.selected_ids() == [new]
