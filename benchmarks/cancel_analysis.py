"""A cancelled analysis ends promptly (issue #16): open a large document in the window, start the
report's analysis, press Cancel after a few seconds at different steps, and time how long the
analysis thread runs on after Cancel and the longest pause of the event loop meanwhile.

    QT_QPA_PLATFORM=offscreen python benchmarks/cancel_analysis.py --file /tmp/big59.dgxs --after 2,5,9
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True)
    ap.add_argument("--after", default="2,5,9", help="seconds after the start to press Cancel")
    args = ap.parse_args()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton

    from _windows import open_file_settled

    app, topo, w = open_file_settled(args.file)
    gpus = [d.id for d in topo.gpus()]
    for after in (float(x) for x in args.after.split(",")):
        pressed: dict = {}
        ticks: list[float] = []
        timer = QTimer()
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        timer.start(5)

        def press() -> None:
            dialog = next((d for d in QApplication.topLevelWidgets() if isinstance(d, QProgressDialog) and d.isVisible()),
                          None)
            if dialog is None:
                QTimer.singleShot(20, press)
                return
            pressed["step"] = dialog.labelText().rsplit(":", 1)[-1].strip(" …")
            pressed["at"] = time.perf_counter()
            next(b for b in dialog.findChildren(QPushButton) if b.text() == "Cancel").click()  # as a user does
        QTimer.singleShot(int(after * 1000), press)
        result = w.analyze_in_background(gpus, "the benchmark")
        back = time.perf_counter()
        threads = [t for t in threading.enumerate() if t.name == "dgxstudio-analysis"]
        while any(t.is_alive() for t in threads) and time.perf_counter() - back < 60:
            app.processEvents()  # the event loop runs on, as in the application
            time.sleep(0.002)
        ended = time.perf_counter()
        for _ in range(100):  # the event loop while what was built is let go of elsewhere
            app.processEvents()
            time.sleep(0.005)
        timer.stop()
        gaps = [b - a for a, b in zip(ticks, ticks[1:]) if b > pressed.get("at", 0)]
        if "at" not in pressed:
            print(f"after {after:.0f} s: the analysis finished before Cancel ({result is not None})")
            continue
        print(f"Cancel after {after:.0f} s ({pressed['step']}): dialog back in {1000 * (back - pressed['at']):.0f} ms, "
              f"thread ended {1000 * (ended - pressed['at']):.0f} ms after Cancel, longest event-loop pause after "
              f"Cancel {1000 * max(gaps or [0]):.0f} ms (load {os.getloadavg()[0]:.2f})", flush=True)
    w.document.undo_stack.setClean()
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
