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


def test_the_overview_waits_until_the_canvas_has_caught_up(make_window, qtbot):
    """A change to the scene (a replay's colours) followed by a zoom: the overview's picture of the
    whole scene is due while the canvas's boxes get their cached pictures back, a batch per turn.
    It is taken once they are back, in a turn of its own, and it does show the change."""
    from PySide6.QtGui import QColor

    w = make_window("gb200-nvl72")
    mm, scene = w.minimap, w.scene
    qtbot.waitUntil(lambda: mm._picture is not None, timeout=3000)
    qtbot.wait(400)   # names, cached boxes and the first picture settled
    assert not scene.catching_up()
    taken = []
    original = mm.refit
    mm.refit = lambda: (taken.append(scene.catching_up()), original())
    box = next(g for g in scene.group_items.values() if g.collapsed)
    box.fill = QColor("#d62728")   # as a replay colours a tray whose GPUs work
    box.update()
    w.view.zoom(1.15)
    assert scene.catching_up(), "a zoom leaves the boxes' cached pictures to come back later"
    qtbot.waitUntil(lambda: bool(taken), timeout=3000)
    assert taken == [False], "the overview was pictured while the canvas was still catching up"
    assert not scene.catching_up()
    picture = mm._picture.toImage()
    at = mm.to_widget(box.sceneBoundingRect()).center()
    ratio = mm.devicePixelRatioF()
    red = QColor(picture.pixel(int(at.x() * ratio), int(at.y() * ratio)))
    assert red.red() > 150 and red.green() < 120, "the overview shows the tray's new colour"


def test_the_canvas_catches_up_after_its_first_frame_and_after_a_zoom(make_window, qtbot):
    w = make_window("dgx-h100")
    scene = w.scene
    qtbot.waitUntil(lambda: not scene.text_held, timeout=3000)
    qtbot.waitUntil(lambda: not scene.catching_up(), timeout=3000)
    scene.hold_text()
    assert scene.catching_up(), "names held for the next frame are still to be drawn"
    scene.release_text()
    assert scene.catching_up(), "names just released are drawn in the next turn"
    qtbot.waitUntil(lambda: not scene.catching_up(), timeout=3000)
    w.view.zoom(1.25)
    assert scene.catching_up()
    qtbot.waitUntil(lambda: not scene.catching_up(), timeout=3000)
    assert scene._cached
