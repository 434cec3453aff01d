"""What NCCL's own source says about one GB200 NVL72 rack's NVLS all-reduce, before any model change.

The row: coreweave/nccl-tests PR #43 (NCCL 2.25.1, 72 GPUs, 512 MiB-8 GiB) measures 586-839 GB/s busbw
where the simulator gives 1031-1063 (NVLS), while 8 H100/H200/H800 and 8 B200 NVLS fit.
``gb200_nvl72_findings.json`` lists each candidate with its source; this script recomputes the figures
the candidates rest on, from the constants the JSON holds (each with its NCCL file and line):

- NCCL 2.25.1's NVLS graph search and cost model on 8 and 72 GPUs: which algorithm that version picks;
- NCCL's NVLS chunk rule and the iteration (channels x heads x chunk) a call pipelines by;
- the measured fixed cost per call (fidelity_offfile.py's large-size fit) in iteration-times, on the
  rack and on one 8x H100 node;
- NCCL 2.28's quantized NVLS estimate, weighed as a physical rate against the single-system rows;
- ``--rows``: the rack simulated now, by NCCL's choice and with the ring forced.

Nothing here feeds the simulator.

    python benchmarks/gb200_nvl72_findings.py [--rows]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))  # fidelity_offfile, also when this file is loaded from elsewhere

from dgxstudio.sim import tuning as T  # noqa: E402
from dgxstudio.sim.nccl_p2p import p2p_data  # noqa: E402
from dgxstudio.sim.results import busbw_factor  # noqa: E402
import fidelity_offfile as F  # noqa: E402

DATA = HERE / "gb200_nvl72_findings.json"
MiB = 2**20
GiB = 2**30


def nvls_head_speed(speeds: list[float], heads: int, total_GBps: float, head_multiplier: int = 2) -> float:
    """The per-head bandwidth NCCL's NVLS graph search settles on (search.cc ncclTopoCompute and
    ncclTopoSearchTryNvls): it starts at the first speed s of the array with s x heads <= the GPU's
    NVLink total, and lowers it until every head fits, each taking s on every GPU and head_multiplier
    x s on its own: (heads + head_multiplier - 1) x s <= total. 0 if none fits."""
    for s in speeds:
        if s * heads > total_GBps:
            continue
        if (heads + head_multiplier - 1) * s <= total_GBps:
            return s
    return 0.0


def model_2_25(n: dict, ranks: int) -> dict:
    """NCCL 2.25.1's NVLS and ring estimates on one NVLink domain of ``ranks`` B200 (algorithm
    bandwidth in GB/s, latency in us): NVLS = heads x speed x 5/6, the ring at most the GPU's NVLink
    x ranks / nsteps; NVLS's latency hwLat 25 us, the ring's base + nsteps x hop."""
    total = n["nvlink_GBps_per_link"] * n["nvlinks_per_gpu"]
    heads = min(n["max_nvls_arity"], ranks)
    speed = nvls_head_speed(n["sm100_speeds_intra_GBps"], heads, total, n["head_multiplier"])
    steps = 2 * (ranks - 1)
    return {"heads": heads, "speed_GBps": speed, "nvls_algbw_GBps": heads * speed * n["nvls_ratio"],
            "ring_algbw_max_GBps": total * ranks / steps, "nvls_latency_us": n["nvls_latency_us"],
            "ring_latency_us": n["ring_base_us"] + steps * n["ring_hop_us"]}


def model_time_us(algbw_GBps: float, latency_us: float, size: float) -> float:
    return latency_us + size / (algbw_GBps * 1e3)


def nvls_chunk(n: dict, size: float, channels: int, heads: int) -> int:
    """NCCL's NVLS all-reduce chunk (enqueue.cc, one NVLink domain): min(step, NVLS_CHUNKSIZE), then
    halved by the chunk rule while the call is small against channels x heads concurrent chunks."""
    chunk = min(int(n["step_bytes"]), int(n["nvls_chunk_bytes"]))
    ops = channels * heads
    for k, c in n["chunk_rule"]:
        if size < k * ops * chunk and chunk > c:
            chunk = int(c)
    return chunk


def iteration_bytes(n: dict, size: float, channels: int, heads: int) -> int:
    """One NVLS iteration of the whole call: every channel's nHeads x chunk (all_reduce.h loopCount)."""
    return channels * heads * nvls_chunk(n, size, channels, heads)


