"""Where the simulated NVLS tree over 248 x 8 H200 spends its time, against NCCL's source and model.

Issue #13's off-file row NVIDIA/nccl-tests #283 (248 x 8 H200, all-reduce 512 MiB, NCCL's default,
~350 GB/s busbw measured) simulates at 264 GB/s with the NVLS tree since session 36 capped each
network pair at NCCL's per-head ceiling. ``nvls_tree_fill_findings.json`` holds what was compared;
this script recomputes it:

- NCCL's side, from its source as the simulator ports it: the chunk (enqueue.cc), the loops each
  channel runs, the double binary tree's depth (trees.cc), the network hop latency and the latency
  term of NCCL's own model (tuning.cc);
- the simulated run's time line: the first piece's NVLS reduce, its way up and down the trees and
  its multicast, then one steady interval per further piece; the first piece's way through the
  trees recomputed from the pair cap, the piece and the hop latency;
- ``--what-if``: the same run with one thing taken away at a time (the pair cap, the network hop
  latency, half the piece), tuning functions replaced for the run only.

Nothing here feeds the simulator.

    python benchmarks/nvls_tree_fill_findings.py [--what-if]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from dgxstudio.model.fabrics import build_fat_tree  # noqa: E402
from dgxstudio.sim import tuning as T  # noqa: E402
from dgxstudio.sim.nccl_btree import btree_parent  # noqa: E402
from dgxstudio.sim.results import SimOptions  # noqa: E402
from dgxstudio.sim.run import Simulator  # noqa: E402

DATA = HERE / "nvls_tree_fill_findings.json"


def btree_depth(nodes: int) -> int:
    """Levels below the root of NCCL's binary tree over ``nodes`` (trees.cc ncclGetBtree; the second
    tree of the pair mirrors or shifts it and has the same depth)."""
    best = 0
    for r in range(nodes):
        d, j = 0, r
        while (j := btree_parent(nodes, j)) >= 0:
            d += 1
        best = max(best, d)
    return best


def nccl_side(size: float, nodes: int, channels: int, heads: int) -> dict:
    """The NVLS tree's pipeline as NCCL's source sets it, and its own model's latency term."""
    chunk = T.nvls_tree_chunk_bytes(size, nodes, channels, heads)
    loop = channels * heads * chunk
    hop = T.hop_latency("net", "nvls-tree", "simple")
    intra = T.hop_latency("nvlink", "nvls-tree", "simple")
    log2i = int(math.floor(math.log2(nodes)))
    return {"chunk_bytes": chunk, "loop_bytes": loop, "loops_per_channel": math.ceil(size / loop),
            "tree_depth": btree_depth(nodes), "net_hop_latency_s": hop,
            "model_latency_s": intra + 2 * log2i * hop, "model_latency_hops": 2 * log2i}


def machine(systems: int, system: str):
    topo = build_fat_tree(systems, system, rail_optimized=True)
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))


def timeline(result) -> dict:
    """The run's time line: the first piece (reduce done, trees done, multicast done), the steady
    interval between the last pieces' multicasts, and the time they add up to."""
    sim, groups = result.sim, result.schedule.groups
    firsts: dict[str, float] = {}
    multicast_done: dict[int, float] = {}
    for gid, (_, meta) in enumerate(groups.patterns_and_metas()):
        phase, j = meta.get("phase"), meta.get("piece")
        if phase == "nvls-multicast":
            multicast_done[j] = max(multicast_done.get(j, 0.0), float(sim.group_done[gid]))
        if j == 0 and phase in ("nvls-reduce", "join"):
            name = groups[gid].name
            key = "reduce_done_s" if phase == "nvls-reduce" else (
                "trees_done_s" if name.startswith("trees done") else None)
            if key:
                firsts[key] = max(firsts.get(key, 0.0), float(sim.group_done[gid]))
    n = len(multicast_done)
    last = [multicast_done[j] for j in range(n)]
    interval = (last[-1] - last[n // 2]) / (n - 1 - n // 2)
    return {"pieces": n, **firsts, "first_piece_done_s": last[0], "steady_interval_s": interval,
            "time_s": result.time_s, "first_plus_steady_s": last[0] + (n - 1) * interval}


def fill_arithmetic(sim: Simulator, size: float, nch: int) -> dict:
    """The first piece's way up and down the trees as the schedule builds it: every level moves a
    tree's share of the piece at the pair cap, after the network hop latency."""
    shape = sim.call_shape("all-reduce")
    p = len(sim.channel_plan().systems[0])
    heads = T.nvls_heads(shape)
    cap = T.nvls_tree_head_algbw_Bps(shape) * heads / (2 * p)
    side = nccl_side(size, shape.nodes, nch, heads)
    n = side["loops_per_channel"]
    share = size / n / p / 2
    level = share / cap + side["net_hop_latency_s"]
    return {"pair_cap_Bps": cap, "tree_share_bytes": share, "level_s": level,
            "trees_s": 2 * side["tree_depth"] * level, "steady_s": n * share / cap}


@contextmanager
def what_if(name: str):
    """Run with one of NCCL's figures taken away (tuning functions replaced, then restored)."""
    saved = {k: getattr(T, k) for k in ("nvls_tree_head_algbw_Bps", "hop_latency", "nvls_tree_chunk_bytes")}
    hop = saved["hop_latency"]
    chunk = saved["nvls_tree_chunk_bytes"]
    try:
        if "no-cap" in name:
            T.nvls_tree_head_algbw_Bps = lambda shape: math.inf
        if "no-net-latency" in name:
            T.hop_latency = lambda hw, algo, proto: 0.0 if (hw, algo) == ("net", "nvls-tree") else hop(hw, algo, proto)
        if "half-chunk" in name:
            T.nvls_tree_chunk_bytes = lambda *a: chunk(*a) // 2
        yield
    finally:
        for k, v in saved.items():
            setattr(T, k, v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--what-if", action="store_true", help="also run each what-if of the JSON")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    case = data["case"]
    sim = machine(case["systems"], case["system"])
    size = float(case["size_bytes"])
    r = sim.run("all-reduce", "nvls-tree", size)
    shape = sim.call_shape("all-reduce")
    side = nccl_side(size, shape.nodes, r.channels, T.nvls_heads(shape))
    print(f"{case['systems']} x {case['system']}, {size / 2**20:.0f} MiB: {r.algorithm}/{r.protocol} "
          f"{r.channels}ch, {r.busbw_Bps / 1e9:.2f} GB/s busbw, {r.time_s * 1e6:.1f} us")
    print("NCCL's source:", json.dumps(side))
    tl = timeline(r)
    print("time line (us):", {k: round(v * 1e6, 2) if k.endswith("_s") else v for k, v in tl.items()})
    fa = fill_arithmetic(sim, size, r.channels)
    print("first piece's trees from the cap:", {k: round(v * 1e6, 2) if k.endswith("_s") else round(v / 1e9, 3)
                                                if k.endswith("Bps") else v for k, v in fa.items()})
    est = r.model_estimates.get("nvls-tree/Simple")
    if est:
        print(f"NCCL's model: {est * 1e6:.1f} us = {side['model_latency_s'] * 1e6:.1f} us latency "
              f"+ {(est - side['model_latency_s']) * 1e6:.1f} us of data, no fill term")
    if args.what_if:
        for w in data["what_ifs"]:
            with what_if(w["id"]):
                rw = machine(case["systems"], case["system"]).run("all-reduce", "nvls-tree", size)
            print(f"what if {w['id']:<28} {rw.busbw_Bps / 1e9:7.2f} GB/s busbw, {rw.time_s * 1e6:8.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
