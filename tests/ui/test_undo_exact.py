"""Edits made with keys and the mouse in the real window undo and redo to exactly the saved text: on a
cluster's overview (a GPU, a whole system box, a drag, a link drawn between two switches) and on the
GB200 NVL72 rack (a tray). The undo commands keep only what they change, and the overview is never
rebuilt for them."""

from PySide6.QtCore import QPoint, QPointF, Qt

from dgxstudio.model import dumps
from dgxstudio.model.fabrics import build_fat_tree

from .conftest import drag
from .test_canvas_lod_edit import open_on, view_point


def undo(w, qtbot):
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(10)


def redo(w, qtbot):
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.wait(10)


def check_undo_redo(w, qtbot, edit) -> tuple[str, str]:
    """Make the edit, then undo, redo and undo it with keys: the saved text before == after undo, and
    after redo == after the edit. Returns the two texts."""
    topo = w.document.topology
    before = dumps(topo)
    index = w.document.undo_stack.index()
    edit()
    qtbot.wait(10)
    assert w.document.undo_stack.index() == index + 1, "the edit is one undo step"
    after = dumps(topo)
    assert after != before
    undo(w, qtbot)
    assert dumps(topo) == before
    redo(w, qtbot)
    assert dumps(topo) == after
    undo(w, qtbot)
    assert dumps(topo) == before
    return before, after


def test_edits_in_a_cluster_overview_undo_and_redo_exactly(make_window, qtbot):
    topo = build_fat_tree(512, "dgx-h100", rail_optimized=True)
    w = make_window(topology=topo)
    lod = w.scene.lod
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))
    blocks = dict(lod.block_items)

    # a GPU, with the Delete key
    open_on(w, qtbot, "s300.gpu3")
    w.scene.select_ids(["s300.gpu3"])
    check_undo_redo(w, qtbot, lambda: qtbot.keyClick(w.view, Qt.Key.Key_Delete))
    qtbot.waitUntil(lambda: "s300.gpu3" in w.scene.device_items, timeout=5000)   # drawn again where it was

    # a whole system box: the system goes with its devices, its unit counts one system fewer
    box = lod.system_items["s300.system"]
    unit = lod.overview.blocks[lod.overview.block_of["s300.system"]]
    systems = len(unit.members)
    w.scene.clearSelection()
    box.setSelected(True)
    _before, _after = check_undo_redo(w, qtbot, lambda: qtbot.keyClick(w.view, Qt.Key.Key_Delete))
    redo(w, qtbot)
    assert "s300.system" not in topo.groups and not any(d.startswith("s300.") for d in topo.devices)
    assert len(unit.members) == systems - 1
    undo(w, qtbot)
    assert len(unit.members) == systems and "s300.gpu0" in topo.devices

    # a GPU dragged with the mouse
    item = open_on(w, qtbot, "s300.gpu5")
    start = view_point(w, item, -30)
    check_undo_redo(w, qtbot, lambda: drag(w.view, start, start + QPoint(70, 40)))

    # a link drawn from one NVSwitch's handle to another's
    open_on(w, qtbot, "s300.nvswitch0")
    qtbot.waitUntil(lambda: "s300.nvswitch1" in w.scene.device_items, timeout=5000)
    a, b = w.scene.device_items["s300.nvswitch0"], w.scene.device_items["s300.nvswitch1"]
    w.view.fitInView(a.sceneBoundingRect().united(b.sceneBoundingRect()).adjusted(-5, -5, 5, 5),
                     Qt.AspectRatioMode.KeepAspectRatio)
    qtbot.wait(20)
    a, b = w.scene.device_items["s300.nvswitch0"], w.scene.device_items["s300.nvswitch1"]
    handle = w.view.mapFromScene(a.mapToScene(a.handle_center()))
    target = w.view.mapFromScene(b.sceneBoundingRect().center())
    links = len(topo.links)
    check_undo_redo(w, qtbot, lambda: drag(w.view, handle, target))
    assert len(topo.links) == links
    redo(w, qtbot)
    assert len(topo.links) == links + 1
    assert any({lk.a, lk.b} == {"s300.nvswitch0", "s300.nvswitch1"} for lk in topo.links_of("s300.nvswitch0"))
    undo(w, qtbot)

    assert w.scene.lod is lod and not rebuilt and lod.block_items == blocks


