"""What the canvas and the window no longer pay for in a frame (issue 17: every frame under 16 ms on
the DGX presets, with margin), and that the picture on screen is the same: fills stay on the GUI
thread, and the canvas's viewport is not filled under the scene's background. Their figures are
measured by benchmarks/preset_frames.py; benchmarks/screens.py compares the pictures pixel by pixel."""

import os
import subprocess
import sys

from PySide6.QtCore import Qt

from dgxstudio.ui.app import serial_raster_fills


def test_raster_fills_stay_on_the_gui_thread_unless_the_user_says_otherwise():
    env = {}
    serial_raster_fills(env)
    assert env == {"QT_NO_GUI_THREADPOOL": "1"}
    mine = {"QT_NO_GUI_THREADPOOL": ""}   # a user's own setting (set and empty: Qt's pool is off too)
    serial_raster_fills(mine)
    assert mine == {"QT_NO_GUI_THREADPOOL": ""}


def test_a_window_opened_by_the_application_paints_without_helper_threads(tmp_path):
    """Qt names its raster helpers 'Thread (pooled)'; the old start made two in the first frame."""
    script = (
        "import glob, time\n"
        "from dgxstudio.ui.app import application\n"
        "app = application()\n"
        "from dgxstudio.model.presets import load_preset\nfrom dgxstudio.ui.main_window import MainWindow\n"
        "w = MainWindow(load_preset('gb200-nvl72'), None, 'gb200-nvl72')\nw.resize(1400, 900)\nw.show()\n"
        "t = time.time()\nwhile time.time() - t < 0.6:\n    app.processEvents()\n"
        "w.view.zoom(1.5)\nt = time.time()\nwhile time.time() - t < 0.3:\n    app.processEvents()\n"
        "names = [open(p).read().strip() for p in glob.glob('/proc/self/task/*/comm')]\n"
        "print('pooled', sum(n.startswith('Thread (pooled') for n in names))\n"
        "w.document.undo_stack.setClean()\nw.close()\n")
    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    env.update(QT_QPA_PLATFORM="offscreen", DGXSTUDIO_CONFIG_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pooled 0" in done.stdout.splitlines(), done.stdout


def test_the_canvas_viewport_is_filled_once_per_frame(make_window, qtbot):
    """The scene's background is the only fill of the canvas (benchmarks/screens.py compares the
    screen's pixels, first frame, panned and replaying, with the old code's: all equal)."""
    w = make_window("gb200-nvl72")
    vp = w.view.viewport()
    assert not vp.autoFillBackground(), "no fill of the palette's base colour under the scene's background"
    assert vp.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent), "still opaque to Qt: scrolls move its pixels"
    assert w.scene.backgroundBrush().isOpaque(), "the scene's background covers every pixel itself"


