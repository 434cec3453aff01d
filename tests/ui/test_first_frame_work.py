"""What a window's first frame no longer does (issue 17: every frame under 16 ms on the DGX presets),
and that what it used to do still happens: the hidden plots' graphics items are polished while the
window is built, not in its first frame; a dock behind another's tab shows its content when its tab
is clicked, in the place it had. benchmarks/first_frame.py measures what this saves."""

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QDockWidget, QGraphicsWidget

from dgxstudio.model.presets import load_preset
from dgxstudio.ui.main_window import MainWindow

from .test_first_frame import _click_tab


class _Polishes(QObject):
    """Polish events sent to graphics widgets (the plots, their axes and legends), and whether each
    came before the window was shown."""

    def __init__(self):
        super().__init__()
        self.shown = False
        self.before, self.after = [], []

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Polish and isinstance(obj, QGraphicsWidget):
            (self.after if self.shown else self.before).append(type(obj).__name__)
        return False


def _close(w):
    w.document.undo_stack.setClean()
    w.close()
    w.deleteLater()
    QApplication.processEvents()


def test_hidden_plots_are_polished_while_the_window_is_built_not_in_its_first_frame(qtbot):
    app = QApplication.instance()
    seen = _Polishes()
    app.installEventFilter(seen)
    try:
        w = MainWindow(load_preset("gb200-nvl72"), None, "gb200-nvl72")
        w.resize(1300, 850)
        seen.shown = True
        w.show()
        qtbot.waitExposed(w)
        QApplication.processEvents()
    finally:
        app.removeEventFilter(seen)
    try:
        assert "PlotItem" in seen.before and "AxisItem" in seen.before, "the plots are polished (as before)"
        assert seen.after == [], "the first frame polishes none of the hidden plots' items"
    finally:
        _close(w)


def _reopened(qtbot, make_window, before_show=None):
    """A second start: the dock layout the first window saved (Simulation behind the Palette tab,
    Results and Plots behind Findings, History behind Inspector)."""
    first = make_window("dgx-h100")
    for tab in ("Palette", "Findings", "Inspector"):
        _click_tab(qtbot, first, tab)
    first.close()
    w = MainWindow(load_preset("dgx-h100"), None, "dgx-h100")
    w.resize(1300, 850)
    if before_show is not None:
        before_show(w)
    w.show()
    qtbot.waitExposed(w)
    QApplication.processEvents()
    return w


def _geometries(w):
    return {d.objectName(): d.geometry() for d in w.findChildren(QDockWidget)} | {"canvas": w.view.geometry()}


def test_a_dock_behind_a_tab_shows_its_content_when_its_tab_is_clicked(qtbot, make_window):
    w = _reopened(qtbot, make_window)
    try:
        assert w.palette.isVisible() and w.findings.isVisible() and w.inspector.isVisible(), "the docks on top"
        for hidden in (w.sim_panel, w.results, w.history):
            assert not hidden.isVisible(), f"{type(hidden).__name__} behind a tab waits"
        _click_tab(qtbot, w, "Simulation")
        qtbot.waitUntil(w.sim_panel.isVisible, timeout=3000)
        QApplication.processEvents()
        button = w.sim_panel.run_button
        assert button.isVisible() and not button.visibleRegion().isEmpty() and button.width() > 20
        image = w.sim_dock.grab().toImage()
        colours = {image.pixel(x, y) for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)}
        assert len(colours) > 10, "the Simulation dock is drawn, not blank"
        _click_tab(qtbot, w, "History")
        qtbot.waitUntil(w.history.isVisible, timeout=3000)
        _click_tab(qtbot, w, "Results")
        qtbot.waitUntil(w.results.isVisible, timeout=3000)
    finally:
        _close(w)


def test_docks_waiting_behind_tabs_keep_the_window_layout(qtbot, make_window):
    """The docks and the canvas get the same places whether the contents behind tabs wait or not."""
    waited = _reopened(qtbot, make_window)
    try:
        assert not waited.sim_panel.isVisible()
        places = _geometries(waited)
    finally:
        _close(waited)

    def show_all_first(w):   # what every dock did before: its content shown with the window
        for dock in w.findChildren(QDockWidget):
            dock.widget().show()
    shown = _reopened(qtbot, make_window, before_show=show_all_first)
    try:
        assert shown.sim_panel.isVisible()
        assert _geometries(shown) == places
    finally:
        _close(shown)


