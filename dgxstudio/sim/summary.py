"""What a session keeps of a run it no longer shows.

A finished run carries its whole record: every transfer group, flow ends, segments and rate
patterns, the routes. The GUI needs that while the run is on screen (plots, replay); a report needs
only the figures, the busiest links and the delivered-bytes curve. ``summarize`` keeps those and
drops the rest, so a session of hundreds of runs stays small.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

KEPT_BOTTLENECKS = 10        # the most any report or results file asks for
MAX_DELIVERED_POINTS = 512   # the report draws the curve a few hundred pixels wide


@dataclass
class SimSummary:
    """Stands in for a ``SimResult`` where only figures are read (reports, results files)."""

    time_s: float
    delivered: list[tuple[float, float]]
    top: list[dict]
    events: int
    wall_s: float
    summary: bool = True

    def bottlenecks(self, top: int = 10) -> list[dict]:
        """The busiest links, as ``SimResult.bottlenecks`` ranked them (at most ``KEPT_BOTTLENECKS``)."""
        return [dict(b, links=list(b["links"])) for b in self.top[:top]]


@dataclass
class ScheduleSummary:
    """Stands in for a ``Schedule``: the number of transfer groups, not the groups."""

    groups: range
    payload_bytes: float = 0.0
    description: str = ""
    meta: dict = field(default_factory=dict)


def thin(points: list[tuple[float, float]], limit: int = MAX_DELIVERED_POINTS) -> list[tuple[float, float]]:
    """At most ``limit`` points, evenly spaced by index, first and last kept."""
    n = len(points)
    if n <= limit:
        return list(points)
    step = (n - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def summarize_sim(sim) -> SimSummary:
    if isinstance(sim, SimSummary):
        return sim
    return SimSummary(sim.time_s, thin(sim.delivered), sim.bottlenecks(KEPT_BOTTLENECKS), sim.events, sim.wall_s)


def summarize(result):
    """A copy of a collective or pipeline result (or each row of a sweep) without its per-flow
    detail; the figures, busiest links, delivered curve, pipeline timeline and any attributes set on
    it (the document it ran on) are kept. Summaries are returned as they are."""
    if isinstance(result, list):
        return [summarize(r) for r in result]
    sim = getattr(result, "sim", None)
    if sim is None or isinstance(sim, SimSummary):
        return result
    out = copy.copy(result)
    if hasattr(out, "bound_busbw_Bps"):
        out.bound_busbw_Bps = result.bound_busbw_Bps  # a lazy bound holds the simulator: settle it now
    out.sim = summarize_sim(sim)
    schedule = getattr(result, "schedule", None)
    if schedule is not None and not isinstance(schedule, ScheduleSummary):
        out.schedule = ScheduleSummary(range(len(schedule.groups)), schedule.payload_bytes, schedule.description,
                                       dict(schedule.meta))
    return out
