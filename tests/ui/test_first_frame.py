"""A window's first frame does only what is seen (issue 17: every frame under 16 ms on the DGX presets):
the plots behind a tab are laid out when their tab is clicked (the tests check that they then are, and
export laid out; benchmarks/preset_frames.py measures what the first frame saves), and the overview
dock pictures the scene after its first paint, not inside it."""

import os

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QTabBar

from dgxstudio.model.presets import load_preset
from dgxstudio.ui.main_window import MainWindow


def _reopened(qtbot, make_window, preset="dgx-a100", before_show=None):
    """A window opened the way a user's second start opens it: with the dock layout the first window
    saved on closing (the Plots dock behind the Findings tab). Every test starts from empty settings
    (conftest's _clean_settings): the first window, a first start, saves the layout the second opens."""
    first = make_window(preset)
    _click_tab(qtbot, first, "Findings")
    first.close()
    w = MainWindow(load_preset(preset), None, preset)
    w.resize(1300, 850)
    if before_show is not None:
        before_show(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def _paint_watcher(on_paint):
    """An event filter calling ``on_paint(scene)`` before each paint of a window's canvas, and the
    function that installs it on a window (``before_show`` of _reopened)."""
    class Paints(QObject):
        scene = None

        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                on_paint(self.scene)
            return False

    watcher = Paints()

    def watch(window):
        watcher.scene = window.scene
        window.view.viewport().installEventFilter(watcher)
    return watcher, watch


def _close(w):
    w.document.undo_stack.setClean()
    w.close()
    w.deleteLater()
    QApplication.processEvents()


def _click_tab(qtbot, window, text):
    for bar in window.findChildren(QTabBar):
        for i in range(bar.count()):
            if bar.tabText(i) == text and bar.isVisible():
                qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
                return
    raise AssertionError(f"no visible tab named {text!r}")


def test_plots_behind_a_tab_are_laid_out_when_their_tab_is_clicked(qtbot, make_window):
    w = _reopened(qtbot, make_window)
    try:
        view = w.live_plots.layout_widget
        assert view.viewport().visibleRegion().isEmpty(), "the Plots dock opens behind the Findings tab"
        QApplication.processEvents()
        fitted = []
        view.centralWidget.geometryChanged.connect(lambda: fitted.append(view.centralWidget.size().toSize()))
        _click_tab(qtbot, w, "Plots")
        qtbot.waitUntil(lambda: not view.viewport().visibleRegion().isEmpty(), timeout=3000)
        qtbot.waitUntil(lambda: view.centralWidget.size().toSize() == view.size(), timeout=3000)
        assert fitted and fitted[-1] == view.size()
        # the three plots share the width the dock gives them
        plots = [w.live_plots.delivered_plot, w.live_plots.rate_plot, w.live_plots.util_plot]
        assert sum(p.width() for p in plots) > 0.9 * view.width()
    finally:
        _close(w)


def test_a_plot_never_shown_still_exports_laid_out(qtbot, make_window, tmp_path):
    """Simulate > Export current plot while the Plots dock was never raised: the plots are laid out
    for the export (as they were laid out at the window's opening before)."""
    w = _reopened(qtbot, make_window)
    try:
        view = w.live_plots.layout_widget
        assert view.viewport().visibleRegion().isEmpty()
        assert view.centralWidget.size().toSize() != view.size()
        path = os.fspath(tmp_path / "live.svg")
        assert w.export_current_plot(path) == path
        laid_out = view.centralWidget.size()
        assert laid_out.width() >= view.width() and laid_out.height() >= view.height()
        with open(path, encoding="utf-8") as f:
            svg = f.read()
        assert "Busiest links" in svg and "Bytes delivered" in svg
    finally:
        _close(w)


class _Paints(QObject):
    """Whether the overview had its picture of the scene at each of its paints."""

    def __init__(self, minimap):
        super().__init__()
        self.minimap = minimap
        self.had_picture = []

    def eventFilter(self, obj, event):
        if obj is self.minimap and event.type() == QEvent.Type.Paint:
            self.had_picture.append(self.minimap._picture is not None)
        return False


def test_the_overview_pictures_the_scene_after_its_first_paint(qtbot, make_window):
    seen = {}

    def watch(w):
        seen["filter"] = _Paints(w.minimap)
        w.minimap.installEventFilter(seen["filter"])

    w = _reopened(qtbot, make_window, before_show=watch)
    try:
        paints = seen["filter"].had_picture
        qtbot.waitUntil(lambda: bool(paints), timeout=3000)
        assert paints[0] is False, "the window's first frame does not render the whole scene into the overview"
        qtbot.waitUntil(lambda: w.minimap._picture is not None, timeout=3000)
        qtbot.waitUntil(lambda: paints[-1] is True, timeout=3000)
        # and the picture shows the design: the overview is not blank
        image = w.minimap.grab().toImage()
        colours = {image.pixel(x, y) for x in range(0, image.width(), 4) for y in range(0, image.height(), 4)}
        assert len(colours) > 3
    finally:
        w.minimap.removeEventFilter(seen["filter"])
        _close(w)


def test_a_plot_menu_is_styled_when_first_opened_not_with_the_window(qtbot, make_window):
    """pyqtgraph builds a right-click menu and a settings form for every plot; Qt polishes each when
    it is first shown, not in the window's first frame."""
    w = _reopened(qtbot, make_window)
    try:
        QApplication.processEvents()
        plot = w.live_plots.delivered_plot
        menus = [plot.vb.menu, plot.ctrlMenu]
        assert not any(m.testAttribute(Qt.WidgetAttribute.WA_WState_Polished) for m in menus)
        _click_tab(qtbot, w, "Plots")
        view = w.live_plots.layout_widget
        qtbot.waitUntil(lambda: view.centralWidget.size().toSize() == view.size(), timeout=3000)
        at = view.mapFromScene(plot.vb.sceneBoundingRect().center())
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.RightButton, pos=at)
        qtbot.waitUntil(plot.vb.menu.isVisible, timeout=3000)
        assert plot.vb.menu.testAttribute(Qt.WidgetAttribute.WA_WState_Polished)
        texts = [a.text() for a in plot.vb.menu.actions()]
        assert "View All" in texts
        assert plot.vb.menu.sizeHint().width() > 50
        plot.vb.menu.close()
    finally:
        _close(w)


