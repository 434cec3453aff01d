"""GUI-thread stalls beside the work that follows an edit (issue 17: frames stay under 50 ms on the
2,048-system cluster while the findings check and the autosave run).

The 2,048-system rail-optimized DGX H100 cluster opens in the main window (offscreen, 1400 x 900),
zoomed in on one system. Then the view pans a step per frame, as a user scrolling would, for a while
in each of three situations:

- quiet: nothing else runs (the baseline);
- after an edit: a GPU is deleted with the Delete key; the frames start right after it, so they
  include the findings check the edit starts 150 ms later (its snapshot and its thread);
- autosave: the recovery copy of the modified design is started (``Autosaver.tick``, what its
  60-second timer calls) and the frames run until it is written.

A frame = a pan step + one turn of the event loop with the canvas marked for repaint. Printed per
situation: frames, median / 95th percentile / worst wall time, how many took over 16 and 50 ms, and
the GUI thread's CPU time of the findings refresh and of the autosave tick themselves.

Run: python benchmarks/gui_stalls.py [--systems N]
"""

import os
import sys
import time

from _windows import dispose, open_window
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.app import settle_heap


def frames_while(app, window, until, least_s: float = 0.0, most_s: float = 30.0) -> list[float]:
    """Pan frames until ``until()`` is true (and at least ``least_s`` passed)."""
    bar = window.view.horizontalScrollBar()
    out, t0, k = [], time.perf_counter(), 0
    while True:
        now = time.perf_counter() - t0
        if (now >= least_s and until()) or now > most_s:
            return out
        k += 1
        step = 24 if (k // 20) % 2 == 0 else -24
        f0 = time.perf_counter()
        bar.setValue(bar.value() + step)
        window.view.viewport().update()
        app.processEvents()
        out.append(time.perf_counter() - f0)
        time.sleep(0.004)   # a display's frame pacing, roughly: the other threads get their turns


def show(label: str, frames: list[float], extra: str = "") -> None:
    v = sorted(frames)
    over16 = sum(f > 0.016 for f in v)
    over50 = sum(f > 0.050 for f in v)
    print(f"{label:<14} {len(v):4d} frames  median {v[len(v) // 2] * 1e3:6.1f}  p95 {v[int(len(v) * 0.95)] * 1e3:6.1f}"
          f"  worst {v[-1] * 1e3:7.1f} ms   >16 ms {over16:3d}  >50 ms {over50:3d}  {extra}  load {os.getloadavg()[0]:.2f}")
    sys.stdout.flush()


def timed_method(obj, name: str, out: list) -> None:
    """Count the GUI thread's CPU time inside obj.name (timers connected to it call the wrapper)."""
    inner = getattr(type(obj), name)

    def wrapper(*a, **k):
        c0 = time.thread_time()
        try:
            return inner(obj, *a, **k)
        finally:
            out.append(time.thread_time() - c0)
    setattr(obj, name, wrapper)


def main() -> None:
    systems = int(sys.argv[sys.argv.index("--systems") + 1]) if "--systems" in sys.argv else 2048
    topo = build_fat_tree(systems, "dgx-h100", rail_optimized=True)
    app, window = open_window(topo)
    refresh_cpu, tick_cpu = [], []
    findings = window.findings
    # the timers call the bound methods they were connected with: reconnect them to the wrappers
    findings._timer.timeout.disconnect()
    findings._idle.timeout.disconnect()
    timed_method(findings, "refresh", refresh_cpu)
    findings._timer.timeout.connect(findings.refresh)
    findings._idle.timeout.connect(findings.refresh)
    saver = window.autosaver
    timed_method(saver, "tick", tick_cpu)
    for _ in range(50):
        app.processEvents()
    t0 = time.perf_counter()
    while findings._checking is not None or findings._idle.isActive() and time.perf_counter() - t0 < 20:
        app.processEvents()
        time.sleep(0.01)
    settle_heap()
    lod = window.scene.lod
    system = next(iter(lod.overview.system_devices))
    gpu = next(d for d in lod.overview.system_devices[system] if topo.devices[d].kind == "gpu")
    window.select_and_center([gpu])
    for _ in range(3):
        window.view.zoom(1.25)
        app.processEvents()
    print(f"{systems} x DGX H100: {len(topo.devices):,} devices, {len(topo.links):,} links;"
          f" switch interval {sys.getswitchinterval() * 1e3:.1f} ms")
    show("quiet", frames_while(app, window, lambda: True, least_s=3.0))

    for n in range(3):
        window.select_and_center([gpu])
        app.processEvents()
        window.scene.select_ids([gpu])
        c0 = time.thread_time()
        QTest.keyClick(window.view, Qt.Key.Key_Delete)
        app.processEvents()
        edit = time.thread_time() - c0
        refresh_cpu.clear()
        frames = frames_while(app, window, lambda: bool(refresh_cpu) and findings._checking is None, least_s=0.5)
        show("after an edit", frames, f"(edit {edit * 1e3:.0f} ms CPU; findings refresh on the GUI thread"
             f" {sum(refresh_cpu) * 1e3:.1f} ms CPU)")
        QTest.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        app.processEvents()
        frames_while(app, window, lambda: findings._checking is None and not findings._timer.isActive(), least_s=0.3)
    window.select_and_center([gpu])   # the design stays modified: the autosave has something to copy
    app.processEvents()
    window.scene.select_ids([gpu])
    QTest.keyClick(window.view, Qt.Key.Key_Delete)
    app.processEvents()
    frames_while(app, window, lambda: findings._checking is None and not findings._timer.isActive(), least_s=0.3)

    for n in range(2):
        saver._copied_at = None   # as after an edit: the next tick writes a copy
        tick_cpu.clear()
        saved = []
        saver.saved.connect(saved.append)
        saver.failed.connect(saved.append)
        t0 = time.perf_counter()
        saver.tick()
        frames = frames_while(app, window, lambda: bool(saved), least_s=0.2)
        show("autosave", frames, f"(tick on the GUI thread {sum(tick_cpu) * 1e3:.1f} ms CPU; written after"
             f" {time.perf_counter() - t0:.1f} s: {saved[0] if saved else 'not finished'})")
        saver.saved.disconnect()
        saver.failed.disconnect()
    dispose(window, app)


if __name__ == "__main__":
    main()
