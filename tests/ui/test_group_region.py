"""A group of devices that are not side by side (GPU0 and GPU2 of the DGX-1's cube mesh, two corners
of a square): its frame covered GPU1, GPU3 and GPU7, which looked like members, and a drag of GPU7 by a
few pixels made it one. The frame now holds its rectangle less a gap around every device that is not
a member (ui/group_region.py), and drags and drops judge "inside" by what is drawn."""

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from .conftest import drag
from .test_editor import view_pos

CTRL = Qt.KeyboardModifier.ControlModifier


def _group_gpu0_and_gpu2(w, qtbot) -> str:
    w.view.fit()
    QApplication.processEvents()
    vp = w.view.viewport()
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=view_pos(w, "gpu0"))
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, CTRL, pos=view_pos(w, "gpu2"))
    assert sorted(w.scene.selected_ids()) == ["gpu0", "gpu2"]
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_G, CTRL)
    QApplication.processEvents()
    (gid,) = w.scene.selected_ids()
    assert sorted(w.document.topology.groups[gid].devices) == ["gpu0", "gpu2"]
    return gid


def _drag_device_to(w, device: str, scene_point: QPointF) -> None:
    item = w.scene.device_items[device]
    drag(w.view, view_pos(w, device), w.view.mapFromScene(scene_point))
    QApplication.processEvents()
    assert (item.scenePos() - scene_point).manhattanLength() < 6, (item.scenePos(), scene_point)


def test_a_frame_around_two_corners_leaves_the_devices_between_them_out(make_window, qtbot):
    w = make_window("dgx1-v100")
    gid = _group_gpu0_and_gpu2(w, qtbot)
    frame = w.scene.group_items[gid]
    covered = sorted(d for d, it in w.scene.device_items.items()
                     if d not in ("gpu0", "gpu2") and frame.frame.intersects(it.sceneBoundingRect()))
    assert covered == ["gpu1", "gpu3", "gpu6", "gpu7"]   # under the frame's rectangle
    # the picture: tinted where the frame holds (by its left edge), not in the gap just left of GPU7
    image = w.view.grab().toImage()
    gpu7 = w.scene.device_items["gpu7"].sceneBoundingRect()
    gap = w.view.mapFromScene(QPointF(gpu7.left() - 4, gpu7.center().y()))
    held = w.view.mapFromScene(QPointF(frame.frame.left() + 6, gpu7.center().y()))
    assert image.pixelColor(gap) != image.pixelColor(held)
    for d in covered:   # none of them under what it holds
        assert not frame.region.intersects(w.scene.device_items[d].sceneBoundingRect()), d
    for d in ("gpu0", "gpu2"):
        assert frame.region.contains(w.scene.device_items[d].sceneBoundingRect()), d


def test_dragging_a_device_in_its_gap_keeps_it_out_and_into_the_frame_brings_it_in(make_window, qtbot):
    w = make_window("dgx1-v100")
    gid = _group_gpu0_and_gpu2(w, qtbot)
    topo = w.document.topology
    system = topo.group_of("gpu1").id
    gpu7 = w.scene.device_items["gpu7"].scenePos()
    _drag_device_to(w, "gpu7", gpu7 + QPointF(6, 4))   # a nudge by hand: it was made a member
    assert topo.group_of("gpu7").id == system
    assert not w.scene.group_items[gid].region.intersects(w.scene.device_items["gpu7"].sceneBoundingRect())
    _drag_device_to(w, "gpu0", w.scene.device_items["gpu0"].scenePos() + QPointF(-6, 4))   # a member stays
    assert topo.group_of("gpu0").id == gid
    # dropped where the frame holds (left of GPU7's gap, above GPU3's): it joins, as in a container
    _drag_device_to(w, "gpu7", QPointF(40, 170))
    assert topo.group_of("gpu7").id == gid
    assert w.scene.group_items[gid].region.contains(w.scene.device_items["gpu7"].sceneBoundingRect())
