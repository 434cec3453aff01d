"""What one engine run costs without its max-min solves, and without keeping its network states.

    python benchmarks/engine_floor.py                                # the 992-GPU DGX-1 tree, 256 MiB
    python benchmarks/engine_floor.py --fat-tree 20 gb200-nvl72 --rail-optimized --achievable \\
        --no-nvls --size 16GiB                                       # 20 GB200 NVL72 racks

The same call three times in one process (CPU user+sys of each, and the load average):
1. as it runs, every answer of the engine's fair-rate solves recorded (``engine.solve_misses``, and
   the restart the solver's parts ask for, ``PartsFound``);
2. those answers handed back instead of solving: what is left is the event loop and its bookkeeping;
3. the same, with the network states kept as they come (``KeptArrays``/``KeptLevels`` without
   looking for equal arrays or packing levels): what is left is the event loop alone.
Runs 2 and 3 must give run 1's time and event count (a replay that did not is said so). Run 3's CPU is
the floor an exact event-by-event run of this schedule has in this engine however cheap its solves
and state keeping become: a speed target below it needs fewer events, not cheaper solves.
"""

from __future__ import annotations

import argparse
import os
import time

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import engine, kept_arrays
from dgxstudio.sim.part_components import PartsFound
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.units import parse_size


def _topology(args):
    if args.fat_tree:
        systems, system = args.fat_tree
        return build_fat_tree(int(systems), system, rail_optimized=args.rail_optimized)
    return load_preset(args.preset)


def _run(args, topo):
    sim = Simulator(topo, [d.id for d in topo.gpus()],
                    SimOptions(achievable=args.achievable, nvls_enable=not args.no_nvls))
    c0 = time.process_time()
    result = sim.run("all-reduce", args.algorithm, parse_size(args.size))
    return time.process_time() - c0, result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="dgx1-fat-tree-124")
    ap.add_argument("--fat-tree", nargs=2, metavar=("SYSTEMS", "SYSTEM"))
    ap.add_argument("--rail-optimized", action="store_true")
    ap.add_argument("--algorithm", default="tree")
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--achievable", action="store_true", help="achievable link figures (default: peak, as simulate.py)")
    ap.add_argument("--no-nvls", action="store_true")
    args = ap.parse_args(argv)
    topo = _topology(args)
    warm = load_preset("dgx1-v100")  # (the modules' first imports, out of the figures)
    Simulator(warm, [d.id for d in warm.gpus()]).run("all-reduce", args.algorithm, 2**20)

    solve = engine.solve_misses
    answers: list = []

    def recorded(*a, **k):
        try:
            out = solve(*a, **k)
        except PartsFound as found:
            answers.append(found)
            raise
        answers.append(out)
        return out

    engine.solve_misses = recorded
    try:
        full, r1 = _run(args, topo)
    finally:
        engine.solve_misses = solve
    print(f"{r1.sim.events:,} events, {len(answers):,} solves, {r1.sim.periods_skipped} periods skipped, "
          f"{len(r1.schedule.groups):,} groups: {r1.algorithm}/{r1.protocol} {r1.busbw_Bps / 1e9:.2f} GB/s busbw")
    print(f"as it runs                      CPU {full:6.2f} s  load {os.getloadavg()[0]:.1f}")

    def replayed(*a, **k):
        out = next(left)
        if isinstance(out, PartsFound):
            raise out
        return out

    keep, append = kept_arrays.KeptArrays.keep, kept_arrays.KeptLevels.append
    for label, plain in (("solves' answers replayed", False), ("... and states kept as they come", True)):
        left = iter(answers)
        engine.solve_misses = replayed
        if plain:
            kept_arrays.KeptArrays.keep = lambda self, a: a
            kept_arrays.KeptLevels.append = lambda self, a: self._items.append(a)
        try:
            cpu, r = _run(args, topo)
        finally:
            engine.solve_misses = solve
            kept_arrays.KeptArrays.keep, kept_arrays.KeptLevels.append = keep, append
        same = r.time_s == r1.time_s and r.sim.events == r1.sim.events
        print(f"{label:<31} CPU {cpu:6.2f} s  load {os.getloadavg()[0]:.1f}"
              + ("" if same else f"  (replay diverged: {r.time_s!r} s, {r.sim.events} events)"))


if __name__ == "__main__":
    main()
