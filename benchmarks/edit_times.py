"""Edit times in the real main window, offscreen (issue 17: the editor stays an editor on large clusters).

On the 2,048-system rail-optimized DGX H100 cluster (its overview; /tmp/h100-2048.dgxs when present,
else generated as benchmarks/scale.py does) and on the GB200 NVL72 preset: delete a device (a GPU of a
system opened in view), delete a block (a system box selected in the overview, or a compute tray on
GB200), undo, redo, move (a device dragged with the mouse) and add a link (the command a link drag
pushes). Each time runs from the key press or mouse release until the event loop is idle again (the
canvas updated), the model's work included. Keys and mouse go to the view as a user's would. Printed:
wall time and the GUI thread's CPU time (the machine is shared, and the findings check and the autosave
run on threads of their own, which the process's CPU time would count).

Run: python benchmarks/edit_times.py [--profile EDIT] [--only h100|gb200]
  --profile delete-device (etc.): cProfile that edit on the cluster and print the top 25 by cumulative time.
"""

import cProfile
import io
import os
import pstats
import sys
import time

from _windows import dispose, open_window
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from dgxstudio.model import fileio
from dgxstudio.model.connect import link_options
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset

CLUSTER_FILE = "/tmp/h100-2048.dgxs"
PROFILE = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None


def idle(app) -> None:
    """Until nothing is left to do now (timers that fire later, such as re-caching, are not waited for)."""
    for _ in range(3):
        app.processEvents()


def timed(app, label: str, action, out: dict) -> None:
    prof = cProfile.Profile() if PROFILE == label else None
    t0, c0 = time.perf_counter(), time.thread_time()
    if prof:
        prof.enable()
    action()
    idle(app)
    if prof:
        prof.disable()
    out[label] = (time.perf_counter() - t0, time.thread_time() - c0)
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
        print(s.getvalue())


