"""The application's widget style: the platform's own, keeping the two icons of the docks' title bars.

Qt's common style looks the close and float icons up again each time it places a dock's title-bar
buttons, which it does in every dock's resize, layout and paint. Without an icon theme (offscreen, and
Linux desktops without one) each lookup reads the icons' image files again (QIcon::addFile and
QImageReader in perf's stacks): 8% of a DGX preset window's first frame, about 2 ms of its GUI CPU.
This style keeps those two icons once looked up (per icon theme), and leaves everything else to the
platform's style.
"""

from __future__ import annotations

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle

KEPT = (QStyle.StandardPixmap.SP_TitleBarCloseButton, QStyle.StandardPixmap.SP_TitleBarNormalButton)


class AppStyle(QProxyStyle):
    def __init__(self) -> None:
        super().__init__()   # the platform's default style underneath
        self._icons: dict[tuple, QIcon] = {}

    def standardIcon(self, which, option=None, widget=None) -> QIcon:
        if which in KEPT:
            key = (which, QIcon.themeName())
            icon = self._icons.get(key)
            if icon is None:
                icon = self._icons[key] = super().standardIcon(which, option, widget)
            return icon
        return super().standardIcon(which, option, widget)


_STYLE: list[AppStyle] = []   # the Python side stays alive as long as Qt uses it


def install_style() -> None:
    """Once per application, before its first window is built (a later change would polish every
    widget again)."""
    app = QApplication.instance()
    if app is None or isinstance(app.style(), AppStyle):
        return
    style = AppStyle()
    _STYLE.append(style)
    QApplication.setStyle(style)
