"""Start, cancel and restart simulations in the real window, many times, as an impatient user would.

    QT_QPA_PLATFORM=offscreen python benchmarks/worker_cycles.py [--cycles 1000] [--preset dgx1-v100]

Each cycle sets a size (small or large), presses Run, waits a random few milliseconds, and then
either presses Cancel, presses Run again with another size (a restart), or lets the run finish.
Measured: the longest stall of the GUI thread (a 5 ms timer's largest gap), threads alive at the end
(OS threads of the process, and the runner's), results shown under the wrong run (the result's size
must be the size of the run the panel says it shows), and resident memory after the first 100 cycles
and after the last.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--preset", default="dgx1-v100")
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args()
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from dgxstudio.model.presets import load_preset
    from dgxstudio.ui.app import application, settle_heap
    from dgxstudio.ui.main_window import MainWindow

    app = application()
    w = MainWindow(load_preset(args.preset), None, args.preset)
    w.resize(1300, 850)
    w.show()
    QTest.qWaitForWindowExposed(w)
    settle_heap()  # as run_app does once the window is up
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.collective.setCurrentText("all-reduce")
    p.algorithm.setCurrentText("ring")
    rng = random.Random(args.seed)
    sizes = {"1KiB": 1024, "64MiB": 64 * 2**20, "1GiB": 2**30}
    wrong = shown = 0
    expected = {}

    def on_result(request, result):
        nonlocal wrong, shown
        shown += 1
        want = expected.get(request.label)
        if want is None or abs(result.size_bytes - want) > 0.5 or request is not p.request:
            wrong += 1
    p.resultReady.connect(on_result)

    gaps = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick():
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now
    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)

    threads_before = os_threads()
    rss_100 = None
    started = time.time()
    worst_click = 0.0
    for i in range(args.cycles):
        name = rng.choice(list(sizes))
        p.size.setText(name)
        p.chunk.setText("64KiB" if name == "1GiB" else "4MiB")
        expected[f"all-reduce ring {name.replace('KiB', ' KiB').replace('MiB', ' MiB').replace('GiB', ' GiB')}"] = sizes[name]
        t0 = time.perf_counter()
        QTest.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
        worst_click = max(worst_click, time.perf_counter() - t0)
        # whatever label the panel made, the result for it must have this size
        expected[p.request.label] = sizes[name]
        QTest.qWait(rng.randint(0, 30))
        r = rng.random()
        if r < 0.4 and p.cancel_button.isEnabled():
            QTest.mouseClick(p.cancel_button, Qt.MouseButton.LeftButton)
        elif r < 0.5:
            deadline = time.time() + 30
            while p.runner.running and time.time() < deadline:
                QTest.qWait(5)
        if i == 99:
            gc.collect()  # the benchmark's own full collection: not a stall of the application's
            rss_100 = rss_mb()
            last[0] = clock.elapsed()
        if (i + 1) % 100 == 0:
            print(f"{i + 1} cycles, {time.time() - started:.0f} s, rss {rss_mb():.0f} MB, "
                  f"threads {os_threads()}, runner threads {p.runner.live_threads}", flush=True)
    p.runner.cancel()
    deadline = time.time() + 30
    while (p.runner.running or p.runner.live_threads) and time.time() < deadline:
        QTest.qWait(10)
    QTest.qWait(200)
    gc.collect()
    timer.stop()
    rss_end = rss_mb()
    leaked = os_threads() - threads_before
    stall = max(gaps) if gaps else 0
    print(f"{args.cycles} start/cancel/restart cycles in {time.time() - started:.0f} s on {args.preset}: "
          f"results shown {shown}, under the wrong run {wrong}; runner threads left {p.runner.live_threads}, "
          f"OS threads {leaked:+d}; longest GUI-thread stall {stall} ms (5 ms timer), longest Run click "
          f"{worst_click * 1e3:.0f} ms; resident memory after 100 cycles {rss_100 or 0:.0f} MB, "
          f"after {args.cycles} {rss_end:.0f} MB ({100 * (rss_end / (rss_100 or rss_end) - 1):+.1f}%)")
    w.document.undo_stack.setClean()
    w.close()
    app.processEvents()
    return 0 if wrong == 0 and p.runner.live_threads == 0 and leaked <= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
