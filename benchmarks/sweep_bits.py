"""Bit-for-bit answers of the two-system all-reduce sweeps, to check that an engine change is exact.

    python benchmarks/sweep_bits.py dump before.json     # on the old code
    python benchmarks/sweep_bits.py dump after.json      # on the new code
    python benchmarks/sweep_bits.py compare before.json after.json

Each point (2 DGX A100 or 2 DGX H100; auto, ring, tree, nvls-tree, hierarchical; 1 KiB..16 GiB) keeps
its time and bus bandwidth as exact hex floats, a hash of every group's start, send and done times
and of every channel's bytes, and its event count. ``--algorithms tree,ring`` narrows the dump.
Takes about 2 minutes on a quiet machine (NCCL's tree at 2-16 MiB is most of it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator, sweep_sizes

ALGORITHMS = ("auto", "ring", "tree", "nvls-tree", "hierarchical")


def dump(path: str, algorithms: list[str]) -> None:
    out: dict[str, object] = {}
    for system in ("dgx-a100", "dgx-h100"):
        topo = build_fat_tree(2, system, rail_optimized=system == "dgx-h100")
        sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
        for algorithm in algorithms:
            t0 = time.perf_counter()
            for size in sweep_sizes(1024, 16 * 2**30):
                key = f"{system} {algorithm} {size}"
                try:
                    r = sim.run("all-reduce", algorithm, size)
                except Exception as e:  # an algorithm the system does not allow: recorded as such
                    out[key] = f"error: {e}"
                    continue
                h = hashlib.sha1()
                for a in (r.sim.group_done, r.sim.group_sent, r.sim.group_start, r.sim.channel_bytes):
                    h.update(np.ascontiguousarray(a).tobytes())
                out[key] = [r.time_s.hex(), r.busbw_Bps.hex(), h.hexdigest(), r.sim.events]
            print(f"{system} {algorithm:<12} {time.perf_counter() - t0:7.2f} s", file=sys.stderr, flush=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=0)


def compare(a_path: str, b_path: str) -> int:
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    keys = [k for k in a if k in b]
    differ = [k for k in keys if a[k] != b[k]]
    print(f"{len(keys)} points in both; {len(differ)} differ")
    for k in differ[:20]:
        x, y = a[k], b[k]
        if isinstance(x, list) and isinstance(y, list):
            tx, ty = float.fromhex(x[0]), float.fromhex(y[0])
            print(f"  {k}: time {tx!r} -> {ty!r} (relative {abs(tx - ty) / tx:.1e}), "
                  f"arrays {'same' if x[2] == y[2] else 'differ'}, events {x[3]} -> {y[3]}")
        else:
            print(f"  {k}: {x} -> {y}")
    return 1 if differ else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dump")
    d.add_argument("path")
    d.add_argument("--algorithms", default=",".join(ALGORITHMS))
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args()
    if args.what == "dump":
        dump(args.path, args.algorithms.split(","))
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