def measured_rows(source: dict) -> list[dict]:
    """A source's measured points as fidelity_offfile's rows (for its large-size fit)."""
    ranks = int(source.get("ranks", 8))
    return [{"size": int(s), "measured": float(b), "ranks": ranks, "collective": "all-reduce"}
            for s, b, _t in source["points"]]


def fixed_cost(source: dict, lo: int, hi: int | None = None) -> tuple[float, float]:
    """The measurement's time = a + size/B over points in [lo, hi]: (a in us, B as algbw GB/s)."""
    rows = [r for r in measured_rows(source) if hi is None or r["size"] <= hi]
    a, bus = F.large_size_fit(rows, lo)
    return a * 1e6, bus / busbw_factor("all-reduce", rows[0]["ranks"])


def pairwise_fixed_costs(source: dict, lo: int, hi: int) -> list[float]:
    """The fixed cost (us) of each pair of consecutive measured points in [lo, hi], from their printed times."""
    pts = [(s, t) for s, _b, t in source["points"] if lo <= s <= hi]
    out = []
    for (s0, t0), (s1, t1) in zip(pts, pts[1:]):
        per_byte = (t1 - t0) / (s1 - s0)
        out.append(t0 - s0 * per_byte)
    return out


def nvls_efficiency(generation: str) -> float:
    """NCCL 2.28's nvlsEfficiency of a generation (resources/nccl_tuning.json, with its tuning.cc lines)."""
    return float(T.tuning_data()["generations"][generation]["nvls_efficiency"])


def quantized_2_28_busbw(n: dict, ranks: int, generation: str, efficiency: float) -> float:
    """NCCL 2.28's NVLS estimate in nccl-tests' busbw (tuning.cc v2.28.9-1:285-301): heads x speed x
    nvlsEfficiency x (heads - 1)/heads x 2, converted by nRanks / nsteps and back."""
    if generation == "hopper":
        total, speeds = n["sm90_nvlink_GBps_per_link"] * n["nvlinks_per_gpu"], n["sm90_speeds_intra_GBps"]
    else:   # (SM100_NVLINK_BW as 2.27 on give it: nccl_p2p.json nvlink_bw_Bps)
        total, speeds = p2p_data()["nvlink_bw_Bps"]["100"] / 1e9 * n["nvlinks_per_gpu"], n["sm100_speeds_intra_GBps"]
    heads = min(n["max_nvls_arity"], ranks)
    speed = nvls_head_speed(speeds, heads, total, n["head_multiplier"])
    return heads * speed * efficiency * (heads - 1) / heads * 2


