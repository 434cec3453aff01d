"""Autosave and crash recovery.

While the document has unsaved changes, a copy is written to a recovery file every minute: the
topology is copied on the GUI thread (cheap) and encoded and written on a worker thread, through the
same atomic writer as every save. A clean close, a save and a return to the saved state remove it.
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

from ..model import fileio
from ..model.atomic import atomic_write_text
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
    """Writes the document to its recovery file while it has unsaved changes."""

    saved = Signal(str)      # the recovery file written (from the GUI thread, after the write)
    failed = Signal(str)

    def __init__(self, document, interval_ms: int = AUTOSAVE_INTERVAL_MS, folder: Path | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.folder = folder or recovery_dir()
        self.file = self.folder / f"{os.getpid()}{fileio.FILE_EXTENSION}"
        self._writer: threading.Thread | None = None
        self._done = threading.Event()
        self._result: tuple[str, str] | None = None
        self._copied_at: tuple[int, int] | None = None  # (topology identity, undo index) of the last copy
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        self._poll = QTimer(self)
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._collect)
        document.undo_stack.cleanChanged.connect(self._clean_changed)

    def _clean_changed(self, clean: bool) -> None:
        if clean:
            self.remove()

    def tick(self) -> bool:
        """Start writing a recovery copy if the document has unsaved changes; True if one started."""
        if not self.document.dirty:
            self.remove()
            return False
        if self._writer is not None and self._writer.is_alive():
            return False  # the last copy is still being written; the next tick catches up
        state = (id(self.document.topology), self.document.undo_stack.index())
        if state == self._copied_at and self.file.exists():
            return False  # nothing changed since the last copy: no copy of a large topology every minute
        self._copied_at = state
        topo = self.document.topology.frozen_copy()  # shared with the next Run; the writer only reads it
        meta = {"path": self.document.path, "saved_at": time.time(), "name": topo.name}
        self._done.clear()
        self._writer = threading.Thread(target=self._write, args=(topo, meta), name="dgxstudio-autosave",
                                        daemon=True)
        self._writer.start()
        self._poll.start()
        return True

    def _write(self, topo, meta) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.file, fileio.checked_text(topo))
            atomic_write_text(self.file.with_suffix(".json"), json.dumps(meta))
            self._result = ("saved", str(self.file))
        except (OSError, ValueError) as exc:
            self._result = ("failed", f"autosave failed: {exc}")
        self._done.set()

    def _collect(self) -> None:
        if not self._done.is_set():
            return
        self._poll.stop()
        kind, text = self._result or ("failed", "autosave failed")
        (self.saved if kind == "saved" else self.failed).emit(text)

    def wait(self, timeout_s: float = 10.0) -> bool:
        """Wait for a copy being written (tests, closing)."""
        writer = self._writer
        if writer is not None:
            writer.join(timeout_s)
            return not writer.is_alive()
        return True

    def remove(self) -> None:
        """No unsaved work any more: the recovery copy goes."""
        self.wait()
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
