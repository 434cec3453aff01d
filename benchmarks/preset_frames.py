"""Frames on the DGX presets, kind by kind (issue 17: every frame under 16 ms on the DGX presets).

A preset opens in the default window (1400 x 900, offscreen). A run is made from the Simulation dock as a
user would (multi-ring all-reduce of 256 MiB: rings drawn, plots and legend filled), then every kind of
frame a user causes is timed: the first paint, zoom notches in and out, pans, replay ticks at fit and
zoomed in (the replay timer's own slot), selecting a device with the mouse, hovering across devices, and
dragging a device. A frame = what the event causes + the events it posts + repainting the canvas
viewport as a paint would (the whole viewport is marked dirty, the worst case).

Run: python benchmarks/preset_frames.py [preset ...] [--runs N] [--profile KIND]
("after first": the three turns after the first paint, which draw what it left for them. A fresh
start's first frame in its own process: benchmarks/first_frame.py.)
Prints median / 95th percentile / worst wall time per preset and kind, and the GUI thread's CPU time
for the same frames (the machine is shared: wall time includes waiting for a core), with the load
average. Fills stay on the GUI thread as in the application (ui.app.serial_raster_fills; before, Qt's
raster engine filled large areas on helper threads the GUI thread waited for, outside its CPU time).
--profile KIND prints a cProfile of the frames of that kind on each preset.
"""

import cProfile
import os
import pstats
import sys
import time

from _windows import dispose, open_window
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtTest import QTest

from dgxstudio.model.presets import load_preset
from dgxstudio.ui.app import before_show, settle_heap

PRESETS = ("dgx1-p100", "dgx1-v100", "dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72")
KINDS = ("first paint", "after first", "zoom", "rest", "pan", "replay fit", "replay zoomed", "select", "hover", "drag")
PROFILE: dict[str, cProfile.Profile] = {}


def timed(app, window, kind: str, action, out: dict) -> None:
    """``action`` then one turn of the event loop with the canvas marked for repaint."""
    prof = PROFILE.get(kind)
    t0, c0 = time.perf_counter(), time.thread_time()
    if prof is not None:
        prof.enable()
    action()
    window.view.viewport().update()
    app.processEvents()
    # what the running event loop does in the same turn (processEvents outside exec() keeps them)
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    if prof is not None:
        prof.disable()
    out.setdefault(kind, []).append((time.perf_counter() - t0, time.thread_time() - c0))


def run_from_dock(app, window) -> None:
    p = window.sim_panel
    p.tabs.setCurrentIndex(0)
    p.sweep.setChecked(False)
    p.collective.setCurrentText("all-reduce")
    p.algorithm.setCurrentText("multi-ring")
    p.size.setText("256MiB")
    got = []
    p.resultReady.connect(lambda *a: got.append(a))
    p.run_button.click()
    t0 = time.perf_counter()
    while not got and time.perf_counter() - t0 < 120:
        app.processEvents()
        time.sleep(0.01)
    if not got:
        raise SystemExit("the run from the Simulation dock did not finish in 120 s")
    for _ in range(5):
        app.processEvents()


def rest(app, window, out: dict) -> None:
    """The view rests after a zoom: the frames in which the boxes get their cached pictures back (a
    batch per frame, see TopologyScene._cache_boxes)."""
    time.sleep(0.2)
    for _ in range(5):
        timed(app, window, "rest", app.processEvents, out)
        time.sleep(0.03)
    app.processEvents()


def devices_on_screen(window) -> list:
    """Devices the canvas shows (or the collapsed boxes standing for them: GB200 NVL72's trays)."""
    view = window.view
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    items = [i for i in window.scene.device_items.values() if shown.contains(i.scenePos())]
    items = items or [g for g in window.scene.group_items.values() if g.collapsed and shown.contains(g.scenePos())]
    return sorted(items, key=lambda i: (i.scenePos().y(), i.scenePos().x()))


