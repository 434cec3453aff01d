"""The GUI thread's cost of showing a finished run on a cluster (issue 17): the main window offscreen on
a rail-optimized DGX H100 cluster, a ring all-reduce of 256 MiB over all its GPUs simulated in-process,
then the window's _show_result (Results dock, live plots, replay and its structure), which runs on the
GUI thread and freezes the window while it works. Printed: wall and CPU time of each of REPEATS calls,
and of the structure read (replay_structure.structures) alone.

Run: python benchmarks/result_shown.py [--systems 512]
"""

import sys
import time

from _windows import dispose, open_window

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.ui.replay_structure import structures
from dgxstudio.ui.sim_panel import RunRequest

REPEATS = 3


def main() -> None:
    n = int(sys.argv[sys.argv.index("--systems") + 1]) if "--systems" in sys.argv else 512
    topo = build_fat_tree(n, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    result = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "ring", 256 * 2**20)
    app, window = open_window(topo)
    request = RunRequest("collective", f"all-reduce ring 256 MiB on {len(gpus)} GPUs", 256 * 2**20 * len(gpus))
    for _ in range(REPEATS):
        t0, c0 = time.perf_counter(), time.thread_time()
        structures(result.sim, result.rings)
        t1, c1 = time.perf_counter(), time.thread_time()
        window._show_result(request, result)
        app.processEvents()
        t2, c2 = time.perf_counter(), time.thread_time()
        print(f"{n} systems ({len(gpus)} GPUs): structures {(t1 - t0) * 1e3:7.1f} ms (CPU {(c1 - c0) * 1e3:7.1f}),"
              f" show result {(t2 - t1) * 1e3:7.1f} ms (GUI-thread CPU {(c2 - c1) * 1e3:7.1f})")
    dispose(window, app)


if __name__ == "__main__":
    main()