def sources() -> dict:
    return {s["key"]: s for s in F.load_sources(F.DEFAULT_DATA)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="simulate the rack now (NCCL's choice and the ring forced)")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    n = data["nccl_2_25"]
    src = sources()
    rack = src[data["rows"]["rack"]]
    print("NCCL 2.25.1's search and model on one NVLink domain of B200:")
    for ranks in (8, 72):
        m = model_2_25(n, ranks)
        t_nvls = model_time_us(m["nvls_algbw_GBps"], m["nvls_latency_us"], 512 * MiB)
        t_ring = model_time_us(m["ring_algbw_max_GBps"], m["ring_latency_us"], 512 * MiB)
        print(f"  {ranks:2d} GPUs: {m['heads']} heads at {m['speed_GBps']:.0f} GB/s -> NVLS {m['nvls_algbw_GBps']:.1f} "
              f"GB/s algbw, {m['nvls_latency_us']:.0f} us; ring at most {m['ring_algbw_max_GBps']:.1f}, "
              f"{m['ring_latency_us']:.1f} us; at 512 MiB NVLS {t_nvls:.0f} us, ring >= {t_ring:.0f} us")
    print("\nNVLS chunk and iteration (channels x heads x chunk):")
    for label, size, ch, heads in (("rack, 512 MiB", 512 * MiB, n["nvls_channels_sm100"], 32),
                                   ("rack, 4 GiB", 4 * GiB, n["nvls_channels_sm100"], 32),
                                   ("rack, 8 GiB", 8 * GiB, n["nvls_channels_sm100"], 32),
                                   ("8 B200, 1 GiB", 1 * GiB, n["nvls_channels_sm100"], 8),
                                   ("8 H100, 1 GiB", 1 * GiB, n["nvls_channels_sm90"], 8)):
        print(f"  {label:15s} chunk {nvls_chunk(n, size, ch, heads) // 1024:4d} KiB, iteration "
              f"{iteration_bytes(n, size, ch, heads) / MiB:5.0f} MiB")
    a, algbw = fixed_cost(rack, 512 * MiB)
    it = iteration_bytes(n, 1 * GiB, n["nvls_channels_sm100"], 32) / (algbw * 1e3)
    pairs = pairwise_fixed_costs(rack, 512 * MiB, 2 * GiB)
    print(f"\nrack (fit >= 512 MiB): a = {a:.0f} us, {algbw:.1f} GB/s algbw; pairwise a at 512 MiB-2 GiB "
          f"{min(pairs):.0f}-{max(pairs):.0f} us; one iteration {it:.0f} us: a = {a / it:.1f} iterations "
          f"({min(pairs) / it:.1f}-{max(pairs) / it:.1f} pairwise)")
    h = src[data["rows"]["one_node_h100"]]
    ha, halgbw = fixed_cost(h, 1 * GiB)
    hpairs = pairwise_fixed_costs(h, 1 * GiB, 8 * GiB)
    hit = iteration_bytes(n, 1 * GiB, n["nvls_channels_sm90"], 8) / (halgbw * 1e3)
    print(f"8 H100 (fit >= 1 GiB): a = {ha:.0f} us, {halgbw:.1f} GB/s algbw; pairwise {min(hpairs):.0f}-"
          f"{max(hpairs):.0f} us; one iteration {hit:.0f} us: {min(hpairs) / hit:.1f}-{max(hpairs) / hit:.1f} iterations")
    print("\nNCCL 2.28's quantized NVLS estimate (busbw) against the single-system rows:")
    for key in data["rows"]["single_system_nvls"]:
        s = src[key]
        ranks = int(s["ranks"])
        q = quantized_2_28_busbw(n, ranks, "hopper", nvls_efficiency("hopper"))
        print(f"  {key:28s} {ranks} GPUs: {q:6.1f} against {s['points'][0][1]:.1f} measured ({q / s['points'][0][1] - 1:+.1%})")
    b = quantized_2_28_busbw(n, 8, "blackwell", nvls_efficiency("blackwell"))
    r = quantized_2_28_busbw(n, 72, "blackwell", nvls_efficiency("blackwell"))
    print(f"  8 B200: {b:.1f} against {data['rows']['b200_8gpu_busbw_GBps']:.0f}+; rack: {r:.1f} against "
          f"{rack['points'][3][1]:.2f} / {rack['points'][4][1]:.2f} at 4 / 8 GiB")
    if args.rows:
        print("\nrack simulated now:")
        for algorithm in (None, "ring"):
            s = dict(rack)
            if algorithm:
                s["simulate_algorithm"] = algorithm
            for row in F.compare(s, {}, {}):
                print(f"  {row['size'] / MiB:6.0f} MiB {row['measured']:8.2f} {row['simulated']:8.2f} "
                      f"{row['error']:+6.1%}  {row['choice']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
