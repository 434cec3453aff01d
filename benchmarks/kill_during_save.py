"""Kill DGX Studio while it saves, many times, and check that no file is ever lost or corrupted and
that the next save removes the temporary files the killed ones left.

    python benchmarks/kill_during_save.py [--kills 500] [--preset dgx-a100-superpod] [--kind all]

The GUI kind forks each child from one process that has imported Qt and DGX Studio already, so a
kill costs the window's construction and a save, not a fresh interpreter.

Each round starts a child that saves (native save through ``fileio.save``, an export through
``write_export``, a PNG and a PDF report) in a loop over an existing good file, kills it with SIGKILL
after a random delay, then checks the target still loads (native) or is a complete file of its format,
and counts the temporary files left. After all rounds one more save must leave none.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import sys
from dgxstudio.model import fileio
from dgxstudio.model.presets import load_preset
kind, target, preset = sys.argv[1], sys.argv[2], sys.argv[3]
topo = load_preset(preset)
if kind == "gui":  # the window's own Save (Ctrl+S goes to the same method)
    import os
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from dgxstudio.ui.app import application
    from dgxstudio.ui.main_window import MainWindow
    app = application()
    window = MainWindow(topo, target, None)
    window.show()
print("ready", flush=True)
n = 0
while True:
    n += 1
    if kind == "gui":
        window.document.topology.name = f"{preset} save {n}"
        window.document.undo_stack.resetClean()
        assert window._save_to(target)
    elif kind == "native":
        fileio.save(topo, target)
    elif kind == "png":
        from dgxstudio.report.exports import write_export
        write_export(topo, "png", target, None)
    elif kind == "pdf":
        from dgxstudio.analysis.summary import analyze
        from dgxstudio.report.html import ReportData, write_report
        write_report(ReportData(topo, analyze(topo, [d.id for d in topo.gpus()])), target)
    else:
        from dgxstudio.report.exports import write_export
        write_export(topo, kind, target, None)
"""


# The GUI kind starts Python, Qt and the window for every kill; imports are most of that. A zygote
# imports once (no QApplication, no threads yet) and forks a child per kill, which builds the
# QApplication and the window and saves in a loop through the window's own Save until it is killed.
ZYGOTE = r"""
import os, sys
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"  # no thread pools across fork
target, preset = sys.argv[1], sys.argv[2]
from dgxstudio.model.presets import load_preset
from dgxstudio.ui.app import application
from dgxstudio.ui.main_window import MainWindow
print("ready", flush=True)
for line in sys.stdin:
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        app = application()
        window = MainWindow(load_preset(preset), target, None)
        window.show()
        print(f"saving {os.getpid()}", flush=True)
        n = 0
        while True:
            n += 1
            window.document.topology.name = f"{preset} save {n}"
            window.document.undo_stack.resetClean()
            assert window._save_to(target)
    os.waitpid(pid, 0)
    print("reaped", flush=True)
"""


class Zygote:
    def __init__(self, target: Path, preset: str):
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE, str(target), preset], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"

    def kill_during_save(self, delay: float) -> None:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        word, pid = self.proc.stdout.readline().split()
        assert word == "saving"
        time.sleep(delay)
        os.kill(int(pid), signal.SIGKILL)
        assert self.proc.stdout.readline().strip() == "reaped"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def complete(kind: str, path: Path) -> bool:
    data = path.read_bytes()
    if kind in ("native", "gui"):
        from dgxstudio.model import fileio
        try:
            fileio.loads(data)
            return True
        except fileio.TopologyFileError:
            return False
    if kind == "png":
        return data.startswith(b"\x89PNG") and data.rstrip().endswith(b"IEND\xaeB`\x82")
    if kind == "pdf":
        return data.startswith(b"%PDF") and b"%%EOF" in data[-64:]
    if kind == "graphml":
        return data.rstrip().endswith(b"</graphml>")
    if kind == "dot":
        return data.rstrip().endswith(b"}")
    return len(data) > 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=500)
    ap.add_argument("--preset", default="dgx1-v100")
    ap.add_argument("--kind", default="all", help="native, gui, png, pdf, graphml, dot or all (rotating)")
    ap.add_argument("--max-delay", type=float, default=0.4)
    args = ap.parse_args()
    kinds = ["native", "gui", "png", "pdf", "graphml", "dot"] if args.kind == "all" else [args.kind]
    from dgxstudio.model.atomic import TEMP_SUFFIX

    folder = Path(tempfile.mkdtemp(prefix="dgxstudio-kill-"))
    lost = corrupt = 0
    left_max = 0
    rng = random.Random(16)
    started = time.time()
    zygote = None
    for i in range(args.kills):
        kind = kinds[i % len(kinds)]
        target = folder / f"target.{ {'native': 'dgxs', 'gui': 'dgxs'}.get(kind, kind) }"
        if not target.exists():  # a good file to protect
            subprocess.run([sys.executable, "-c", CHILD.replace("while True:", "for _ in [0]:"), kind, str(target),
                            args.preset], check=True, capture_output=True)
        if kind == "gui":
            zygote = zygote or Zygote(target, args.preset)
            zygote.kill_during_save(rng.uniform(0, args.max_delay))
        else:
            child = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(target), args.preset],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            child.stdout.readline()  # imports done; now it saves in a loop
            time.sleep(rng.uniform(0, args.max_delay))
            child.send_signal(signal.SIGKILL)
            child.wait()
        if not target.exists():
            lost += 1
        elif not complete(kind, target):
            corrupt += 1
        left = [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]
        left_max = max(left_max, len(left))
        if (i + 1) % 50 == 0:
            print(f"{i + 1} kills: lost {lost}, corrupt {corrupt}, temporary files now {len(left)}", flush=True)
    if zygote is not None:
        zygote.close()
    # one clean save of each kind removes what the killed ones left
    for kind in kinds:
        target = folder / f"target.{ {'native': 'dgxs', 'gui': 'dgxs'}.get(kind, kind) }"
        subprocess.run([sys.executable, "-c", CHILD.replace("while True:", "for _ in [0]:"), kind, str(target),
                        args.preset], check=True, capture_output=True)
    left_after = [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]
    print(f"kills {args.kills} ({', '.join(kinds)}) in {time.time() - started:.0f} s: files lost {lost}, "
          f"corrupt {corrupt}, most temporary files seen between kills {left_max}, "
          f"temporary files after the next save {len(left_after)}")
    return 0 if lost == corrupt == len(left_after) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
