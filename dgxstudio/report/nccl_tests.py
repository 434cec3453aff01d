"""A simulated sweep printed as nccl-tests prints a measured one, so the two sit side by side (``diff``,
``paste``) and the tools that parse nccl-tests logs read it.

nccl-tests (github.com/NVIDIA/nccl-tests, src/common.cu) prints, per size, ``%12li  %12li  %8s  %6s  %6i``
(size in bytes, count in elements, type, reduction, root) and then, out-of-place and in-place, ``  %7s  %6.2f
%6.2f  %5s`` (time in microseconds, algbw and busbw in GB/s, the count of wrong values or N/A when data is not
checked); the time has two decimals under 100 us, one under 10,000 us and none above (as the logs of
2023-2025 print it; a 2.17.9 log keeps a digit more, "2169.01", "12681.1": the columns parse alike); the log ends with
``# Avg bus bandwidth    : %g``. The size is the whole buffer as nccl-tests counts it (all-gather: every
rank's part), which is what ``simulate --size`` takes. The simulator does not tell in-place from
out-of-place, so both columns hold the same run, and nothing is checked (#wrong N/A, as nccl-tests -c 0).
"""

from __future__ import annotations

from ..sim.tuning import PROTOCOL_LABELS   # NCCL_PROTO's own spellings: LL, LL128, Simple

WORD = {"float": 4, "int8": 1}
# nccl-tests' reduction and root columns per collective: reductions print their op, the others "none";
# rooted collectives print their root, the rest -1
REDOP = {"all-reduce": "sum", "reduce-scatter": "sum", "reduce": "sum", "all-gather": "none",
         "broadcast": "none", "all-to-all": "none"}
ROOTED = ("broadcast", "reduce")
# all_gather_perf and reduce_scatter_perf count each rank's part: 8 floats for 1,024 bytes over 32 ranks;
# alltoall_perf each peer's (1,024 bytes over 8 ranks: 32 floats, as deepseek-ai/DeepEP issue 303 prints it)
PER_RANK_COUNT = ("all-gather", "reduce-scatter", "all-to-all")
PERF_NAME = {"all-reduce": "all_reduce_perf", "all-gather": "all_gather_perf", "reduce-scatter": "reduce_scatter_perf",
             "broadcast": "broadcast_perf", "reduce": "reduce_perf", "all-to-all": "alltoall_perf"}


def time_us_text(time_us: float) -> str:
    """nccl-tests' %7s time: two decimals under 100 us, one under 10,000 us, none above."""
    return f"{time_us:7.2f}" if time_us < 100 else f"{time_us:7.1f}" if time_us < 10_000 else f"{time_us:7.0f}"


def nccl_tests_log(results, title: str, ranks: int, root_rank: int = 0, dtype: str | None = None) -> str:
    """The lines nccl-tests prints for a sweep: a comment header, a row per size, the average bus bandwidth.
    ``root_rank`` is the root's place in the GPU set (broadcast and reduce). The type is nccl-tests' default,
    float, unless a size is not a whole number of them (then int8, as `-d int8` would run it)."""
    first = results[0]
    dtype = dtype or ("float" if all(r.size_bytes % WORD["float"] == 0 for r in results) else "int8")
    coll = first.collective
    root = root_rank if coll in ROOTED else -1
    out = [f"# {PERF_NAME.get(coll, coll)}, simulated by DGX Studio: {title}",
           f"# {ranks} ranks; {'achievable' if first.options.achievable else 'peak'} link figures; "
           + ("" if first.options.nvls_enable else "NCCL_NVLS_ENABLE=0; ")   # as the measured run's job set it
           + ("" if first.options.protocol == "auto" else f"NCCL_PROTO={PROTOCOL_LABELS[first.options.protocol]}; ")
           + "in-place and out-of-place are the same simulated run; #wrong N/A (nothing checked)",
           "#",
           "#                                                              out-of-place                       in-place          ",
           "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    for r in results:
        t = time_us_text(r.time_s * 1e6)
        half = f"  {t}  {r.algbw_Bps / 1e9:6.2f}  {r.busbw_Bps / 1e9:6.2f}  {'N/A':>5}"
        count = r.size_bytes // WORD[dtype] // (ranks if coll in PER_RANK_COUNT else 1)
        out.append(f"{r.size_bytes:12d}  {count:12d}  {dtype:>8}  {REDOP.get(coll, 'none'):>6}  "
                   f"{root:6d}{half}{half}")
    average = sum(r.busbw_Bps for r in results) / len(results) / 1e9
    out += ["#", f"# Avg bus bandwidth    : {average:g} ", "#"]
    return "\n".join(out) + "\n"
