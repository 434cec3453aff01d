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
from ..model.catalog import LINK_FAMILIES, NETWORK_FAMILIES
from ..model.topology import Topology
from . import collectives as C
from . import nccl_p2p, symmetry
from . import tuning as T
from .engine import Engine, Group, Pattern, Schedule, SimResult
from .pipeline import PipelineSpec, run_pipeline
from ..analysis.routing import Router
from ..analysis.gpuset import only_selected

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
    experts: int = 0  # mixture of experts: experts per MoE layer (0: dense)
    top_k: int = 2  # experts each token is routed to (GShard/Mixtral top-2)

    @property
    def moe(self) -> bool:
        return self.experts > 0

    def check(self) -> None:
        limits.model(self.layers, self.hidden, self.seq_len, self.microbatch_size, self.params, self.efficiency,
                     TrainingError)
        if self.experts < 0 or (self.moe and not 1 <= self.top_k <= self.experts):
            raise TrainingError("experts must be >= 0 and the router's top-k between 1 and the number of experts")
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

    def parameters_per_gpu(self, tp: int, pp: int, ep: int) -> float:
        """Parameters one GPU holds: 4h^2 of attention per layer, and the 8h^2 MLP of each of its
        experts (experts / ep of them) in MoE models."""
        if not self.moe or self.params is not None:
            return self.parameter_count / (tp * pp)
        per_layer = 4.0 * self.hidden ** 2 + 8.0 * self.hidden ** 2 * self.experts / ep
        return self.layers * per_layer / (tp * pp)

    def expert_parameters_per_gpu(self, tp: int, pp: int, ep: int) -> float:
        """The share of ``parameters_per_gpu`` that belongs to this GPU's experts (0 for dense models):
        their gradients are reduced only among the replicas that hold the same experts."""
        if not self.moe or self.params is not None:
            return 0.0
        return self.layers * 8.0 * self.hidden ** 2 * self.experts / ep / (tp * pp)

    def layer_forward_flops(self) -> float:
        """24 b s h^2 + 4 b s^2 h per layer (Narayanan et al., Megatron-LM, 2021); of the 24, 16 are the
        MLP's, which a top-k router runs k times per token (once in each chosen expert)."""
        b, s, h = self.microbatch_size, self.seq_len, self.hidden
        mlp_runs = self.top_k if self.moe else 1
        return (8.0 + 16.0 * mlp_runs) * b * s * h * h + 4.0 * b * s * s * h

    def weight_gradient_share(self) -> float:
        """W's share of a layer's backward FLOPs when it is split for the zero-bubble schedules: B (input
        gradient) sbh(24h + 8s), W (weight gradient) sbh(24h) (Qi et al., ICLR 2024, Table 1)."""
        h, s = self.hidden, self.seq_len
        return 24.0 * h / (48.0 * h + 8.0 * s)

    def dispatch_bytes(self) -> float:
        """Bytes a GPU sends into one token all-to-all (dispatch or combine): each of its tokens' hidden
        states goes to top-k experts."""
        return float(self.microbatch_size * self.seq_len * self.top_k * self.hidden * self.bytes_per_value) if self.moe else 0.0

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
        raise TrainingError(f"dp x tp x pp = {need} GPUs, but {only_selected(len(gpus))}")
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
        merged.extend(s)
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


