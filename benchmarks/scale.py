"""Clusters of thousands of systems (issue #17): time and peak memory of each step, with growth.

Rail-optimized DGX H100 clusters and DGX A100 fat trees of growing size; for each: generate, open
(load the saved file), the canvas (the saved file opened in the main window offscreen to its first
frame drawn, then 20 zoom notches in towards a GPU, pans and zooms out: the 95th percentile and worst
frame, as benchmarks/canvas_scale.py measures them), analyze, all-reduce with ring / tree / nvls-tree
/ hierarchical at two message sizes, and all-to-all. Every measurement runs in its own process with a
time limit, so a step that runs away is reported as such instead of stopping the table; peak memory
is that process's.
Growth is the exponent k in time ~ GPUs^k between the smallest and the largest size that finished.

    python benchmarks/scale.py                      # the issue's sizes (long: hours on 2 cores)
    python benchmarks/scale.py --quick              # 16 and 64 systems, 2-minute limit per step
    python benchmarks/scale.py --h100 128,512 --a100 64 --limit 300
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

GiB, MiB = 2**30, 2**20


def build(kind: str, systems: int):
    from dgxstudio.model.fabrics import build_fat_tree

    if kind == "h100":
        return build_fat_tree(systems, "dgx-h100", rail_optimized=True)
    return build_fat_tree(systems, "dgx-a100")


def one(kind: str, systems: int, step: str, workdir: str) -> dict:
    """Run one step in this process and return its figures."""
    from dgxstudio.model import fileio

    path = os.path.join(workdir, f"{kind}-{systems}.dgxs")
    if step == "canvas":
        gui_ready()
    t0 = time.perf_counter()
    if step == "generate":
        topo = build(kind, systems)
        fileio.save(topo, path)
        out = {"devices": len(topo.devices), "links": len(topo.links)}
    else:
        topo = fileio.load(path) if os.path.exists(path) else build(kind, systems)
        t0 = time.perf_counter() if step not in ("open", "canvas") else t0
        gpus = [d.id for d in topo.gpus()]
        if step == "open":
            out = {"gpus": len(gpus)}
        elif step == "canvas":
            out = canvas(topo, t0)
        elif step == "analyze":
            from dgxstudio.analysis.summary import analyze

            a = analyze(topo, gpus)
            out = {"bisection_TBps": a["bisection"]["bidir_Bps"] / 1e12}
        else:
            from dgxstudio.sim.run import SimOptions, Simulator

            algorithm, _, size = step.partition("@")
            collective = "all-to-all" if algorithm == "direct" else "all-reduce"
            r = Simulator(topo, gpus, SimOptions(achievable=True)).run(collective, algorithm, int(size))
            out = {"busbw_GBps": r.busbw_Bps / 1e9, "protocol": r.protocol, "events": r.sim.events}
    # (the canvas's time is to its first frame, what "opens in under 3 s" means; its frames are beside it)
    out["wall_s"] = out.pop("first_frame_s") if step == "canvas" else time.perf_counter() - t0
    out["peak_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def gui_ready() -> None:
    """Qt and the window's modules imported and the application made, as in a running application
    that opens a file (their start-up is not the file's)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(HERE))
    importlib.import_module("canvas_scale")
    from dgxstudio.ui.app import application

    application()


def canvas(topo, t0: float) -> dict:
    """The main window on ``topo`` (loaded since ``t0``) to its first frame, then zoom and pan frames."""
    from canvas_scale import open_and_move

    loaded = time.perf_counter() - t0
    res = open_and_move("scale", topo, None, notches=20)

    def pct(frames, q):
        v = sorted(f[0] for f in frames)
        return round(v[min(len(v) - 1, int(len(v) * q))] * 1e3, 1)
    zoom = res["zoom_in"] + res["zoom_out"]
    return {"first_frame_s": loaded + res["open_s"], "zoom_p95_ms": pct(zoom, 0.95),
            "zoom_worst_ms": pct(zoom, 1.0), "pan_p95_ms": pct(res["pan"], 0.95), "pan_worst_ms": pct(res["pan"], 1.0),
            "blocks_at_fit": res["items_at_fit"]}


def measure(kind: str, systems: int, step: str, workdir: str, limit: float) -> dict:
    cmd = [sys.executable, __file__, "--one", kind, str(systems), step, workdir]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"error": f"over {limit:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:70]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", nargs=4, metavar=("KIND", "SYSTEMS", "STEP", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--h100", default="128,512,2048", help="rail-optimized DGX H100 cluster sizes (systems)")
    ap.add_argument("--a100", default="64,128,256,512,1024", help="DGX A100 fat-tree sizes (systems)")
    ap.add_argument("--sizes", default=f"{256 * MiB},{16 * GiB}", help="all-reduce message sizes in bytes")
    ap.add_argument("--algorithms", default="ring,tree,nvls-tree,hierarchical,direct")
    ap.add_argument("--limit", type=float, default=900.0, help="seconds allowed per step")
    ap.add_argument("--quick", action="store_true", help="16 and 64 systems of each, 120 s per step")
    args = ap.parse_args(argv)
    if args.one:
        kind, systems, step, workdir = args.one
        print(json.dumps(one(kind, int(systems), step, workdir)))
        return 0
    if args.quick:
        args.h100, args.a100, args.limit = "16,64", "16,64", 120.0
    sizes = [int(s) for s in args.sizes.split(",") if s]
    steps = ["generate", "open", "canvas", "analyze"]
    for alg in [a for a in args.algorithms.split(",") if a]:  # --algorithms "" times generate, open, the canvas and analyze only
        if alg == "direct":
            steps.append(f"direct@{16 * MiB}")
        else:
            steps.extend(f"{alg}@{s}" for s in sizes)
    table: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="dgxstudio-scale-") as workdir:
        for kind, spec in (("h100", args.h100), ("a100", args.a100)):
            gpus_per = 8
            for systems in [int(x) for x in spec.split(",") if x]:
                for step in steps:
                    if kind == "a100" and step.startswith("nvls-tree"):
                        continue
                    previous = table.get((kind, step), [])
                    if previous and "error" in previous[-1][1] and previous[-1][1]["error"].startswith("over"):
                        res = {"error": "skipped: a smaller size ran over the limit"}
                    else:
                        res = measure(kind, systems, step, workdir, args.limit)
                    table.setdefault((kind, step), []).append((systems * gpus_per, res))
                    shown = (f"{res['wall_s']:9.2f} s {res['peak_MB']:8.0f} MB" if "wall_s" in res
                             else f"  {res['error']}")
                    extra = {k: v for k, v in res.items() if k not in ("wall_s", "peak_MB", "error")}
                    print(f"{kind} {systems:>5} systems ({systems * gpus_per:>6} GPUs)  {step:<26}{shown}  "
                          f"{json.dumps(extra) if extra else ''}", flush=True)
    print("\ngrowth exponent k (time ~ GPUs^k) between the smallest and largest size that finished:")
    for (kind, step), rows in table.items():
        ok = [(g, r["wall_s"]) for g, r in rows if "wall_s" in r and r["wall_s"] > 0]
        if len(ok) >= 2 and ok[-1][0] > ok[0][0]:
            k = math.log(ok[-1][1] / ok[0][1]) / math.log(ok[-1][0] / ok[0][0])
            print(f"  {kind} {step:<26} k = {k:.2f}  ({ok[0][0]} to {ok[-1][0]} GPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
