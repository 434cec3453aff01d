"""One training iteration on a (data, tensor, pipeline) parallel grid, and data-parallel scaling.

Communication is simulated on the engine with the contention it really meets: the tensor-parallel
all-reduces of every tensor group run at once, as do the data-parallel gradient all-reduces of every
data group. Compute comes from the model (Megatron-LM's FLOP count per transformer layer) and the
GPU's catalog peak times an efficiency the user sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import limits
from ..analysis.rings import find_rings, system_rings
from ..model.catalog import LINK_FAMILIES
from ..model.topology import Topology
from . import collectives as C
from .engine import Engine, Schedule, SimResult
from .pipeline import PipelineSpec, run_pipeline
from ..analysis.routing import Router

PRECISION_BYTES = {"fp16": 2, "bf16": 2, "tf32": 4, "fp32": 4}
PRECISION_PEAK = {"fp16": ("fp16_flops",), "bf16": ("bf16_flops", "fp16_flops"),
                  "tf32": ("tf32_flops", "fp32_flops"), "fp32": ("fp32_flops",)}


class TrainingError(ValueError):
    """A grid or model that does not fit the topology; the message says what to change."""


@dataclass
class ModelSpec:
    """A transformer. Defaults are GPT-3 XL (1.3 B parameters, Brown et al. 2020, Table 2.1)."""

    layers: int = 24
    hidden: int = 2048
    seq_len: int = 2048
    microbatch_size: int = 1
    precision: str = "fp16"
    efficiency: float = 0.5
    params: float | None = None

    def check(self) -> None:
        limits.model(self.layers, self.hidden, self.seq_len, self.microbatch_size, self.params, self.efficiency,
                     TrainingError)
        if self.precision not in PRECISION_BYTES:
            raise TrainingError(f"unknown precision {self.precision!r} (one of {', '.join(PRECISION_BYTES)})")
        if min(self.layers, self.hidden, self.seq_len, self.microbatch_size) < 1:
            raise TrainingError("layers, hidden size, sequence length and micro-batch size must be positive")
        if not 0 < self.efficiency <= 1:
            raise TrainingError("efficiency is a fraction of peak in (0, 1]")

    @property
    def bytes_per_value(self) -> int:
        return PRECISION_BYTES[self.precision]

    @property
    def parameter_count(self) -> float:
        return self.params if self.params is not None else 12.0 * self.layers * self.hidden ** 2

    def layer_forward_flops(self) -> float:
        """24 b s h^2 + 4 b s^2 h per layer (Narayanan et al., Megatron-LM, 2021)."""
        b, s, h = self.microbatch_size, self.seq_len, self.hidden
        return 24.0 * b * s * h * h + 4.0 * b * s * s * h

    def activation_bytes(self) -> float:
        return float(self.microbatch_size * self.seq_len * self.hidden * self.bytes_per_value)


def peak_flops(topo: Topology, gpu: str, precision: str) -> float:
    part = topo.part_of(gpu)
    specs = part.specs if part else {}
    for key in PRECISION_PEAK[precision]:
        if specs.get(key):
            return float(specs[key])
    raise TrainingError(f"the catalog gives no {precision} peak for {part.label if part else gpu}")


def stage_times(topo: Topology, stage_gpus: list[str], model: ModelSpec) -> tuple[list[float], list[float]]:
    """Forward and backward time per micro-batch of each stage: its layers' FLOPs at the GPU's
    catalog peak times the model's efficiency (backward = 2 x forward)."""
    model.check()
    if not stage_gpus:
        raise TrainingError("a pipeline needs at least 1 stage")
    if model.layers % len(stage_gpus):
        raise TrainingError(f"{model.layers} layers do not split evenly into {len(stage_gpus)} stages")
    per_stage = model.layers // len(stage_gpus)
    fwd = [per_stage * model.layer_forward_flops() / (peak_flops(topo, g, model.precision) * model.efficiency)
           for g in stage_gpus]
    return fwd, [2 * t for t in fwd]


def grid(gpus: list[str], dp: int, tp: int, pp: int, order: str = "tp,pp,dp") -> dict[tuple[int, int, int], str]:
    """Place ranks on GPUs: the first dimension of ``order`` varies fastest (tensor groups inside a
    system by default, since the GPU list keeps each system's GPUs together)."""
    if min(dp, tp, pp) < 1:
        raise TrainingError("dp, tp and pp must be at least 1")
    need = dp * tp * pp
    if need > len(gpus):
        raise TrainingError(f"dp x tp x pp = {need} GPUs, but only {len(gpus)} are selected")
    dims = [d.strip() for d in order.split(",")]
    if sorted(dims) != ["dp", "pp", "tp"]:
        raise TrainingError(f"placement order {order!r} must name tp, pp and dp once each")
    size = {"dp": dp, "tp": tp, "pp": pp}
    out = {}
    for idx in range(need):
        coords, rest = {}, idx
        for d in dims:
            coords[d] = rest % size[d]
            rest //= size[d]
        out[(coords["dp"], coords["pp"], coords["tp"])] = gpus[idx]
    return out


