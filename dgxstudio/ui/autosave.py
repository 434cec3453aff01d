"""Autosave and crash recovery.

While the document has unsaved changes, a copy is written to a recovery file every minute: a worker
thread takes a shallow snapshot (no deep copy), encodes it and writes it through the same atomic writer
as every save, and the copy replaces the last one only once a process of its own has opened it again
(see ``Autosaver``). A clean close, a save and a return to the saved state remove it.
A recovery file whose process is gone means DGX Studio did not close cleanly; the next start offers
to restore it (the restored document keeps its original path and is marked modified).

Recovery files live in ``<config dir>/recovery/``: ``<pid>.dgxs`` and ``<pid>.json`` (the original
path and the time of the copy).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from ..heap import free_in_pieces, paused_gc
from ..model import fileio, reopen
from ..model.atomic import atomic_output, atomic_write_text
from ..model.catalog import user_config_dir

AUTOSAVE_INTERVAL_MS = 60_000


def recovery_dir() -> Path:
    return user_config_dir() / "recovery"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


@dataclass
class Recoverable:
    file: Path
    original_path: str | None
    saved_at: float
    name: str

    def discard(self) -> None:
        for p in (self.file, self.file.with_suffix(".json")):
            try:
                p.unlink()
            except OSError:
                pass


def find_recoverable(folder: Path | None = None) -> list[Recoverable]:
    """Recovery files left by processes that are gone, newest first."""
    folder = folder or recovery_dir()
    found = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        stem, ext = os.path.splitext(name)
        if ext != fileio.FILE_EXTENSION or not stem.isdigit() or _alive(int(stem)):
            continue
        file = folder / name
        meta = {}
        try:
            meta = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
        path = meta.get("path") if isinstance(meta.get("path"), str) else None
        when = meta.get("saved_at") if isinstance(meta.get("saved_at"), (int, float)) else file.stat().st_mtime
        name_ = meta.get("name") if isinstance(meta.get("name"), str) else stem
        found.append(Recoverable(file, path, float(when), name_))
    return sorted(found, key=lambda r: -r.saved_at)


class Autosaver(QObject):
    """Writes the document to its recovery file while it has unsaved changes.

    Nothing of the document is copied on the GUI thread: the tick notes the document's state and a
    worker thread takes a shallow snapshot (the tables and groups, sharing the device and link objects:
    pointer copies; 40-140 ms on the 2,048-system cluster) and encodes it. Since edits change shared
    objects in place, the encoded text is written only if the document's state key has not moved since
    the tick (checked on the GUI thread, where every edit happens from start to end); else it is
    dropped and the copy is tried again a little later. When the document already has a frozen copy
    of its current state (a Run just took one), that private copy is encoded instead.

    A recovery copy must open again, like every file DGX Studio writes: the text goes to a temporary
    file beside the recovery file, a child process opens that file with the loader a restore uses
    (``model.reopen``), and only then is it renamed over the recovery file. Proving it in this process
    (``fileio.checked_text``, as Save does) held the interpreter lock for most of a second at a time
    on a 30 MB design, which the GUI thread waited for (frames of 0.2-0.75 s every minute). Where no
    child can run (a frozen application) the proof runs on the worker thread, as before.
    """

    saved = Signal(str)      # the recovery file written (from the GUI thread, after the write)
    failed = Signal(str)
    RETRY_MS = 2_000         # after an edit landed while a copy was being encoded

    def __init__(self, document, interval_ms: int = AUTOSAVE_INTERVAL_MS, folder: Path | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.folder = folder or recovery_dir()
        self.file = self.folder / f"{os.getpid()}{fileio.FILE_EXTENSION}"
        self._writer: threading.Thread | None = None
        self._encoded = threading.Event()   # the worker has the text (or an error)
        self._decided = threading.Event()   # the GUI thread has said whether to write it
        self._write_it = False
        self._done = threading.Event()
        self._cancel = threading.Event()    # the copy being proven is no longer wanted (back to clean)
        self._landing = threading.Lock()    # held while a proven copy replaces the recovery file
        self._result: tuple[str, str] | None = None
        self._copied_at: tuple | None = None  # (topology identity, state key) of the copy being or last written
        self._shared = False                   # the copy being encoded shares objects with the document
        self.prove_in_child = reopen.can_prove_in_child()
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        self._poll = QTimer(self)
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._collect)
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.setInterval(self.RETRY_MS)
        self._retry.timeout.connect(self.tick)
        document.undo_stack.cleanChanged.connect(self._clean_changed)

    def _clean_changed(self, clean: bool) -> None:
        if clean:
            self.remove()

    def _state(self) -> tuple:
        topo = self.document.topology
        return (id(topo), topo.state_key())

    def tick(self) -> bool:
        """Start writing a recovery copy if the document has unsaved changes; True if one started."""
        if not self.document.dirty:
            self.remove()
            return False
        if self._writer is not None and self._writer.is_alive():
            return False  # the last copy is still being written; the next tick catches up
        state = self._state()
        if state == self._copied_at and self.file.exists():
            return False  # nothing changed since the last copy: no copy of a large topology every minute
        self._copied_at = state
        live = self.document.topology
        frozen = live.current_frozen_copy()  # a private copy of this very state, if a Run took one
        self._shared = frozen is None
        meta = {"path": self.document.path, "saved_at": time.time(), "name": live.name}
        for event in (self._encoded, self._decided, self._done, self._cancel):
            event.clear()
        self._write_it = False
        self._result = None
        self._writer = threading.Thread(target=self._write, args=(live, frozen, meta), name="dgxstudio-autosave",
                                        daemon=True)
        self._writer.start()
        self._poll.start()
        return True

    def _write(self, live, frozen, meta) -> None:
        try:
            try:
                # the collector paused: encoding makes a million short-lived, acyclic objects, whose
                # allocations would start full collections (0.1-0.15 s each with the lock held, which
                # the GUI thread waits for) on this thread or the GUI's
                with paused_gc():
                    topo = frozen if frozen is not None else live.loose_snapshot()
                    if self.prove_in_child:
                        doc = fileio.topology_to_dict(topo)
                        text = fileio.encoded_text(topo, doc)
                        work = [doc]
                        del doc, topo
                        free_in_pieces(work)   # 200,000 dictionaries on the 2,048-system cluster
                    else:
                        text = fileio.checked_text(topo)
            except Exception as exc:  # noqa: BLE001 - an edit meanwhile may make the shared objects read oddly
                text, error = None, exc
            else:
                error = None
            self._encoded.set()
            if not self._decided.wait(600) or not self._write_it:
                self._result = ("dropped", "")
                return
            if error is not None:
                raise error
            self.folder.mkdir(parents=True, exist_ok=True)
            self._result = self._land(text, meta)
        except (OSError, ValueError) as exc:
            self._result = ("failed", f"autosave failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - reported, never raised on a worker thread
            self._result = ("failed", f"autosave failed: {type(exc).__name__}: {exc}")
        finally:
            self._encoded.set()
            self._done.set()

    def _land(self, text: str, meta: dict) -> tuple[str, str]:
        """Write ``text`` beside the recovery file, prove it opens, and rename it over that file, unless
        the copy stopped being wanted meanwhile (``remove``)."""
        held = False
        try:
            with atomic_output(self.file) as tmp:
                with open(tmp, "wb") as fh:
                    fh.write(text.encode("utf-8"))
                if self.prove_in_child:
                    try:
                        reopen.prove_reopens(tmp, self._cancel)
                    except reopen.ProofUnavailable:   # no child could answer: prove it here instead
                        reopen.prove_here(text)
                self._landing.acquire()
                held = True
                if self._cancel.is_set():
                    raise reopen.ProofCancelled()
            # the copy is in place (atomic_output renamed it); its details follow, before remove() may run
            atomic_write_text(self.file.with_suffix(".json"), json.dumps(meta))
            return ("saved", str(self.file))
        except reopen.ProofCancelled:
            return ("dropped", "")
        finally:
            if held:
                self._landing.release()

    def _decide(self) -> None:
        """On the GUI thread, once the text is encoded: write it only if no edit happened meanwhile."""
        self._write_it = not self._shared or self._state() == self._copied_at
        if not self._write_it:
            self._copied_at = None      # not written: the next tick copies again
            self._retry.start()         # soon, not in a minute
        self._decided.set()

    def _collect(self) -> None:
        if self._encoded.is_set() and not self._decided.is_set():
            self._decide()
        if not self._done.is_set():
            return
        self._poll.stop()
        kind, text = self._result or ("failed", "autosave failed")
        if kind == "saved":
            self.saved.emit(text)
        elif kind == "failed":
            self.failed.emit(text)

    def wait(self, timeout_s: float = 10.0) -> bool:
        """Wait for a copy being written (tests, closing); one still being encoded is written only if
        the document has not changed since."""
        writer = self._writer
        if writer is None:
            return True
        if self._encoded.wait(timeout_s) and not self._decided.is_set():
            self._decide()
        writer.join(timeout_s)
        return not writer.is_alive()

    def remove(self) -> None:
        """No unsaved work any more: the recovery copy goes."""
        self._retry.stop()
        writer = self._writer
        if writer is not None and not self._decided.is_set():
            self._write_it = False
            self._decided.set()  # a copy being encoded is not written: no need to wait for its text
        # a copy being proven is dropped (its child stopped); one landing right now lands first, then goes
        self._cancel.set()
        with self._landing:
            self._copied_at = None
            for p in (self.file, self.file.with_suffix(".json")):
                try:
                    p.unlink()
                except OSError:
                    pass

    def close(self) -> None:
        """A clean close: stop and remove the recovery copy."""
        self.timer.stop()
        self._poll.stop()
        self.remove()


def restore_into(window, item: Recoverable) -> bool:
    """Open a recovery copy in ``window`` under its original path, marked modified."""
    try:
        topo = fileio.load(item.file)
    except fileio.TopologyFileError as exc:
        window.error("Cannot restore", str(exc))
        return False
    replace = getattr(window, "_replace", None)  # the window's own open: palette, fit to view
    if replace is not None:
        replace(topo, item.original_path)
    else:
        window.document.replace(topo, item.original_path)
    window.document.undo_stack.resetClean()  # the restored work is not on disk yet
    item.discard()
    window.show_status(f"Restored unsaved work from {time.strftime('%Y-%m-%d %H:%M', time.localtime(item.saved_at))}")
    return True


def offer_recovery(window) -> bool:
    """At start-up: offer to restore what a crashed session left. True if something was restored."""
    from PySide6.QtWidgets import QMessageBox

    items = find_recoverable()
    if not items:
        return False
    item = items[0]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.saved_at))
    where = item.original_path or "an unsaved document"
    box = QMessageBox(QMessageBox.Icon.Question, "Restore unsaved work?",
                      f"DGX Studio did not close cleanly. Unsaved changes to {where} ({item.name}) "
                      f"were kept at {when}. Restore them?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Discard, window)
    box.setObjectName("recoveryBox")
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Yes:
        ok = restore_into(window, item)
    else:
        item.discard()
        ok = False
    return ok  # older copies, if any, are offered at the next start
