"""A replay on a large cluster's overview while the user zooms into a system (issue 17: replay draws
only what is visible; what the user opens shows the replay like a small design). Frames timed:
stepping the replay at fit, zooming in notch by notch with the replay paused mid-transfer (each
notch may open blocks and systems, which the replay then colours), then stepping and playing
zoomed in. A frame = the change + the events it causes + rendering the canvas viewport, as a paint
would (see canvas_scale.frame). Prints wall and CPU time (median / 95th / worst), the load average,
and how many GPUs of the open systems carry a replay state (0 before the fix).

Run: python benchmarks/replay_zoomed.py [systems]   (default 512 rail-optimized DGX H100; ring all-reduce 256 MiB)
Screenshots at fit and zoomed in mid-replay go to $DGXSTUDIO_SCREENSHOTS or /tmp.
"""

import os
import sys
import time

from _windows import dispose, open_window
from canvas_scale import frame, stats
from PySide6.QtGui import QImage

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import simulate


def sending(sim, t: float) -> bool:
    return bool(((sim.group_start <= t) & (sim.group_sent > t)).any())


def step_to_sending(app, window, image, costs) -> None:
    for _ in range(8):
        t1, c1 = time.perf_counter(), time.process_time()
        window.replayer.step(+1)
        frame(app, window, image)
        costs.append((time.perf_counter() - t1, time.process_time() - c1))
        if sending(window.replayer.sim, window.replayer.t):
            return


def mid_transfer(app, window, image) -> None:
    """Halfway through the transfers in flight (for the screenshots: chunks between their ends)."""
    sim, t = window.replayer.sim, window.replayer.t
    on = (sim.group_start <= t) & (sim.group_sent > t)
    window.replayer.set_time(float((sim.group_start[on] + sim.group_sent[on]).min() / 2))
    frame(app, window, image)


def run(n: int, shots: str) -> None:
    topo = build_fat_tree(n, "dgx-h100", rail_optimized=True)
    sim = simulate(topo, "all-reduce", "ring", 256 * 2**20).sim
    app, window = open_window(topo)
    image = QImage(window.view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    t1, c1 = time.perf_counter(), time.process_time()
    window.replayer.load(sim)
    loaded = (time.perf_counter() - t1, time.process_time() - c1)
    after_load = frame(app, window, image)   # the turn after: the replay indexes the run's links (see InsideLinks)
    lod, view = window.scene.lod, window.view
    at_fit, zoom, zoomed, playing = [], [], [], []
    window.replayer.set_time(sim.time_s * 0.4)
    for _ in range(6):
        step_to_sending(app, window, image, at_fit)
    mid_transfer(app, window, image)
    window.grab().save(os.path.join(shots, f"replay-h100-{n}-fit.png"))
    window.replayer.step(-1)
    window.replayer.step(+1)
    units = [b for b in lod.block_items.values() if b.block.tier == 0]
    unit = units[len(units) // 2]
    system = unit.block.members[len(unit.block.members) // 2]
    for _ in range(40):   # towards one system, as a user following it would
        item = lod.system_items.get(system)
        centre = (item or unit).sceneBoundingRect().center()
        t1, c1 = time.perf_counter(), time.process_time()
        view.zoom(1.2)
        view.centerOn(centre)
        frame(app, window, image)
        zoom.append((time.perf_counter() - t1, time.process_time() - c1))
        if system in lod.open_systems and view.transform().m11() > 0:
            break
    for _ in range(4):   # the rest of the screen opens over the next turns
        zoom.append(frame(app, window, image))
    for _ in range(6):
        step_to_sending(app, window, image, zoomed)
    mid_transfer(app, window, image)
    window.grab().save(os.path.join(shots, f"replay-h100-{n}-zoomed.png"))
    gpus = [window.scene.device_items[d] for s in lod.open_systems for d in lod.overview.system_devices[s]
            if topo.devices[d].kind == "gpu" and d in window.scene.device_items]
    coloured = sum(g.state_color is not None for g in gpus)
    dots = sum(d.isVisible() for d in window.replayer._dots)
    start = window.replayer.t
    for k in range(60):   # playing on from here: evenly spaced moments of the next stretch of the run
        t1, c1 = time.perf_counter(), time.process_time()
        window.replayer.set_time(start + sim.time_s * 0.02 * k / 60)
        frame(app, window, image)
        playing.append((time.perf_counter() - t1, time.process_time() - c1))
    load = os.getloadavg()[0]
    print(f"h100-{n} ring 256 MiB replay (load average {load:.2f}):")
    print(f"   load {loaded[0] * 1e3:.0f} ms (CPU {loaded[1] * 1e3:.0f} ms), the turn after it {after_load[0] * 1e3:.0f} ms"
          f" (CPU {after_load[1] * 1e3:.0f} ms)")
    print(f"   step at fit      {stats(at_fit)}")
    print(f"   zoom notches     {stats(zoom)}   ({len(lod.open_systems)} systems open)")
    print(f"   step zoomed in   {stats(zoomed)}")
    print(f"   play zoomed in   {stats(playing)}")
    print(f"   open systems' GPUs with a replay state: {coloured} of {len(gpus)}; chunks drawn: {dots}")
    dispose(window, app)


def main() -> None:
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 512, os.environ.get("DGXSTUDIO_SCREENSHOTS") or "/tmp")


if __name__ == "__main__":
    main()