def test_the_window_is_drawn_before_the_heap_is_settled(qtbot):
    """run_app shows the window with show_window: its first frame is drawn first, then the start-up
    heap is moved out of the collector's sight (settle_heap), not the other way round."""
    import gc

    from dgxstudio.ui.app import show_window

    before = gc.get_freeze_count()
    w = MainWindow(load_preset("dgx1-v100"), None, "dgx1-v100")
    seen = []

    class Paints(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                seen.append(gc.get_freeze_count())
            return False

    watcher = Paints()
    w.view.viewport().installEventFilter(watcher)
    try:
        show_window(w)
        qtbot.waitExposed(w)
        qtbot.waitUntil(lambda: bool(seen), timeout=3000)
        assert seen[0] == before, "the canvas was drawn before the heap was settled"
        qtbot.waitUntil(lambda: gc.get_freeze_count() > before + 10_000, timeout=5000)
    finally:
        w.view.viewport().removeEventFilter(watcher)
        gc.unfreeze()
        _close(w)


def test_names_and_link_counts_follow_the_first_frame(qtbot, make_window):
    """The window's first frame draws the devices, their icons and the links; the names, port counts
    and link counts ('x5') are laid out and drawn in the frames right after it."""
    held_at_paint = []
    watcher, watch = _paint_watcher(lambda scene: held_at_paint.append(scene.text_held))
    window = _reopened(qtbot, make_window, "dgx-h100", before_show=watch)
    try:
        qtbot.waitUntil(lambda: False in held_at_paint, timeout=3000)
        assert held_at_paint[0] is True, "the first frame: boxes and links"
        QApplication.processEvents()
        view = window.view
        gpu = next(i for i in window.scene.device_items.values() if i.kind == "gpu")
        box = view.mapFromScene(gpu.sceneBoundingRect()).boundingRect()
        image = view.viewport().grab().toImage()
        ink = [QColor(image.pixel(x, y)) for x in range(box.left() + box.width() // 3, box.right() - 8)
               for y in range(box.top() + 3, box.top() + box.height() // 2)]
        assert any(c.red() < 90 and c.green() < 90 and c.blue() < 90 for c in ink), "the GPU's name is drawn"
        labels = window.scene.link_labels._placed
        assert labels and all(text.startswith("x") for _item, _box, text in labels), "link counts placed"
    finally:
        window.view.viewport().removeEventFilter(watcher)
        _close(window)


def test_a_canvas_exported_before_its_window_is_drawn_has_its_names(qtbot, tmp_path):
    """File > Export canvas picture (or a script) right after the window is made: the names and link
    counts held for the window's second frame are in the picture."""
    from PySide6.QtGui import QImage

    w = MainWindow(load_preset("dgx-h100"), None, "dgx-h100")
    try:
        svg_path, png_path = tmp_path / "canvas.svg", tmp_path / "canvas.png"
        assert w.export_canvas(str(svg_path)) and w.export_canvas(str(png_path))
        assert svg_path.read_text(encoding="utf-8").count(">x5<") >= 4, "link counts drawn"
        image = QImage(str(png_path))
        origin = w.scene.itemsBoundingRect().adjusted(-20, -20, 20, 20).topLeft()
        gpu = next(i for i in w.scene.device_items.values() if i.kind == "gpu")
        box = gpu.sceneBoundingRect().translated(-origin).toRect()
        ink = [QColor(image.pixel(x, y)) for x in range(box.left() + box.width() // 3, box.right() - 8)
               for y in range(box.top() + 3, box.top() + box.height() // 2)]
        assert any(c.red() < 90 and c.green() < 90 and c.blue() < 90 for c in ink), "the GPU's name is drawn"
    finally:
        _close(w)


def test_tray_names_follow_the_first_frame_too(qtbot, make_window):
    """GB200 NVL72's collapsed tray boxes hold their names and counts for the frame after the first,
    like the devices' names (they were laid out and drawn in the first frame: 2 ms of it), and then
    draw them."""
    at_first_paint = []

    def first(scene):
        if not at_first_paint:
            at_first_paint.append(None)
            QTimer.singleShot(0, lambda: at_first_paint.append(   # right after this paint
                [getattr(g, "_runs", None) for g in scene.group_items.values() if g.collapsed]))

    watcher, watch = _paint_watcher(first)
    window = _reopened(qtbot, make_window, "gb200-nvl72", before_show=watch)
    try:
        qtbot.waitUntil(lambda: len(at_first_paint) == 2, timeout=3000)
        laid_out = at_first_paint[1]
        assert len(laid_out) >= 18 and all(r is None for r in laid_out), "no tray name laid out in the first frame"
        qtbot.waitUntil(lambda: not window.scene.text_held, timeout=3000)
        qtbot.wait(30)
        view = window.view
        tray = next(g for g in window.scene.group_items.values() if g.collapsed and g.title.startswith("Compute"))
        box = view.mapFromScene(tray.sceneBoundingRect()).boundingRect()
        image = view.viewport().grab().toImage()
        ink = [QColor(image.pixel(x, y)) for x in range(box.left() + box.width() // 4, box.right() - 24)
               for y in range(box.top() + 3, box.top() + box.height() // 2)]
        assert any(c.red() < 90 and c.green() < 90 and c.blue() < 90 for c in ink), "the tray's name is drawn"
    finally:
        window.view.viewport().removeEventFilter(watcher)
        _close(window)


def test_the_live_plots_behind_a_tab_are_first_laid_out_when_their_tab_is_raised(qtbot, make_window):
    """The Plots dock sits behind the Findings tab: its three live plots' first layout (posted when they
    were made, and handled in the window's first frame: 8-9% of it) waits until the tab is raised."""
    from PySide6.QtWidgets import QGraphicsWidget

    after_first_paint = []

    def first(scene):
        if not after_first_paint:
            after_first_paint.append(None)
            QTimer.singleShot(0, lambda: after_first_paint.append(grid.isActivated()))   # right after this paint

    watcher, watch = _paint_watcher(first)
    window = _reopened(qtbot, make_window, "dgx-h100", before_show=watch)
    view = window.live_plots.layout_widget
    grid = QGraphicsWidget.layout(view.ci)
    try:
        qtbot.waitUntil(lambda: len(after_first_paint) == 2, timeout=3000)
        assert after_first_paint[1] is False, "the hidden plots were laid out in the first frame"
        qtbot.wait(50)
        assert not grid.isActivated(), "nor in the frames after it"
        _click_tab(qtbot, window, "Plots")
        qtbot.waitUntil(grid.isActivated, timeout=3000)
        plot = window.live_plots.delivered_plot
        assert plot.vb.width() > 100 and plot.vb.height() > 30, "laid out at the dock's size"
    finally:
        window.view.viewport().removeEventFilter(watcher)
        _close(window)


def test_the_plots_inside_the_hidden_live_plots_wait_too(qtbot, make_window):
    """Each live plot and the utilization legend posted a layout request of its own when made; those
    were handled in the window's first frame (8% of it on a DGX H100) though their grid waited. They
    wait with it, and are laid out when the tab is raised, each at its place in the dock."""
    from PySide6.QtWidgets import QGraphicsWidget

    inner = []

    def first(scene):
        if not inner:
            inner.append(None)
            QTimer.singleShot(0, lambda: inner.append([QGraphicsWidget.layout(i).isActivated() for i in items]))

    watcher, watch = _paint_watcher(first)
    window = _reopened(qtbot, make_window, "dgx-h100", before_show=watch)
    live = window.live_plots
    items = [live.delivered_plot, live.rate_plot, live.util_plot, live.util_plot.legend]
    try:
        qtbot.waitUntil(lambda: len(inner) == 2, timeout=3000)
        assert inner[1] == [False] * 4, "a hidden plot or legend was laid out in the first frame"
        _click_tab(qtbot, window, "Plots")
        qtbot.waitUntil(lambda: all(QGraphicsWidget.layout(i).isActivated() for i in items), timeout=3000)
        lefts = [p.vb.mapRectToScene(p.vb.boundingRect()).left() for p in items[:3]]
        assert lefts == sorted(lefts) and lefts[1] - lefts[0] > 100, "three plots side by side"
        for p in items[:3]:
            assert p.vb.width() > 100 and p.vb.height() > 30, "each laid out at its share of the dock"
    finally:
        window.view.viewport().removeEventFilter(watcher)
        _close(window)


def test_plots_never_seen_are_laid_out_when_their_window_closes(qtbot, make_window):
    """A window closed without its Plots tab ever raised lays its plots out as it closes: left without
    their first layout, Qt resized them while taking the window apart at the interpreter's exit,
    calling pyqtgraph's Python methods when Python was half gone (a crash in one exit of two)."""
    from PySide6.QtWidgets import QGraphicsWidget

    window = _reopened(qtbot, make_window, "dgx-h100")
    live = window.live_plots
    items = [live.delivered_plot, live.rate_plot, live.util_plot]
    qtbot.wait(100)
    assert not any(QGraphicsWidget.layout(i).isActivated() for i in items), "never seen, never laid out"
    window.document.undo_stack.setClean()
    window.close()
    assert all(QGraphicsWidget.layout(i).isActivated() for i in items)
    window.deleteLater()
    QApplication.processEvents()


def test_a_script_that_leaves_its_window_open_exits_cleanly(tmp_path):
    """Plots never seen were resized by Qt as the window was taken apart at the interpreter's exit,
    when pyqtgraph's Python half was gone: a segfault at every exit of such a script."""
    import subprocess
    import sys

    script = ("import time\nfrom PySide6.QtWidgets import QApplication\napp = QApplication([])\n"
              "from dgxstudio.model.presets import load_preset\nfrom dgxstudio.ui.main_window import MainWindow\n"
              "w = MainWindow(load_preset('dgx-a100'), None, 'dgx-a100')\nw.resize(1300, 850)\nw.show()\n"
              "t = time.time()\nwhile time.time() - t < 0.5:\n    app.processEvents()\n"
              "w.document.undo_stack.setClean()\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", DGXSTUDIO_CONFIG_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