def preset(name: str, out: dict) -> None:
    app, window = open_window(load_preset(name), None, name)
    window.close()
    dispose(window, app)
    # the first paint of a fresh window: its items' cached pictures are all made in this frame
    from dgxstudio.ui.main_window import MainWindow
    window = MainWindow(load_preset(name), None, name)
    window.resize(1400, 900)
    before_show()   # as show_window does, before the window is on screen
    timed(app, window, "first paint", window.show, out)
    for _ in range(3):   # what the first frame left to the next ones (names and counts, the overview)
        time.sleep(0.006)
        timed(app, window, "after first", lambda: None, out)
    settle_heap()   # as run_app does once the window's first frames are drawn
    app.processEvents()
    window.view.fit()
    app.processEvents()
    view = window.view
    vp = view.viewport()
    run_from_dock(app, window)
    view.fit()
    app.processEvents()
    rest(app, window, out)

    for k in range(16):   # zoom in on the middle of the canvas, then back out
        timed(app, window, "zoom", lambda k=k: view.zoom(1.15 if k < 8 else 1 / 1.15), out)
    view.fit()
    app.processEvents()
    rest(app, window, out)

    replayer = window.replayer
    frames = 30
    replayer.play()
    replayer.timer.setInterval(10**7)   # active (the window acts as while playing) but never fires by itself
    replayer.speed = replayer.duration / frames / (replayer.timer.interval() / 1000.0)
    replayer.t = 0.0
    for _ in range(frames - 1):
        timed(app, window, "replay fit", replayer._tick, out)

    view.zoom(2.0)
    app.processEvents()
    rest(app, window, out)
    replayer.t = 0.0
    for _ in range(frames - 1):
        timed(app, window, "replay zoomed", replayer._tick, out)
    replayer.pause()
    bar = view.horizontalScrollBar()
    for k in range(12):
        step = vp.width() // 6 * (1 if k < 6 else -1)
        timed(app, window, "pan", lambda s=step: bar.setValue(bar.value() + s), out)
    view.fit()
    app.processEvents()
    rest(app, window, out)

    shown = devices_on_screen(window)
    for item in shown[::max(1, len(shown) // 12)][:12]:
        at = view.mapFromScene(item.scenePos() + (item.boundingRect().topLeft() + item.boundingRect().center()) / 2)
        timed(app, window, "select", lambda at=at: QTest.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at), out)
    QTest.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(3, 3))
    app.processEvents()
    for k in range(24):   # across the canvas, over devices and links
        at = QPoint(int(vp.width() * (k + 0.5) / 24), int(vp.height() * (0.3 + 0.4 * (k % 3) / 2)))
        timed(app, window, "hover", lambda at=at: QTest.mouseMove(vp, at), out)
    item = shown[len(shown) // 2]
    start = view.mapFromScene(item.scenePos() + QPoint(-20, -10))
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for k in range(12):
        to = start + QPoint(6 * (k + 1), 3 * (k + 1))
        timed(app, window, "drag", lambda to=to: QTest.mouseMove(vp, to), out)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start + QPoint(72, 36))
    app.processEvents()
    dispose(window, app)


def three(v: list[float]) -> str:
    v = sorted(v)
    return f"{v[len(v) // 2] * 1e3:5.1f} {v[min(len(v) - 1, int(len(v) * 0.95))] * 1e3:5.1f} {v[-1] * 1e3:5.1f}"


def main() -> None:
    args = sys.argv[1:]
    runs = 1
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    if "--profile" in args:
        i = args.index("--profile")
        PROFILE[args[i + 1]] = cProfile.Profile()
        del args[i:i + 2]
    names = args or PRESETS
    print(f"{'preset':<12} {'frame':<14} {'n':>3}   wall median  p95  worst   GUI CPU med  p95  worst (ms)  load")
    for name in names:
        out: dict = {}
        for _ in range(runs):
            preset(name, out)
        load = os.getloadavg()[0]
        for kind in KINDS:
            frames = out.get(kind, [])
            if frames:
                flag = "" if max(f[0] for f in frames) < 0.016 else "  > 16 ms"
                print(f"{name:<12} {kind:<14} {len(frames):>3}   {three([f[0] for f in frames])}"
                      f"        {three([f[1] for f in frames])}   {load:4.2f}{flag}")
        sys.stdout.flush()
    for kind, prof in PROFILE.items():
        print(f"\n---- profile of '{kind}' frames")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(35)


if __name__ == "__main__":
    main()
