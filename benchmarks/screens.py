"""Screenshots of the main window for before/after comparisons (issue 17: a faster frame must draw the
same picture): each preset opened offscreen in the default window, then grabbed at rest, after zoom
notches (once the view rests), with a device selected by a mouse click, with a second one selected, and with a link selected.
The "-screen" pictures are what the window's backing store holds (the screen's copy, which partial
repaints and scrolled pixels build up): the first frame, zoomed in and panned twice, and a replay at fit
after a run from the Simulation dock, halfway through.

Run: python benchmarks/screens.py OUTDIR [preset ...]      (default: dgx-h100 gb200-nvl72)
     python benchmarks/screens.py --compare DIR_A DIR_B     (pixels that differ, per picture)
"""

import os
import sys
import time

from _windows import dispose, open_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest

from dgxstudio.model.presets import load_preset

PRESETS = ("dgx-h100", "gb200-nvl72")


def settle(app, seconds: float = 1.2) -> None:
    """Long enough for every timer the window starts (names, cached pictures, the overview's picture)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.01)


def click(window, item) -> None:
    view = window.view
    rect = item.boundingRect()
    at = view.mapFromScene(item.scenePos() + (rect.topLeft() + rect.center()) / 2)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)


def shots(outdir: str, name: str) -> None:
    import tempfile

    from preset_frames import devices_on_screen

    os.environ["DGXSTUDIO_CONFIG_DIR"] = tempfile.mkdtemp(prefix="dgxstudio-screens-")   # a first start's layout
    app, window = open_window(load_preset(name), None, name)
    settle(app)
    window.grab().save(os.path.join(outdir, f"{name}-rest.png"))
    for _ in range(3):
        window.view.zoom(1.15)
        app.processEvents()
    settle(app)
    window.grab().save(os.path.join(outdir, f"{name}-zoom.png"))
    window.view.fit()
    settle(app)
    shown = devices_on_screen(window)
    click(window, shown[0])
    settle(app)
    window.grab().save(os.path.join(outdir, f"{name}-select.png"))
    click(window, shown[len(shown) // 2])
    settle(app)
    window.grab().save(os.path.join(outdir, f"{name}-select2.png"))
    window.scene.select_ids([next(iter(window.document.topology.links))])
    settle(app)
    window.grab().save(os.path.join(outdir, f"{name}-link.png"))
    dispose(window, app)
    screen_shots(outdir, name)


def on_screen(window):
    """What the window's backing store holds now (the offscreen platform's copy of the screen)."""
    return window.screen().grabWindow(window.winId())


def screen_shots(outdir: str, name: str) -> None:
    from PySide6.QtCore import QEvent

    from dgxstudio.ui.main_window import MainWindow
    from preset_frames import run_from_dock

    app, window = open_window(load_preset(name), None, name)   # a window opened before, as a user's second one
    dispose(window, app)
    window = MainWindow(load_preset(name), None, name)
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    on_screen(window).save(os.path.join(outdir, f"{name}-first-screen.png"))
    settle(app)
    view = window.view
    view.zoom(2.0)
    settle(app)
    for dx, dy in ((120, 0), (0, 90)):   # scrolled pixels plus the strips uncovered
        view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + dx)
        view.verticalScrollBar().setValue(view.verticalScrollBar().value() + dy)
        app.processEvents()
    settle(app)
    on_screen(window).save(os.path.join(outdir, f"{name}-pan-screen.png"))
    view.fit()
    run_from_dock(app, window)
    view.fit()
    settle(app)
    window.replayer.set_time(window.replayer.duration / 2)
    settle(app)
    on_screen(window).save(os.path.join(outdir, f"{name}-replay-screen.png"))
    dispose(window, app)


def compare(a: str, b: str) -> None:
    for name in sorted(os.listdir(a)):
        if not name.endswith(".png"):
            continue
        x, y = QImage(os.path.join(a, name)), QImage(os.path.join(b, name))
        if x.size() != y.size():
            print(f"{name}: sizes differ {x.size().toTuple()} {y.size().toTuple()}")
            continue
        x = x.convertToFormat(QImage.Format.Format_RGB32)
        y = y.convertToFormat(QImage.Format.Format_RGB32)
        import numpy as np

        pa = np.frombuffer(x.constBits(), np.uint32, x.sizeInBytes() // 4)
        pb = np.frombuffer(y.constBits(), np.uint32, y.sizeInBytes() // 4)
        diff = np.nonzero(pa != pb)[0]
        where = ""
        if len(diff):
            stride = x.bytesPerLine() // 4
            rows, cols = diff // stride, diff % stride
            where = f"  x {cols.min()}-{cols.max()}, y {rows.min()}-{rows.max()}"
        print(f"{name}: {len(diff)} pixels differ{where}")


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--compare":
        compare(args[1], args[2])
        return
    outdir, names = args[0], args[1:] or PRESETS
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        shots(outdir, name)


if __name__ == "__main__":
    main()
