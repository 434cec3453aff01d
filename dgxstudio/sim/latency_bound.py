"""Whether a run was latency-bound: the rule that decides if its busiest link may be called a
bottleneck.

A run's time splits in two, from the engine's own record: the time during which some flow moved
bytes (its rate-pattern segments: the size over the bandwidth the flows got) and the time during
which no byte moved on any link (a kernel launch, NCCL's per-call latency, a hop's latency paid
after the last byte left, before the next step could start). The rule: a run is *latency-bound*
when that idle part is larger than the moving part, i.e. latency takes more than half its time.
Then no link limited it, however its links rank by utilization: a 8 KiB ring all-reduce on a DGX
A100 moves bytes for 1% of its 15 us and its busiest NVLink is 0.8% busy. At 64 MiB the same ring
moves bytes 90% of the time and its busiest link is 90% busy: that link is the bottleneck.

Only the times are compared (no threshold on a link's utilization): a run held by a protocol's
per-channel ceiling moves bytes all along at below the links' capacity, and is not latency-bound.
"""

from __future__ import annotations

import numpy as np

# Latency-bound: the time with no byte moving exceeds the time with bytes moving ("dominates").
LATENCY_BOUND_IDLE_SHARE = 0.5


def moving_time_s(sim) -> float:
    """Seconds of the run during which at least one flow moved bytes (a compact result keeps it)."""
    kept = getattr(sim, "moving_s", None)
    if kept is not None:
        return kept
    rows = sim.segments[:]   # (start, end, rate pattern); a steady state's repeats are written out here
    if not rows:
        return 0.0
    seg = np.asarray(rows, dtype=float)
    return float((seg[:, 1] - seg[:, 0]).sum())


def idle_share(sim) -> float:
    """The share of the run's time during which no byte moved on any link (0 for an empty run)."""
    if sim.time_s <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - moving_time_s(sim) / sim.time_s))


def is_latency_bound(sim) -> bool:
    """Per-call and per-hop latency take more of the run than moving its bytes (see the module's rule)."""
    return idle_share(sim) > LATENCY_BOUND_IDLE_SHARE


def latency_words(sim) -> str:
    """One sentence for a latency-bound run, as the Results dock, the CLI and the report say it."""
    return (f"latency-bound: no byte moved on any link for {100 * idle_share(sim):.0f}% of the run "
            f"(per-call and per-hop latency dominate), so no link is its bottleneck")
