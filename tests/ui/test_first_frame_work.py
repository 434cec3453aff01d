"""What a window's first frame no longer does (issue 17: every frame under 16 ms on the DGX presets),
and that what it used to do still happens: the hidden plots' graphics items are polished while the
window is built, not in its first frame. benchmarks/first_frame.py measures what this saves."""

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QGraphicsWidget

from dgxstudio.model.presets import load_preset
from dgxstudio.ui.main_window import MainWindow


class _Polishes(QObject):
    """Polish events sent to graphics widgets (the plots, their axes and legends), and whether each
    came before the window was shown."""

    def __init__(self):
        super().__init__()
        self.shown = False
        self.before, self.after = [], []

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Polish and isinstance(obj, QGraphicsWidget):
            (self.after if self.shown else self.before).append(type(obj).__name__)
        return False


def _close(w):
    w.document.undo_stack.setClean()
    w.close()
    w.deleteLater()
    QApplication.processEvents()


def test_hidden_plots_are_polished_while_the_window_is_built_not_in_its_first_frame(qtbot):
    app = QApplication.instance()
    seen = _Polishes()
    app.installEventFilter(seen)
    try:
        w = MainWindow(load_preset("gb200-nvl72"), None, "gb200-nvl72")
        w.resize(1300, 850)
        seen.shown = True
        w.show()
        qtbot.waitExposed(w)
        QApplication.processEvents()
    finally:
        app.removeEventFilter(seen)
    try:
        assert "PlotItem" in seen.before and "AxisItem" in seen.before, "the plots are polished (as before)"
        assert seen.after == [], "the first frame polishes none of the hidden plots' items"
    finally:
        _close(w)
