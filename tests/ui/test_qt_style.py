"""The docks' title-bar icons are looked up once, not in every dock's resize, layout and paint (each
lookup read the icons' image files again: 8% of a DGX preset window's first frame)."""

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QStyle

CLOSE, FLOAT = QStyle.StandardPixmap.SP_TitleBarCloseButton, QStyle.StandardPixmap.SP_TitleBarNormalButton


def test_dock_title_icons_are_the_same_icons_through_resizes_and_paints(make_window, qtbot):
    w = make_window("dgx-h100")
    style = QApplication.style()
    dock = w.inspector_dock
    before = {which: style.standardIcon(which, None, dock).cacheKey() for which in (CLOSE, FLOAT)}
    for grow in (40, -60, 20):   # the window resized: every dock laid out and painted again
        w.resize(w.size() + QSize(grow, grow))
        qtbot.wait(20)
        w.grab()
    for which in (CLOSE, FLOAT):
        icon = style.standardIcon(which, None, w.findings_dock)
        assert not icon.isNull()
        assert icon.cacheKey() == before[which], "the same icon, not one read from its files again"
    other = QStyle.StandardPixmap.SP_MessageBoxWarning   # every other icon is the platform style's own
    assert not style.standardIcon(other).isNull()
