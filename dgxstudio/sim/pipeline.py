"""Pipeline-parallel schedules (GPipe, 1F1B, interleaved 1F1B) run on the network engine.

Each stage's GPU runs its compute tasks in the order its schedule prescribes (a task waits for the
one before it on the same GPU), forward passes wait for the activations from the previous stage and
backward passes for the gradients from the next. Activations and gradients are real transfers on the
topology, so a stage boundary over InfiniBand costs what the engine computes for it; with zero bytes
the boundary is free.

The zero-bubble schedules (ZB-H1, ZB-H2, ZB-V: Qi et al., ICLR 2024; sim/zero_bubble.py) split each
backward into B (input gradient) and W (weight gradient); W takes ``w_share`` of the backward time
(the paper's FLOP count gives 24h / (48h + 8s) of it to W for a transformer layer; 0.5 by default).

With equal stage times tf, tb and free communication the makespans are the textbook ones:
(m + p - 1)(tf + tb) for GPipe and 1F1B, and (m + (p - 1) / v)(tf + tb) interleaved, so the bubble
fraction (p - 1) / (m + p - 1) is divided by v.
"""

from __future__ import annotations

import math

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from . import limits, zero_bubble
from ..model.topology import Topology
from .engine import Engine, Group, Pattern, Progress, Schedule, SimResult
from ..analysis.routing import Router, RoutingError

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-v")
# Zero-bubble schedules split the backward pass into B (input gradient, on the critical path) and W
# (weight gradient, deferred into the bubbles): Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024.
SPLIT_BACKWARD = ("zb-h1", "zb-h2", "zb-v")


class PipelineError(ValueError):
    """A pipeline that cannot be built as asked; the message says which parameter is at fault."""


@dataclass
class PipelineSpec:
    schedule: str
    stages: int
    microbatches: int
    stage_gpus: list[str]
    fwd_s: list[float]
    bwd_s: list[float]
    activation_bytes: float
    chunks: int = 1
    w_share: float = 0.5  # zero-bubble schedules: the weight gradient's (W's) share of the backward time
    plan_comm_s: float | None = None  # ZB-V: the boundary transfer time its plan allows (None: run_pipeline estimates it)

    def __post_init__(self) -> None:
        if self.schedule == "zb-v" and self.chunks == 1:
            self.chunks = 2  # ZB-V's V: two chunks a stage, whatever the chunk setting of other schedules

    def check(self) -> None:
        p, m, v = self.stages, self.microbatches, self.chunks
        limits.pipeline(p, m, v, PipelineError)
        for t in (*self.fwd_s, *self.bwd_s):
            limits.number(t, "stage time (s)", PipelineError, hi=limits.MAX_TIME_S)
        limits.number(self.activation_bytes, "activation bytes", PipelineError, hi=limits.MAX_SIZE_BYTES)
        limits.number(self.w_share, "weight-gradient share of the backward", PipelineError, lo=-math.inf)
        if not 0 < self.w_share < 1:   # one rule for both ends (1.5 and 0 once read 'at least 0' and 'between')
            raise PipelineError(f"weight-gradient share of the backward: {self.w_share:g} is out of range "
                                "(must be more than 0 and less than 1)")
        if self.schedule not in SCHEDULES:
            raise PipelineError(f"unknown schedule {self.schedule!r} (one of {', '.join(SCHEDULES)})")
        if p < 1 or m < 1 or v < 1:
            raise PipelineError("stages, micro-batches and chunks must be at least 1")
        if len(self.stage_gpus) != p:
            raise PipelineError(f"{p} stages need {p} GPUs, got {len(self.stage_gpus)}")
        if len(set(self.stage_gpus)) != p:
            raise PipelineError("each stage needs its own GPU")
        if len(self.fwd_s) != p or len(self.bwd_s) != p:
            raise PipelineError(f"give one forward and one backward time per stage ({p})")
        if any(t < 0 for t in (*self.fwd_s, *self.bwd_s)) or self.activation_bytes < 0:
            raise PipelineError("times and bytes cannot be negative")
        if self.schedule == "zb-v" and v != 2:
            raise PipelineError("ZB-V places two model chunks on every stage (--chunks 2)")
        if self.schedule not in ("interleaved", "zb-v") and v != 1:
            raise PipelineError("model chunks (--chunks) apply to the interleaved schedule only")
        if self.schedule == "interleaved" and m % p:
            raise PipelineError(f"the interleaved schedule needs the micro-batches ({m}) to be a multiple of the stages ({p})")


@dataclass(frozen=True)
class Task:
    stage: int
    chunk: int
    micro: int
    kind: str  # "F", "B" (the whole backward, or its input-gradient part in zero-bubble schedules) or "W"


