"""A system dropped from the palette lands at the nearest free spot (new-user review, session 37): it
was centred on the drop point, so its frame covered loose devices or another system's frame. Real
drops of the palette's own drag data on the canvas; one undo takes the whole system away again."""

from PySide6.QtCore import QPoint

from dgxstudio.model.fabrics import SYSTEM_BOX
from dgxstudio.ui.canvas import GroupItem

from .test_editor import drop_from_palette


def _at(w, item) -> QPoint:
    return w.view.mapFromScene(item.sceneBoundingRect().center())


def _system_item(w, before: set[str]):
    new = [g for g in w.document.topology.groups.values() if g.kind == "system" and g.id not in before]
    assert len(new) == 1
    return w.scene.group_items[new[0].id]


def _frames_and_devices(w, but: str):
    topo = w.document.topology
    inside = set(topo.devices_in_group(but))
    out = [g.sceneBoundingRect() for gid, g in w.scene.group_items.items()
           if gid != but and but not in [x.id for x in topo.group_chain(gid)]]
    return out + [d.sceneBoundingRect() for did, d in w.scene.device_items.items() if did not in inside]


def test_a_system_dropped_on_loose_devices_and_a_frame_covers_neither(make_window, qtbot):
    w = make_window(None)
    topo = w.document.topology
    # the first system on an empty canvas: centred on the drop point, as before
    at = w.view.mapToScene(QPoint(420, 400))
    drop_from_palette(w, "system:dgx-a100", QPoint(420, 400))
    first = _system_item(w, set())
    w.scene._update_frames()
    assert abs(first.frame.center().x() - at.x()) < 40 and abs(first.frame.center().y() - at.y()) < 40
    # two loose GPUs beside it
    for dx in (200, 400):
        drop_from_palette(w, "part:a100-sxm4-80gb", w.view.mapFromScene(first.frame.right() + dx, first.frame.center().y()))
    gpus = [g.id for g in topo.gpus() if topo.group_of(g.id) is None]
    assert len(gpus) == 2
    # dropped right on a loose GPU: the new frame leaves it (and the other GPU, and the first system) clear
    for target in (w.scene.device_items[gpus[0]], first):
        qtbot.wait(20)
        before = {g.id for g in topo.groups.values()}
        devices = len(topo.devices)
        spot = w.view.mapToScene(_at(w, target))
        drop_from_palette(w, "system:dgx-a100", _at(w, target))
        w.scene._update_frames()   # (the frame as drawn now)
        new = _system_item(w, before)
        rect = new.sceneBoundingRect()
        for other in _frames_and_devices(w, new.group_id):
            assert not rect.intersects(other), (new.group_id, rect, other)
        # the nearest free spot: not far from where it was dropped (a frame's size away at most)
        d = max(rect.left() - spot.x(), spot.x() - rect.right(), rect.top() - spot.y(), spot.y() - rect.bottom())
        assert d < max(rect.width(), rect.height()), (rect, spot)
        # and in sight: the view follows it when it moved off the visible part
        shown = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
        assert shown.intersects(rect), (shown, rect)
        # one step: undo takes every device of the system away, redo brings it back where it was
        w.document.undo_stack.undo()
        assert len(topo.devices) == devices and new.group_id not in topo.groups
        w.document.undo_stack.redo()
        assert new.group_id in topo.groups
        assert w.scene.group_items[new.group_id].sceneBoundingRect() == rect


def test_the_fat_tree_layout_assumes_the_canvas_box():
    assert SYSTEM_BOX == (GroupItem.BOX_W, GroupItem.BOX_H)
