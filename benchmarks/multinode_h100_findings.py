"""What each candidate mechanism predicts for issue #13's multi-node H100 rows, before any model change.

The rows: off-file sweeps on 2 and 4 DGX H100-like systems over NDR InfiniBand or 400 GbE RoCE
(`fidelity_offfile.json`) measure the ring at 320-331 GB/s busbw (80-83% of 8 x 50 GB/s) where the
simulator gives 376, and the two-system NVLS tree at 430-441 where it gave 522 (459 since NCCL 2.28's
per-head ceiling, perChMaxNVLSTreeBw, binds in the schedule). The rows that fit
(2 x 8 B200 690 vs 702, 248 x 8 H200 350 vs 302, the calibration file's 2-node A100 rows) bound what a
mechanism may move. ``multinode_h100_findings.json`` lists each candidate with its source; this script
recomputes what the candidates that can be simulated predict:

- ``--rows``: every row at 64 MiB and above, simulated now and with each catalog what-if the JSON names
  (a link type's achievable efficiency replaced for the run, the built-in catalog untouched);
- the NVLS tree's warp split: NCCL's all_reduce.h arithmetic for the warps of each copy group, and the
  window of two-system busbw it allows given the single-node NVLS sweeps (5-8 GPUs) it must not move.

Nothing here feeds the simulator.

    python benchmarks/multinode_h100_findings.py [--rows]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))  # fidelity_offfile, also when this file is loaded from elsewhere

from dgxstudio.model import catalog as C  # noqa: E402
from dgxstudio.sim.results import busbw_factor  # noqa: E402
import fidelity_offfile as F  # noqa: E402

DATA = HERE / "multinode_h100_findings.json"
MiB = 2**20


def nvls_warps(d: dict, nranks: int, tree: bool, has_up: bool) -> dict[str, int]:
    """Warps of each group of NCCL's NVLS (tree=False) or NVLS-tree all-reduce channel, without user
    buffer registration (nccl-tests' default), as all_reduce.h splits NCCL_MAX_NTHREADS / WARP_SIZE."""
    total = d["max_threads"] // d["warp_size"]
    if tree:
        bcast = d["tree_bcast_warps_up"] if has_up else 0
        reduce = d["tree_reduce_warps_up"] if has_up else (
            d["reduce_warps_small"] if nranks <= d["small_ranks"] else d["reduce_warps_large"])
    else:  # one system: no network, no 'out'
        bcast = 0
        reduce = d["reduce_warps_small"] if nranks <= d["small_ranks"] else d["reduce_warps_large"]
    return {"scatter": (total - reduce - bcast + 1) >> 1, "gather": (total - reduce - bcast) >> 1,
            "reduce": reduce, "bcast": bcast}


def per_warp_floor(d: dict, singles: list[dict]) -> tuple[float, str]:
    """The least per-warp copy rate (algbw bytes/s per gather warp per channel) that lets every
    single-system NVLS sweep reach what it measured: copies that bound there would show."""
    best, key = 0.0, ""
    for s in singles:
        ranks = int(s["ranks"])
        algbw = s["busbw_GBps"] * 1e9 / busbw_factor("all-reduce", ranks)
        w = nvls_warps(d, ranks, tree=False, has_up=False)["gather"]
        rate = algbw / (w * d["channels"])
        if rate > best:
            best, key = rate, s["key"]
    return best, key


def two_system_window(d: dict, singles: list[dict]) -> dict:
    """Two-system NVLS-tree busbw if the gather copies bind on the channels that have a tree parent
    (half of them on each system: connect.cc gives channel c tree c % 2): from the per-warp floor the
    single-system sweeps allow up to the single-system NVLS figure itself (where copies no longer bind)."""
    floor, key = per_warp_floor(d, singles)
    w_up = nvls_warps(d, 16, tree=True, has_up=True)["gather"]
    eight = next(s for s in singles if int(s["ranks"]) == 8)
    nvlink_algbw = eight["busbw_GBps"] * 1e9 / busbw_factor("all-reduce", 8)
    f16 = busbw_factor("all-reduce", 16)
    return {"per_warp_floor_GBps": floor / 1e9, "floor_from": key, "gather_warps_up": w_up,
            "low_GBps": floor * w_up * d["channels"] * f16 / 1e9, "high_GBps": nvlink_algbw * f16 / 1e9}


def catalog_with(overrides: dict[str, float]) -> C.Catalog:
    """The process catalog with some link types' achievable efficiency replaced (a what-if)."""
    base = C.default_catalog()
    types = dict(base.link_types)
    for tid, eff in overrides.items():
        types[tid] = dataclasses.replace(types[tid], achievable_efficiency=float(eff))
    return C.Catalog(base.parts, types, base.version + "+what-if", [])


def simulate_rows(keys: list[str], min_size: int, overrides: dict[str, float] | None = None,
                  algorithm: str | None = None) -> dict:
    """{(source key, size): simulated busbw GB/s} at sizes >= min_size, under a catalog what-if (with
    ``algorithm``, that one rather than the source's)."""
    sources = {s["key"]: s for s in F.load_sources(F.DEFAULT_DATA)}
    saved = C.default_catalog()
    if overrides:
        C.set_default_catalog(catalog_with(overrides))
    try:
        out = {}
        for k in keys:
            s = dict(sources[k])
            s["points"] = [p for p in s["points"] if p[0] >= min_size]
            if algorithm is not None:
                s["simulate_algorithm"] = algorithm
            for r in F.compare(s, {}, {}):
                out[(k, r["size"])] = (r["measured"], r.get("simulated"), r.get("choice", r.get("refused", "")))
        return out
    finally:
        C.set_default_catalog(saved)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="simulate every row now and under each what-if")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    d = data["nvls_warp_split"]
    print("NCCL all_reduce.h warp split (no registration), warps per channel:")
    for label, n, tree, up in (("NVLS, 8 GPUs", 8, False, False), ("NVLS, 5-6 GPUs", 6, False, False),
                               ("NVLS tree, root channel", 16, True, False),
                               ("NVLS tree, channel with a parent", 16, True, True)):
        print(f"  {label:34s} {nvls_warps(d, n, tree, up)}")
    win = two_system_window(d, d["single_system_nvls"])
    print(f"  per-warp copy floor from the single-system sweeps: {win['per_warp_floor_GBps']:.2f} GB/s "
          f"({win['floor_from']}); two systems if the {win['gather_warps_up']} gather warps bind: "
          f"{win['low_GBps']:.0f} to {win['high_GBps']:.0f} GB/s busbw")
    if args.rows:
        keys = data["rows"]["sources"]
        min_size = int(data["rows"]["min_size"])
        runs = {"now": simulate_rows(keys, min_size)}
        for c in data["candidates"]:
            if c.get("what_if"):
                runs[c["id"]] = simulate_rows(keys, min_size, c["what_if"])
        names = list(runs)
        print("\n" + f"{'source':32s} {'size':>9s} {'measured':>9s} " + " ".join(f"{n[:22]:>22s}" for n in names))
        for (k, size), (measured, _sim, choice) in runs["now"].items():
            cells = []
            for n in names:
                sim = runs[n][(k, size)][1]
                cells.append(f"{sim:8.1f} {sim / measured - 1:+6.1%}      " if sim else f"{'refused':>22s}")
            print(f"{k:32s} {size / MiB:7.0f}Mi {measured:9.2f} " + " ".join(cells) + f"  {choice}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