def device_orders(spec: PipelineSpec) -> list[list[Task]]:
    """The order in which each stage's GPU runs its forward and backward tasks."""
    p, m, v = spec.stages, spec.microbatches, spec.chunks
    orders = []
    zb = _zero_bubble_orders(spec) if spec.schedule in SPLIT_BACKWARD else None
    for s in range(p):
        if spec.schedule == "gpipe":
            order = [Task(s, 0, i, "F") for i in range(m)] + [Task(s, 0, i, "B") for i in range(m)]
        elif spec.schedule in SPLIT_BACKWARD:
            order = zb[s]
        elif spec.schedule == "1f1b":
            warm = min(p - s - 1, m)
            order = [Task(s, 0, i, "F") for i in range(warm)]
            for i in range(m - warm):
                order += [Task(s, 0, warm + i, "F"), Task(s, 0, i, "B")]
            order += [Task(s, 0, i, "B") for i in range(m - warm, m)]
        else:
            order = _interleaved_order(s, p, m, v)
        orders.append(order)
    return orders


def virtual_stage(spec: PipelineSpec, stage: int, chunk: int) -> int:
    """Where a (stage, chunk) sits in the model: interleaved loops (chunk * p + stage), ZB-V folds back."""
    p = spec.stages
    if spec.schedule == "zb-v":
        return stage if chunk == 0 else 2 * p - 1 - stage
    return chunk * p + stage


def placement(spec: PipelineSpec, k: int) -> tuple[int, int]:
    """The (stage, chunk) of virtual stage k."""
    p = spec.stages
    if spec.schedule == "zb-v":
        return (k, 0) if k < p else (2 * p - 1 - k, 1)
    return k % p, k // p


def pass_times(spec: PipelineSpec) -> dict[str, list[float]]:
    """Per stage, the time of one F, B and W pass of one model chunk (B is the whole backward in
    schedules that do not split it)."""
    v = spec.chunks
    fwd = [t / v for t in spec.fwd_s]
    if spec.schedule not in SPLIT_BACKWARD:
        return {"F": fwd, "B": [t / v for t in spec.bwd_s]}
    return {"F": fwd, "B": [t * (1 - spec.w_share) / v for t in spec.bwd_s], "W": [t * spec.w_share / v for t in spec.bwd_s]}


def _zero_bubble_orders(spec: PipelineSpec) -> list[list[Task]]:
    times = pass_times(spec)
    try:
        if spec.schedule == "zb-v":
            plan = zero_bubble.v_shape(spec.stages, spec.microbatches, times["F"], times["B"], times["W"],
                                       spec.plan_comm_s or 0.0)
        else:
            plan = zero_bubble.handcrafted(spec.schedule, spec.stages, spec.microbatches)
    except zero_bubble.ZeroBubbleError as exc:
        raise PipelineError(str(exc)) from None
    return [[Task(s, c, i, kind) for kind, c, i in order] for s, order in enumerate(plan)]


