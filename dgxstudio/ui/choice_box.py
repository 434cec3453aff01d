"""The inspector's choice lists: as wide as the dock gives them, not as their longest entry.

A QComboBox asks for the width of its longest entry. The inspector's part list of an NVSwitch asks for
267 px ("NVSwitch (4th gen, NVLink Switch chip)"), so a user's first click on a DGX preset widened the
right docks from 280 to 309 px: the canvas shrank under the mouse, and that frame laid out the whole
window, repainted the canvas and pictured the overview again (5 ms of its 11-12 ms GUI CPU, 15-25 ms of
wall time on the DGX A100 and H100). A choice box asks for a dozen letters at most; the form gives it
the row's width, the current entry is elided if it is longer, the open list shows every entry whole,
and the tooltip names the entry chosen.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter, QToolTip

MIN_LETTERS = 12   # the most the box asks for, in letters; it grows with the dock


class ChoiceBox(QComboBox):
    def _capped(self, size: QSize) -> QSize:
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        text = QSize(self.fontMetrics().horizontalAdvance("X") * MIN_LETTERS, size.height())
        most = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, text, self).width()
        if size.width() > most:
            size.setWidth(most)
        return size

    def sizeHint(self) -> QSize:
        return self._capped(super().sizeHint())

    def minimumSizeHint(self) -> QSize:
        return self._capped(super().minimumSizeHint())

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.currentText():
            tip = self.toolTip()
            QToolTip.showText(event.globalPos(), self.currentText() + (f"\n{tip}" if tip else ""), self)
            return True
        return super().event(event)

    def paintEvent(self, event) -> None:
        # QComboBox.paintEvent with the current entry elided to the field (the same picture when it fits)
        painter = QStylePainter(self)
        painter.setPen(self.palette().color(self.palette().ColorRole.Text))
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        opt.currentText = self.fontMetrics().elidedText(opt.currentText, Qt.TextElideMode.ElideRight,
                                                        field.width() - 2)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)
