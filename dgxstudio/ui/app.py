"""Starting the desktop application."""

from __future__ import annotations

import sys

from ..model.topology import Topology


def application():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("DGX Studio")
        app.setOrganizationName("DGX Studio")
    return app


def run_app(topology: Topology, path: str | None = None, preset: str | None = None) -> int:
    from .main_window import MainWindow

    import gc

    app = application()
    window = MainWindow(topology, path, preset)
    window.show()
    from PySide6.QtCore import QTimer

    from .autosave import offer_recovery

    QTimer.singleShot(0, lambda: offer_recovery(window))  # after a crash: restore unsaved work?
    code = app.exec()
    from .main_window import MIME_CLIP

    data = app.clipboard().mimeData()
    if data is not None and data.hasFormat(MIME_CLIP):
        app.clipboard().clear()  # our copy dies with us; left to the interpreter's exit it can segfault
    # Delete the window while Qt still runs rather than leave it to the interpreter's exit.
    window.deleteLater()
    app.processEvents()
    del window
    gc.collect()
    return code
