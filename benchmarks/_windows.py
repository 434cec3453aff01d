"""What the GUI benchmarks share: an offscreen main window on a topology, and its clean disposal."""

import gc
import os
import tempfile

from PySide6.QtCore import QEvent

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("DGXSTUDIO_CONFIG_DIR", tempfile.mkdtemp(prefix="dgxstudio-bench-"))

from dgxstudio.ui.app import application  # noqa: E402
from dgxstudio.ui.main_window import MainWindow  # noqa: E402


def open_window(topology, path=None, preset=None, size=(1400, 900)):
    app = application()
    window = MainWindow(topology, path, preset)
    window.resize(*size)
    window.show()
    app.processEvents()
    window.view.fit()
    app.processEvents()
    return app, window


def open_file_settled(path):
    """A saved topology opened in the window as the application opens it: drawn, then the heap settled
    (``settle_heap``, as run_app does once its window is up). Returns (app, topology, window)."""
    from dgxstudio.model import fileio
    from dgxstudio.ui.app import settle_heap

    topo = fileio.load(path)
    app = application()
    window = MainWindow(topo, path)
    window.show()
    for _ in range(50):
        app.processEvents()
    settle_heap()
    return app, topo, window


def dispose(window, app) -> None:
    window.document.undo_stack.setClean()
    window.close()
    window.deleteLater()
    app.processEvents()
    # processEvents outside exec() leaves deferred deletes queued: without this the window is destroyed
    # (10-20 ms of ~QWidget) inside whatever the caller times next, e.g. the next window's first paint
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