def merge(schedules: list[Schedule]) -> Schedule:
    """Run several schedules at once: one schedule whose groups keep their own dependencies."""
    merged = Schedule([], sum(s.payload_bytes for s in schedules), f"{len(schedules)} collectives at once")
    for s in schedules:
        offset = len(merged.groups)
        for g in s.groups:
            g.deps_done = tuple(d + offset for d in g.deps_done)
            g.deps_sent = tuple(d + offset for d in g.deps_sent)
            merged.groups.append(g)
    return merged


def bottleneck_class(topo: Topology, sim: SimResult | None) -> str:
    if sim is None:
        return "none"
    tops = sim.bottlenecks(1)
    if not tops:
        return "none"
    lk = topo.links.get(tops[0]["links"][0])
    lt = topo.link_type_of(lk) if lk else None
    return lt.family if lt and lt.family in LINK_FAMILIES else "unknown"


def _group_rings(topo: Topology, groups: dict[str, list[str]]) -> dict[str, list[C.RingSpec]]:
    """Rings for many GPU groups: NVLink rings inside systems where they exist (one search per
    system shape), else each group's own ring search."""
    out: dict[str, list[C.RingSpec]] = {}
    local = system_rings(topo, groups) if all(len(m) > 1 for m in groups.values()) else None
    for key, members in groups.items():
        if local is not None and local[key].rings:
            out[key] = [C.RingSpec(r.gpus) for r in local[key].rings]
            continue
        rr = find_rings(topo, members)
        if not rr.rings:
            raise TrainingError(f"the GPUs {', '.join(members[:4])}... are not connected")
        out[key] = [C.RingSpec(r.gpus, r.hops if any(topo.devices[d].kind == "gpu" for h in r.hops for d in h[1:-1])
                               else None) for r in rr.rings]
    return out


def concurrent_allreduce(topo: Topology, router: Router, groups: dict[str, list[str]], nbytes: float,
                         chunk: float, rings: dict[str, list[C.RingSpec]] | None = None) -> tuple[float, SimResult | None]:
    """All groups all-reduce ``nbytes`` at the same time (multi-ring each); the time of the slowest."""
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    if not groups or nbytes <= 0:
        return 0.0, None
    rings = rings or _group_rings(topo, groups)
    scheds = [C.ring_collective("all-reduce", rings[k], nbytes, chunk, True) for k in groups]
    sim = Engine(router).run(merge(scheds))
    return sim.time_s, sim


@dataclass
class TrainResult:
    dp: int
    tp: int
    pp: int
    microbatches: int
    iteration_s: float
    breakdown_s: dict[str, float]
    bottleneck: dict[str, str]
    samples_per_s: float
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"dp": self.dp, "tp": self.tp, "pp": self.pp, "microbatches": self.microbatches,
                "iteration_s": self.iteration_s, "samples_per_s": self.samples_per_s,
                "breakdown_s": self.breakdown_s, "bottleneck_link_class": self.bottleneck, **self.details}


