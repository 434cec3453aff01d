"""What the main window's first frame leaves to later turns of the event loop."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QComboBox


def drop_polish_requests() -> None:
    """Every widget Qt builds posts itself a polish request, answered in the next turn of the event
    loop: the window's first frame. Showing the window polishes all of its own widgets anyway (shown or
    not); the requests that remain are those of widgets outside it that nobody sees yet: pyqtgraph's
    right-click menus and plot settings, a menu and a settings form of about 30 widgets per plot, five
    plots. Qt polishes each of them when it is first shown, so dropping the requests changes nothing
    but the first frame's length."""
    QCoreApplication.removePostedEvents(None, QEvent.Type.PolishRequest)


def polish_scenes_before_show(views) -> None:
    """Each graphics item added to a scene is polished by a call its scene queues for the next turn of
    the event loop: the window's first frame, for the plots that wait behind a tab (three pyqtgraph
    scenes, their plots, axes, legends and curves: every item is told it became visible, in Python,
    and every graphics widget is sent a polish event). Nobody sees them then, and the polish is the
    same before the window is shown as in its first frame, so it is done while the window is built:
    GB200 NVL72's first frame 1.2-1.8 ms of GUI CPU shorter, the build 1.5 ms longer (the work is
    moved, not saved). Only the scenes' own queued calls are delivered here; a view's first paint
    would polish what is left anyway (QGraphicsView::paintEvent)."""
    for view in views:
        scene = view.scene()
        if scene is not None:
            QCoreApplication.sendPostedEvents(scene, QEvent.Type.MetaCall)


def show_contents_when_raised(window, docks) -> None:
    """A dock behind another's tab stays "visible" to Qt, moved off the window: showing the window
    showed, laid out and sized every widget inside it (the Simulation dock's tabs and forms, about 140
    widgets; the Results dock's) in its first frame, although nobody sees them until their tab is
    clicked. The content of each tabbed dock is hidden until its dock shows on screen (its tab is
    current when the window opens, or raised later): the docks that are seen at once show theirs in
    the same frame, the others when raised. It keeps its place meanwhile (retainSizeWhenHidden), so
    the dock areas are as wide and tall as they were: the window looks the same."""
    for dock in docks:
        if window.tabifiedDockWidgets(dock):   # (a first start tabs the docks after the window is shown)
            _wait_until_seen(dock)


def hold_contents_until_tabbed(docks) -> None:
    """A first start (no saved layout) shows the docks side by side and tabs them once the window is
    shown (MainWindow._default_layout), before its first frame is drawn: every dock's content was
    shown, polished and laid out in that frame, the Simulation dock's 140 widgets included, although
    the docks the tabbing puts behind a tab are not seen. Their contents are hidden (keeping their
    place) until then; show_contents_when_raised takes them over once they are tabbed. GB200 NVL72's
    first frame on a first start: 16.3 -> 12.6 ms of GUI CPU (as on a later start)."""
    for dock in docks:
        _hide_content(dock)


def _hide_content(dock) -> None:
    content = dock.widget()
    if getattr(content, "_retained", None) is None:   # (held before: its own policy is kept already)
        policy = content.sizePolicy()
        content._retained = policy.retainSizeWhenHidden()
        policy.setRetainSizeWhenHidden(True)
        content.setSizePolicy(policy)
    content.hide()


def _wait_until_seen(dock) -> None:
    content = dock.widget()
    _hide_content(dock)
    retained = content._retained

    def seen(visible: bool) -> None:
        if not visible:
            return
        dock.visibilityChanged.disconnect(seen)
        if dock.widget() is content:
            kept = content.sizePolicy()
            kept.setRetainSizeWhenHidden(retained)
            content.setSizePolicy(kept)
            content._retained = None
            content.show()
    dock.visibilityChanged.connect(seen)


def size_link_lists_when_shown(*plots) -> None:
    """Each pyqtgraph plot's right-click menu has an axis-link list for each axis, which pyqtgraph
    fills anew whenever a plot is made anywhere (its list of named plots), and which re-measures
    itself 20 ms after each refill (AdjustToContents): the window's five plots are built more than
    20 ms before it is shown, so ten lists measured themselves in its first frame (65-85 us each,
    about 0.7 ms of GB200 NVL72's). This window names no plot, so each list holds only pyqtgraph's
    empty entry: sized when its menu is first shown, from the same entries, it is as wide as before."""
    for plot in plots:
        menu = plot.getViewBox().menu
        for ctrl in getattr(menu, "ctrl", ()):
            combo = ctrl.linkCombo
            if combo.sizeAdjustPolicy() == QComboBox.SizeAdjustPolicy.AdjustToContents:
                combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContentsOnFirstShow)
