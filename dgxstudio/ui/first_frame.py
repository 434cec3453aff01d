"""What the main window's first frame leaves to later turns of the event loop."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent


def drop_polish_requests() -> None:
    """Every widget Qt builds posts itself a polish request, answered in the next turn of the event
    loop: the window's first frame. Showing the window polishes all of its own widgets anyway (shown or
    not); the requests that remain are those of widgets outside it that nobody sees yet: pyqtgraph's
    right-click menus and plot settings, a menu and a settings form of about 30 widgets per plot, five
    plots. Qt polishes each of them when it is first shown, so dropping the requests changes nothing
    but the first frame's length."""
    QCoreApplication.removePostedEvents(None, QEvent.Type.PolishRequest)