def test_an_icon_is_parsed_once_for_every_size(qtbot, monkeypatch):
    """The palette draws five sizes of each icon and the canvas a sixth in the window's first frame:
    one parse of the SVG serves them all, and draws what a parse of its own draws."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QPainter, QPixmap
    from PySide6.QtSvg import QSvgRenderer

    from dgxstudio.ui import style

    parsed = []

    class Counted(QSvgRenderer):
        def __init__(self, *args):
            super().__init__(*args)
            parsed.append(args)

    def forget():   # icons made by earlier tests, then the renderers of the counting class
        for cached in (getattr(style, "_svg_renderer", None), style.icon_pixmap):
            if cached is not None:
                cached.cache_clear()

    monkeypatch.setattr(style, "QSvgRenderer", Counted)
    forget()
    try:
        style.icon("nvswitch")
        canvas = style.icon_pixmap("nvswitch", 28)
        assert len(parsed) == 1
        alone = QPixmap(28, 28)
        alone.fill(Qt.GlobalColor.transparent)
        painter = QPainter(alone)
        QSvgRenderer(style.QByteArray(style._svg_bytes("nvswitch"))).render(painter, QRectF(0, 0, 28, 28))
        painter.end()
        assert canvas.toImage() == alone.toImage()
    finally:
        forget()


def _pixels(item, draw):
    """What ``draw(painter)`` paints over the item's bounds, scaled as a fitted canvas would be."""
    from PySide6.QtGui import QColor, QImage, QPainter, QTransform

    rect = item.boundingRect().adjusted(-4, -4, 4, 4)
    image = QImage(int(rect.width() * 0.4) + 2, int(rect.height() * 0.4) + 2, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("#fbfbfb"))
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing)
    painter.setTransform(QTransform.fromScale(0.4, 0.4).translate(-rect.left(), -rect.top()))
    draw(painter)
    painter.end()
    return image


def test_a_link_draws_its_path_as_a_line_with_the_same_pixels(make_window):
    """Links and bundles are drawn as lines (cheaper per frame than their path); the pixels are the
    path's, with the base pen, a replay's, and after a device moved."""
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

    from dgxstudio.ui.style import RING_COLORS

    w = make_window("gb200-nvl72")
    bundles = [i for i in w.scene.link_items if i.bundle]
    assert len(bundles) == 162 and all(i._line is not None for i in bundles)
    tray = next(g for g in w.scene.group_items.values() if g.collapsed)
    tray.setPos(tray.pos().x() + 37, tray.pos().y() + 11)   # its bundles follow
    moved = w.scene._links_at[tray]
    for item in moved[:3] + bundles[:3]:
        for overlay in (None, RING_COLORS[2]):
            item.set_overlay(overlay, 4.0 if overlay is not None else None)
            option = QStyleOptionGraphicsItem()
            as_line = _pixels(item, lambda p, item=item, option=option: item.paint(p, option))
            pen = item.drawn_pen()
            as_path = _pixels(item, lambda p, item=item, pen=pen: (p.setPen(pen), p.drawPath(item.path())))
            assert as_line == as_path and as_line != _pixels(item, lambda p: None)   # (and not blank)


def test_a_first_start_shows_no_content_of_the_docks_it_puts_behind_a_tab(qtbot):
    """A first start (no saved layout) tabs its docks once the window is shown, before its first
    frame: the contents of the docks that end up behind a tab (Simulation, History, Results) wait
    until their tab is raised, as on a later start; the others are shown in that frame."""

    shown = []

    class Shows(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Show:
                shown.append(obj)
            return False

    w = MainWindow(load_preset("dgx-h100"), None, "dgx-h100")   # a first start (conftest's _clean_settings)
    watcher = Shows()
    for content in (w.sim_panel, w.history, w.results, w.palette, w.findings):
        content.installEventFilter(watcher)
    try:
        w.resize(1300, 850)
        w.show()
        qtbot.waitExposed(w)
        qtbot.wait(20)   # the default layout is applied once the window is laid out
        assert w.tabifiedDockWidgets(w.sim_dock) == [w.palette_dock]
        assert w.palette in shown and w.findings in shown and w.palette.isVisible()
        waiting = [c for c in (w.sim_panel, w.history, w.results) if c in shown or c.isVisible()]
        assert not waiting, [type(c).__name__ for c in waiting]
        # the default layout resizes the docks after tabbing them: the tab bars settle before a click
        # (a loaded machine once clicked where "Simulation" was about to be, and hit "Palette")
        QApplication.processEvents()
        qtbot.wait(300)
        _click_tab(qtbot, w, "Simulation")
        qtbot.waitUntil(w.sim_panel.isVisible, timeout=3000)
        QApplication.processEvents()
        assert w.sim_panel.run_button.width() > 20 and not w.sim_panel.run_button.visibleRegion().isEmpty()
        _click_tab(qtbot, w, "Results")
        qtbot.waitUntil(w.results.isVisible, timeout=3000)
        _click_tab(qtbot, w, "History")
        qtbot.waitUntil(w.history.isVisible, timeout=3000)
    finally:
        _close(w)
