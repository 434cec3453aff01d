"""Canvas at cluster scale (issue 17): open offscreen to the first frame drawn, zoom and pan frame times,
replay frames per second at fit, peak resident memory.

Targets (this 2-core machine): the 2,048-system rail-optimized DGX H100 cluster opens with a readable
overview in under 3 s and under 2 GB resident; zoom and pan frames under 50 ms; replay on the
124-system DGX A100 fat tree at least 30 frames per second at fit; every frame under 16 ms on the DGX
presets. Also: deleting and undoing devices shown in the overview (no rebuild); a replay while zooming
into a system of a 512-system cluster (replay_zoomed.py: the opened systems are coloured). A frame =
the view change (or replay step) + the events it causes (the overview opening or closing blocks) +
rendering the canvas viewport, as a paint would.

Run: python benchmarks/canvas_scale.py [--quick]   (--quick: 512 systems instead of 2,048, fewer frames)
Screenshots of the overview at fit, half-zoomed and fully zoomed go to $DGXSTUDIO_SCREENSHOTS or /tmp.
"""

import os
import resource
import sys
import time

from _windows import dispose, open_window
from PySide6.QtGui import QImage

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import simulate


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def frame(app, window, image=None) -> float:
    """One turn of the event loop after a change, with the canvas marked for repaint: the overview
    follows the view, the canvas and the overview dock repaint, as on screen."""
    t0, c0 = time.perf_counter(), time.process_time()
    window.view.viewport().update()
    app.processEvents()
    return time.perf_counter() - t0, time.process_time() - c0


def stats(frames: list[tuple[float, float]]) -> str:
    """Wall time of the frames (median, 95th percentile, worst), then their CPU time (this process):
    the machine is shared, so wall time includes waiting for a core."""
    costs = sorted(f[0] for f in frames)
    cpu = sorted(f[1] for f in frames)

    def three(v):
        return f"{v[len(v) // 2] * 1e3:5.1f} / {v[int(len(v) * 0.95)] * 1e3:5.1f} / {v[-1] * 1e3:5.1f}"
    return f"median / 95th / worst {three(costs)} ms (CPU {three(cpu)} ms)"


