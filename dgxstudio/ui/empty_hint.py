"""An empty design says how to start, as diagram editors do on a blank page.

File > New opened a bare canvas with nothing on it and nothing to say what to do next (the editor
review). A line in the middle of the canvas says it while the design has no device; it lets every
mouse event and drop through to the canvas beneath it and goes with the first device.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

TEXT = ("Empty design: drag a system or a part from the Palette onto the canvas,\n"
        "or start from a real system with File \u25b8 New from preset")


class EmptyHint(QLabel):
    """Shown in the middle of ``view``'s viewport while ``view.canvas`` holds no device."""

    def __init__(self, view):
        super().__init__(TEXT, view.viewport())
        self.view = view
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setStyleSheet("color: #8a8a8a; background: transparent;")
        view.canvas.rebuilt.connect(self.sync)
        view.canvas.updated.connect(self.sync)
        view.resized.connect(self.place)
        self.sync()

    def sync(self) -> None:
        empty = not self.view.canvas.topology.devices
        if empty:
            self.place()
        self.setVisible(empty)

    def place(self) -> None:
        hint = self.sizeHint()
        area = self.view.viewport().rect()
        self.setGeometry((area.width() - hint.width()) // 2, (area.height() - hint.height()) // 2,
                         hint.width(), hint.height())
