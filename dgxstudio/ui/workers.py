"""Running core work off the GUI thread (as Orange's ``concurrent`` helpers do).

A job is a plain function ``job(progress, cancel) -> result`` from the Qt-free core: ``progress`` is
called from the worker thread, ``cancel`` is a ``threading.Event`` the core checks. The runner moves
the job to a QThread and delivers progress, the result or the error as signals on the GUI thread;
widgets are only ever touched there. Starting a job cancels the one running.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from ..heap import release_later
from ..sim.engine import SimulationCancelled

# While a job runs, the GUI thread needs the GIL for every Python callback Qt makes (each item's
# paint, boundingRect, ...). With Python's default 5 ms switch interval a repaint of a large canvas
# waits 5 ms per callback and the window stalls for seconds; at 0.2 ms it stays responsive.
JOB_SWITCH_INTERVAL_S = 0.0002
REAP_POLL_MS = 5


INTERNAL_ERROR = "internal error"   # how a failure that is no refusal begins (``refused`` tells them apart)


def failure_message(exc: BaseException) -> str:
    """What a failed job tells the user: a refusal (every request the core refuses raises a
    ValueError: SimulationError, TooLarge, RoutingError, ...) in its own words, anything else as the
    internal error it is, with its type (not the module path of either)."""
    text = str(exc).strip()
    if isinstance(exc, ValueError) and text:
        return text
    return f"{INTERNAL_ERROR}: {type(exc).__name__}" + (f": {text}" if text else "")


def refused(message: str) -> bool:
    """Whether a failed job's message (``failure_message``'s) is the core refusing the request, not
    an internal error."""
    return not message.startswith(f"{INTERNAL_ERROR}: ")


class _Worker(QObject):
    """Runs one job in its own thread; every signal carries the job's id, so a result that arrives
    after a newer job started is recognised and dropped instead of shown under the new run."""

    progress = Signal(int, object)
    finished = Signal(int, object)
    failed = Signal(int, str)
    cancelled = Signal(int)

    def __init__(self, job_id: int, job: Callable, cancel: threading.Event):
        super().__init__()
        self.job_id = job_id
        self.job = job
        self.cancel = cancel

    @Slot()
    def run(self) -> None:
        jid = self.job_id
        try:
            result = self.job(lambda p: self.progress.emit(jid, p), self.cancel)
        except SimulationCancelled as exc:
            release_later(exc)  # what the run built is freed on another thread: this one ends at once
            self.cancelled.emit(jid)
        except Exception as exc:  # noqa: BLE001 - every failure must reach the user as a message
            self.failed.emit(jid, failure_message(exc))
        else:
            if self.cancel.is_set():
                self.cancelled.emit(jid)
            else:
                self.finished.emit(jid, result)
        finally:
            self.job = None  # release what the job holds (topology copy, results) with the thread
            QThread.currentThread().quit()  # the thread ends itself: nobody waits on the GUI thread


class TaskRunner(QObject):
    """One current job at a time; signals arrive on the thread the runner lives in (the GUI thread).

    Starting a job cancels the current one and returns at once: the old thread finishes in the
    background (the core checks its cancel flag often) and deletes itself; anything it still sends
    carries its old id and is dropped. ``current_job`` is the id of the job whose signals pass.
    """

    started = Signal(str)
    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._next_id = 0
        self.current_job = 0           # 0: none
        self._running = False          # the current job has not reported its end yet
        self._cancel: threading.Event | None = None
        self._threads: dict[int, tuple[QThread, _Worker, threading.Event]] = {}
        self._reaping: list[tuple[QThread, _Worker, threading.Event]] = []  # finished, not yet ended
        self._saved_interval = sys.getswitchinterval()
        self.dropped = 0               # stale signals dropped (for tests and the stress script)
        self.label = ""

    @property
    def running(self) -> bool:
        return self._running

    @property
    def thread(self) -> QThread | None:
        """The current job's thread while it runs."""
        entry = self._threads.get(self.current_job) if self._running else None
        return entry[0] if entry else None

    _thread = thread  # the name earlier tests use

    @property
    def live_threads(self) -> int:
        """Threads still alive, the current one and any cancelled ones winding down."""
        return len(self._threads) + len(self._reaping)

    def start(self, job: Callable, label: str = "") -> int:
        """Cancel the current job (without waiting for it) and start ``job``; returns its id."""
        self.cancel()
        self._next_id += 1
        jid = self._next_id
        self.current_job, self._running, self.label = jid, True, label
        cancel = threading.Event()
        self._cancel = cancel
        thread = QThread()
        worker = _Worker(jid, job, cancel)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        # Slots of this object (not lambdas), so Qt queues the calls to the GUI thread where it lives.
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        worker.cancelled.connect(self._on_cancelled)
        thread.finished.connect(self._on_thread_finished)
        thread.setProperty("job_id", jid)
        if not self._threads:
            self._saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(JOB_SWITCH_INTERVAL_S)
        self._threads[jid] = (thread, worker, cancel)
        thread.start()
        self.started.emit(label)
        return jid

    def _current(self, jid: int) -> bool:
        if jid == self.current_job and self._running:
            return True
        self.dropped += 1
        return False

    @Slot(int, object)
    def _on_progress(self, jid: int, p) -> None:
        if jid == self.current_job and self._running:
            self.progress.emit(p)

    @Slot(int, object)
    def _on_finished(self, jid: int, result) -> None:
        if self._current(jid):
            self._running = False
            self.finished.emit(result)

    @Slot(int, str)
    def _on_failed(self, jid: int, message: str) -> None:
        if self._current(jid):
            self._running = False
            self.failed.emit(message)

    @Slot(int)
    def _on_cancelled(self, jid: int) -> None:
        if self._current(jid):
            self._running = False
            self.cancelled.emit()

    @Slot()
    def _on_thread_finished(self) -> None:
        thread = self.sender()
        jid = thread.property("job_id") if thread is not None else None
        entry = self._threads.pop(jid, None)
        if entry is not None:
            self._reap(entry)

    def _reap(self, entry) -> None:
        """Let go of a thread and its worker once the thread has truly ended. ``finished`` is sent
        from the thread before its last clean-up (Qt deletes its event dispatcher and thread data
        after it): deleting the QThread at that moment crashed one full GUI run in six, and waiting
        for it on the GUI thread hung another. So: look again in a few milliseconds, never block."""
        if entry in self._reaping:
            self._reaping.remove(entry)
        if entry[0].isFinished():
            # the last references go here: Qt objects whose thread has ended, deleted on this thread
            if not self._threads and not self._reaping:
                sys.setswitchinterval(self._saved_interval)
            return
        self._reaping.append(entry)
        QTimer.singleShot(REAP_POLL_MS, self, lambda e=entry: self._reap(e))

    def cancel(self) -> None:
        """Ask the current job to stop; ``cancelled`` follows once it has."""
        if self._cancel is not None and self._running:
            self._cancel.set()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancel every job and wait for the threads to end (the window closing). Returns False if
        one is still running after ``timeout_ms``; it is then left to end on its own, never deleted
        while it runs."""
        self.cancel()
        self._running = False
        self.current_job = -1
        ok = True
        for jid, (thread, _worker, cancel) in list(self._threads.items()):
            cancel.set()
            if thread.wait(timeout_ms):
                self._threads.pop(jid, None)  # ended: thread and worker go with their references
            else:
                ok = False
        if not self._threads:
            sys.setswitchinterval(self._saved_interval)
        return ok
