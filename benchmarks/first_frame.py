"""The first frame of a fresh start (issue 17: every frame under 16 ms on the DGX presets; the first
paint was the main miss): each measurement is its own process, as a user's start is.

A process imports the application, builds the main window on a preset, then shows it the way
``run_app`` does (``show_window``) and runs the event loop until the canvas has been painted once.
It reports the GUI thread's CPU time and the wall time from show() to that paint. ``--old-order``
shows it the way run_app did before: show(), then a full garbage collection and the freeze, then the
event loop. The window restores the dock layout a first start saved, as every later start does.

Run: python benchmarks/first_frame.py [preset ...] [--runs N] [--old-order]
(--old-order also measures an older checkout: PYTHONPATH=<its folder> python benchmarks/first_frame.py --old-order)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PRESETS = ("dgx1-v100", "dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72")


def one(preset: str, old_order: bool) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    t0 = time.perf_counter()
    from PySide6.QtCore import QEvent, QObject

    from dgxstudio.model.presets import load_preset
    from dgxstudio.ui.app import application, settle_heap
    from dgxstudio.ui.main_window import MainWindow

    app = application()
    imported = time.perf_counter()
    window = MainWindow(load_preset(preset), None, preset)
    built = time.perf_counter()
    painted: list[tuple[float, float]] = []

    class Painted(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and not painted:
                painted.append(None)
            return False

    watcher = Painted()
    window.view.viewport().installEventFilter(watcher)
    if not old_order:
        from dgxstudio.ui.app import before_show

        before_show()   # show_window's own step before the window is on screen (again inside it: nearly free)
    c0, w0 = time.thread_time(), time.perf_counter()
    if old_order:
        window.show()
        settle_heap_full()
    else:
        from dgxstudio.ui.app import show_window

        show_window(window)
    while not painted and time.perf_counter() - w0 < 10:
        app.processEvents()
    cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
    window.view.viewport().removeEventFilter(watcher)
    for _ in range(5):
        app.processEvents()
    settle_heap()
    window.document.undo_stack.setClean()
    window.close()   # saves the dock layout for the next start
    return {"import_s": imported - t0, "build_s": built - imported, "first_frame_cpu_ms": cpu * 1e3,
            "first_frame_wall_ms": wall * 1e3}


def settle_heap_full() -> None:
    """What run_app did between show() and the event loop before: a full collection, then the freeze."""
    import gc

    gc.collect()
    gc.freeze()


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--one":
        print(json.dumps(one(args[1], args[2] == "old")))
        return
    runs = 3
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    old = "--old-order" in args
    args = [a for a in args if a != "--old-order"]
    names = args or PRESETS
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               DGXSTUDIO_CONFIG_DIR=tempfile.mkdtemp(prefix="dgxstudio-first-frame-"))
    here = os.path.abspath(__file__)

    def measure(name: str) -> dict:
        done = subprocess.run([sys.executable, here, "--one", name, "old" if old else "new"], env=env,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        return json.loads(done.stdout.strip().splitlines()[-1])

    measure(names[0])   # a first start saves the dock layout every later start restores
    print(f"order: {'show, full collection, event loop (before)' if old else 'show_window (run_app now)'}")
    print(f"{'preset':<12} {'import s':>8} {'build s':>8}   first frame GUI CPU ms (median, each run)   wall ms (median)   load")
    for name in names:
        got = [measure(name) for _ in range(runs)]
        cpu = [g["first_frame_cpu_ms"] for g in got]
        wall = [g["first_frame_wall_ms"] for g in got]
        print(f"{name:<12} {statistics.median(g['import_s'] for g in got):8.2f} {statistics.median(g['build_s'] for g in got):8.2f}"
              f"   {statistics.median(cpu):6.1f}  ({' '.join(f'{c:.0f}' for c in cpu)})"
              f"   {statistics.median(wall):6.1f}   {os.getloadavg()[0]:4.2f}", flush=True)


if __name__ == "__main__":
    main()
