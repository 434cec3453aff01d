"""Editing inside the overview of a 512-system cluster: devices shown in an open system or switch block
are dragged like on a small design (an undoable move), and deletes, new links and undo change only
the blocks, bundles and systems they touch."""

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QPainterPath

from dgxstudio.model.commands import AddItems, RemoveItems, SetAttribute
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.topology import Link

from .conftest import drag


def cluster():
    return build_fat_tree(512, "dgx-h100", rail_optimized=True)


def view_point(w, item, x: float = 0.0) -> QPoint:
    """Where a point of an item (item coordinates, left of its link handle) is in the view."""
    return w.view.mapFromScene(item.mapToScene(QPointF(x, 0.0)))


def open_on(w, qtbot, device_id: str):
    w.select_and_center([device_id])
    qtbot.wait(5)
    item = w.scene.device_items[device_id]
    while item.sceneBoundingRect().width() * w.view.transform().m11() < 120:   # large enough to grab
        w.view.zoom(1.25)
        w.view.centerOn(item)
        qtbot.wait(5)
        item = w.scene.device_items[device_id]
    return item


def test_dragging_a_gpu_inside_an_open_system_is_an_undoable_move(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    lod = w.scene.lod
    gpu = "s300.gpu3"
    item = open_on(w, qtbot, gpu)
    system = lod.overview.system_of[gpu]
    path, ends = lod.system_links[system]
    inside = [lid for lid, (a, b) in ends.items() if gpu in (a, b)]
    assert inside, "the GPU's links inside its system are drawn"
    was_doc, was_pos, was_path = topo.layout.positions[gpu], item.pos(), QPainterPath(path.path())
    others = {d: it.pos() for d, it in w.scene.device_items.items() if d != gpu}
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))

    start = view_point(w, item, -30)
    drag(w.view, start, start + QPoint(90, 60))
    qtbot.wait(5)
    s = item.scale()
    moved = topo.layout.positions[gpu]
    # moved in the document by the drag in document units (the item is drawn at scale s)
    assert abs((moved[0] - was_doc[0]) - 90 / (s * w.view.transform().m11())) < 2 / s
    assert abs((moved[1] - was_doc[1]) - 60 / (s * w.view.transform().m11())) < 2 / s
    assert w.document.undo_stack.count() == 1 and w.document.undo_stack.undoText() == "move 1 item"
    assert w.scene.device_items[gpu] is item and item.pos() != was_pos
    assert path.path() != was_path, "the links inside the system follow the GPU"
    assert all(w.scene.device_items[d].pos() == p for d, p in others.items()), "only the GPU moved"
    assert w.scene.lod is lod and not rebuilt

    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert topo.layout.positions[gpu] == was_doc
    assert abs(item.pos().x() - was_pos.x()) < 1e-6 and abs(item.pos().y() - was_pos.y()) < 1e-6
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert topo.layout.positions[gpu] == moved and item.pos() != was_pos
    assert not rebuilt


