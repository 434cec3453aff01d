"""Level of detail on a 512-system cluster: the canvas holds items only for what can be seen."""

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from dgxstudio.model.commands import SetAttribute
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.canvas_items import DeviceItem
from dgxstudio.ui.canvas_lod import BlockItem, BundleItem, SystemBoxItem
from dgxstudio.analysis.cluster_overview import build_overview


def cluster():
    return build_fat_tree(512, "dgx-h100", rail_optimized=True)


def visible(w):
    return w.view.mapToScene(w.view.viewport().rect()).boundingRect()


def wheel(w, qtbot, at: QPointF, notches: int) -> None:
    """Wheel notches with the pointer over a scene point (the view keeps that point under it)."""
    for _ in range(abs(notches)):
        pos = QPointF(w.view.mapFromScene(at))
        event = QWheelEvent(pos, QPointF(w.view.viewport().mapToGlobal(pos.toPoint())), QPoint(0, 0),
                            QPoint(0, 120 if notches > 0 else -120), Qt.MouseButton.NoButton,
                            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(w.view.viewport(), event)
        w.view.centerOn(at)
        qtbot.wait(5)
        assert_only_visible_items(w)


def assert_only_visible_items(w) -> None:
    """Members exist only inside open blocks that are on screen; devices only inside open systems on screen."""
    lod, seen = w.scene.lod, visible(w)
    for bid in lod.open_blocks:
        assert lod.block_items[bid].sceneBoundingRect().intersects(seen), f"{bid} open off screen"
    for sid in lod.open_systems:
        assert lod.system_items[sid].sceneBoundingRect().intersects(seen), f"{sid} open off screen"
    systems = [i for i in w.scene.items() if isinstance(i, SystemBoxItem)]
    devices = [i for i in w.scene.items() if isinstance(i, DeviceItem)]
    assert len(systems) == len(lod.system_items) and len(devices) == len(w.scene.device_items)
    assert len(w.scene.items()) < 1500, f"{len(w.scene.items())} items on the canvas"


def test_overview_zooms_into_one_device_and_back(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    w.view.fit()
    qtbot.wait(5)
    lod = w.scene.lod
    assert lod is not None
    # at fit: blocks and bundles only, a few dozen items for 14,000+ devices
    blocks = [i for i in w.scene.items() if isinstance(i, BlockItem)]
    bundles = [i for i in w.scene.items() if isinstance(i, BundleItem)]
    assert len(blocks) == len(lod.overview.blocks) == 37 and len(bundles) == 36
    assert not w.scene.device_items and not lod.system_items and len(w.scene.items()) < 100
    assert all(visible(w).contains(b.sceneBoundingRect()) for b in blocks)
    unit = next(b for b in bundles if {b.a.block.tier, b.b.block.tier} == {0, 1})
    assert unit.count == 256 and "per direction" in unit.info.label and unit.info.label.startswith("256 x")
    assert sorted(len(b.link_ids) for b in bundles)[-1] <= len(topo.links)

    # zoom on SU 4 until it opens into its systems
    block = lod.block_items["t0b3"]
    target = block.sceneBoundingRect().center()
    notches = 0
    while "t0b3" not in lod.open_blocks:
        wheel(w, qtbot, target, 1)
        notches += 1
        assert notches < 40
    assert len(lod.system_items) >= 32 and not lod.open_systems
    switches = {m for bid in lod.open_blocks for m in lod.overview.blocks[bid].members}
    assert set(w.scene.device_items) <= switches   # the leaves of open leaf blocks, no system's insides
    # then on one system until it opens into devices, then on one of its GPUs
    system = lod.system_items[block.block.members[9]]
    target = system.sceneBoundingRect().center()
    while system.group_id not in lod.open_systems:
        wheel(w, qtbot, target, 1)
        notches += 1
        assert notches < 80
    gpu = next(d for d in lod.overview.system_devices[system.group_id] if topo.devices[d].kind == "gpu")
    item = w.scene.device_items[gpu]
    target = item.sceneBoundingRect().center()
    while item.sceneBoundingRect().width() * w.view.transform().m11() < 0.3 * w.view.viewport().width():
        wheel(w, qtbot, target, 1)
        notches += 1
        assert notches < 120
    assert visible(w).contains(item.sceneBoundingRect().center())
    assert w.scene.device_items, "the device is drawn"
    # what is drawn now is one system's neighbourhood, not the cluster
    assert len(lod.open_blocks) <= 2 and len(lod.open_systems) <= 4
    inside = [d for d in w.scene.device_items if d in lod.overview.system_of]
    assert 0 < len(inside) <= 4 * 28
    # selecting the GPU shows it in the inspector
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(target))
    assert w.scene.selected_ids() == [gpu]

    # and back out to fit: everything opened is closed again
    while w.view.transform().m11() > 0.3:
        wheel(w, qtbot, target, -1)
        notches += 1
        assert notches < 300
    w.view.fit()
    qtbot.wait(5)
    assert not w.scene.device_items and not lod.system_items and not lod.open_blocks
    assert len(w.scene.items()) < 100


def test_double_clicking_a_block_opens_it_in_view(make_window, qtbot):
    w = make_window(topology=cluster())
    w.view.fit()
    qtbot.wait(5)
    lod = w.scene.lod
    block = lod.block_items["t0b10"]
    centre = block.sceneBoundingRect().center()
    qtbot.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(centre))
    qtbot.wait(5)
    assert "t0b10" in lod.open_blocks
    seen = visible(w)
    assert seen.contains(centre) and seen.intersects(block.sceneBoundingRect())
    shown = [s for s in lod.system_items.values() if seen.intersects(s.sceneBoundingRect())]
    assert len(shown) >= 16 and all(lod.overview.block_of[s.group_id] == "t0b10" or s.group_id in
                                    lod.overview.blocks[lod.overview.block_of[s.group_id]].members for s in shown)
    # a system inside it: double-click opens it into its devices, still in view
    qtbot.wait(QApplication.doubleClickInterval() + 50)   # a new double-click, not a third click
    system = lod.system_items[block.block.members[0]]
    at = system.sceneBoundingRect().center()
    qtbot.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(at))
    qtbot.wait(5)
    assert system.group_id in lod.open_systems and visible(w).contains(at)
    assert 0 < len([d for d in w.scene.device_items if d in lod.overview.system_of]) <= 4 * 28


