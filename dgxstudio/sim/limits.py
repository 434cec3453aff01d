"""What a request may cost before it starts: every simulation, pipeline and training request is
checked here, at the entry points, and refused with the numbers when it is beyond reason.

The limits keep one run to about a minute and a few hundred MB on a laptop: the event engine costs
roughly 1 KB and a few microseconds per flow group, so a million groups is the ceiling. NaN,
infinite and negative parameters are refused at the edge, before any loop can spin on them.
No Qt here; the entry points pass their own error type so callers keep catching what they did.
"""

from __future__ import annotations

import math

# Estimated flow groups (one chunk moving along one step of a ring) a single collective may schedule:
# a ring all-reduce moves each chunk 2 (n - 1) steps, and each GPU holds 1/n of the data, so about
# 2 x (size / chunk + n). 1 TiB in 4 MiB chunks (524,288) took over 30 s and 3 GB before this limit.
MAX_FLOW_GROUPS = 300_000
# What a schedule may actually build, counted as it is built (``Schedule.add``): the estimate above
# knows only chunks and steps, not an algorithm's own multiples (an NVLS tree has rails x trees x
# levels groups per piece: 16 GiB over 2,048 DGX H100 reached 24 GB before the kernel killed it).
MAX_SCHEDULED_GROUPS = 3_000_000
# What a run may do, counted as it runs: the active flows summed over the events (each event re-times
# every active flow; a steady state skipped costs nothing). A tree all-reduce over 2,048 DGX H100,
# whose 16 pieces per connection never repeat, ran over an hour and took 9.8 GB before this limit
# (session 27, at 250 million). The flow-by-flow engine now re-times a flow in about 60 ns: NCCL's
# tree over 2,048 DGX H100 at 256 MiB, run unfolded, is 296 million in 18 s and 1.7 GB (folded, as
# ``simulate`` runs it, 4.3 s). With NCCL's own tree shape (``nccl_btree``) that run keeps twice the
# flows in flight of a tree whose root has two children (147,000 against 75,000 per event: its pieces
# no longer queue on the core links), 299 million at 256 MiB and 380 million at 1 GiB and 16 GiB, so
# the limit is 500 million, about 30 s of the unfolded run; the fold counts the flows it stands for.
MAX_FLOW_EVENTS = 500_000_000
# Transfers between distinct GPU pairs a schedule routes one by one (each pair keeps its own route and
# flow state): the lecture's decentralized all-reduce makes P (P - 1) of them. Over 256 GPUs (65,280)
# it took 2.4 s and 310 MB; over 512 (261,632) 12 s and 1.3 GB; over 992 (dgx1-fat-tree-124) it was
# still running after 3 minutes at 7.8 GB, and over 16,384 it reached 20 GB before it was stopped.
MAX_ROUTED_PAIRS = 100_000
# ... and the memory its distinct network states keep (each new state's rates and channel loads are kept
# for the result): that tree kept about 1 MB a state, 3.2 GB when the flow budget stopped it.
MAX_STATE_BYTES = 1_000_000_000


class TooLarge(ValueError):
    """A request refused for what it would cost (the message gives the numbers and a way out)."""
# Pipeline tasks: stages x micro-batches x model chunks, each a forward and a backward.
MAX_PIPELINE_TASKS = 200_000
MAX_MICROBATCHES = 100_000
MAX_LAYERS = 100_000
MAX_HIDDEN = 10**6
MAX_SEQ_LEN = 10**8
MAX_PARAMS = 1e16
MAX_SIZE_BYTES = 2**50        # 1 PiB
MAX_TIME_S = 1e6              # about 11 days per sample or step
MAX_REDUCE_S_PER_BYTE = 1.0   # a reduction slower than 1 byte/s is a typo
# Gradient buckets of one data-parallel all-reduce: `train --dp 16 --bucket-size 1B` listed 2.4 billion
# buckets and was killed at 23.7 GB; 1 KiB buckets (2.4 million) still ran. A trillion fp16 parameters
# in PyTorch's 25 MiB buckets are 76,000.
MAX_BUCKETS = 1_000_000


