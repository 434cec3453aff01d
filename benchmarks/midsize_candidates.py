"""What each candidate mechanism predicts for issue #13's two mid-size bands, before any model change.

Band 1: one 8x A100 NVSwitch node (NCCL 2.18.5, all_reduce_perf -g 8) measures 20-30% below the
simulator from 8 to 128 MiB (Azure ND A100 v4 in the calibration file; stas00's sweep off-file).
Band 2: 4 x 8 H100 over InfiniBand (Voltage Park, NCCL 2.24.3) measures about half the simulator's
figure from 2 to 16 MiB (all-reduce) and 4 to 32 MiB (all-gather).

For band 1 the script prints, per size, the excess time the measurements carry over the simulator
and what NCCL 2.18.5's ring structure says about that size (loops, slices, channels, threads: numbers
from ``midsize_candidates.json``, each with its file and line at the tag), the per-slice or per-step
cost a fixed-cost candidate would need, and the busbw two further candidates give (the simulator's
tree forced; the ring scaled by NCCL's medium-size tree correction). For band 2 it prints the
simulator forced to each algorithm and protocol beside the measurement, and which pair NCCL's cost
model picks with and without LL128, with NCCL master's constants (the simulator's) and with 2.24.3's
NVLS-tree latency. Nothing here feeds the simulator.

    python benchmarks/midsize_candidates.py [--band 1|2|both]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))  # fidelity_offfile, also when this file is loaded from elsewhere

from dgxstudio.sim import tuning as T  # noqa: E402
from dgxstudio.sim.results import busbw_factor  # noqa: E402
from dgxstudio.sim.run import SimOptions, Simulator  # noqa: E402
import fidelity_offfile as F  # noqa: E402

DATA = HERE / "midsize_candidates.json"
MiB = 2**20


def _time_us(size: float, busbw_GBps: float, collective: str, ranks: int) -> float:
    """nccl-tests' time from its busbw: busbw = size / time x factor."""
    return size * busbw_factor(collective, ranks) / (busbw_GBps * 1e9) * 1e6


def _source(key: str) -> dict:
    return next(s for s in F.load_sources(F.DEFAULT_DATA) if s["key"] == key)


def _simulator(source: dict, protocol: str = "auto") -> Simulator:
    topo = F.build_machine(source)
    gpus = [d.id for d in topo.gpus()]
    return Simulator(topo, gpus, SimOptions(achievable=True, gpus_per_thread=int(source["gpus_per_thread"]),
                                            protocol=protocol))


def ring_structure(size: float, channels: int, ranks: int, d: dict) -> dict:
    """NCCL 2.18.5's ring all-reduce with Simple for one call: loops, chunk and slices per channel."""
    chunk = d["simple_buffer_bytes"] / d["nccl_steps"] * d["allreduce_chunk_steps"]
    loop = channels * ranks * chunk
    loops = math.ceil(size / loop - 1e-12)
    first = min(chunk, size / (channels * ranks))
    per_chunk = d["allreduce_chunk_steps"] // d["allreduce_slice_steps"]
    steps = 2 * (ranks - 1)
    return {"loops": loops, "chunk": first, "slices": loops * steps * per_chunk, "steps": loops * steps}


def simple_channels(size: float, channels: int, d: dict) -> tuple[int, int]:
    """getAlgoInfo's channels and threads for ring Simple (the sync warp included)."""
    nc, nt = channels, d["simple_threads"]
    while size < nc * nt * d["simple_thread_threshold_bytes"]:
        if nc >= 2:
            nc -= 1
        elif nt % 128 == 0:
            nt //= 2
        else:
            break
    return nc, max(nt + 32, 96)  # enqueue.cc:1214-1219: a sync warp for ring Simple, at least 3 warps


