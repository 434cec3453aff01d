"""``dgxstudio --self-test``: start the real window offscreen, open the default preset, run a short
simulation through the same worker path as the Run button, check the figures, exit 0 or 1.
It lets a packaged build be checked on a machine without a display."""

from __future__ import annotations

import gc
import os
import sys
import time


def self_test(timeout_s: float = 60.0) -> int:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    from PySide6.QtCore import QEventLoop, QTimer

    from ..model.presets import DEFAULT_PRESET, load_preset
    from .app import application
    from .main_window import MainWindow

    t0 = time.perf_counter()
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
