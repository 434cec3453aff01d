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