def test_plot_menus_link_lists_measure_themselves_when_shown_as_wide_as_before(make_window, qtbot):
    """pyqtgraph's axis-link lists re-measured themselves 20 ms after being filled, in the window's first
    frame (ten of them, 0.7 ms); they now take their size when their menu is shown, the same size."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QComboBox

    w = make_window("gb200-nvl72")
    plots = [w.live_plots.delivered_plot, w.live_plots.rate_plot, w.live_plots.util_plot, w.sweep_plot.plot, w.gantt.plot]
    combos = [ctrl.linkCombo for p in plots for ctrl in p.getViewBox().menu.ctrl]
    assert len(combos) == 10
    assert all(c.sizeAdjustPolicy() != QComboBox.SizeAdjustPolicy.AdjustToContents for c in combos)
    menu = plots[0].getViewBox().menu
    menu.popup(QPoint(20, 20))
    x_axis = menu.actions()[1].menu()   # "X axis": the form with the link list
    x_axis.popup(QPoint(60, 40))
    qtbot.wait(50)
    shown = menu.ctrl[0].linkCombo
    assert shown.isVisible()
    before = QComboBox()   # as pyqtgraph makes it, with the same entries
    before.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    before.addItems([shown.itemText(i) for i in range(shown.count())])
    assert shown.sizeHint() == before.sizeHint()
    assert shown.width() >= before.sizeHint().width()
    x_axis.close()
    menu.close()


def test_the_canvas_background_covers_every_pixel_of_the_area_it_repaints(make_window):
    """The viewport is no longer filled under the scene's background, so that fill must leave no pixel
    of the area it repaints partly covered, even where the area's edges, mapped to the scene and back,
    land off the pixel grid: a smoothed fill blended the edge rows with what the backing store held
    (after a pan on DGX-1 V100, rows of #fafafa where the old code showed #fbfbfb)."""
    import numpy as np
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    w = make_window("dgx1-v100")
    image = QImage(40, 30, QImage.Format.Format_RGB32)
    image.fill(QColor("#d00000"))   # what a scroll left in the strip it uncovered
    painter = QPainter(image)
    painter.setRenderHints(w.view.renderHints())   # as the view paints: smoothed
    painter.scale(1.15 ** 3, 1.15 ** 3)
    inverse = painter.worldTransform().inverted()[0]
    area = inverse.mapRect(QRectF(0.3, 0.2, 39.4, 29.5))   # every pixel centre of the image inside
    w.scene.drawBackground(painter, area)
    painter.end()
    pixels = np.frombuffer(image.constBits(), np.uint32, image.sizeInBytes() // 4)
    assert set(np.unique(pixels).tolist()) == {w.scene.backgroundBrush().color().rgba()}


def test_a_window_is_shown_with_its_build_already_collected(qtbot, monkeypatch):
    """The build's objects waited in the young generations until a collection came due in the second or
    third frame (2-38 ms there on GB200 NVL72); show_window collects them before the window is shown."""
    import gc

    from dgxstudio.model.presets import load_preset
    from dgxstudio.ui.app import show_window
    from dgxstudio.ui.main_window import MainWindow

    w = MainWindow(load_preset("gb200-nvl72"), None, "gb200-nvl72")
    counts = []
    monkeypatch.setattr(w, "show", lambda: (counts.append(gc.get_count()), MainWindow.show(w)))
    show_window(w)
    qtbot.waitExposed(w)
    try:
        young, middle, _old = counts[0]
        assert middle == 0 and young < 20, counts[0]
    finally:
        w.document.undo_stack.setClean()
        w.close()
        w.deleteLater()


def test_a_built_window_leaves_no_group_frame_update_to_its_first_frame(make_window, qtbot, monkeypatch):
    """A rebuild placed its collapsed boxes (and devices) one by one, and each placing queued an update
    of the group frames for the next turn, the window's first frame, although the rebuild updates them
    itself at its end. Moving a device by hand still updates the frames in the next turn."""
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    from dgxstudio.model.presets import load_preset
    from dgxstudio.ui.canvas import TopologyScene
    from dgxstudio.ui.main_window import MainWindow

    calls = []
    update_frames = TopologyScene._update_frames
    monkeypatch.setattr(TopologyScene, "_update_frames", lambda self: (calls.append(1), update_frames(self)))
    built = MainWindow(load_preset("gb200-nvl72"), None, "gb200-nvl72")
    try:
        calls.clear()
        QApplication.processEvents()   # the turn the first frame is drawn in
        assert calls == []
    finally:
        built.document.undo_stack.setClean()
        built.close()
        built.deleteLater()
    w = make_window("dgx-h100")
    topo = w.document.topology
    frame = next(g for g in w.scene.group_items.values() if not g.collapsed)
    device = next(d for d in w.scene.device_items.values()
                  if topo.group_of(d.device_id) is not None and topo.group_of(d.device_id).id == frame.group_id)
    before = frame.frame
    device.setPos(device.pos() + QPointF(5000, 3000))   # as a drag moves it, out past the frame
    qtbot.waitUntil(lambda: frame.frame != before, timeout=2000)
