"""Generates, saves, opens and analyzes a 1,024-system DGX H100 rail-optimized cluster (8,192 GPUs).

Targets (issue 12): generate under 3 s, analyze under 5 s on the 2-core reference machine.
Prints each stage's wall time, its CPU time (user+sys of this process) and the 1-minute load average at its end
(the machine is shared, so wall time alone cannot be compared between runs) and, with --profile, the functions
that dominate generate and analyze.
Run: python benchmarks/generate.py [--systems N] [--profile]
"""

import argparse
import cProfile
import io
import os
import pstats
import tempfile
import time
from pathlib import Path

from dgxstudio.analysis.summary import analyze
from dgxstudio.model import fileio
from dgxstudio.model.builders import build_fat_tree


def stage(label, fn, profile):
    prof = cProfile.Profile() if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    out = fn()
    if prof:
        prof.disable()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{label:<10} {dt:7.2f} s wall, {cpu:6.2f} s CPU, load {os.getloadavg()[0]:.2f}")
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(14)
        print("\n".join(buf.getvalue().splitlines()[6:26]))
    return out, dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", type=int, default=1024)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    topo, t_gen = stage("generate", lambda: build_fat_tree(args.systems, "dgx-h100", rail_optimized=True),
                        args.profile)
    print(f"           {topo.description}; {len(topo.devices):,} devices, {len(topo.links):,} links")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.dgxs"
        stage("save", lambda: fileio.save(topo, path), False)
        print(f"           {path.stat().st_size / 1e6:.1f} MB")
        opened, t_open = stage("open", lambda: fileio.load(path), False)
    gpus = [d.id for d in opened.gpus()]
    steps: list[tuple[str, float]] = []

    def progress(_fraction, label):  # analyze reports the step it starts; time each one
        steps.append((label, time.perf_counter()))

    result, t_an = stage("analyze", lambda: analyze(opened, gpus, progress=progress), args.profile)
    print("           " + ", ".join(f"{a} {t1 - t0:.2f} s" for (a, t0), (_, t1) in zip(steps, steps[1:])))
    print(f"           {len(gpus):,} GPUs; bisection {result['bisection']['bidir_Bps'] / 1e12:.1f} TB/s bidirectional "
          f"({result['bisection']['method']}); NVLink aggregate {result['aggregate_nvlink_bw_bidir_Bps'] / 1e12:,.0f} TB/s;"
          f" worst system-to-system {result['latency']['max_system_to_system_s'] * 1e6:.2f} us")
    print(f"targets: generate {t_gen:.2f} s (< 3 s: {'met' if t_gen < 3 else 'MISSED'}), "
          f"analyze {t_an:.2f} s (< 5 s: {'met' if t_an < 5 else 'MISSED'})")


if __name__ == "__main__":
    main()
