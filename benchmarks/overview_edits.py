"""Edits on a large cluster's block overview that used to rebuild it (issue 17: "edits update the items
they touch, not the scene"), timed in the real main window, offscreen, at fit.

On the 512- and 2,048-system rail-optimized DGX H100 clusters (generated as benchmarks/scale.py does, or
read from /tmp/h100-<N>.dgxs when present): a switch dropped from the palette onto the overview (it joins
no system and no block: the "Not connected" row), its undo and redo, a second one dropped, a link
between the two, the two duplicated (Edit > Duplicate's copy, then its paste, timed apart), a link
from the new switch to a system's NIC, a system collapsed (the Inspector's "Drawn: collapsed"), a
whole leaf block deleted (the block emptied), and each one's undo. Each time runs
from the drop, key press or command until the event loop is idle again, the model's work included (the
window is frozen that long). Printed per edit: wall time, the GUI thread's CPU time, and whether the
scene was rebuilt whole (``rebuilt`` signal) or changed item by item. With DGXSTUDIO_SCREENSHOTS=DIR, the
window after each edit is saved there (after its timing).

Run: python benchmarks/overview_edits.py [--systems 512,2048]
"""

import os
import sys
import time

from _windows import dispose, open_window
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from dgxstudio.model import fileio
from dgxstudio.model.clipboard import copy_selection
from dgxstudio.model.commands import RemoveItems, SetCollapsed
from dgxstudio.model.connect import link_options
from dgxstudio.model.fabrics import build_fat_tree

SWITCH = "part:ib-switch-ndr-64"


def idle(app) -> None:
    for _ in range(3):
        app.processEvents()


def drop_from_palette(window, payload: str, at: QPoint) -> None:
    """What a drag from the palette that lands on the canvas sends (the palette's own drag data)."""
    mime = window.palette.tree.drag_data([window.palette.item_for(payload)])
    vp = window.view.viewport()
    for cls in (QDragEnterEvent, QDragMoveEvent):
        QApplication.sendEvent(vp, cls(at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                       Qt.KeyboardModifier.NoModifier))
    QApplication.sendEvent(vp, QDropEvent(QPointF(at), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                          Qt.KeyboardModifier.NoModifier))


def cluster(systems: int):
    path = f"/tmp/h100-{systems}.dgxs"
    if os.path.exists(path):
        return fileio.load(path)
    return build_fat_tree(systems, "dgx-h100", rail_optimized=True)


def run(systems: int) -> list:
    topo = cluster(systems)
    app, window = open_window(topo)
    idle(app)
    scene, stack = window.scene, window.document.undo_stack
    rebuilt = []
    scene.rebuilt.connect(lambda: rebuilt.append(1))
    rows = []

    def timed(label, action):
        n = len(rebuilt)
        t0, c0 = time.perf_counter(), time.thread_time()
        action()
        idle(app)
        rows.append((label, time.perf_counter() - t0, time.thread_time() - c0, len(rebuilt) > n))
        folder = os.environ.get("DGXSTUDIO_SCREENSHOTS")
        if folder:   # after the timing: what the user sees once the edit's next turns are drawn
            for _ in range(20):
                app.processEvents()
                time.sleep(0.01)
            window.grab().save(os.path.join(folder, f"overview_{systems}_{len(rows):02d}_{label.replace(' ', '-')}.png"))

    def undo():
        stack.undo()

    def redo():
        stack.redo()

    vp = window.view.viewport().rect()
    corner = QPoint(vp.width() // 20, vp.height() // 20)   # at fit: left of the rows, over no block
    had = set(topo.devices)
    timed("drop switch", lambda: drop_from_palette(window, SWITCH, corner))
    new = next(d for d in topo.devices if d not in had)
    timed("undo drop", undo)
    timed("redo drop", redo)
    had = set(topo.devices)
    timed("drop 2nd switch", lambda: drop_from_palette(window, SWITCH, corner + QPoint(30, 0)))
    second = next(d for d in topo.devices if d not in had)
    timed("link the two", lambda: window.view._connect(link_options(topo, new, second)[0]))
    timed("undo link", undo)
    clip = []   # Duplicate copies, then pastes: the copy (model only, no canvas) timed on its own
    timed("copy the two", lambda: clip.append(copy_selection(topo, [new, second])))
    timed("paste the copy", lambda: window._paste_clip(clip[0], "duplicate"))
    timed("undo duplicate", undo)
    nic = next(d for d in topo.devices if topo.devices[d].kind == "nic" and topo.group_of(d) is not None
               and any(o.ok for o in link_options(topo, new, d)))
    timed("link switch-system", lambda: window.view._connect(next(o for o in link_options(topo, new, nic) if o.ok)))
    timed("undo link s-s", undo)
    system = window.scene.lod.overview.system_of[nic] if window.scene.lod else topo.group_of(nic).id
    timed("collapse system", lambda: window.document.push(SetCollapsed(system, True)))
    timed("undo collapse", undo)
    leaves = window.scene.lod.overview.blocks["t1b0"].members
    timed("delete leaf block", lambda: window.document.push(RemoveItems(list(leaves))))
    timed("undo delete block", undo)
    dispose(window, app)
    return rows


def main() -> None:
    sizes = [int(s) for s in (sys.argv[sys.argv.index("--systems") + 1] if "--systems" in sys.argv
                              else "512,2048").split(",")]
    for n in sizes:
        load = os.getloadavg()[0]
        rows = run(n)
        print(f"{n} rail-optimized DGX H100 (load {load:.2f} -> {os.getloadavg()[0]:.2f})")
        for label, wall, cpu, whole in rows:
            print(f"   {label:<20} {wall * 1e3:8.1f} ms wall {cpu * 1e3:8.1f} ms GUI-thread CPU   "
                  f"{'REBUILT' if whole else 'item by item'}")


if __name__ == "__main__":
    main()
