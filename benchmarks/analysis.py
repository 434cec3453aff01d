"""Times `analyze` (bisection, rings, latency, bandwidth) on each preset and a 512-system fat tree.

Target (issue 3): the 124-system fat tree finishes in under 5 s on the 2-core reference machine.
Run: python benchmarks/analysis.py
"""

import time

from dgxstudio.analysis.summary import analyze
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset, preset_names


def timed(label, topo):
    gpus = [d.id for d in topo.gpus()]
    t0 = time.perf_counter()
    result = analyze(topo, gpus)
    dt = time.perf_counter() - t0
    lat = result["latency"]["max_system_to_system_s"]
    print(f"{label:<22} {len(gpus):>5} GPUs  {dt:7.3f} s   bisection {result['bisection']['bidir_Bps'] / 1e9:9.1f} GB/s"
          f"  rings {result['rings']['count']}  bound {result['rings']['allreduce_busbw_bound_Bps'] / 1e9:6.1f} GB/s"
          + (f"  sys-sys {lat * 1e6:.2f} us" if lat else ""))
    return dt


def main():
    for name in preset_names():
        timed(name, load_preset(name))
    t0 = time.perf_counter()
    big = build_fat_tree(512)
    print(f"(built 512-system fat tree in {time.perf_counter() - t0:.2f} s)")
    timed("fat-tree-512", big)


if __name__ == "__main__":
    main()
