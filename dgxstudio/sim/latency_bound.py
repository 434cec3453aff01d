"""Whether a run's busiest link may be called its bottleneck: the rules, from the run's own record.

A run's time splits in two: the time during which some flow moved bytes (the engine's rate-pattern
segments) and the time during which no byte moved on any link (a kernel launch, NCCL's per-call
latency, a hop's latency paid after the last byte left, before the next step could start).

- *Latency-bound*: the idle part is larger than the moving part (latency takes more than half the
  run). An 8 KiB ring all-reduce on a DGX A100 moves bytes for 1% of its 15 us; its busiest NVLink
  is 0.8% busy.
- *Link-bound*: the busiest link carried bytes for at least half the run (its bytes over its
  bandwidth, the size/bandwidth part of the time, are at least half the time). A 64 MiB ring on the
  same system: 90% busy. Only then is that link called the bottleneck.
- Neither: bytes move most of the time, but below link speed, held by NCCL's per-channel protocol
  ceilings or by per-hop latency between pipelined pieces (a 256 KiB LL tree over 8 DGX A100 moves
  bytes 86% of the time, its busiest link 3.5% busy), or by steps that load different links in turn
  (a hierarchical all-reduce's reduce and broadcast inside a DGX-1: bytes move all of its 24 ms, its
  busiest NVLink 46.7% busy). No link is the bottleneck either.

"Half" is what "dominates" means here: the larger of the two parts, not a tuned figure.
"""

from __future__ import annotations

import numpy as np

DOMINATES = 0.5   # a part of the run's time dominates when it is more than half of it


def moving_time_s(sim) -> float:
    """Seconds of the run during which at least one flow moved bytes (a compact result keeps it)."""
    kept = getattr(sim, "moving_s", None)
    if kept is not None:
        return kept
    rows = sim.segments[:]   # (start, end, rate pattern); a steady state's repeats are written out here
    moving = float(np.subtract(*np.asarray(rows, dtype=float)[:, 1::-1].T).sum()) if rows else 0.0
    sim.moving_s = moving    # kept: the Results dock, the JSON and the report each ask (a run's record never changes)
    return moving


def idle_share(sim) -> float:
    """The share of the run's time during which no byte moved on any link (0 for an empty run)."""
    if sim.time_s <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - moving_time_s(sim) / sim.time_s))


def is_latency_bound(sim) -> bool:
    """Per-call and per-hop latency take more of the run than moving its bytes."""
    return idle_share(sim) > DOMINATES


def busiest_share(sim) -> float:
    """The busiest link's busy share of the run (its bytes over its bandwidth, over the run's time)."""
    top = sim.bottlenecks(1)
    return top[0]["utilization"] if top else 0.0


def is_link_bound(sim) -> bool:
    """The busiest link carried bytes for at least half the run: it is the run's bottleneck."""
    return not is_latency_bound(sim) and busiest_share(sim) >= DOMINATES


def percent(share: float) -> str:
    """A share as a whole percent, but never "100%" or "0%" for a share that is not all or nothing:
    "no byte moved for 100% of the run" read beside links 0.3% busy."""
    text = f"{100 * share:.0f}%"
    if text in ("100%", "0%") and 0.0 < share < 1.0:
        text = f"{100 * share:.1f}%"
        if text == "100.0%":
            return "over 99.9%"
        if text == "0.0%":
            return "under 0.1%"
    return text


def limit_words(sim) -> str | None:
    """Why no link is the bottleneck, in one clause (the Results dock, the CLI and the report say it);
    None when the busiest link is."""
    if is_latency_bound(sim):
        return (f"latency-bound: no byte moved on any link for {percent(idle_share(sim))} of the run "
                f"(per-call and per-hop latency dominate), so no link is its bottleneck")
    if busiest_share(sim) < DOMINATES:
        return (f"not link-bound: bytes moved {percent(1 - idle_share(sim))} of the run but below link speed "
                f"(NCCL's per-channel protocol ceilings, per-hop latency between pipelined pieces, or steps that "
                f"load different links in turn); the busiest "
                f"link was busy {100 * busiest_share(sim):.1f}% of it, so no link is its bottleneck")
    return None
