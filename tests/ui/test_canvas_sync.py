"""Edits update the items they touch: the rest of the scene keeps its items, selection and view."""

from PySide6.QtCore import Qt

from dgxstudio.model.commands import SetAttribute
from dgxstudio.ui.canvas_items import LinkItem



def test_delete_and_undo_touch_only_the_device_and_its_links(make_window, qtbot):
    w = make_window("dgx-a100")
    scene = w.scene
    rebuilt = []
    scene.rebuilt.connect(lambda: rebuilt.append(1))
    gpu = scene.device_items["gpu7"]
    its_links = [i for i in scene.link_items if i.a is gpu or i.b is gpu]
    assert its_links
    keep = [i for i in scene.items() if i is not gpu and i not in its_links]
    scene.select_ids(["gpu3"])
    transform = w.view.transform()
    scene.select_ids(["gpu7"])
    qtbot.keyClick(w.view, Qt.Key.Key_Delete)
    assert "gpu7" not in w.document.topology.devices and "gpu7" not in scene.device_items
    assert all(i.scene() is scene for i in keep), "an item the delete did not touch was replaced"
    assert not any(i.scene() is scene for i in its_links)
    assert set(scene.items()) == set(keep)
    # undo: the GPU and its links come back where they were; the others are still the same objects
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert "gpu7" in scene.device_items
    assert all(i.scene() is scene for i in keep)
    back = scene.device_items["gpu7"]
    assert (back.pos().x(), back.pos().y()) == w.document.topology.layout.positions["gpu7"]
    shown = {lid for item in scene.link_items for lid in item.link_ids}
    assert shown == set(w.document.topology.links)
    assert len(scene.items()) == len(keep) + 1 + len(its_links)
    assert not rebuilt and w.view.transform() == transform


def test_retyping_a_link_replaces_only_its_item_and_keeps_the_selection(make_window):
    w = make_window("dgx1-v100")
    scene = w.scene
    link = next(i for i in scene.link_items if not i.bundle)
    lid = link.link_ids[0]
    others = [i for i in scene.items() if i is not link]
    scene.select_ids(["gpu0"])
    old = w.document.topology.links[lid].count
    w.document.push(SetAttribute(lid, "count", old + 1))
    new = scene.items_by_link[lid]
    assert new is not link and isinstance(new, LinkItem) and new.count == old + 1
    assert all(i.scene() is scene for i in others) and scene.selected_ids() == ["gpu0"]
    w.document.undo_stack.undo()
    assert scene.items_by_link[lid].count == old and all(i.scene() is scene for i in others)
