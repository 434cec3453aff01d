"""How long work goes on after Cancel (for the cancel_* scripts): ``job(progress, cancel)`` runs in
a thread, Cancel is set ``delay`` after its first progress report, the time to its end is printed."""

from __future__ import annotations

import os
import threading
import time


def cancel_trials(job, delays, cancelled=Exception) -> list[float]:
    """Seconds from Cancel to the end of ``job``, one per delay; the worst against 100 ms printed."""
    stops = []
    for trial, delay in enumerate(delays):
        cancel, seen, ended = threading.Event(), [], []
        worker = threading.Thread(target=lambda: _run(job, seen, cancel, ended, cancelled))
        worker.start()
        while not seen and worker.is_alive():
            time.sleep(0.001)
        time.sleep(delay)  # cancel at different points of the work
        t0 = time.perf_counter()
        cancel.set()
        worker.join()
        stops.append(time.perf_counter() - t0)
        print(f"trial {trial}: stopped {stops[-1] * 1e3:.1f} ms after Cancel ({ended[0] if ended else 'failed'})")
    worst = max(stops)
    print(f"worst {worst * 1e3:.1f} ms (target 100 ms: {'ok' if worst <= 0.1 else 'SLOW'}); load {os.getloadavg()[0]:.2f}")
    return stops


def _run(job, seen, cancel, ended, cancelled) -> None:
    try:
        job(seen.append, cancel)
        ended.append("finished")
    except cancelled:
        ended.append("cancelled")
