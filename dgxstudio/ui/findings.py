"""The validation findings, kept current; clicking one selects and centres its culprit."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QStyle

from ..model.validation import ERROR, validate
from .document import Document

IDS_ROLE = Qt.ItemDataRole.UserRole + 2
DEFER_ABOVE = 10_000   # devices: above this the first check runs after the window is drawn


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
        document.topologyReplaced.connect(self.refresh)
        # the style's own icons: an emoji needs a font the machine may not have (an empty box otherwise)
        self._icons = {True: self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
                       False: self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)}
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        if len(document.topology.devices) > DEFER_ABOVE:
            # a large design: its canvas is drawn first, the checks (seconds at cluster scale) follow
            self.addItem(QListWidgetItem("Checking the design…"))
            QTimer.singleShot(0, self.refresh)
        else:
            self.refresh()

    def refresh(self) -> None:
        self.clear()
        findings = validate(self.document.topology)
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
