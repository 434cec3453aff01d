"""What the GUI benchmarks share: an offscreen main window on a topology, and its clean disposal."""

import gc
import os
import tempfile

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


def dispose(window, app) -> None:
    window.document.undo_stack.setClean()
    window.close()
    window.deleteLater()
    app.processEvents()
    gc.collect()