def band1(data: dict) -> str:
    d = data["a100_one_node"]
    azure = F.azure_sweep(F.DEFAULT_CSV)
    stas = {int(p[0]): p[1] for p in _source("stas00-a100")["points"]}
    src = {"gpus_per_thread": 8}
    sim = _simulator(src)
    tree = _simulator(src, "simple")
    ranks = len(sim.gpus)
    corr = d["tree_correction_simple"]
    head = (f"Band 1: 8x A100, one node, all-reduce (NCCL {d['nccl'].split()[0]}); busbw GB/s, times us\n"
            f"{'size':>8} {'Azure':>6} {'stas00':>6} {'sim':>6} {'choice':>16} | {'excess us':>11} | "
            f"{'loops':>5} {'chunk KiB':>9} {'slices':>6} {'ch x thr':>8} | {'us/slice':>8} {'us/step':>7} | "
            f"{'tree':>6} {'err':>6} | {'ring x corr':>11} {'err':>6}")
    lines = [head, "-" * len(head.splitlines()[1])]
    for k in range(22, 31):
        size = 2**k
        r = sim.run("all-reduce", "auto", size)
        bus = r.busbw_Bps / 1e9
        t_sim = r.time_s * 1e6
        ex = [(_time_us(size, m, "all-reduce", ranks) - t_sim) if m else None for m in (azure.get(size), stas.get(size))]
        st = ring_structure(size, r.channels, ranks, d)
        nc, nt = simple_channels(size, r.channels, d)
        known = [e for e in ex if e is not None]
        mean_ex = sum(known) / len(known) if known else float("nan")
        tr = tree.run("all-reduce", "tree", size).busbw_Bps / 1e9
        log_size = int(math.log2(size / 64))
        scaled = bus * (corr[log_size] if log_size < len(corr) else 1.0)
        ref = azure.get(size) or stas.get(size)

        def fmt(v, w=6, p=1):
            return f"{v:{w}.{p}f}" if v is not None else f"{'-':>{w}}"
        lines.append(f"{size / MiB:7.0f}M {fmt(azure.get(size))} {fmt(stas.get(size))} {bus:6.1f} "
                     f"{r.algorithm + '/' + r.protocol + ' ' + str(r.channels) + 'ch':>16} | "
                     f"{fmt(ex[0], 5, 0)}/{fmt(ex[1], 5, 0)} | {st['loops']:5d} {st['chunk'] / 1024:9.0f} "
                     f"{st['slices']:6d} {nc:>3}x{nt:<4} | {mean_ex / st['slices']:8.2f} {mean_ex / st['steps']:7.2f} | "
                     f"{tr:6.1f} {tr / ref - 1:+6.1%} | {scaled:11.1f} {scaled / ref - 1:+6.1%}")
    lines.append("excess: measured time minus simulated (Azure/stas00); us/slice, us/step: what a fixed cost per "
                 "Simple slice or per ring step would need to be to make the mean excess (constant if it were one)")
    return "\n".join(lines)


def nvls_tree_latency_2243(shape: T.CallShape, d: dict) -> float:
    """NCCL 2.24.3's NVLS-tree latency (s): its own NVLink and network hop terms."""
    return d["nvls_tree_base_s"] + d["nvls_tree_nvlink_hop_s"] + 2 * int(math.log2(shape.nodes)) * d["nvls_tree_net_hop_s"]


def model_pick(shape: T.CallShape, size: float, algos: tuple, protos: tuple, d: dict | None) -> str:
    """NCCL's pick with the simulator's (master's) constants, or with 2.24.3's NVLS-tree latency when ``d``
    (its bandwidth terms need the NVLS graph's bwInter, which the simulator does not carry: master's kept)."""
    _, est = T.choose(shape, size, algos, protos)
    if d is not None and ("nvls-tree", "simple") in est:
        est[("nvls-tree", "simple")] += nvls_tree_latency_2243(shape, d) - T.model_latency(shape, "nvls-tree", "simple")
    best = min(est, key=lambda k: est[k])
    return f"{best[0]}/{best[1]}"


def band2(data: dict) -> str:
    d = data["h100_four_nodes"]
    out = []
    cases = (("vpbench-h100-4node", "all-reduce", ("tree", "ring", "nvls-tree"),
              (("tree", "ll128"), ("tree", "ll"), ("tree", "simple"), ("nvls-tree", "simple"), ("ring", "ll128"))),
             ("vpbench-h100-4node-allgather", "all-gather", ("ring", "nvls"),
              (("ring", "ll128"), ("ring", "ll"), ("ring", "simple"))))
    for key, coll, algos, forced in cases:
        source = _source(key)
        sims = {p: _simulator(source, p) for p in ("auto", "ll", "ll128", "simple")}
        shape = sims["auto"].call_shape(coll)
        head = (f"Band 2: {source['label']}, {coll}; busbw GB/s (error against the measurement)\n"
                f"{'size':>8} {'measured':>15} | {'simulated now':>28} | "
                + " | ".join(f"{a + '/' + p:>16}" for a, p in forced)
                + f" | {'pick: master':>18} {'no LL128':>17} | {'2.24.3':>17} {'no LL128':>17}")
        lines = [head, "-" * len(head.splitlines()[1])]
        for size, measured, time_us in source["points"]:
            if not 256 * 1024 <= size <= 256 * MiB:
                continue
            r = sims["auto"].run(coll, "auto", size)
            now = r.busbw_Bps / 1e9
            cells = []
            for a, p in forced:
                b = sims[p].run(coll, a, size).busbw_Bps / 1e9
                cells.append(f"{b:7.1f} ({b / measured - 1:+6.1%})")
            picks = [model_pick(shape, size, algos, protos, v)
                     for v in (None, d) for protos in (("ll", "ll128", "simple"), ("ll", "simple"))]
            lines.append(f"{size / MiB:7.2f}M {measured:6.1f} ({time_us:6.0f}us) | "
                         f"{r.algorithm + '/' + r.protocol:>17} {now:6.1f} ({now / measured - 1:+6.1%}) | "
                         + " | ".join(cells) + f" | {picks[0]:>18} {picks[1]:>17} | {picks[2]:>17} {picks[3]:>17}")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--band", choices=("1", "2", "both"), default="both")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    if args.band in ("1", "both"):
        print(band1(data), flush=True)
        print()
    if args.band in ("2", "both"):
        print(band2(data), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
