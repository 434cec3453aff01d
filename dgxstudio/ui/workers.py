"""Running core work off the GUI thread (as Orange's ``concurrent`` helpers do).

A job is a plain function ``job(progress, cancel) -> result`` from the Qt-free core: ``progress`` is
called from the worker thread, ``cancel`` is a ``threading.Event`` the core checks. The runner moves
the job to a QThread and delivers progress, the result or the error as signals on the GUI thread;
widgets are only ever touched there. Starting a job cancels the one running.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..sim.engine import SimulationCancelled

# While a job runs, the GUI thread needs the GIL for every Python callback Qt makes (each item's
# paint, boundingRect, ...). With Python's default 5 ms switch interval a repaint of a large canvas
# waits 5 ms per callback and the window stalls for seconds; at 0.2 ms it stays responsive.
JOB_SWITCH_INTERVAL_S = 0.0002


class _Worker(QObject):
    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, job: Callable, cancel: threading.Event):
        super().__init__()
        self.job = job
        self.cancel = cancel

    @Slot()
    def run(self) -> None:
        try:
            result = self.job(self.progress.emit, self.cancel)
        except SimulationCancelled:
            self.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - every failure must reach the user as a message
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.failed.emit(detail)
        else:
            if self.cancel.is_set():
                self.cancelled.emit()
            else:
                self.finished.emit(result)


class TaskRunner(QObject):
    """One job at a time; signals arrive on the thread the runner lives in (the GUI thread)."""

    started = Signal(str)
    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: _Worker | None = None
        self._cancel: threading.Event | None = None
        self._saved_interval = sys.getswitchinterval()
        self.label = ""

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, job: Callable, label: str = "") -> None:
        self.shutdown()
        self.label = label
        cancel = threading.Event()
        thread = QThread()
        worker = _Worker(job, cancel)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        # Slots of this object (not lambdas), so Qt queues the calls to the GUI thread where it lives.
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        worker.cancelled.connect(self._on_cancelled)
        self._thread, self._worker, self._cancel = thread, worker, cancel
        self._saved_interval = sys.getswitchinterval()
        sys.setswitchinterval(JOB_SWITCH_INTERVAL_S)
        thread.start()
        self.started.emit(label)

    @Slot(object)
    def _on_progress(self, p) -> None:
        if self._thread is not None:
            self.progress.emit(p)

    @Slot(object)
    def _on_finished(self, result) -> None:
        self._join()
        self.finished.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._join()
        self.failed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self._join()
        self.cancelled.emit()

    def _join(self) -> None:
        thread, worker = self._thread, self._worker
        self._thread = self._worker = self._cancel = None
        if thread is not None:
            thread.quit()
            thread.wait()
            worker.deleteLater()
            thread.deleteLater()
            sys.setswitchinterval(self._saved_interval)

    def cancel(self) -> None:
        """Ask the running job to stop; ``cancelled`` follows once it has."""
        if self._cancel is not None:
            self._cancel.set()

    def shutdown(self) -> None:
        """Cancel and wait for the running job to end (a new run, or the window closing).

        The wait is not bounded: a thread must never be deleted while it runs. The core checks its
        cancel flag often (every event, and while routing), so the wait is short.
        """
        if self._thread is None:
            return
        self._cancel.set()
        worker = self._worker
        for sig in (worker.finished, worker.failed, worker.cancelled, worker.progress):
            try:
                sig.disconnect()
            except (RuntimeError, TypeError):
                pass
        thread = self._thread
        self._thread = self._worker = self._cancel = None
        thread.quit()
        thread.wait()
        worker.deleteLater()
        thread.deleteLater()
        sys.setswitchinterval(self._saved_interval)