def train_iteration(topo: Topology, gpus: list[str], dp: int, tp: int, pp: int, model: ModelSpec,
                    microbatches: int = 8, schedule: str = "1f1b", overlap: bool = False, order: str = "tp,pp,dp",
                    chunk: float = 4 * 2**20, achievable: bool = False) -> TrainResult:
    model.check()
    limits.pipeline(pp, microbatches, 1, TrainingError)
    if model.layers % pp:
        raise TrainingError(f"{model.layers} layers do not split evenly into {pp} pipeline stages")
    place = grid(gpus, dp, tp, pp, order)
    router = Router(topo, achievable)
    peak = peak_flops(topo, place[(0, 0, 0)], model.precision) * model.efficiency
    layers_per_stage = model.layers // pp
    fwd_compute = layers_per_stage * model.layer_forward_flops() / tp / peak
    bwd_compute = 2 * fwd_compute

    # Tensor parallelism: 2 all-reduces of the layer's activations per layer forward, 2 backward.
    tp_groups = {f"dp{d}.pp{p}": [place[(d, p, t)] for t in range(tp)] for d in range(dp) for p in range(pp)}
    t_tp, tp_sim = concurrent_allreduce(topo, router, tp_groups, model.activation_bytes(), chunk)
    fwd = fwd_compute + 2 * layers_per_stage * t_tp
    bwd = bwd_compute + 2 * layers_per_stage * t_tp

    # Pipeline: one lane (data replica 0, tensor rank 0) over the real stage boundaries.
    pipe = None
    if pp > 1:
        spec = PipelineSpec(schedule, pp, microbatches, [place[(0, p, 0)] for p in range(pp)], [fwd] * pp, [bwd] * pp,
                            model.activation_bytes() / tp)
        pipe = run_pipeline(topo, spec, router=router)
        makespan = pipe.makespan_s
    else:
        makespan = microbatches * (fwd + bwd)

    # Data parallelism: every (stage, tensor rank) all-reduces its gradients across the replicas, all at once.
    grad_bytes = model.parameter_count / (tp * pp) * model.bytes_per_value
    dp_groups = {f"pp{p}.tp{t}": [place[(d, p, t)] for d in range(dp)] for p in range(pp) for t in range(tp)}
    dp_rings = {k: [C.RingSpec(v)] for k, v in dp_groups.items()} if dp > 1 else None
    t_dp, dp_sim = concurrent_allreduce(topo, router, dp_groups, grad_bytes, chunk, dp_rings)
    hidden = min(t_dp, bwd) if overlap else 0.0
    exposed_dp = t_dp - hidden

    compute = microbatches * (fwd_compute + bwd_compute)
    tp_total = microbatches * 4 * layers_per_stage * t_tp
    pipeline_overhead = max(makespan - compute - tp_total, 0.0)
    iteration = makespan + exposed_dp
    samples = dp * microbatches * model.microbatch_size
    breakdown = {"compute": compute, "tensor_parallel": tp_total, "pipeline_bubble_and_transfers": pipeline_overhead,
                 "data_parallel": exposed_dp}
    bottleneck = {"compute": "none", "tensor_parallel": bottleneck_class(topo, tp_sim),
                  "pipeline_bubble_and_transfers": bottleneck_class(topo, pipe.sim if pipe else None),
                  "data_parallel": bottleneck_class(topo, dp_sim)}
    details = {"gpus_used": dp * tp * pp, "tp_allreduce_s": t_tp, "dp_allreduce_s": t_dp, "dp_hidden_by_overlap_s": hidden,
               "stage_forward_s": fwd, "stage_backward_s": bwd, "gradient_bytes_per_gpu": grad_bytes,
               "activation_bytes": model.activation_bytes(), "peak_flops_used": peak,
               "pipeline_bubble_fraction": pipe.bubble_fraction if pipe else 0.0}
    return TrainResult(dp, tp, pp, microbatches, iteration, breakdown, bottleneck,
                       samples / iteration if iteration > 0 else 0.0, details)


# ---- data-parallel scaling ------------------------------------------------------------------------

@dataclass
class ScalingRow:
    gpus: int
    allreduce_s: float
    weak_samples_per_s: float
    weak_efficiency: float
    strong_samples_per_s: float
    strong_efficiency: float


def scaling(topo: Topology, gpus: list[str], grad_bytes: float, sample_s: float, batch_per_gpu: int,
            global_batch: int, counts: list[int] | None = None, algorithm: str = "auto") -> list[ScalingRow]:
    """Samples per second on 1, 2, 4, ... GPUs: weak scaling keeps the per-GPU batch, strong scaling
    splits the global batch; each step is compute then the gradient all-reduce (no overlap)."""
    from .run import SimOptions, Simulator

    limits.scaling(grad_bytes, sample_s, batch_per_gpu, global_batch, TrainingError)
    if grad_bytes <= 0 or sample_s <= 0 or batch_per_gpu < 1 or global_batch < 1:
        raise TrainingError("gradient bytes, sample time and batch sizes must be positive")
    counts = counts or [1 << k for k in range(0, 20) if (1 << k) <= len(gpus)]
    rows = []
    base_weak = base_strong = None
    router = Router(topo)
    for n in counts:
        if n > len(gpus):
            raise TrainingError(f"{n} GPUs requested, only {len(gpus)} selected")
        t_ar = 0.0
        if n > 1:
            sim = Simulator(topo, gpus[:n], SimOptions(), router=router)
            t_ar = sim.run("all-reduce", algorithm, grad_bytes).time_s
        weak = n * batch_per_gpu / (batch_per_gpu * sample_s + t_ar)
        strong = global_batch / (global_batch / n * sample_s + t_ar)
        base_weak = base_weak or weak
        base_strong = base_strong or strong
        rows.append(ScalingRow(n, t_ar, weak, weak / (n * base_weak), strong, strong / (n * base_strong)))
    return rows
