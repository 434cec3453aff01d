"""All-to-all over thousands of GPUs (issue #17): by symmetry class against pair by pair.

For DGX A100 fat trees and rail-optimized DGX H100 clusters of 128 to 4,096 GPUs, the wall time and
peak memory of a 16 MiB direct all-to-all as the Simulator runs it (by symmetry class), and of the
same all-to-all run pair by pair (every GPU pair its own flow and route search: what the
Simulator did before, up to its 20,000-pair cap), each in its own process with a time limit. Where
both finish, the two simulated times are compared. Target: under 10 s at 4,096 GPUs.

    python benchmarks/all_to_all.py                       # 128, 512, 1024, 4096 GPUs; 300 s a run
    python benchmarks/all_to_all.py --gpus 128,512 --limit 60
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

MiB = 2**20


def one(kind: str, systems: int, mode: str, size: float) -> dict:
    from scale import build

    from dgxstudio.analysis.routing import Router
    from dgxstudio.sim.engine import Engine
    from dgxstudio.sim.run import SimOptions, Simulator

    topo = build(kind, systems)
    gpus = [d.id for d in topo.gpus()]
    t0 = time.perf_counter()
    if mode == "classes":
        r = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-to-all", "direct", size)
        sim, classes = r.sim, r.schedule.meta.get("classes")
        extra = {"classes": len(classes.pairs) if classes else None}
    else:
        # what the Simulator ran before: every pair a flow, no cap (the cap refused over 141 GPUs), with
        # the same NCCL p2p plan (protocol, channels' rate, latency) as the run by class
        from dgxstudio.sim import nccl_p2p, tuning as T

        router = Router(topo, achievable=True)
        call = nccl_p2p.plan_call(nccl_p2p.facts_of(topo, router, gpus), size)
        sim = Engine(router, T.protocol_efficiency(call.protocol)).run(_pairwise(gpus, size, SimOptions().chunk, call))
        extra = {}
    return {"sim_time_s": sim.time_s, "events": sim.events, **extra, "wall_s": time.perf_counter() - t0,
            "peak_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _pairwise(gpus, size, chunk, call):
    from dgxstudio.sim import collectives as C
    from dgxstudio.sim.engine import Group, Pattern, Schedule

    sched = Schedule([], size, f"pair-by-pair all-to-all over {len(gpus)} GPUs")
    pattern = Pattern([(a, b) for a in gpus for b in gpus if a != b], latency_s=call.hop_s, cap_Bps=call.pair_cap_Bps)
    n, piece = C.pieces(size / len(gpus), chunk)
    last = None
    for j in range(n):
        last = sched.add(Group(f"piece {j}", pattern, piece, (), (last,) if last is not None else ()))
    return C.with_launch(sched, call.launch_s)


def measure(kind: str, systems: int, mode: str, size: float, limit: float) -> dict:
    cmd = [sys.executable, __file__, "--one", kind, str(systems), mode, str(size)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, cwd=HERE)
    except subprocess.TimeoutExpired:
        return {"error": f"over {limit:.0f} s"}
    if done.returncode != 0:
        return {"error": ((done.stderr.strip().splitlines() or ["failed"])[-1])[:80]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--gpus", default="128,512,1024,4096", help="cluster sizes in GPUs (8 per system)")
    ap.add_argument("--size", type=float, default=16 * MiB, help="bytes each GPU sends in all")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds allowed per run")
    ap.add_argument("--pairwise-up-to", type=int, default=1024,
                    help="run pair by pair only up to this many GPUs (beyond, it would take hours)")
    args = ap.parse_args(argv)
    if args.one:
        kind, systems, mode, size = args.one
        print(json.dumps(one(kind, int(systems), mode, float(size))))
        return 0
    print(f"{'cluster':<34}{'mode':<14}{'wall':>9}{'peak':>9}  simulated")
    for kind, label in (("a100", "DGX A100 fat tree"), ("h100", "DGX H100 rail-optimized")):
        for g in [int(x) for x in args.gpus.split(",") if x]:
            systems = g // 8
            rows = {}
            for mode in ("classes", "pairwise"):
                if mode == "pairwise" and g > args.pairwise_up_to:
                    rows[mode] = {"error": "not run (too slow)"}
                else:
                    rows[mode] = measure(kind, systems, mode, args.size, args.limit)
                res = rows[mode]
                shown = (f"{res['wall_s']:8.2f}s{res['peak_MB']:7.0f}MB  {res['sim_time_s'] * 1e3:.4f} ms"
                         + (f" ({res['classes']} classes)" if res.get("classes") else "")
                         if "wall_s" in res else f"  {res['error']}")
                print(f"{label + f' {g} GPUs':<34}{mode:<14}{shown}", flush=True)
            a, b = rows["classes"], rows["pairwise"]
            if "sim_time_s" in a and "sim_time_s" in b:
                print(f"{'':<34}{'':<14}same answer: relative difference "
                      f"{abs(a['sim_time_s'] - b['sim_time_s']) / b['sim_time_s']:.1e}; "
                      f"{b['wall_s'] / a['wall_s']:.0f}x faster", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
