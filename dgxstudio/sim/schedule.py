"""What the engine runs and what it gives back: transfer patterns, groups and their dependencies,
schedules, progress reports and results (``sim/engine.py`` runs them)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..analysis.routing import Route
from ..cancel import check_cancelled
from . import limits
from .periods import FlowEnds
from .rates import RatePattern


class Pattern:
    """Source/destination pairs shared by many groups (each step of a ring reuses one pattern).

    ``paths`` pins a pair to the device path a planner chose (NCCL pins its channels); ``latency_s``
    replaces the route latency of every pair (a protocol's per-step latency, or a ring's latency
    averaged over its hops, so that pipelined chunks pay each hop's latency where they cross it);
    ``cap_Bps`` limits each pair's rate (a protocol's per-channel ceiling); ``via`` forces a pair
    through waypoints (a ring hop through its rail's NICs) with the fabric free to spread between them.
    """

    def __init__(self, pairs: list[tuple[str, str]], paths: list[list[str]] | None = None,
                 latency_s: float | None = None, cap_Bps: float = float("inf"), via: list[list[str] | None] | None = None):
        self.pairs = pairs
        self.paths = paths
        self.via = via
        self.latency_s = latency_s
        self.cap_Bps = cap_Bps
        self._template = None


@dataclass(slots=True)
class Group:
    name: str
    pattern: Pattern | None = None
    bytes_each: float = 0.0
    deps_done: tuple[int, ...] = ()
    deps_sent: tuple[int, ...] = ()
    duration_s: float = 0.0
    post_delay_s: float = 0.0
    meta: dict = field(default_factory=dict)


@dataclass
class Schedule:
    groups: list[Group]
    payload_bytes: float = 0.0
    description: str = ""
    meta: dict = field(default_factory=dict)

    def add(self, group: Group) -> int:
        self.groups.append(group)
        if len(self.groups) % 4096 == 0:
            check_cancelled()
            if len(self.groups) > limits.MAX_SCHEDULED_GROUPS:
                raise limits.TooLarge(f"{self.description or 'this schedule'} takes more than "
                                 f"{limits.MAX_SCHEDULED_GROUPS:,} flow groups to simulate (about a kilobyte of "
                                 f"memory each); use a larger --chunk, a smaller size or fewer GPUs")
        return len(self.groups) - 1


@dataclass
class Progress:
    fraction: float
    sim_time_s: float
    utilization: list[tuple[tuple[str, ...], float]]


@dataclass
class SimResult:
    time_s: float
    group_start: np.ndarray
    group_sent: np.ndarray
    group_done: np.ndarray
    groups: list[Group]
    flow_ends: FlowEnds  # per-flow end times of groups whose flows did not all end at once
    channel_bytes: np.ndarray
    capacity: np.ndarray
    channel_ends: list[tuple[str, str]]
    channel_links: list[tuple[str, ...]]
    segments: list[tuple[float, float, int]]
    rate_patterns: list[RatePattern]
    delivered: list[tuple[float, float]]
    routes: list[Route]
    events: int
    wall_s: float
    periods_skipped: int = 0  # repeats of a steady state advanced in one step (see _Periods)
    flow_events: int = 0      # active flows summed over the events: the work the run did (limits.MAX_FLOW_EVENTS)
    state_bytes: int = 0      # memory its distinct network states keep (limits.MAX_STATE_BYTES)

    def utilization(self) -> np.ndarray:
        """Busy fraction of each channel over the whole run."""
        if self.time_s <= 0:
            return np.zeros_like(self.capacity)
        return self.channel_bytes / (self.capacity * self.time_s)

    def bottlenecks(self, top: int = 10) -> list[dict]:
        """Channels ranked by utilization: the links that limited the run."""
        util = self.utilization()
        order = np.argsort(-util, kind="stable")[:top]
        out = []
        for c in order:
            if util[c] <= 0:
                break
            a, b = self.channel_ends[c]
            out.append({"links": list(self.channel_links[c]), "from": a, "to": b,
                        "utilization": float(util[c]), "bytes": float(self.channel_bytes[c]),
                        "capacity_per_direction_Bps": float(self.capacity[c])})
        return out

    def transfers(self, group: int) -> list[dict]:
        """Every transfer of a group: source, destination, bytes, start, end, routes."""
        g = self.groups[group]
        if g.pattern is None:
            return []
        tpl = g.pattern._template
        ends = self.flow_ends.get(group)
        out = []
        for k, (src, dst) in enumerate(g.pattern.pairs):
            end = float(ends[k]) if ends is not None else float(self.group_sent[group])
            out.append({"src": src, "dst": dst, "bytes": g.bytes_each, "start_s": float(self.group_start[group]),
                        "end_s": end + float(tpl["latency"][k]),
                        "paths": [list(p) for p in self.routes[tpl["route"][k]].paths]})
        return out