def _interleaved_order(s: int, p: int, m: int, v: int) -> list[Task]:
    """Megatron-LM's interleaved 1F1B for device s (micro-batches in groups of p, v chunks each)."""
    total = m * v

    def fwd(k: int) -> Task:
        group, within = divmod(k, p * v)
        return Task(s, within // p, group * p + within % p, "F")

    def bwd(k: int) -> Task:
        group, within = divmod(k, p * v)
        return Task(s, v - 1 - within // p, group * p + within % p, "B")

    warm = min((p - s - 1) * 2 + (v - 1) * p, total)
    order = [fwd(k) for k in range(warm)]
    for k in range(total - warm):
        order += [fwd(warm + k), bwd(k)]
    order += [bwd(k) for k in range(total - warm, total)]
    return order


@dataclass
class PipelineResult:
    spec: PipelineSpec
    makespan_s: float
    bubble_fraction: float
    peak_inflight: list[int]
    timeline: list[dict]
    sim: SimResult
    busy_s: list[float] = field(default_factory=list)
    stage_bubble_s: list[float] = field(default_factory=list)
    peak_awaiting_b: list[int] = field(default_factory=list)

    @property
    def stage_bubble_fraction(self) -> float:
        """The zero-bubble paper's measure: the worst stage's idle time between its first and last pass,
        over that plus its work (the skew between stages, which the next iteration overlaps, is not idle)."""
        fracs = [idle / (idle + busy) for idle, busy in zip(self.stage_bubble_s, self.busy_s) if idle + busy > 0]
        return max(fracs, default=0.0)

    def as_dict(self, with_timeline: bool = True) -> dict:
        d = {
            "schedule": self.spec.schedule,
            "stages": self.spec.stages,
            "microbatches": self.spec.microbatches,
            "chunks": self.spec.chunks,
            "stage_gpus": self.spec.stage_gpus,
            "makespan_s": self.makespan_s,
            "bubble_fraction": self.bubble_fraction,
            "stage_bubble_fraction": self.stage_bubble_fraction,
            "ideal_bubble_fraction": ideal_bubble(self.spec),
            "stage_bubble_s": self.stage_bubble_s,
            "planned_transfer_s": self.spec.plan_comm_s,
            "peak_inflight_microbatches": self.peak_inflight,
            "peak_awaiting_input_gradient": self.peak_awaiting_b,
            "busy_s": self.busy_s,
            "bottlenecks": self.sim.bottlenecks(5),
        }
        if with_timeline:
            d["timeline"] = self.timeline
        return d


def ideal_bubble(spec: PipelineSpec) -> float | None:
    """The textbook bubble as a fraction of a stage's span (its idle time over idle plus work), equal
    stage times assumed: (p-1)/(m+p-1) for GPipe and 1F1B, divided by v interleaved, and the zero-bubble
    paper's Table 2 for ZB-H1/ZB-H2 (or stage 0's warm-up wait where that is longer); ZB-V: 0 when
    T_F = T_B = T_W and m >= 2p, else no closed form (None)."""
    p, m, v = spec.stages, spec.microbatches, spec.chunks
    if spec.schedule not in SPLIT_BACKWARD:
        return (p - 1) / v / (m + (p - 1) / v)
    tf = sum(spec.fwd_s) / p
    tb = sum(spec.bwd_s) / p * (1 - spec.w_share)
    tw = sum(spec.bwd_s) / p * spec.w_share
    work = m * (tf + tb + tw)
    if spec.schedule == "zb-v":
        equal = max(tf, tb, tw) - min(tf, tb, tw) <= 1e-9 * max(tf, tb, tw)
        return 0.0 if equal and m >= 2 * p else None
    idle = zero_bubble.expected_bubble(spec.schedule, p, m, tf, tb, tw)
    if idle is None:
        return None
    return idle / (work + idle) if work + idle > 0 else 0.0


def build_pipeline(spec: PipelineSpec) -> tuple[Schedule, dict[int, Task]]:
    """The schedule for the engine, and which group is which compute task."""
    spec.check()
    p, v = spec.stages, spec.chunks
    sched = Schedule([], 0.0, f"{spec.schedule} pipeline, {p} stages, {spec.microbatches} micro-batches")
    orders = device_orders(spec)
    times = pass_times(spec)
    gid: dict[Task, int] = {}
    tasks: dict[int, Task] = {}
    # Compute groups first (dependencies are filled in below, once every id is known).
    for order in orders:
        for task in order:
            t = times[task.kind][task.stage]
            i = sched.add(Group(f"{task.kind}{task.micro} stage {task.stage}" + (f" chunk {task.chunk}" if v > 1 else ""),
                                duration_s=t, meta={"device": spec.stage_gpus[task.stage], "kind": task.kind,
                                                    "micro": task.micro, "stage": task.stage, "chunk": task.chunk}))
            gid[task] = i
            tasks[i] = task
    patterns: dict[tuple[str, str], Pattern] = {}

    def transfer(src_task: Task, dst_stage: int, kind: str) -> int:
        """The activation or gradient leaving src_task for the GPU of dst_stage (or the task itself if free)."""
        a, b = spec.stage_gpus[src_task.stage], spec.stage_gpus[dst_stage]
        if spec.activation_bytes == 0 or a == b:
            return gid[src_task]
        pat = patterns.setdefault((a, b), Pattern([(a, b)]))
        return sched.add(Group(f"{kind} {src_task.micro} {a}->{b}", pat, spec.activation_bytes, (gid[src_task],),
                               meta={"kind": kind, "micro": src_task.micro, "from": a, "to": b}))

    # Virtual stage k (chunk * p + stage, or ZB-V's fold); data flows forward through k, gradients back.
    deps: dict[int, list[int]] = {i: [] for i in tasks}
    for order in orders:
        for prev, task in zip(order, order[1:]):
            deps[gid[task]].append(gid[prev])
    last_virtual = p * v - 1
    for task, i in list(gid.items()):
        k = virtual_stage(spec, task.stage, task.chunk)
        if task.kind == "F" and k > 0:
            src = Task(*placement(spec, k - 1), task.micro, "F")
            deps[i].append(transfer(src, task.stage, "activation"))
        if task.kind == "B":
            if k == last_virtual:
                deps[i].append(gid[Task(task.stage, task.chunk, task.micro, "F")])
            else:
                src = Task(*placement(spec, k + 1), task.micro, "B")
                deps[i].append(transfer(src, task.stage, "gradient"))
    for i, d in deps.items():
        sched.set_deps_done(i, tuple(d))
    return sched, tasks


def run_pipeline(topo: Topology, spec: PipelineSpec, achievable: bool = False,
                 progress: Callable[[Progress], None] | None = None, cancel=None,
                 router: Router | None = None, lanes: list[list[str]] | None = None) -> PipelineResult:
    """Run the schedule on ``spec.stage_gpus``; with ``lanes`` (each a list of stage GPUs, the first
    being ``spec.stage_gpus``), every lane runs at once and their transfers contend on the links.
    The timeline and busy times are the first lane's; the makespan is the slowest lane's."""
    lanes = lanes or [spec.stage_gpus]
    if lanes[0] != spec.stage_gpus:
        raise PipelineError("the first lane must be the spec's stage GPUs")
    for lane in lanes:
        for g in lane:
            if g not in topo.devices or topo.devices[g].kind != "gpu":
                raise PipelineError(f"{g!r} is not a GPU of this topology")
    spec.check()
    router = router or Router(topo, achievable)
    if spec.schedule == "zb-v" and spec.plan_comm_s is None:
        spec = replace(spec, plan_comm_s=boundary_estimate(router, spec))
    sched, tasks = build_pipeline(spec)
    for lane in lanes[1:]:
        other, _ = build_pipeline(replace(spec, stage_gpus=list(lane)))
        sched.extend(other)
    try:
        sim = Engine(router).run(sched, progress, cancel)
    except RoutingError as exc:
        raise PipelineError(str(exc)) from None
    timeline = []
    busy = [0.0] * spec.stages
    for i, task in sorted(tasks.items(), key=lambda kv: (kv[1].stage, float(sim.group_start[kv[0]]))):
        start, end = float(sim.group_start[i]), float(sim.group_done[i])
        busy[task.stage] += end - start
        timeline.append({"device": spec.stage_gpus[task.stage], "stage": task.stage, "kind": task.kind,
                         "microbatch": task.micro, "chunk": task.chunk, "start_s": start, "end_s": end})
    makespan = sim.time_s
    bubble = 1.0 - sum(busy) / (spec.stages * makespan) if makespan > 0 else 0.0
    return PipelineResult(spec, makespan, bubble, _peak_inflight(spec, timeline), timeline, sim, busy,
                          zero_bubble.stage_bubble(timeline, spec.stages), _peak_inflight(spec, timeline, "B"))


def boundary_estimate(router: Router, spec: PipelineSpec) -> float:
    """The longest time one activation (or gradient) takes across a stage boundary on its own: its bytes
    at the route's narrowest share plus the route's latency, both ways. ZB-V plans with it, as the
    zero-bubble scheduler plans with a profiled communication time."""
    if spec.activation_bytes <= 0:
        return 0.0
    worst = 0.0
    gpus = spec.stage_gpus
    try:
        for a, b in zip(gpus, gpus[1:]):
            for src, dst in ((a, b), (b, a)):
                r = router.routes(src, dst)
                rate = min(min(float(router.capacity[c]) / float(w) for c, w in zip(r.channels, r.weights) if w > 0),
                           r.cap_Bps)
                worst = max(worst, spec.activation_bytes / rate + r.latency_s)
    except RoutingError as exc:
        raise PipelineError(str(exc)) from None
    return worst


def _peak_inflight(spec: PipelineSpec, timeline: list[dict], until: str | None = None) -> list[int]:
    """Per stage, the most micro-batches whose activations it holds at once: from the forward's start
    to the end of the backward (its W in zero-bubble schedules), or to the end of pass ``until``
    (model chunks counted up to whole micro-batches)."""
    peaks = [int(p) for p in peak_held(timeline, spec.stages, 1.0, until or last_reader(spec))]
    return peaks if spec.chunks == 1 else [-(-p // spec.chunks) for p in peaks]


def last_reader(spec: PipelineSpec) -> str:
    """The pass after which a stage no longer holds a micro-batch's activations: its backward, or W
    (which still reads the layer inputs) in the zero-bubble schedules."""
    return "W" if spec.schedule in SPLIT_BACKWARD else "B"


def peak_held(timeline: list[dict], stages: int, per_forward: float, until: str) -> list[float]:
    """Per stage, the most a stage holds at once when each forward (of one model chunk) takes
    ``per_forward`` from its start until its pass ``until`` ends and gives it back; a release at the
    same instant as a forward's start comes first. ``timeline``: a PipelineResult's."""
    events: list[list[tuple[float, float]]] = [[] for _ in range(stages)]
    for row in timeline:
        if row["kind"] == "F":
            events[row["stage"]].append((row["start_s"], per_forward))
        elif row["kind"] == until:
            events[row["stage"]].append((row["end_s"], -per_forward))
    peaks = []
    for ev in events:
        level = peak = 0.0
        for _, step in sorted(ev, key=lambda e: (e[0], e[1])):
            level += step
            peak = max(peak, level)
        peaks.append(peak)
    return peaks