def test_small_clusters_draw_every_system_box():
    assert build_overview(build_fat_tree(16, "dgx-a100")) is None


def test_edits_in_the_overview_touch_only_their_items(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    block = w.scene.lod.block_items["t1b2"]
    w.scene.lod.zoom_to(block.sceneBoundingRect())   # a leaf block open: its switches are drawn
    qtbot.wait(5)
    lod = w.scene.lod
    leaf = lod.overview.blocks["t1b2"].members[0]
    item = w.scene.device_items[leaf]
    before = set(w.scene.items())
    w.document.push(SetAttribute(leaf, "name", "Leaf seventeen"))
    assert w.scene.lod is lod and set(w.scene.items()) == before   # nothing rebuilt
    assert item.name == "Leaf seventeen"
    w.document.undo_stack.undo()
    assert item.name == topo.devices[leaf].name != "Leaf seventeen" and set(w.scene.items()) == before


def test_expand_in_the_overview_opens_the_system_in_view_without_an_edit(make_window, qtbot):
    w = make_window(topology=cluster())
    lod = w.scene.lod
    lod.zoom_to(lod.block_items["t0b2"].sceneBoundingRect())
    qtbot.wait(5)
    system = lod.system_items[lod.overview.blocks["t0b2"].members[3]]
    menu = w.context_menu(system, system.scenePos(), None)   # the right-click menu's Expand
    next(a for a in menu.actions() if a.text() == "Expand").trigger()
    qtbot.wait(5)
    assert system.group_id in lod.open_systems and visible(w).contains(system.sceneBoundingRect().center())
    assert not w.document.undo_stack.count()   # opening in view is not an edit


def test_find_opens_the_overview_down_to_the_device(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    w.view.fit()
    qtbot.wait(5)
    gpu = next(d.id for d in topo.devices.values() if d.kind == "gpu" and d.id.startswith("s300."))
    qtbot.keyClick(w.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(w.find_edit, gpu)
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    qtbot.wait(5)
    item = w.scene.device_items.get(gpu)
    assert item is not None and w.scene.selected_ids() == [gpu]
    assert visible(w).contains(item.sceneBoundingRect().center())
    assert len(w.scene.items()) < 1500


def test_delete_and_undo_in_the_overview_keep_the_view_and_what_it_shows(make_window, qtbot):
    topo = cluster()
    w = make_window(topology=topo)
    gpu = "s300.gpu3"
    w.select_and_center([gpu])
    qtbot.wait(5)
    transform = w.view.transform()
    qtbot.keyClick(w.view, Qt.Key.Key_Delete)
    qtbot.wait(20)
    assert gpu not in w.document.topology.devices and gpu not in w.scene.device_items
    assert w.view.transform() == transform
    qtbot.waitUntil(lambda: "s300.gpu2" in w.scene.device_items, timeout=5000)   # drawn again, opened, in view
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: gpu in w.scene.device_items, timeout=5000)
    assert visible(w).contains(w.scene.device_items[gpu].sceneBoundingRect().center())
    assert_only_visible_items(w)


def test_replay_draws_chunks_only_where_the_view_looks(make_window, qtbot):
    from dgxstudio.model.presets import load_preset
    from dgxstudio.sim.run import simulate

    w = make_window("dgx-a100")
    result = simulate(load_preset("dgx-a100"), "all-reduce", "ring", 64 * 2**20)
    w.replayer.load(result.sim)
    w.view.fit()
    times = [result.time_s * (k + 0.5) / 40 for k in range(40)]
    shown_at_fit = 0
    for t in times:
        w.replayer.set_time(t)
        shown_at_fit = max(shown_at_fit, sum(d.isVisible() for d in w.replayer._dots))
    assert shown_at_fit > 0
    item = w.scene.device_items["gpu0"]
    w.view.resetTransform()
    w.view.scale(2.0, 2.0)
    w.view.centerOn(item)
    qtbot.wait(5)
    seen = visible(w)
    for t in times:
        w.replayer.set_time(t)
        for d in w.replayer._dots:
            if d.isVisible():
                assert seen.adjusted(-seen.width() * 0.06, -seen.height() * 0.06, seen.width() * 0.06,
                                     seen.height() * 0.06).contains(d.pos())
