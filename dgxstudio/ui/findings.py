"""The validation findings, kept current; clicking one selects and centres its culprit."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QStyle

from ..heap import paused_gc
from ..model.validation import ERROR, validate
from .document import Document

IDS_ROLE = Qt.ItemDataRole.UserRole + 2
DEFER_ABOVE = 10_000   # devices: above this the checks run off the GUI thread, after the window is drawn
IDLE_MS = 400          # a large design's first check waits until the view has rested this long ...
MAX_WAIT_MS = 4000     # ... but no longer than this after the design was opened


class FindingsList(QListWidget):
    culpritRequested = Signal(list)

    def __init__(self, document: Document):
        super().__init__()
        self.document = document
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.refresh)
        document.modelChanged.connect(lambda e: e.kind != "moved" and self._timer.start())
        document.topologyReplaced.connect(self._opened)
        # the style's own icons: an emoji needs a font the machine may not have (an empty box otherwise)
        self._icons = {True: self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
                       False: self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)}
        self._checking = None            # (document state, thread, outcome) of a check off the GUI thread
        self._poll = QTimer(self)
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._collect)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        # A large design's first check (0.5-1 s of a thread at 2,048 systems, which takes turns with the
        # GUI thread for the interpreter) waits until the view rests: a user zooming in right after
        # opening gets the frames the overview needs (the canvas at cluster scale: 2-3x longer frames
        # beside the check). MAX_WAIT_MS bounds the wait.
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.timeout.connect(self.refresh)
        self._opened_at = None
        self._opened()

    def _opened(self) -> None:
        if len(self.document.topology.devices) <= DEFER_ABOVE:
            self._opened_at = None
            self.refresh()
            return
        # a large design: its canvas is drawn first, the checks (seconds at cluster scale) follow
        self.clear()
        self.addItem(QListWidgetItem("Checking the design…"))
        self._opened_at = time.monotonic()
        self._idle.start(IDLE_MS)

    def view_moved(self) -> None:
        """The canvas zoomed or scrolled: a large design's first check waits for it to rest."""
        if self._opened_at is not None and self._idle.isActive() \
                and (time.monotonic() - self._opened_at) * 1000 < MAX_WAIT_MS - IDLE_MS:
            self._idle.start(IDLE_MS)

    def refresh(self) -> None:
        """Check the design again. A large one (seconds of checks) is checked on a thread of its own, on
        a Run's frozen copy of this state if there is one, else on a shallow snapshot (no deep copy:
        a million more objects on a 59 MB cluster) which that thread takes too (40-140 ms of table
        copies on the 2,048-system cluster, which the GUI thread would spend between two frames);
        the findings are shown only if the document has not moved meanwhile, so a check that read a
        half-made edit is never shown (the edit starts another check)."""
        self._idle.stop()
        self._opened_at = None
        topo = self.document.topology
        if len(topo.devices) <= DEFER_ABOVE:
            self._show(validate(topo))
            return
        key = (id(topo), topo.state_key())
        if self._checking is not None and self._checking[0] == key:
            return
        frozen = topo.current_frozen_copy()
        done: dict = {}

        def check() -> None:
            try:
                with paused_gc():   # short-lived acyclic tables: no full collections with the lock held
                    view = frozen if frozen is not None else topo.loose_snapshot()
                    if frozen is None:
                        done["snapshot"] = view
                    done["findings"] = validate(view)
            except Exception as exc:  # noqa: BLE001 - shown in the list, never raised on a worker thread
                done["error"] = exc

        worker = threading.Thread(target=check, name="dgxstudio-findings", daemon=True)
        self._checking = (key, worker, done)
        worker.start()
        self._poll.start()

    def _collect(self) -> None:
        if self._checking is None:
            self._poll.stop()
            return
        key, worker, done = self._checking
        if worker.is_alive():
            return
        self._poll.stop()
        self._checking = None
        topo = self.document.topology
        if (id(topo), topo.state_key()) != key:
            return  # the document moved on: the check its edit started is the one that counts
        if "snapshot" in done:
            topo.keep_snapshot(key[1], done["snapshot"])   # a Run pressed next shares it
        if "error" in done:
            self.clear()
            self.addItem(QListWidgetItem(self._icons[True], f"Error: the design could not be checked: {done['error']}"))
            return
        self._show(done["findings"])

    def _show(self, findings) -> None:
        self.clear()
        for f in findings:
            item = QListWidgetItem(self._icons[f.severity == ERROR], f"{'Error' if f.severity == ERROR else 'Warning'}: {f.message}")
            item.setData(IDS_ROLE, list(f.devices) + list(f.links))
            item.setToolTip(f"{f.severity}: {f.code}")
            self.addItem(item)
        if not findings:
            item = QListWidgetItem(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogApplyButton), "No problems found")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(item)

    def _clicked(self, item: QListWidgetItem) -> None:
        ids = item.data(IDS_ROLE) or []
        if ids:
            self.culpritRequested.emit(ids)