def expert_all_to_all(topo: Topology, router: Router, place: dict, dp: int, tp: int, pp: int, ep: int,
                      model: ModelSpec, chunk: float, gpus_per_thread: int = 1) -> tuple[float, SimResult | None]:
    """One token all-to-all (dispatch or combine) in every expert-parallel group at once: for each
    stage and tensor rank, the replicas d = g*ep .. g*ep+ep-1. Tokens spread evenly over the experts
    (a balanced router), so each GPU sends dispatch_bytes/ep to each member of its group.

    Each group is its own NCCL call, planned on its own GPUs (``nccl_p2p.plan_call``: groups may sit on
    one system or span several, on other NICs or GPUs), with ``gpus_per_thread`` as the collectives
    take it: at most the group's GPUs on one system."""
    check_expert_grid(dp, ep, model)
    nbytes = model.dispatch_bytes()
    if ep == 1 or nbytes <= 0:
        return 0.0, None
    groups = [[place[(g * ep + e, p, t)] for e in range(ep)] for p in range(pp) for t in range(tp)
              for g in range(dp // ep)]
    # NCCL's grouped send/receive (sim/nccl_p2p.py: protocol, channels a peer, per-call latency), by
    # symmetry class when the groups are alike (one flow per class), else every pair
    calls = _expert_calls(topo, router, groups, nbytes, gpus_per_thread)
    if len(set(calls)) == 1:
        call = calls[0]
        sched = C.all_to_alls(groups, nbytes, chunk, router, call.hop_s, call.pair_cap_Bps)
        if sched is None:
            sched = merge([_pairwise(members, nbytes, chunk, call) for members in groups])
        C.with_launch(sched, call.launch_s)
        sim = symmetry.run(router, sched, capacity_scale=T.protocol_efficiency(call.protocol))
        return sim.time_s, sim
    # groups planned differently run pair by pair, each call after its own launch; a protocol that
    # carries fewer data bytes a wire byte (LL: 8 in 16) sends its wire bytes at its wire-rate cap
    # over the links' whole figure: the same max-min rates, scaled, as running its links below it
    scheds = []
    for call in dict.fromkeys(calls):
        wire = 1.0 / T.protocol_efficiency(call.protocol)
        part = merge([_pairwise(members, nbytes * wire, chunk * wire, call, wire)
                      for members, c in zip(groups, calls) if c == call])
        scheds.append(C.with_launch(part, call.launch_s))
    sim = symmetry.run(router, merge(scheds))
    return sim.time_s, sim


def check_expert_grid(dp: int, ep: int, model: ModelSpec) -> None:
    """The expert-parallel size against the grid and the model, before anything is simulated."""
    if ep < 1 or dp % ep:
        raise TrainingError(f"--ep {ep} must divide the data-parallel size {dp} (expert groups are made of replicas)")
    if ep > 1 and not model.moe:
        raise TrainingError("expert parallelism needs a mixture-of-experts model (--experts N)")
    if model.moe and model.experts % ep:
        raise TrainingError(f"{model.experts} experts do not split evenly over {ep} expert-parallel ranks")


def _expert_calls(topo: Topology, router: Router, groups: list[list[str]], nbytes: float,
                  gpus_per_thread: int) -> list:
    """NCCL's p2p plan of each expert group's all-to-all (``nccl_p2p.plan_call``), what does not depend
    on the group worked out once."""
    known: dict = {}
    calls = []
    for members in groups:
        threads = T.threads_gpus(gpus_per_thread, members, router.system_of.get)
        calls.append(nccl_p2p.plan_call(nccl_p2p.facts_of(topo, router, members, known), nbytes, threads))
    return calls


def _pairwise(members: list[str], nbytes: float, chunk: float, call, wire: float = 1.0) -> Schedule:
    """One group's all-to-all pair by pair, at the call's hop latency and pair cap (times ``wire``)."""
    try:
        return C.all_to_all(members, nbytes, chunk, None, call.hop_s, call.pair_cap_Bps * wire)
    except ValueError as exc:
        raise TrainingError(str(exc)) from None


def boundary_send(topo: Topology, router: Router, place: dict, dp: int, tp: int, pp: int,
                  nbytes: float) -> tuple[float, SimResult | None]:
    """Every lane's activation crossing every stage boundary at once, each tensor rank sending its
    1/tp share (Megatron's scatter/gather across the boundary)."""
    pairs = [(place[(d, p, t)], place[(d, p + 1, t)]) for d in range(dp) for p in range(pp - 1) for t in range(tp)]
    pairs = [pr for pr in pairs if pr[0] != pr[1]]
    if not pairs or nbytes <= 0:
        return 0.0, None
    sched = Schedule([], nbytes, "pipeline boundary sends, every lane")
    sched.add(Group("boundary", Pattern(pairs), nbytes / tp))
    sim = Engine(router).run(sched)
    return sim.time_s, sim


def class_bytes(topo: Topology, sim: SimResult | None, times: float = 1.0) -> dict[int, tuple[str, float, float]]:
    """Bytes per channel of a run (times ``times``), with the channel's link class and capacity."""
    out: dict[int, tuple[str, float, float]] = {}
    if sim is None:
        return out
    for c, nbytes in enumerate(sim.channel_bytes):
        if nbytes <= 0:
            continue
        lk = topo.links.get(sim.channel_links[c][0])
        lt = topo.link_type_of(lk) if lk else None
        fam = lt.family if lt and lt.family in LINK_FAMILIES else "unknown"
        key = (fam, sim.channel_ends[c])
        out[key] = (fam, out.get(key, (fam, 0.0, 0.0))[1] + float(nbytes) * times, float(sim.capacity[c]))
    return out


def busy_fractions(parts: list[dict], iteration_s: float) -> dict[str, float]:
    """Per link class, the busiest channel's bytes over what it could carry in the iteration."""
    total: dict = {}
    for part in parts:
        for key, (fam, nbytes, cap) in part.items():
            f, b, c = total.get(key, (fam, 0.0, cap))
            total[key] = (fam, b + nbytes, cap)
    out: dict[str, float] = {}
    for fam, nbytes, cap in total.values():
        if cap > 0 and iteration_s > 0:
            out[fam] = max(out.get(fam, 0.0), nbytes / (cap * iteration_s))
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def nvlink_network_balance(t_tp: float, t_send: float, tp: int, network_class: str) -> dict:
    """The lecture's balance (seed 001): the tensor all-reduce of an activation sends 2(P-1)/P of it
    per GPU over NVLink while the boundary carries it once over the network, so NVLink must be
    2(P-1)/P times faster than the network. Both rates are the simulated ones for the same bytes."""
    required = 2 * (tp - 1) / tp
    if t_tp <= 0 or t_send <= 0:
        return {"required_ratio": required, "offered_ratio": None, "limit": "none"}
    offered = required * t_send / t_tp
    return {"required_ratio": required, "offered_ratio": offered,
            "limit": "nvlink" if offered < required else network_class,
            "tensor_allreduce_s": t_tp, "boundary_send_s": t_send}


def link_balance(topo: Topology, gpu: str, tp: int, achievable: bool = False) -> dict | None:
    """The lecture's arithmetic from the topology: the GPU's NVLink per direction over its system's
    compute-NIC bandwidth per direction. Rated (the lecture's own figures): rated NVLink against rated
    RDMA at the efficiency the lecture measured (0.8). Achievable: both at the catalog's NCCL-measured
    link efficiencies (NVLink3 0.8, HDR 0.96, ...), the figures the simulation runs with."""
    from ..analysis.bandwidth import gpu_bandwidth
    from .scaling import training_data

    sid = topo.system_of(gpu)
    n = sum(1 for d in topo.devices.values() if d.kind == "gpu" and topo.system_of(d.id) == sid) if sid else 0
    bw = gpu_bandwidth(topo, [gpu], achievable)[0]
    if not n or bw.network_bidir_Bps <= 0 or bw.nvlink_bidir_Bps <= 0:
        return None
    frac = 1.0 if achievable else float(training_data()["lecture_balance"]["rdma_measured_fraction"])
    nvlink = bw.nvlink_bidir_Bps / 2
    network = bw.network_bidir_Bps / 2 * n * frac
    required = 2 * (tp - 1) / tp
    basis = ("NVLink and RDMA at the catalog's NCCL-measured efficiencies (the simulation's figures)" if achievable else
             f"rated NVLink against {frac:g} x rated RDMA, the lecture's arithmetic (seed 001)")
    return {"figures": "achievable" if achievable else "rated", "basis": basis,
            "nvlink_per_gpu_per_direction_Bps": nvlink, "network_per_system_per_direction_Bps": network,
            "rdma_fraction": frac, "required_ratio": required, "offered_ratio": nvlink / network,
            "limit": "nvlink" if nvlink / network < required else "network"}


def boundary_crossings(schedule: str, pp: int, chunks: int, microbatches: int) -> int:
    """Stage-boundary crossings of one lane in an iteration: each micro-batch's forward crosses each
    boundary once and its backward crosses back (ZB-V's V goes down and back up, the turn staying on the
    last GPU; interleaved chunks loop back to the first stage)."""
    if pp < 2:
        return 0
    per_pass = (2 * (pp - 1) if schedule == "zb-v" else chunks * pp - 1 if schedule == "interleaved" else pp - 1)
    return 2 * per_pass * microbatches


LECTURE_PART = "the tensor all-reduces and boundary sends"
PATH_PARTS = {"expert_parallel": "the expert all-to-all", "data_parallel": "the exposed gradient all-reduce"}


def critical_path_by_resource(breakdown: dict[str, float], bottleneck: dict[str, str], verdict: str,
                              sends_s: float) -> dict[str, dict]:
    """Communication time on the iteration's critical path by the resource it waits on: the tensor
    all-reduces and the boundary sends (``sends_s``, the pipeline's time without its bubble) on the
    lecture's verdict (``verdict``), the expert all-to-all and the exposed gradient all-reduce on the link
    class that bounds each in the simulation. Each resource: seconds and the parts that make them."""
    out: dict[str, dict] = {}

    def add(resource: str, what: str, t: float) -> None:
        if t > 0 and resource not in ("none", "unknown"):
            row = out.setdefault(resource, {"s": 0.0, "parts": []})
            row["s"] += t
            row["parts"].append(what)
    if verdict != "none":
        add(verdict, LECTURE_PART, breakdown.get("tensor_parallel", 0.0) + sends_s)
    for key, what in PATH_PARTS.items():
        add(bottleneck.get(key, "none"), what, breakdown.get(key, 0.0))
    return out


def _critical_path_words(critical: str, path: dict[str, dict], balance: dict, iteration_s: float,
                         lecture: float) -> str:
    """Why a resource other than the lecture's verdict is critical: the parts that wait on it and for how
    long, against the traffic the verdict weighs (``lecture``: the tensor all-reduces' and boundary sends'
    seconds alone; the verdict's row in ``path`` also holds a part that waits on the same class)."""
    from ..units import format_time

    row = path[critical]
    lim = balance["limit"]
    parts = " and ".join(row["parts"])
    basis = "at rated figures" if balance.get("rated") else "at simulated rates"
    off = balance.get("offered_ratio")
    ratio = f": {off:.2f}x offered, {balance['required_ratio']:.2f}x required" if off is not None else ""
    return (f"{critical} bounds the most of the iteration's critical path: {parts} "
            f"{'wait' if ' and ' in parts else 'waits'} on it for {format_time(row['s'])} "
            f"({100 * row['s'] / iteration_s:.0f}% of the iteration); {LECTURE_PART} that the lecture's NVLink-to-network "
            f"balance weighs take {format_time(lecture)} on {lim} (its verdict {basis}{ratio})")


def _critical_words(balance: dict, busy: dict[str, float], compute_share: float = 0.0) -> str:
    req, off, lim = balance["required_ratio"], balance.get("offered_ratio"), balance["limit"]
    if off is None:
        top = next(iter(busy), "none")
        words = f"the {top} links are the busiest ({100 * busy.get(top, 0):.0f}% of the iteration)" if busy else "compute"
        if busy and compute_share >= 0.5:
            words = f"compute is {100 * compute_share:.0f}% of the iteration; {words}"
        if balance.get("boundary_inside_system"):
            words += (f"; the pipeline boundary stays inside a system (over {balance['boundary_inside_system']}), so the "
                      "lecture's NVLink-to-network balance does not apply")
        return words
    if lim == "nvlink":
        words = (f"NVLink is the limit: the tensor all-reduce needs NVLink {req:.2f}x as fast as the network, "
                 f"the hardware offers {off:.2f}x")
    else:
        words = (f"the pipeline boundary's {lim} is the limit; NVLink has {off / req:.2f}x the headroom the tensor "
                 f"traffic needs ({off:.2f}x offered, {req:.2f}x required)")
    achievable = balance.get("verdicts", {}).get("achievable")
    if achievable and achievable["limit"] != balance["rated"]["limit"]:
        other = "NVLink" if achievable["limit"] == "nvlink" else balance.get("network_class", "the network")
        words += (f"; that is the lecture's verdict, at rated figures; at the catalog's achievable figures {other} "
                  f"limits ({achievable['offered_ratio']:.2f}x offered)")
    return words


def verdict_rows(balance: dict) -> dict[str, dict]:
    """The NVLink-to-network verdict on each basis: rated (the lecture's), achievable (the catalog's
    NCCL-measured efficiencies) and simulated (the engine's rates at this activation size)."""
    net = balance.get("network_class", "network")
    rows = {}
    for key, v in balance.get("verdicts", {}).items():
        if v is None:
            continue
        rows[key] = {"limit": v["limit"], "offered_ratio": v["offered_ratio"],
                     "required_ratio": v["required_ratio"], "basis": v["basis"],
                     "nvlink_per_gpu_per_direction_Bps": v["nvlink_per_gpu_per_direction_Bps"],
                     "network_per_system_per_direction_Bps": v["network_per_system_per_direction_Bps"]}
    sim = balance.get("simulated")
    if rows and sim and sim.get("offered_ratio") is not None:
        rows["simulated"] = {"limit": sim["limit"], "offered_ratio": sim["offered_ratio"],
                             "required_ratio": sim["required_ratio"],
                             "basis": "the engine's tensor all-reduce and boundary-send rates at this activation size"}
    if {"rated", "achievable"} <= set(rows) and rows["rated"]["limit"] != rows["achievable"]["limit"]:
        r, a = rows["rated"], rows["achievable"]
        nv = a["nvlink_per_gpu_per_direction_Bps"] / r["nvlink_per_gpu_per_direction_Bps"]
        nw = a["network_per_system_per_direction_Bps"] / (r["network_per_system_per_direction_Bps"]
                                                          / balance["rated"]["rdma_fraction"])
        rows["why_they_differ"] = (f"NCCL reaches {100 * nv:.0f}% of NVLink's rating but {100 * nw:.0f}% of the "
                                   f"network's (catalog), while the lecture takes {100 * balance['rated']['rdma_fraction']:.0f}% "
                                   f"of the network and all of NVLink")
    return rows


def _dp_buckets(topo, router, dp_groups, grad_bytes, chunk, dp_rings, bucket_bytes):
    """Bucket sizes and the time of each, all data-parallel groups at once; the last run's result."""
    from .scaling import bucket_sizes

    sizes = bucket_sizes(grad_bytes, bucket_bytes) if grad_bytes > 0 else []
    times, by_size = [], {}
    for s in sizes:
        if s not in by_size:
            by_size[s] = concurrent_allreduce(topo, router, dp_groups, s, chunk, dp_rings)
        times.append(by_size[s][0])
    sims = [(by_size[s][1], sizes.count(s)) for s in by_size]
    return sizes, times, sims


def train_iteration(topo: Topology, gpus: list[str], dp: int, tp: int, pp: int, model: ModelSpec,
                    microbatches: int = 8, schedule: str = "1f1b", overlap: bool = True, order: str = "tp,pp,dp",
                    chunk: float = 4 * 2**20, achievable: bool = True, bucket_bytes: float | None = None,
                    ep: int = 1, progress=None, chunks: int = 1, gpus_per_thread: int = 1) -> TrainResult:
    """One iteration with every lane simulated: all tensor groups' all-reduces at once, every
    (replica, tensor rank) lane's pipeline sends at once, every data-parallel group's bucketed
    gradient all-reduce (overlapped with the backward pass of the last micro-batch when ``overlap``).
    ``gpus_per_thread``: GPUs one thread drives, as ``simulate --gpus-per-thread`` (the expert-parallel
    all-to-all's launches; 1: a process per GPU, as torchrun runs a job)."""
    from .scaling import ddp_bucket_bytes, overlapped_exposure
    from .train_memory import memory_per_gpu

    model.check()
    if schedule == "interleaved" and pp > 1:
        # Megatron's interleaved 1F1B: each stage holds ``chunks`` model chunks of layers / (pp x chunks)
        if chunks < 2:
            raise TrainingError("--chunks: the interleaved schedule needs 2 or more model chunks per stage")
        if model.layers % (pp * chunks):
            raise TrainingError(f"--chunks {chunks}: {model.layers} layers do not split evenly into {pp} stages x "
                                f"{chunks} chunks (the interleaved schedule needs layers divisible by pp x chunks)")
        if microbatches % pp:
            raise TrainingError(f"--microbatches {microbatches}: the interleaved schedule needs a multiple of the "
                                f"pipeline stages ({pp})")
    elif chunks != 1:
        raise TrainingError(f"--chunks {chunks}: model chunks apply to the interleaved schedule (with --pp 2 or more)")
    limits.pipeline(pp, microbatches, chunks, TrainingError)
    if model.layers % pp:
        raise TrainingError(f"{model.layers} layers do not split evenly into {pp} pipeline stages")
    place = grid(gpus, dp, tp, pp, order)
    router = Router(topo, achievable)
    peak = peak_flops(topo, place[(0, 0, 0)], model.precision) * model.efficiency
    layers_per_stage = model.layers // pp
    fwd_compute = layers_per_stage * model.layer_forward_flops() / tp / peak
    bwd_compute = 2 * fwd_compute
    if bwd_compute > limits.MAX_TIME_S:   # said with the model's options, before any simulation
        raise TrainingError(f"a stage's backward pass would take {bwd_compute:.3g} s per micro-batch ({model.layers:,} "
                            f"layers, hidden {model.hidden:,}, sequence {model.seq_len:,} on {pp} stages x {tp} GPUs), "
                            f"more than the limit of {limits.MAX_TIME_S:g} s: check --layers, --hidden, --seq-len")
    # every argument is checked before the first simulation (a refusal, not a failure after seconds of work)
    check_expert_grid(dp, ep, model)
    grad_bytes = model.parameters_per_gpu(tp, pp, ep) * model.bytes_per_value
    expert_bytes = model.expert_parameters_per_gpu(tp, pp, ep) * model.bytes_per_value
    dense_bytes = grad_bytes - expert_bytes
    bucket = ddp_bucket_bytes() if bucket_bytes is None else bucket_bytes
    limits.buckets(max(dense_bytes, expert_bytes), bucket, TrainingError)
    lanes = [[place[(d, p, t)] for p in range(pp)] for d in range(dp) for t in range(tp)] if pp > 1 else []
    if pp > 1:   # the schedule's own checks, at the compute times (the stage times with communication come later)
        PipelineSpec(schedule, pp, microbatches, lanes[0], [fwd_compute] * pp, [bwd_compute] * pp,
                     model.activation_bytes() / tp, chunks, w_share=model.weight_gradient_share()).check()

    # Tensor parallelism: 2 all-reduces of the layer's activations per layer forward, 2 backward.
    tp_groups = {f"dp{d}.pp{p}": [place[(d, p, t)] for t in range(tp)] for d in range(dp) for p in range(pp)}
    step = progress or (lambda fraction, what: None)   # told each phase as it starts (1,016 GPUs' MoE: 20 s)
    step(0.0, "tensor-parallel all-reduces")
    t_tp, tp_sim = concurrent_allreduce(topo, router, tp_groups, model.activation_bytes(), chunk)
    fwd = fwd_compute + 2 * layers_per_stage * t_tp
    bwd = bwd_compute + 2 * layers_per_stage * t_tp

    # Expert parallelism: the data-parallel replicas form groups of ep; each MoE layer moves its tokens to
    # their top-k experts and back by all-to-all inside every group at once (dispatch and combine,
    # forward and backward).
    step(0.2, "expert-parallel all-to-all")
    t_a2a, a2a_sim = expert_all_to_all(topo, router, place, dp, tp, pp, ep, model, chunk, gpus_per_thread)
    fwd += 2 * layers_per_stage * t_a2a
    bwd += 2 * layers_per_stage * t_a2a

    # Pipeline: every (replica, tensor rank) lane at once over the real stage boundaries.
    pipe = None
    step(0.4, "pipeline lanes")
    if pp > 1:
        spec = PipelineSpec(schedule, pp, microbatches, lanes[0], [fwd] * pp, [bwd] * pp, model.activation_bytes() / tp,
                            chunks, w_share=model.weight_gradient_share())
        pipe = run_pipeline(topo, spec, router=router, lanes=lanes)
        makespan = pipe.makespan_s
    else:
        makespan = microbatches * (fwd + bwd)

    # Data parallelism: every (stage, tensor rank) group all-reduces its gradients across the replicas,
    # all at once, in buckets (PyTorch DDP / Megatron), overlapped with the last backward pass.
    # In MoE models the experts' gradients are reduced only among the replicas holding the same experts
    # (the expert-data-parallel group: replicas e, e+ep, e+2ep, ...; DeepSpeed-MoE, Megatron-Core), the
    # dense layers' over every replica; the two kinds of bucket follow each other.
    dp_groups = {f"pp{p}.tp{t}": [place[(d, p, t)] for d in range(dp)] for p in range(pp) for t in range(tp)}
    expert_dp = dp // ep
    sizes, times, dp_sims = [], [], []
    step(0.6, "gradient all-reduce")
    for groups, nbytes in ((dp_groups, dense_bytes if expert_bytes else grad_bytes),
                           ({f"pp{p}.tp{t}.e{e}": [place[(d, p, t)] for d in range(e, dp, ep)]
                             for p in range(pp) for t in range(tp) for e in range(ep)}, expert_bytes)):
        if nbytes <= 0 or len(next(iter(groups.values()))) < 2:
            continue
        rings = {k: [C.RingSpec(v)] for k, v in groups.items()}
        s_, t_, sims_ = _dp_buckets(topo, router, groups, nbytes, chunk, rings, bucket)
        sizes, times, dp_sims = sizes + s_, times + t_, dp_sims + sims_
    t_dp = sum(times)
    exposed_dp = overlapped_exposure(bwd, 1.0, sizes, times, overlap) if dp > 1 else 0.0
    hidden = t_dp - exposed_dp

    compute = microbatches * (fwd_compute + bwd_compute)
    tp_total = microbatches * 4 * layers_per_stage * t_tp
    ep_total = microbatches * 4 * layers_per_stage * t_a2a
    pipeline_overhead = max(makespan - compute - tp_total - ep_total, 0.0)
    iteration = makespan + exposed_dp
    samples = dp * microbatches * model.microbatch_size
    breakdown = {"compute": compute, "tensor_parallel": tp_total, "expert_parallel": ep_total,
                 "pipeline_bubble_and_transfers": pipeline_overhead, "data_parallel": exposed_dp}
    dp_main = max(dp_sims, key=lambda x: x[1])[0] if dp_sims else None
    bottleneck = {"compute": "none", "tensor_parallel": bottleneck_class(topo, tp_sim),
                  "expert_parallel": bottleneck_class(topo, a2a_sim),
                  "pipeline_bubble_and_transfers": bottleneck_class(topo, pipe.sim if pipe else None),
                  "data_parallel": bottleneck_class(topo, dp_main)}

    # Which resource is critical: busy fraction per link class over the iteration, and the lecture's balance.
    parts = [class_bytes(topo, tp_sim, microbatches * 4 * layers_per_stage),
             class_bytes(topo, a2a_sim, microbatches * 4 * layers_per_stage),
             class_bytes(topo, pipe.sim if pipe else None)] + [class_bytes(topo, s, n) for s, n in dp_sims]
    busy = busy_fractions(parts, iteration)
    step(0.8, "pipeline boundary sends")
    t_send, send_sim = boundary_send(topo, router, place, dp, tp, pp, model.activation_bytes()) if pp > 1 else (0.0, None)
    net = bottleneck_class(topo, send_sim)
    balance = {"required_ratio": 2 * (tp - 1) / tp, "offered_ratio": None, "limit": "none"}
    # The lecture's balance weighs NVLink against the network the stage boundary crosses; a boundary
    # inside a system (tp x pp within one system) crosses no network, so the busiest class decides.
    # (Without system groups, the boundary's bottleneck class tells.)
    ends = [(topo.system_of(place[(0, p, 0)]), topo.system_of(place[(0, p + 1, 0)])) for p in range(pp - 1)]
    crosses = any(a != b for a, b in ends) if all(a and b for a, b in ends) else net in NETWORK_FAMILIES
    if tp > 1 and pp > 1 and not crosses:
        balance["boundary_inside_system"] = net
    if tp > 1 and crosses:
        simulated = nvlink_network_balance(t_tp, t_send, tp, net)
        rated = link_balance(topo, place[(0, 0, 0)], tp)
        if rated is not None:
            # The lecture's verdict (rated NVLink vs measured RDMA) decides the critical resource; the verdict
            # at the catalog's achievable figures and the simulated rates stand beside it.
            achievable_v = link_balance(topo, place[(0, 0, 0)], tp, achievable=True)
            for v in (rated, achievable_v):   # the network named as everywhere else in the result
                if v is not None:
                    v["limit"] = net if v["limit"] == "network" else "nvlink"
            balance = {"required_ratio": simulated["required_ratio"], "offered_ratio": rated["offered_ratio"],
                       "limit": rated["limit"], "basis": rated["basis"],
                       "network_class": net, "rated": rated, "simulated": simulated,
                       "verdicts": {"rated": rated, "achievable": achievable_v}}
        else:
            balance = {**simulated, "basis": "simulated rates"}
    # Without the lecture's verdict: compute when it is most of the iteration (a link class 10% busy is
    # not what limits a run that computes 96% of the time), else the busiest link class.
    compute_share = compute / iteration if iteration > 0 else 0.0
    critical = (balance["limit"] if balance["limit"] != "none" else
                "compute" if compute_share >= 0.5 else next(iter(busy), "compute"))
    # The lecture's verdict weighs only the tensor all-reduces against the boundary sends; the expert
    # all-to-all and the exposed gradient all-reduce wait on their own bottleneck class. The resource that
    # bounds the most communication time on the iteration's critical path is the critical one.
    sends = min(boundary_crossings(schedule, pp, pipe.spec.chunks if pipe else 1, microbatches) * t_send,
                pipeline_overhead)
    path = critical_path_by_resource(breakdown, bottleneck, balance["limit"], sends)
    lecture_s = breakdown.get("tensor_parallel", 0.0) + sends
    if balance["limit"] != "none" and path:
        critical = max(path, key=lambda k: (path[k]["s"], k == balance["limit"]))
    details = {"gpus_used": dp * tp * pp, "schedule": schedule if pp > 1 else None,
               "chunks": (pipe.spec.chunks if pipe else 1), "ep": ep, "experts": model.experts, "top_k": model.top_k,
               "ep_all_to_all_s": t_a2a, "dispatch_bytes_per_gpu": model.dispatch_bytes(), "lanes_simulated": dp * tp if pp > 1 else 0, "tp_allreduce_s": t_tp,
               "dp_allreduce_s": t_dp, "dp_hidden_by_overlap_s": hidden, "dp_buckets": len(sizes),
               "dp_bucket_bytes": bucket, "stage_forward_s": fwd, "stage_backward_s": bwd,
               "gradient_bytes_per_gpu": grad_bytes, "expert_gradient_bytes_per_gpu": expert_bytes,
               "expert_data_parallel_size": expert_dp if model.moe else None,
               "activation_bytes": model.activation_bytes(),
               # the GPU's catalog peak and the rate the compute runs at (peak x efficiency), each per GPU
               "gpu_peak_flop_per_s": peak / model.efficiency, "compute_flop_per_s_per_gpu": peak,
               "efficiency": model.efficiency, "parameters": model.parameter_count, "precision": model.precision,
               "pipeline_bubble_fraction": pipe.bubble_fraction if pipe else 0.0,
               "figures": "achievable" if achievable else "peak",
               "critical_resource": critical,
               "critical_resource_words": (_critical_words(balance, busy, compute_share) if critical == balance["limit"]
                                           or balance["limit"] == "none" else
                                           _critical_path_words(critical, path, balance, iteration, lecture_s)),
               "verdicts": verdict_rows(balance),
               "busy_fraction": busy, "nvlink_to_network": balance,
               "boundary_send_s": t_send,
               "memory": memory_per_gpu(topo, [place[(0, p, 0)] for p in range(pp)], model, tp, pp, ep, pipe)}
    return TrainResult(dp, tp, pp, microbatches, iteration, breakdown, bottleneck,
                       samples / iteration if iteration > 0 else 0.0, details)


# ---- data-parallel scaling (sim/scaling.py) ----------------------------------------------------

def scaling(topo: Topology, gpus: list[str], grad_bytes: float, sample_s: float, batch_per_gpu: int,
            global_batch: int, counts: list[int] | None = None, algorithm: str = "auto", achievable: bool = True):
    """Weak and strong scaling with a linear compute model, one all-reduce after the backward pass
    (the simplest case of ``scaling.scaling``)."""
    from .scaling import ScalingError, StepModel, scaling as run_scaling

    limits.scaling(grad_bytes, sample_s, batch_per_gpu, global_batch, TrainingError)
    try:
        return run_scaling(topo, gpus, StepModel(grad_bytes, sample_s, max(batch_per_gpu, 1), overlap=False),
                           batch_per_gpu, global_batch, counts, algorithm, achievable)
    except ScalingError as exc:
        raise TrainingError(str(exc)) from None