def test_a_gb200_tray_deleted_with_its_devices_undoes_exactly(make_window, qtbot):
    w = make_window("gb200-nvl72")
    topo = w.document.topology
    tray = next(g for g in topo.groups.values() if g.kind == "tray" and any(
        topo.devices[d].kind == "gpu" for d in g.devices))
    inside = list(tray.devices)
    w.scene.clearSelection()
    w.scene.group_items[tray.id].setSelected(True)
    check_undo_redo(w, qtbot, lambda: qtbot.keyClick(w.view, Qt.Key.Key_Delete))
    redo(w, qtbot)
    assert tray.id not in topo.groups and not any(d in topo.devices for d in inside)
    assert tray.id not in w.scene.group_items
    undo(w, qtbot)
    assert tray.id in w.scene.group_items and all(d in topo.devices for d in inside)
    # and a tray's box dragged with the mouse
    box = w.scene.group_items[tray.id]
    start = w.view.mapFromScene(box.sceneBoundingRect().center() + QPointF(0, 5))
    check_undo_redo(w, qtbot, lambda: drag(w.view, start, start + QPoint(50, 30)))


def drawn(scene) -> tuple:
    """What the canvas shows: device boxes and where, group boxes (collapsed or not), links by what they stand for."""
    return ({d: (round(i.pos().x(), 3), round(i.pos().y(), 3)) for d, i in scene.device_items.items()},
            {g: (i.collapsed, round(i.pos().x(), 3), round(i.pos().y(), 3)) for g, i in scene.group_items.items()},
            sorted(i.key for i in scene.link_items), sorted(scene.items_by_link))


def test_group_edits_change_only_their_items_and_draw_what_a_rebuild_draws(make_window, qtbot):
    w = make_window("gb200-nvl72")
    topo, scene = w.document.topology, w.scene
    rebuilt = []
    scene.rebuilt.connect(lambda: rebuilt.append(1))
    tray = next(g for g in topo.groups.values() if g.kind == "tray" and g.id in topo.layout.collapsed)
    others = {g: i for g, i in scene.group_items.items() if g not in (tray.id, tray.parent)}

    def same_as_rebuild():
        shown = drawn(scene)
        scene.rebuild()
        assert drawn(scene) == shown
        rebuilt.clear()

    def toggle(gid):
        box = scene.group_items[gid]
        at = w.view.mapFromScene(box.mapToScene(box.toggle_rect().center()))
        qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=at)
        qtbot.wait(10)

    w.view.centerOn(scene.group_items[tray.id])
    qtbot.wait(10)
    toggle(tray.id)   # expand: its devices drawn, its bundles replaced by links
    assert tray.id not in topo.layout.collapsed and all(d in scene.device_items for d in tray.devices)
    assert not rebuilt and all(scene.group_items[g] is i for g, i in others.items())
    same_as_rebuild()
    others = {g: i for g, i in scene.group_items.items() if g not in (tray.id, tray.parent)}
    scene.clearSelection()
    scene.group_items[tray.id].setSelected(True)
    qtbot.keyClick(w.view, Qt.Key.Key_Delete)   # the tray with its devices
    qtbot.wait(10)
    assert tray.id not in scene.group_items and not any(d in scene.device_items for d in tray.devices)
    assert not rebuilt and all(scene.group_items[g] is i for g, i in others.items())
    same_as_rebuild()
    others = dict(scene.group_items)
    undo(w, qtbot)
    assert tray.id in scene.group_items and not rebuilt
    assert all(scene.group_items[g] is i for g, i in others.items() if g != tray.parent)
    same_as_rebuild()
    undo(w, qtbot)   # collapsed again
    assert scene.group_items[tray.id].collapsed and not any(d in scene.device_items for d in tray.devices)
    assert not rebuilt
    same_as_rebuild()
