"""Pipeline-parallel schedules (GPipe, 1F1B, interleaved 1F1B) run on the network engine.

Each stage's GPU runs its compute tasks in the order its schedule prescribes (a task waits for the
one before it on the same GPU), forward passes wait for the activations from the previous stage and
backward passes for the gradients from the next. Activations and gradients are real transfers on the
topology, so a stage boundary over InfiniBand costs what the engine computes for it; with zero bytes
the boundary is free.

ZB-H1 (Qi et al., ICLR 2024) splits each backward into B (input gradient) and W (weight gradient),
each half of the backward time here (the paper takes T_B = T_W), keeps 1F1B's order of F and B and
runs each W when its stage would otherwise wait: the bubble falls from (p-1)(tf+tb+tw) to about
(p-1)(tf+tb-tw). ZB-H2 allows each stage twice 1F1B's activations (2p micro-batches in flight), so its
warm-up runs 2(p-s)-1 forward passes on stage s and the bubble before the first B fills too; it
reaches the last stage's bound (p-1)tf + m(tf+tb+tw) where ZB-H1 cannot (tb large, costly transfers).
ZB-V (two chunks per stage in a V) is not built.

With equal stage times tf, tb and free communication the makespans are the textbook ones:
(m + p - 1)(tf + tb) for GPipe and 1F1B, and (m + (p - 1) / v)(tf + tb) interleaved, so the bubble
fraction (p - 1) / (m + p - 1) is divided by v.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from . import limits
from ..model.topology import Topology
from .engine import Engine, Group, Pattern, Progress, Schedule, SimResult
from ..analysis.routing import Router, RoutingError

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2")
# Zero-bubble schedules split the backward pass into B (input gradient, on the critical path) and W
# (weight gradient, deferred into the bubbles): Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024.
SPLIT_BACKWARD = ("zb-h1", "zb-h2")
# In-flight micro-batches a stage may hold (activations kept until W): ZB-H1 keeps 1F1B's p, ZB-H2 trades
# memory for the warm-up bubble with 2p (Qi et al., section 3.2: "more F passes during the warm-up").
ZB_MEMORY = {"zb-h1": 1, "zb-h2": 2}


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

    def check(self) -> None:
        p, m, v = self.stages, self.microbatches, self.chunks
        limits.pipeline(p, m, v, PipelineError)
        for t in (*self.fwd_s, *self.bwd_s):
            limits.number(t, "stage time (s)", PipelineError, hi=limits.MAX_TIME_S)
        limits.number(self.activation_bytes, "activation bytes", PipelineError, hi=limits.MAX_SIZE_BYTES)
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
        if self.schedule != "interleaved" and v != 1:
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
    zb = _zb_orders(spec) if spec.schedule in SPLIT_BACKWARD else None
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


def _zb_orders(spec: PipelineSpec) -> list[list[Task]]:
    """The zero-bubble schedules' per-stage orders. ZB-H1: 1F1B's sequence of F and B (so no more
    activations in flight than 1F1B), with each W deferred and run whenever the stage's next F or B is
    not ready yet, the rest at the end. ZB-H2: the same with twice the memory, so the warm-up runs
    2(p - s) - 1 forward passes on stage s and the bubble before the first B fills with F. The order is
    planned on the stage times with free transfers (ZB plans on profiled times)."""
    p, m = spec.stages, spec.microbatches
    mem = ZB_MEMORY[spec.schedule]
    fb = []
    for s in range(p):
        warm = min(p - s - 1 if mem == 1 else 2 * (p - s) - 1, m)
        order = [Task(s, 0, i, "F") for i in range(warm)]
        for i in range(m - warm):
            order += [Task(s, 0, warm + i, "F"), Task(s, 0, i, "B")]
        fb.append(order + [Task(s, 0, i, "B") for i in range(m - warm, m)])
    dur = {"F": spec.fwd_s, "B": [b / 2 for b in spec.bwd_s], "W": [b / 2 for b in spec.bwd_s]}
    pos, free, nf, nw = [0] * p, [0.0] * p, [0] * p, [0] * p
    pending: list[list[int]] = [[] for _ in range(p)]
    done: dict[tuple[str, int, int], float] = {}
    orders: list[list[Task]] = [[] for _ in range(p)]
    eps = 1e-15
    while True:
        best = None
        for s in range(p):
            cand = None
            if pos[s] < len(fb[s]):
                t = fb[s][pos[s]]
                if t.kind == "F":
                    dep = ("F", s - 1, t.micro) if s > 0 else None
                else:
                    dep = ("B", s + 1, t.micro) if s < p - 1 else ("F", s, t.micro)
                ready = done.get(dep) if dep else 0.0
                full = t.kind == "F" and nf[s] - nw[s] >= mem * p  # 1F1B's peak (stage 0 holds p), or twice it
                if full and pending[s]:
                    cand = (free[s], s, Task(s, 0, pending[s][0], "W"))
                elif ready is not None and ready <= free[s] + eps:
                    cand = (free[s], s, t)
                elif pending[s]:
                    cand = (free[s], s, Task(s, 0, pending[s][0], "W"))
                elif ready is not None:
                    cand = (ready, s, t)
            elif pending[s]:
                cand = (free[s], s, Task(s, 0, pending[s][0], "W"))
            if cand is not None and (best is None or cand[:2] < best[:2]):
                best = cand
        if best is None:
            break
        start, s, t = best
        end = start + dur[t.kind][s]
        done[(t.kind, s, t.micro)] = end
        free[s] = end
        orders[s].append(t)
        nf[s] += t.kind == "F"
        nw[s] += t.kind == "W"
        if t.kind == "W":
            pending[s].pop(0)
        else:
            pos[s] += 1
            if t.kind == "B":
                pending[s].append(t.micro)
    return orders


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

    def as_dict(self, with_timeline: bool = True) -> dict:
        d = {
            "schedule": self.spec.schedule,
            "stages": self.spec.stages,
            "microbatches": self.spec.microbatches,
            "chunks": self.spec.chunks,
            "stage_gpus": self.spec.stage_gpus,
            "makespan_s": self.makespan_s,
            "bubble_fraction": self.bubble_fraction,
            "ideal_bubble_fraction": ideal_bubble(self.spec),
            "peak_inflight_microbatches": self.peak_inflight,
            "busy_s": self.busy_s,
            "bottlenecks": self.sim.bottlenecks(5),
        }
        if with_timeline:
            d["timeline"] = self.timeline
        return d


def ideal_bubble(spec: PipelineSpec) -> float:
    p, m, v = spec.stages, spec.microbatches, spec.chunks
    if spec.schedule in SPLIT_BACKWARD and p > 0:
        tf, tb = sum(spec.fwd_s) / p, sum(spec.bwd_s) / p / 2  # tw = tb
        idle = (p - 1) * tf
        return idle / (m * (tf + 2 * tb) + idle) if m * (tf + 2 * tb) + idle > 0 else 0.0
    return (p - 1) / v / (m + (p - 1) / v)


def build_pipeline(spec: PipelineSpec) -> tuple[Schedule, dict[int, Task]]:
    """The schedule for the engine, and which group is which compute task."""
    spec.check()
    p, v = spec.stages, spec.chunks
    sched = Schedule([], 0.0, f"{spec.schedule} pipeline, {p} stages, {spec.microbatches} micro-batches")
    orders = device_orders(spec)
    gid: dict[Task, int] = {}
    tasks: dict[int, Task] = {}
    # Compute groups first (dependencies are filled in below, once every id is known).
    for order in orders:
        for task in order:
            t = (spec.fwd_s if task.kind == "F" else spec.bwd_s)[task.stage] / v
            if spec.schedule in SPLIT_BACKWARD:
                t = t if task.kind == "F" else t / 2
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

    # Virtual stage k = chunk * p + stage; data flows forward through k, gradients back.
    deps: dict[int, list[int]] = {i: [] for i in tasks}
    for order in orders:
        for prev, task in zip(order, order[1:]):
            deps[gid[task]].append(gid[prev])
    last_virtual = p * v - 1
    for task, i in list(gid.items()):
        k = task.chunk * p + task.stage
        if task.kind == "F" and k > 0:
            src = Task((k - 1) % p, (k - 1) // p, task.micro, "F")
            deps[i].append(transfer(src, task.stage, "activation"))
        if task.kind == "B":
            if k == last_virtual:
                deps[i].append(gid[Task(task.stage, task.chunk, task.micro, "F")])
            else:
                src = Task((k + 1) % p, (k + 1) // p, task.micro, "B")
                deps[i].append(transfer(src, task.stage, "gradient"))
    for i, d in deps.items():
        sched.groups[i].deps_done = tuple(d)
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
    sched, tasks = build_pipeline(spec)
    for lane in lanes[1:]:
        other, _ = build_pipeline(replace(spec, stage_gpus=list(lane)))
        offset = len(sched.groups)
        for g in other.groups:
            g.deps_done = tuple(d + offset for d in g.deps_done)
            g.deps_sent = tuple(d + offset for d in g.deps_sent)
            sched.groups.append(g)
    try:
        sim = Engine(router or Router(topo, achievable)).run(sched, progress, cancel)
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
    return PipelineResult(spec, makespan, bubble, _peak_inflight(spec, tasks, sim), timeline, sim, busy)


def _peak_inflight(spec: PipelineSpec, tasks: dict[int, Task], sim: SimResult) -> list[int]:
    """Per stage, the most micro-batches whose activations it holds at once (forward done, backward not)."""
    peaks = []
    for s in range(spec.stages):
        events = []
        for i, t in tasks.items():
            if t.stage != s:
                continue
            if t.kind == "F":
                events.append((float(sim.group_start[i]), 1))
            elif t.kind == ("W" if spec.schedule in SPLIT_BACKWARD else "B"):
                events.append((float(sim.group_done[i]), -1))
        events.sort(key=lambda e: (e[0], e[1]))
        level = peak = 0
        for _, step in events:
            level += step
            peak = max(peak, level)
        peaks.append(peak if spec.chunks == 1 else -(-peak // spec.chunks))
    return peaks
