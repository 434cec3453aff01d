"""The GUI thread's cost of showing a finished run on a cluster (issue 17): the main window offscreen on
a rail-optimized DGX H100 cluster, a ring all-reduce of 256 MiB over all its GPUs simulated in-process,
then the window's _show_result (Results dock, live plots, replay and its structure), which runs on the
GUI thread and freezes the window while it works. Printed: wall and CPU time of each of REPEATS calls,
and of the structure read (replay_structure.structures) alone; then the CPU time of a few replay
frames (Replayer.set_time). With --worker, what the worker thread does with a run before it hands it
over (replay_facts.prepare) is done first and timed apart, as in the app.

Run: python benchmarks/result_shown.py [--systems 512] [--algorithm nvls-tree] [--size-gib 16] [--worker]
(the lead's issue 17 case: --systems 128 --algorithm nvls-tree --size-gib 16 --worker: 2.56 million groups)
"""

import sys
import time

from _windows import dispose, open_window

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.ui.replay_facts import prepare
from dgxstudio.ui.replay_structure import structures
from dgxstudio.ui.sim_panel import RunRequest

REPEATS = 3


def main() -> None:
    def arg(name, default):
        return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
    n, algorithm, size = int(arg("--systems", 512)), arg("--algorithm", "ring"), float(arg("--size-gib", 0.25)) * 2**30
    topo = build_fat_tree(n, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    result = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", algorithm, size)
    app, window = open_window(topo)
    request = RunRequest("collective", f"all-reduce {algorithm} {size / 2**30:g} GiB on {len(gpus)} GPUs", size * len(gpus))
    print(f"{len(result.sim.groups):,} groups")
    for _ in range(REPEATS):
        if "--worker" in sys.argv:
            c = time.thread_time()
            prepare(result)
            print(f"  worker thread (replay_facts.prepare): CPU {(time.thread_time() - c) * 1e3:7.1f} ms")
        t0, c0 = time.perf_counter(), time.thread_time()
        structures(result.sim, result.rings)
        t1, c1 = time.perf_counter(), time.thread_time()
        window._show_result(request, result)
        app.processEvents()
        t2, c2 = time.perf_counter(), time.thread_time()
        print(f"{n} systems ({len(gpus)} GPUs): structures {(t1 - t0) * 1e3:7.1f} ms (CPU {(c1 - c0) * 1e3:7.1f}),"
              f" show result {(t2 - t1) * 1e3:7.1f} ms (GUI-thread CPU {(c2 - c1) * 1e3:7.1f})")
    frames = []
    for k in range(1, 13):
        c = time.thread_time()
        window.replayer.set_time(result.time_s * k / 13)
        app.processEvents()
        frames.append((time.thread_time() - c) * 1e3)
    print("replay frames (CPU ms):", " ".join(f"{f:.1f}" for f in frames))
    dispose(window, app)


if __name__ == "__main__":
    main()