def test_dragging_a_leaf_switch_in_an_open_block(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    lod = w.scene.lod
    leaf = lod.overview.blocks["t1b2"].members[0]
    item = open_on(w, qtbot, leaf)
    was_doc, was_pos = topo.layout.positions[leaf], item.pos()
    start = view_point(w, item, -30)
    drag(w.view, start, start + QPoint(-70, 40))
    qtbot.wait(5)
    assert topo.layout.positions[leaf] != was_doc and item.pos() != was_pos
    assert w.document.undo_stack.undoText() == "move 1 item"
    w.document.undo_stack.undo()
    assert topo.layout.positions[leaf] == was_doc
    assert abs(item.pos().x() - was_pos.x()) < 1e-6 and abs(item.pos().y() - was_pos.y()) < 1e-6


def bundle_through(w, device_id):
    """The bundle carrying a link of a device (from its system or switch to another block)."""
    ov, topo = w.scene.lod.overview, w.document.topology
    lid = next(lk.id for lk in topo.links_of(device_id) if lk.id in ov.bundle_of)
    return next(i for i in w.scene.lod.bundle_items if i.info is ov.bundle_of[lid]), lid


def test_deleting_and_undoing_in_the_overview_touch_only_their_blocks_and_bundles(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    lod = w.scene.lod
    nic = "s300.ib0" if "s300.ib0" in topo.devices else next(
        d for d in lod.overview.system_devices["s300.system"] if topo.devices[d].kind == "nic")
    item = open_on(w, qtbot, nic)
    bundle, _ = bundle_through(w, nic)
    unit = lod.block_items[lod.overview.block_for(nic)]
    count, bw, summary = bundle.count, bundle.info.bandwidth_Bps, lod.system_items["s300.system"].summary
    blocks = dict(lod.block_items)
    bundles = list(lod.bundle_items)
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))

    w.scene.select_ids([nic])
    qtbot.keyClick(w.view, Qt.Key.Key_Delete)
    qtbot.wait(20)
    assert nic not in topo.devices and nic not in w.scene.device_items and item.scene() is None
    assert bundle.count == count - 1 and bundle.info.bandwidth_Bps < bw
    assert lod.system_items["s300.system"].summary != summary        # one device fewer
    assert lod.block_items == blocks and lod.bundle_items == bundles  # the same items, not new ones
    assert w.scene.lod is lod and not rebuilt

    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: nic in w.scene.device_items, timeout=5000)   # its system opens again with it
    assert bundle.count == count and abs(bundle.info.bandwidth_Bps - bw) < 1e-3
    assert lod.system_items["s300.system"].summary == summary
    assert lod.block_items == blocks and lod.bundle_items == bundles and unit.block.summary.endswith("256 GPUs")
    assert w.scene.lod is lod and not rebuilt

    # a whole system: its unit counts one system fewer, and back
    system = lod.overview.block_of["s301.system"]
    w.document.push(RemoveItems(["s301.system", *lod.overview.system_devices["s301.system"]]))
    qtbot.wait(20)
    assert "s301.system" not in lod.overview.blocks[system].members
    assert lod.overview.blocks[system].summary.startswith("31 systems")
    w.document.undo_stack.undo()
    qtbot.wait(20)
    assert lod.overview.blocks[system].summary.startswith("32 systems") and not rebuilt


def test_new_and_retyped_links_change_their_bundle(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    w.view.fit()
    qtbot.wait(5)
    lod = w.scene.lod
    nic = next(d for d in lod.overview.system_devices["s010.system"] if topo.devices[d].kind == "nic")
    bundle, lid = bundle_through(w, nic)
    count = bundle.count
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))

    w.document.push(SetAttribute(lid, "count", 2))
    assert bundle.count == count + 1
    w.document.undo_stack.undo()
    assert bundle.count == count

    # a link between two blocks that had none: a new bundle, drawn
    a = lod.overview.blocks["t1b0"].members[0]
    b = lod.overview.blocks["t1b5"].members[0]
    before = len(lod.bundle_items)
    w.document.push(AddItems(links=[Link("lk-new", a, b, topo.links[lid].type)]))
    assert len(lod.bundle_items) == before + 1
    new = lod.bundle_items[-1]
    assert new.count == 1 and new.scene() is w.scene and {new.info.a, new.info.b} == {"t1b0", "t1b5"}
    w.document.undo_stack.undo()
    assert new.count == 0 and not new.isVisible()
    assert w.scene.lod is lod and not rebuilt


def test_a_part_dropped_into_an_open_system_joins_it(make_window, qtbot):
    from .test_editor import drop_from_palette

    topo = cluster()
    w = make_window(topology=topo)
    lod = w.scene.lod
    open_on(w, qtbot, "s300.gpu3")
    box = lod.system_items["s300.system"]
    w.view.fitInView(box.sceneBoundingRect(), Qt.AspectRatioMode.KeepAspectRatio)   # the whole system in view
    qtbot.wait(50)
    assert "s300.system" in lod.open_systems
    devices = len(lod.overview.system_devices["s300.system"])
    blocks = dict(lod.block_items)
    at = box.sceneBoundingRect().center() + QPointF(0, box.sceneBoundingRect().height() * 0.4)
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))
    drop_from_palette(w, "part:connectx-7-ndr", w.view.mapFromScene(at))
    qtbot.wait(20)
    new = w.scene.selected_ids()
    assert len(new) == 1 and topo.group_of(new[0]).id == "s300.system"
    assert len(lod.overview.system_devices["s300.system"]) == devices + 1
    item = w.scene.device_items[new[0]]
    assert (item.scenePos() - at).manhattanLength() * w.view.transform().m11() < 3, "drawn where it was dropped"
    assert lod.block_items == blocks and w.scene.lod is lod and not rebuilt
    w.document.undo_stack.undo()
    qtbot.wait(20)
    assert new[0] not in topo.devices and len(lod.overview.system_devices["s300.system"]) == devices and not rebuilt
