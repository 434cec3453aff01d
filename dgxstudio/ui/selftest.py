"""``dgxstudio --self-test``: start the real window offscreen, open the default preset, run a short
simulation through the same worker path as the Run button, check the figures, exit 0 or 1.
It lets a packaged build be checked on a machine without a display."""

from __future__ import annotations

import gc
import os
import sys
import time

# Qt's offscreen platform answers every top-level window's size-hint update with this warning (twice
# in a self-test); it says nothing about the build under test, so only it is dropped.
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints()"


def quiet_offscreen_noise():
    """Install a Qt message handler that drops OFFSCREEN_NOISE and passes every other message on (to
    the handler it replaces, else to stderr as Qt's default handler writes it). Returns a function that
    puts the previous handler back."""
    from PySide6.QtCore import qFormatLogMessage, qInstallMessageHandler

    def handler(mode, context, message):
        if message == OFFSCREEN_NOISE:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            print(qFormatLogMessage(mode, context, message), file=sys.stderr, flush=True)

    previous = qInstallMessageHandler(handler)
    return lambda: qInstallMessageHandler(previous)


def self_test(timeout_s: float = 60.0) -> int:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    t0 = time.perf_counter()
    restore = quiet_offscreen_noise()
    try:
        return _run(timeout_s, t0)
    finally:
        restore()


def _run(timeout_s: float, t0: float) -> int:
    from PySide6.QtCore import QEventLoop, QTimer

    from ..model.presets import DEFAULT_PRESET, load_preset
    from .app import application
    from .main_window import MainWindow

    app = application()
    window = MainWindow(load_preset(DEFAULT_PRESET), None, DEFAULT_PRESET)
    window.show()
    app.processEvents()
    panel = window.sim_panel
    panel.tabs.setCurrentIndex(0)
    panel.collective.setCurrentText("all-reduce")
    panel.algorithm.setCurrentText("ring")
    panel.size.setText("64MiB")
    outcome: dict = {}
    loop = QEventLoop()
    panel.resultReady.connect(lambda request, result: (outcome.setdefault("result", result), loop.quit()))
    panel.runner.failed.connect(lambda message: (outcome.setdefault("error", message), loop.quit()))
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    panel.run()
    loop.exec()
    result = outcome.get("result")
    ok = result is not None and result.busbw_Bps > 0 and len(window.scene.device_items) > 0
    if ok:
        window.replayer.set_time(result.time_s / 2)
        print(f"self-test passed: {window.document.topology.name}, {len(window.scene.device_items)} devices drawn, "
              f"all-reduce 64 MiB ring {result.busbw_Bps / 1e9:.2f} GB/s bus bandwidth "
              f"({time.perf_counter() - t0:.2f} s)")
    else:
        print(f"self-test FAILED: {outcome.get('error', 'no result within the time limit')}", file=sys.stderr)
    window.document.undo_stack.setClean()
    window.close()
    window.deleteLater()
    app.processEvents()
    gc.collect()
    return 0 if ok else 1