def key(window, k, mods=Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(window.view, k, mods)


def undo(window):
    key(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def redo(window):
    key(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)


def send_mouse(widget, kind, pos: QPoint, buttons, button):
    ev = QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons,
                     Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, ev)


def drag(view, start: QPoint, end: QPoint, steps: int = 6) -> None:
    vp = view.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send_mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    for i in range(1, steps + 1):
        p = start + (end - start) * i / steps
        send_mouse(vp, QEvent.Type.MouseMove, QPoint(int(p.x()), int(p.y())), left, none)
    send_mouse(vp, QEvent.Type.MouseButtonRelease, end, none, left)


def grab_device(window, app, device_id: str):
    """The device's item, zoomed until it is large enough to grab (opening the overview down to it)."""
    scene = window.scene
    if scene.lod is None and device_id in scene._hidden:   # inside a collapsed tray: expand it first
        scene.toggle_group(scene._hidden[device_id])
        idle(app)
    window.select_and_center([device_id])
    idle(app)
    item = window.scene.device_items[device_id]
    while item.sceneBoundingRect().width() * window.view.transform().m11() < 120:
        window.view.zoom(1.25)
        window.view.centerOn(item)
        idle(app)
        item = window.scene.device_items[device_id]
    return item


def edits(label: str, topo, gpu: str, other_gpu: str, block_select, link_pair) -> dict:
    """Time each edit and check undo/redo restore the document (saved text compared)."""
    app, window = open_window(topo)
    idle(app)
    stack = window.document.undo_stack
    out: dict = {}
    checks = []

    def shot(name):
        folder = os.environ.get("DGXSTUDIO_SCREENSHOTS")
        if folder:
            for _ in range(20):   # what opens on the next turns (the system drawn again) included
                app.processEvents()
                time.sleep(0.01)
            window.grab().save(os.path.join(folder, f"edit_{label}_{name}.png"))

    def state():
        return fileio.dumps(topo)

    def round_trip(name, edit, shots=(None, None)):
        """Time an edit, its undo and its redo; check that undo gives back the saved text from before
        and redo the text from after."""
        before = state()
        timed(app, name, edit, out)
        if shots[0]:
            shot(shots[0])
        after = state()
        timed(app, f"undo {name}", lambda: undo(window), out)
        if shots[1]:
            shot(shots[1])
        checks.append((f"undo {name}", state() == before))
        timed(app, f"redo {name}", lambda: redo(window), out)
        checks.append((f"redo {name}", state() == after))

    # delete a device
    grab_device(window, app, gpu)
    window.scene.select_ids([gpu])
    shot("0-before")
    round_trip("delete device", lambda: key(window, Qt.Key.Key_Delete), ("1-deleted", "2-undone"))
    undo(window)
    idle(app)
    # delete a block
    ids = block_select(window)
    shot("3-block-selected")
    round_trip("delete block", lambda: key(window, Qt.Key.Key_Delete), ("4-block-deleted", "5-block-undone"))
    undo(window)
    idle(app)
    out["block"] = ids
    # move a device by dragging it
    item = grab_device(window, app, other_gpu)
    window.scene.clearSelection()
    start = window.view.mapFromScene(item.mapToScene(QPointF(-30, 0)))
    before = state()
    n = stack.index()
    timed(app, "move", lambda: drag(window.view, start, start + QPoint(60, 40)), out)
    checks.append(("move pushed", stack.index() == n + 1))
    timed(app, "undo move", lambda: undo(window), out)
    checks.append(("undo move", state() == before))
    # add a link (what releasing a link drag over another device pushes)
    a, b = link_pair
    proposal = link_options(topo, a, b)[0]
    round_trip("add link", lambda: window.view._connect(proposal))
    out["checks"] = checks
    dispose(window, app)
    return out


def cluster():
    if os.path.exists(CLUSTER_FILE):
        return fileio.load(CLUSTER_FILE)
    return build_fat_tree(2048, "dgx-h100", rail_optimized=True)


def select_system_box(window):
    lod = window.scene.lod
    ov = lod.overview
    system = ov.system_of["s1500.gpu0"] if "s1500.gpu0" in ov.system_of else next(iter(ov.system_devices))
    lod.reveal(system)
    QApplication.processEvents()
    window.scene.clearSelection()
    lod.system_items[system].setSelected(True)
    return window.scene.selected_ids()


def select_tray(window):
    topo = window.document.topology
    tray = next(g.id for g in topo.groups.values() if "tray" in g.id or "tray" in g.name.lower())
    window.scene.clearSelection()
    window.scene.group_items[tray].setSelected(True)
    return window.scene.selected_ids()


def main() -> None:
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    runs = []
    if only in (None, "h100"):
        topo = cluster()
        runs.append(("h100-2048", topo, "s1000.gpu3" if "s1000.gpu3" in topo.devices else None))
    if only in (None, "gb200"):
        runs.append(("gb200-nvl72", load_preset("gb200-nvl72"), None))
    for label, topo, gpu in runs:
        gpus = [d.id for d in topo.devices.values() if d.kind == "gpu"]
        gpu = gpu or gpus[3]
        other = gpus[len(gpus) // 2 + 5]
        if label.startswith("h100"):
            sys_a, sys_b = "s0700.", "s0701."
            pair = next((a, b) for a in topo.devices if a.startswith(sys_a)
                        for b in topo.devices if b.startswith(sys_b) and link_options(topo, a, b)[0].ok)
            block = select_system_box
        else:
            cpus = [d.id for d in topo.devices.values() if d.kind == "cpu"]
            pair, block = (cpus[0], cpus[-1]), select_tray
        res = edits(label, topo, gpu, other, block, pair)
        print(f"{label}: {len(topo.devices):,} devices, {len(topo.links):,} links; block = {res.pop('block')[:3]}...")
        for name, ok in res.pop("checks"):
            print(f"   check {name:<22} {'ok' if ok else 'FAILED'}")
        for name, (wall, cpu) in res.items():
            print(f"   {name:<22} {wall * 1e3:8.1f} ms wall  {cpu * 1e3:8.1f} ms GUI-thread CPU")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
