"""Issue 16, failure 1: a finished job's result must never be applied to the next job, and starting
a run must never block the GUI thread."""

import threading
import time

from dgxstudio.ui.workers import TaskRunner


def test_a_stale_result_is_dropped_and_start_never_waits(qtbot):
    runner = TaskRunner()
    got = []
    runner.finished.connect(got.append)
    release = threading.Event()

    def slow_ignores_cancel(progress, cancel):  # a job that is slow to notice its cancel flag
        release.wait(5)
        return "old"

    def new_job(progress, cancel):
        time.sleep(0.2)
        return "new"

    first = runner.start(slow_ignores_cancel, "old")
    t0 = time.perf_counter()
    second = runner.start(new_job, "new")
    blocked = time.perf_counter() - t0
    release.set()          # the old job now "finishes" and sends its result, after the new one started
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    qtbot.waitUntil(lambda: runner.live_threads == 0, timeout=5000)
    assert second == first + 1
    assert blocked < 0.1, f"start() blocked the GUI thread {blocked:.3f} s"
    assert got == ["new"]
    assert runner.dropped >= 1


def test_many_start_cancel_cycles_leak_no_threads(qtbot):
    runner = TaskRunner()
    got = []
    runner.finished.connect(got.append)

    def job(progress, cancel):
        for _ in range(200):
            if cancel.is_set():
                from dgxstudio.sim.engine import SimulationCancelled
                raise SimulationCancelled()
            time.sleep(0.001)
        return threading.get_ident()

    before = threading.active_count()
    for i in range(50):
        runner.start(job, str(i))
        if i % 3 == 0:
            runner.cancel()
        qtbot.wait(1)
    qtbot.waitUntil(lambda: not runner.running and runner.live_threads == 0, timeout=10000)
    assert len(got) <= 1
    assert threading.active_count() <= before