def number(value, what: str, error=ValueError, *, lo: float = 0.0, hi: float = math.inf,
           lo_open: bool = False) -> float:
    """A finite number in [lo, hi] (or (lo, hi] with ``lo_open``); anything else is ``error``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{what}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise error(f"{what}: {value!r} is not a finite number")
    if value < lo or (lo_open and value == lo) or value > hi:
        bound = f"more than {lo:g}" if lo_open else f"at least {lo:g}"
        raise error(f"{what}: {value:g} is out of range (must be {bound} and at most {hi:g})")
    return float(value)


def collective(size: float, chunk: float, gpus: int, reduce_s_per_byte: float = 0.0, error=ValueError,
               count_pieces: bool = True) -> None:
    """A collective of ``size`` bytes in ``chunk``-byte pieces over ``gpus`` GPUs. ``count_pieces``:
    the algorithm cuts the data in ``chunk`` pieces, so their count is checked here (NCCL's ring,
    tree, NVLS tree and CollNet cut it in NCCL's own slices: their schedules are counted block by
    block before each is built, ``Schedule.reserve``, and their runs by the engine's budget)."""
    number(size, "size", error, lo=0, hi=MAX_SIZE_BYTES, lo_open=True)
    number(chunk, "chunk", error, lo=0, hi=MAX_SIZE_BYTES, lo_open=True)
    number(reduce_s_per_byte, "reduction cost (s per byte)", error, lo=0, hi=MAX_REDUCE_S_PER_BYTE)
    if not count_pieces:
        return
    chunks = math.ceil(size / chunk)
    groups = 2 * (chunks + max(gpus, 1))
    if groups > MAX_FLOW_GROUPS:
        suggest = 2 ** math.ceil(math.log2(max(2 * size / (MAX_FLOW_GROUPS - 2 * max(gpus, 1)), 1)))
        raise error(f"{size:,.0f} bytes in {chunk:,.0f}-byte chunks over {gpus} GPUs is about {groups:,} "
                    f"flow groups, more than the limit of {MAX_FLOW_GROUPS:,}; use a chunk of at least "
                    f"{suggest:,} bytes or a smaller size")


def pipeline(stages: int, microbatches: int, chunks: int = 1, error=ValueError) -> None:
    for what, v in (("stages", stages), ("micro-batches", microbatches), ("model chunks", chunks)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise error(f"{what}: must be a whole number of at least 1, got {v!r}")
    if microbatches > MAX_MICROBATCHES:
        raise error(f"{microbatches:,} micro-batches is more than the limit of {MAX_MICROBATCHES:,}")
    tasks = 2 * stages * microbatches * chunks
    if tasks > MAX_PIPELINE_TASKS:
        raise error(f"{stages} stages x {microbatches:,} micro-batches x {chunks} chunks is {tasks:,} tasks, "
                    f"more than the limit of {MAX_PIPELINE_TASKS:,}")


def model(layers: int, hidden: int, seq_len: int, microbatch_size: int, params: float | None,
          efficiency: float, error=ValueError) -> None:
    for what, v, hi in (("layers", layers, MAX_LAYERS), ("hidden size", hidden, MAX_HIDDEN),
                        ("sequence length", seq_len, MAX_SEQ_LEN), ("micro-batch size", microbatch_size, 10**7)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= hi:
            raise error(f"{what}: {v!r} is out of range 1..{hi:,}")
    if params is not None:
        number(params, "parameters", error, lo=0, hi=MAX_PARAMS, lo_open=True)
    number(efficiency, "efficiency", error, lo=0, hi=1, lo_open=True)


def scaling(grad_bytes: float, sample_s: float, batch_per_gpu: int, global_batch: int, error=ValueError) -> None:
    number(grad_bytes, "gradient bytes", error, lo=0, hi=MAX_SIZE_BYTES, lo_open=True)
    number(sample_s, "sample time", error, lo=0, hi=MAX_TIME_S, lo_open=True)
    for what, v in (("batch per GPU", batch_per_gpu), ("global batch", global_batch)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 10**9:
            raise error(f"{what}: {v!r} is out of range 1..1,000,000,000")


def buckets(grad_bytes: float, bucket_bytes: float | None, error=ValueError) -> None:
    """Gradients cut into buckets of ``bucket_bytes`` (None or 0: one all-reduce), counted before any
    list of them is made."""
    if not bucket_bytes or bucket_bytes <= 0 or grad_bytes <= 0:
        return
    n = math.ceil(grad_bytes / bucket_bytes)
    if n > MAX_BUCKETS:
        from ..units import format_size

        raise error(f"--bucket-size {format_size(bucket_bytes)} cuts {format_size(grad_bytes)} of gradients per GPU "
                    f"into {n:,} buckets, more than the limit of {MAX_BUCKETS:,}: use buckets of at least "
                    f"{format_size(math.ceil(grad_bytes / MAX_BUCKETS))}")