def open_and_move(label: str, topo, shots: str | None = None, notches: int = 40) -> dict:
    """Open offscreen to the first frame, zoom in towards a GPU, pan, zoom out, pan at fit; prints the
    frame times and returns them (seconds; frames as lists of (wall, CPU))."""
    t0 = time.perf_counter()
    app, window = open_window(topo)
    image = QImage(window.view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    frame(app, window, image)
    opened = time.perf_counter() - t0
    lod = window.scene.lod
    print(f"{label}: open to first frame {opened:5.2f} s, {len(window.scene.items())} items at fit,"
          f" process peak RSS so far {rss_mb():6.0f} MB{'' if lod else ' (system boxes, no overview)'}")
    if shots:
        window.view.grab().save(os.path.join(shots, f"{label}-fit.png"))
    view = window.view
    centre = view.mapToScene(view.viewport().rect().center())
    unit = None
    if lod is not None:   # zoom towards a GPU of a system in the middle unit, as a user following it would
        units = [b for b in lod.block_items.values() if b.block.tier == 0]
        unit = units[len(units) // 2]
        centre = unit.sceneBoundingRect().center()
    zoom_in, zoom_out, pan = [], [], []
    most = deepest = 0
    for k in range(notches):
        if unit is not None:
            system = unit.block.members[min(len(unit.block.members) // 2 + 1, len(unit.block.members) - 1)]   # (a unit of one system: itself)
            if system in lod.system_items:
                centre = lod.system_items[system].sceneBoundingRect().center()
            gpu = next((d for d in lod.overview.system_devices[system] if d in window.scene.device_items
                        and topo.devices[d].kind == "gpu"), None)
            if gpu is not None:
                centre = window.scene.device_items[gpu].sceneBoundingRect().center()
        view.zoom(1.2)
        view.centerOn(centre)
        zoom_in.append(frame(app, window, image))
        most = max(most, len(window.scene.items()))
        deepest = max(deepest, view.transform().m11())
        if shots and k == notches // 2:
            view.grab().save(os.path.join(shots, f"{label}-half.png"))
    if shots:
        view.grab().save(os.path.join(shots, f"{label}-zoomed.png"))
    for _ in range(12):   # pan across at the deepest zoom: opening and closing as things pass
        view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + view.viewport().width() // 3)
        pan.append(frame(app, window, image))
    for _ in range(notches):
        view.zoom(1 / 1.2)
        zoom_out.append(frame(app, window, image))
    view.fit()
    frame(app, window, image)
    for _ in range(12):   # pan at fit-and-a-bit
        view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + 40)
        pan.append(frame(app, window, image))
    print(f"   zoom in  {stats(zoom_in)}   (deepest: {deepest:.0f}x, at most {most} items)")
    print(f"   zoom out {stats(zoom_out)}")
    print(f"   pan      {stats(pan)}")
    print(f"   process peak RSS so far {rss_mb():6.0f} MB")
    dispose(window, app)
    return {"open_s": opened, "items_at_fit": None if lod is None else len(lod.block_items), "most_items": most,
            "zoom_in": zoom_in, "zoom_out": zoom_out, "pan": pan}


def edit_in_overview(label: str, topo) -> None:
    """Delete a GPU and a NIC shown in an open system of the overview, and undo each: the time until
    the canvas shows the result (the model's own work included), and whether the overview was rebuilt
    (it should not be: only the system, its block and the bundles they touch change)."""
    app, window = open_window(topo)
    lod = window.scene.lod
    rebuilt = []
    window.scene.rebuilt.connect(lambda: rebuilt.append(1))
    system = lod.overview.blocks[next(b for b in lod.overview.blocks if lod.overview.blocks[b].tier == 0)].members[3]
    gpu = next(d for d in lod.overview.system_devices[system] if topo.devices[d].kind == "gpu")
    nic = next(d for d in lod.overview.system_devices[system] if topo.devices[d].kind == "nic")
    window.select_and_center([gpu])
    app.processEvents()
    out = []
    for device in (gpu, nic):
        window.scene.select_ids([device])
        t0 = time.perf_counter()
        window.delete()
        app.processEvents()
        t1 = time.perf_counter()
        window.document.undo_stack.undo()
        app.processEvents()
        out.append(f"{topo.devices[device].kind} delete {(t1 - t0) * 1e3:4.0f} ms, undo {(time.perf_counter() - t1) * 1e3:4.0f} ms")
    print(f"{label} edits in an open system: {'; '.join(out)}; overview rebuilt {len(rebuilt)} times")
    dispose(window, app)


def replay_fps(label: str, topo, algorithm: str, size: int, frames: int) -> None:
    result = simulate(topo, "all-reduce", algorithm, size)
    app, window = open_window(topo)
    window.replayer.load(result.sim)
    image = QImage(window.view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    frame(app, window, image)
    costs = []
    t0 = time.perf_counter()
    for k in range(frames):
        t1, c1 = time.perf_counter(), time.process_time()
        window.replayer.set_time(result.time_s * (k + 0.5) / frames)
        frame(app, window, image)
        costs.append((time.perf_counter() - t1, time.process_time() - c1))
    fps = frames / (time.perf_counter() - t0)
    print(f"{label} replay {algorithm} at fit: {fps:5.1f} frames/s, {stats(costs)}")
    dispose(window, app)


def preset_frames(name: str, frames: int) -> None:
    app, window = open_window(load_preset(name), None, name)
    image = QImage(window.view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    costs = [frame(app, window, image) for _ in range(3)]
    for k in range(frames):
        window.view.zoom(1.15 if k < frames // 2 else 1 / 1.15)
        costs.append(frame(app, window, image))
    result = simulate(load_preset(name), "all-reduce", "multi-ring", 256 * 2**20)
    window.view.fit()
    window.replayer.load(result.sim)
    for k in range(frames):
        t1, c1 = time.perf_counter(), time.process_time()
        window.replayer.set_time(result.time_s * (k + 0.5) / frames)
        frame(app, window, image)
        costs.append((time.perf_counter() - t1, time.process_time() - c1))
    print(f"{name:<12} zoom and replay frames: {stats(costs)} (target 16 ms; benchmarks/preset_frames.py splits"
          f" them by kind)")
    dispose(window, app)


def main() -> None:
    quick = "--quick" in sys.argv
    shots = os.environ.get("DGXSTUDIO_SCREENSHOTS") or "/tmp"
    n = 512 if quick else 2048
    t0 = time.perf_counter()
    topo = build_fat_tree(n, "dgx-h100", rail_optimized=True)
    print(f"generate {n} x DGX H100 rail-optimized: {time.perf_counter() - t0:5.2f} s, {len(topo.devices):,} devices,"
          f" {len(topo.links):,} links, {sum(d.kind == 'gpu' for d in topo.devices.values()):,} GPUs")
    open_and_move(f"h100-{n}", topo, shots)
    del topo
    # a document of its own: the closed window's listeners on the first one would count too
    edit_in_overview(f"h100-{n}", build_fat_tree(n, "dgx-h100", rail_optimized=True))
    if not quick:   # the starting point: 1,000 DGX-1 on a fat tree opened in 12 s to a blank canvas
        open_and_move("dgx1-1000", build_fat_tree(1000), None, notches=25)
    replay_fps("a100-124", build_fat_tree(124, "dgx-a100"), "multi-ring", 256 * 2**20, 30 if quick else 90)
    from replay_zoomed import run as replay_zoomed   # (it reuses this module's frame and stats)
    replay_zoomed(128 if quick else 512, shots)
    for name in ("dgx-a100", "dgx-h100", "dgx1-v100"):
        preset_frames(name, 10 if quick else 30)


if __name__ == "__main__":
    main()
