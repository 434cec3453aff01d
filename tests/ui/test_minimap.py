"""The overview dock's picture of the scene is taken once the dock's size settles (not on every resize
event of a window opening), and follows later resizes."""

from PySide6.QtWidgets import QApplication


def test_the_minimap_pictures_the_scene_once_open_and_after_a_resize(make_window, qtbot):
    w = make_window("dgx-a100")
    mm = w.minimap
    qtbot.waitUntil(lambda: mm._picture is not None, timeout=3000)
    assert mm._picture.width() == round(mm.width() * mm.devicePixelRatioF())
    taken = []
    original = mm.refit
    mm.refit = lambda: (taken.append(mm.size()), original())
    mm.resize(mm.width() + 30, mm.height() + 20)
    mm.resize(mm.width() + 30, mm.height() + 20)
    assert not taken, "no rendering of the whole scene inside a resize event"
    qtbot.waitUntil(lambda: bool(taken), timeout=3000)
    QApplication.processEvents()
    assert len(taken) == 1, "two resizes in a row, one picture"
    assert mm._picture.width() == round(mm.width() * mm.devicePixelRatioF())


def test_the_overview_is_pictured_again_after_an_edit_not_after_a_zoom(make_window, qtbot):
    """A zoom changes no item (the boxes' cached pictures going off and back on are no change to Qt's
    scene), so the overview keeps its picture; deleting a device changes the scene, and the overview
    pictures it again."""
    from PySide6.QtCore import Qt

    w = make_window("dgx-h100")
    mm = w.minimap
    qtbot.waitUntil(lambda: mm._picture is not None, timeout=3000)
    qtbot.wait(400)   # the window's first pictures, names and cached boxes settled
    picture, zoom = mm._picture, w.view.transform().m11()
    w.view.setFocus()
    for _ in range(3):
        qtbot.keyClick(w.view, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)   # View > Zoom in
    qtbot.keyClick(w.view, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert abs(w.view.transform().m11() / zoom - 1.25 ** 3 * 0.8) < 1e-6, "zoomed in three notches, out one"
    qtbot.wait(600)   # past the overview's wait and the boxes' cached pictures coming back
    assert mm._picture is picture, "a zoom that changed nothing pictured the whole scene again"
    item = w.scene.device_items["gpu0"]
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(item.scenePos()))
    qtbot.keyClick(w.view, Qt.Key.Key_Delete)
    assert "gpu0" not in w.document.topology.devices
    qtbot.waitUntil(lambda: mm._picture is not picture, timeout=3000)
