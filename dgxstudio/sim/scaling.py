"""Data-parallel scaling: samples per second on 1, 2, 4, ... GPUs, weak and strong.

One step is the forward and backward compute of the per-GPU batch, the gradient all-reduce (in
buckets, overlapped with the backward pass when the framework does it, as PyTorch DDP does), the
input pipeline's host-to-device copies (every GPU's batch from its own socket's memory at once, over
the PCIe tree and the CPU root ports they share; prefetched during the compute or on the step's
critical path, as the framework does it) and a per-iteration overhead (the optimizer update).
Compute does not scale linearly with the batch: small per-GPU batches run below the GPU's best
throughput, on a saturating curve fitted through measured throughputs (``throughput(b) = peak * b / (b + b_half)``).
The model's constants and the published cases live in ``resources/training.json`` with sources.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib.resources import files

from ..analysis.routing import Router
from ..model.topology import Topology


class ScalingError(ValueError):
    """Bad scaling input; the message says what to change."""


@lru_cache(maxsize=1)
def training_data() -> dict:
    raw = json.loads(files("dgxstudio.resources").joinpath("training.json").read_text(encoding="utf-8"))
    if raw.get("format") != "dgxstudio-training-model":
        raise ScalingError("resources/training.json is not a DGX Studio training model file")
    return raw


def ddp_bucket_bytes() -> float:
    return float(training_data()["ddp"]["bucket_bytes"])


def backward_share() -> float:
    return float(training_data()["ddp"]["backward_share_of_compute"])


@dataclass(frozen=True)
class BatchCurve:
    """Throughput of one GPU against its batch: ``peak * b / (b + b_half)`` (b_half = 0: linear)."""

    b_half: float = 0.0

    @classmethod
    def fit(cls, points: list[tuple[float, float]]) -> "BatchCurve":
        """Least squares of 1/throughput = 1/peak + (b_half/peak)/b through (batch, samples/s) points."""
        pts = [(float(b), float(t)) for b, t in points]
        for b, t in pts:
            if not (math.isfinite(b) and math.isfinite(t) and b > 0 and t > 0):
                raise ScalingError(f"batch curve point {b:g}:{t:g}: the batch and the samples/s must both be positive")
        if len(pts) < 2 or len({b for b, _ in pts}) < 2:
            raise ScalingError("a batch curve needs two or more (batch, samples/s) points with different batches")
        xs, ys = [1 / b for b, _ in pts], [1 / t for _, t in pts]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        intercept = my - slope * mx
        if intercept <= 0 or slope < 0:
            raise ScalingError("the throughput points do not saturate with the batch (no positive peak)")
        return cls(slope / intercept)

    def time_factor(self, batch: float, reference: float) -> float:
        """Time per sample at ``batch`` over time per sample at ``reference``."""
        return ((batch + self.b_half) / batch) / ((reference + self.b_half) / reference)


def parse_curve(text: str) -> list[tuple[float, float]]:
    """'32:195,64:219' -> [(32, 195), (64, 219)] (batch: samples/s)."""
    out = []
    for part in text.split(","):
        try:
            b, t = part.split(":")
            out.append((float(b), float(t)))
        except ValueError:
            raise ScalingError(f"batch curve point {part!r}: write batch:samples_per_s, e.g. 32:195,64:219") from None
    return out


def bucket_sizes(total: float, bucket: float | None) -> list[float]:
    if bucket is None or bucket <= 0 or bucket >= total:
        return [total]
    n = int(total // bucket)
    rest = total - n * bucket
    return [bucket] * n + ([rest] if rest > 0 else [])


def overlapped_exposure(compute_s: float, share: float, sizes: list[float], times: list[float],
                        overlap: bool) -> float:
    """Communication left after the compute ends. Buckets become ready as the backward pass (the last
    ``share`` of the compute) produces their gradients; one communication stream runs them in order."""
    if not overlap:
        return sum(times)
    total = sum(sizes)
    start_bwd = compute_s * (1 - share)
    end, done = start_bwd, 0.0
    for size, t in zip(sizes, times):
        done += size
        ready = start_bwd + compute_s * share * done / total
        end = max(end, ready) + t
    return max(end - compute_s, 0.0)


@dataclass
class StepModel:
    """How one data-parallel step is costed; see the module docstring."""

    grad_bytes: float
    sample_s: float
    sample_batch: int
    curve: BatchCurve = BatchCurve()
    overhead_s: float = 0.0
    bucket_bytes: float | None = None
    overlap: bool = True
    backward_share: float = 2 / 3
    compute_scale: float = 1.0
    input_bytes_per_sample: float = 0.0  # host-to-device bytes per sample (0: the input is not modelled)
    input_prefetch: bool = True  # the next batch's copy runs during this step's compute

    def check(self) -> None:
        if self.grad_bytes <= 0 or self.sample_s <= 0 or self.sample_batch < 1:
            raise ScalingError("gradient bytes, sample time and the batch it was measured at must be positive")
        if self.input_bytes_per_sample < 0:
            raise ScalingError("input bytes per sample must be >= 0")
        if self.overhead_s < 0 or not 0 < self.backward_share <= 1 or self.compute_scale <= 0:
            raise ScalingError("overhead must be >= 0, backward share in (0, 1], compute scale > 0")

    def compute_s(self, batch: float) -> float:
        return batch * self.sample_s * self.compute_scale * self.curve.time_factor(batch, self.sample_batch)


@dataclass
class ScalingRow:
    gpus: int
    allreduce_s: float
    weak_samples_per_s: float
    weak_efficiency: float
    strong_samples_per_s: float
    strong_efficiency: float
    weak_compute_s: float = 0.0
    weak_exposed_comm_s: float = 0.0
    strong_compute_s: float = 0.0
    strong_exposed_comm_s: float = 0.0
    overhead_s: float = 0.0
    buckets: int = 1
    weak_input_copy_s: float = 0.0  # every GPU's batch copied host to device at once, contending
    strong_input_copy_s: float = 0.0
    weak_exposed_input_s: float = 0.0  # what the step waits for (all of it when not prefetched)
    strong_exposed_input_s: float = 0.0


def input_host(topo: Topology, gpu: str) -> str:
    """The CPU whose memory feeds ``gpu``'s input: the nearest over the PCIe tree (never through another
    GPU: data does not ride NVLink to reach its GPU)."""
    seen, frontier = {gpu}, [gpu]
    while frontier:
        nxt = []
        for d in frontier:
            for lk in topo.links_of(d):
                o = lk.b if lk.a == d else lk.a
                if o in seen:
                    continue
                seen.add(o)
                kind = topo.devices[o].kind
                if kind == "cpu":
                    return o
                if kind != "gpu":
                    nxt.append(o)
        frontier = sorted(nxt)
    raise ScalingError(f"GPU {gpu!r} reaches no CPU over PCIe: its input cannot be copied in")


def input_copy_group(topo: Topology, gpus: list[str], nbytes: float):
    from .engine import Group, Pattern
    return Group("input copy host to device", Pattern([(input_host(topo, g), g) for g in gpus]), nbytes)


def input_copy_s(topo: Topology, router: Router, gpus: list[str], nbytes: float) -> float:
    """Every GPU copies ``nbytes`` from its host at once: the time until the last copy lands."""
    from .engine import Engine, Schedule
    if nbytes <= 0:
        return 0.0
    sched = Schedule([], nbytes, "input copies")
    sched.add(input_copy_group(topo, gpus, nbytes))
    return Engine(router).run(sched).time_s


def allreduce_with_copies(topo: Topology, router: Router, result, gpus: list[str], nbytes: float) -> float:
    """The all-reduce of ``result`` run again with input copies of ``nbytes`` per GPU on the links at
    the same time (a prefetch that outlasted the compute). The engine's capacities are scaled as the
    run's were (``result.sim.capacity_scale``: the tree's efficiency, NVLS's on its NVLink SHARP
    channels only, ...), not by the protocol's efficiency alone, so that copies too few to meet the
    all-reduce leave its time as it was. ``router`` is the one ``result`` ran on."""
    from .engine import Engine, Schedule
    sched = Schedule([], result.schedule.payload_bytes, "all-reduce beside input copies")
    sched.extend(result.schedule)
    sched.add(input_copy_group(topo, gpus, nbytes))
    return Engine(router, result.sim.capacity_scale).run(sched).time_s


def scaling(topo: Topology, gpus: list[str], model: StepModel, batch_per_gpu: int, global_batch: int,
            counts: list[int] | None = None, algorithm: str = "auto", achievable: bool = True,
            progress=None) -> list[ScalingRow]:
    """Weak scaling keeps the per-GPU batch, strong scaling splits the global batch. ``progress(fraction,
    step)`` is told each GPU count as it starts (hundreds of GPUs take seconds a row)."""
    from . import limits
    from .run import SimOptions, Simulator

    limits.scaling(model.grad_bytes, model.sample_s, batch_per_gpu, global_batch, ScalingError)
    model.check()
    if batch_per_gpu < 1 or global_batch < 1:
        raise ScalingError("batch sizes must be positive")
    limits.buckets(model.grad_bytes, model.bucket_bytes, ScalingError)
    counts = counts or [1 << k for k in range(0, 20) if (1 << k) <= len(gpus)]
    router = Router(topo, achievable)
    sizes = bucket_sizes(model.grad_bytes, model.bucket_bytes)
    rows, base_weak, base_strong = [], None, None
    for i, n in enumerate(counts):
        if n > len(gpus):
            raise ScalingError(f"{n} GPUs requested, only {len(gpus)} selected")
        if progress is not None:
            progress(i / len(counts), f"{n} GPUs")
        times = [0.0] * len(sizes)
        results: dict[float, object] = {}
        if n > 1:
            sim = Simulator(topo, gpus[:n], SimOptions(achievable=achievable), router=router)
            for s in set(sizes):
                results[s] = sim.run("all-reduce", algorithm, s)
            times = [results[s].time_s for s in sizes]
        steps = {}
        for kind, batch in (("weak", batch_per_gpu), ("strong", global_batch / n)):
            comp = model.compute_s(batch)
            exposed = overlapped_exposure(comp, model.backward_share, sizes, times, model.overlap) if n > 1 else 0.0
            in_bytes = batch * model.input_bytes_per_sample
            copy = input_copy_s(topo, router, gpus[:n], in_bytes)
            if not model.input_prefetch:
                exposed_in = copy  # the step starts when its batch has landed
            elif copy <= comp or n == 1 or model.overlap or len(results) != 1:
                # hidden under the compute; what outlasts it is added (beside overlapped buckets the
                # copies' contention with them is not simulated)
                exposed_in = max(copy - comp, 0.0)
            else:  # the copy outlasts the compute and meets the gradient all-reduce on the links
                left = in_bytes * (copy - comp) / copy
                both = allreduce_with_copies(topo, router, next(iter(results.values())), gpus[:n], left)
                exposed_in = max(both - exposed, 0.0)
            steps[kind] = (comp, exposed, comp + exposed + exposed_in + model.overhead_s, copy, exposed_in)
        weak = n * batch_per_gpu / steps["weak"][2]
        strong = global_batch / steps["strong"][2]
        base_weak = base_weak or weak
        base_strong = base_strong or strong
        rows.append(ScalingRow(n, sum(times), weak, weak / (n * base_weak), strong, strong / (n * base_strong),
                               steps["weak"][0], steps["weak"][1], steps["strong"][0], steps["strong"][1],
                               model.overhead_s, len(sizes), steps["weak"][3], steps["strong"][3],
                               steps["weak"][4], steps["strong"][4]))
    return rows


# ---- the published cases -------------------------------------------------------------------------

def case_names() -> list[str]:
    return list(training_data()["cases"])


def _gpu_specs(topo: Topology, gpu: str) -> dict:
    part = topo.part_of(gpu)
    return part.specs if part else {}


def case_model(name: str, topo: Topology, gpu: str) -> StepModel:
    """The step model of a published case on the GPU ``gpu`` of ``topo``: compute scaled from the
    case's reference GPU by the catalog peaks, the optimizer at this GPU's memory bandwidth."""
    from ..model.catalog import default_catalog
    from .training import PRECISION_PEAK

    cases = training_data()["cases"]
    if name not in cases:
        raise ScalingError(f"unknown case {name!r} (one of {', '.join(cases)})")
    c = cases[name]
    curve = BatchCurve.fit(c["throughput_points"])
    ref_batch, ref_thr = max(c["throughput_points"])
    if "reference_throughput" in c:  # the level from the case's own source; the points give the curve's shape
        ref_batch, ref_thr = c["reference_throughput"]["batch"], c["reference_throughput"]["samples_per_s"]
    keys = PRECISION_PEAK[c["precision"]]
    ref_part = default_catalog().part(c["reference_gpu"])
    ref_specs = ref_part.specs if ref_part else {}
    specs = _gpu_specs(topo, gpu)
    ref_peak = next((ref_specs[k] for k in keys if ref_specs.get(k)), None)
    peak = next((specs[k] for k in keys if specs.get(k)), None)
    if not ref_peak or not peak:
        raise ScalingError(f"the catalog gives no {c['precision']} peak for {c['reference_gpu']} or {gpu}")
    mem = specs.get("memory_bandwidth_Bps")
    overhead = c["parameters"] * c["optimizer_bytes_per_parameter"] / mem if mem else 0.0
    inp = c.get("input_pipeline", {})
    return StepModel(float(c["gradient_bytes"]), 1.0 / ref_thr, int(ref_batch), curve, overhead,
                     None, bool(c["overlap"]), backward_share(), ref_peak / peak,
                     float(inp.get("bytes_per_sample", 0.0)), bool(inp.get("prefetch", True)))


def run_case(name: str, achievable: bool = True, algorithm: str = "auto", input_prefetch: bool | None = None) -> dict:
    """The case on each of its systems, beside the published 8-GPU throughputs."""
    from ..analysis.gpuset import select_gpus
    from ..model.presets import load_preset

    c = training_data()["cases"].get(name)
    if c is None:
        raise ScalingError(f"unknown case {name!r} (one of {', '.join(case_names())})")
    out = {"case": name, "title": c["title"], "figures": "achievable" if achievable else "peak", "systems": {}}
    for label, preset in c["systems"].items():
        topo = load_preset(preset)
        gpus = select_gpus(topo, "all")
        model = case_model(name, topo, gpus[0])
        if input_prefetch is not None:  # the other reading of the framework's input copy, for comparison
            model.input_prefetch = input_prefetch
        rows = scaling(topo, gpus, model, c["batch_per_gpu"], c["global_batch"], algorithm=algorithm,
                       achievable=achievable)
        out["systems"][label] = {"preset": preset, "topology": topo.name, "model": {
            **{k: v for k, v in asdict(model).items() if k != "curve"}, "b_half": model.curve.b_half},
            "rows": [asdict(r) for r in rows]}
    comparison = {}
    for kind in ("weak", "strong"):
        pub = c["published_8gpu_images_per_s"][kind]
        sim = {label: next(r for r in out["systems"][label]["rows"] if r["gpus"] == 8)[f"{kind}_samples_per_s"]
               for label in pub}
        comparison[kind] = {"published": pub, "simulated": sim,
                            "error": {k: sim[k] / pub[k] - 1 for k in pub},
                            "published_ratio": pub["nvlink"] / pub["pcie"],
                            "simulated_ratio": sim["nvlink"] / sim["pcie"]}
        comparison[kind]["ratio_error"] = comparison[kind]["simulated_ratio"] / comparison[kind]["published_ratio"] - 1
    out["comparison"] = comparison
    if "published_strong_efficiency_8gpu" in c:
        out["published_bounds"] = published_bounds(c, out)
    return out


def published_bounds(c: dict, result: dict) -> dict:
    """What the published figures alone say about each 8-GPU step. The strong-scaling efficiencies
    give one GPU's throughput at the global batch (a lower bound where the paper says "less than");
    a step cost that does not grow with the batch (gradient all-reduce, optimizer) cannot exceed the
    strong step minus its compute, which is at least 1/8 of one GPU's step (linear scaling; small
    batches are slower per image). The weak step's excess over one GPU beyond that bound grows with
    the images per GPU: no link or collective model can produce it. Beside it, the simulated one-GPU
    throughput, so a compute scale that contradicts the published efficiency shows. The bound rests on
    reading each efficiency against its own system's single GPU; read against the system whose
    efficiency is stated without a bound (the figures' "speedup vs. a single P100 GPU"), the other
    system's efficiency is given too, and where it also satisfies the paper's "less than" the paper
    bounds neither that system's single GPU nor the split of its step."""
    eff = c["published_strong_efficiency_8gpu"]
    pub = c["published_8gpu_images_per_s"]
    out = {}
    # the efficiency the paper states without a bound ("about"): that system's single GPU, the other reading's baseline
    anchor = next((k for k in pub["weak"] if eff.get(f"{k}_relation") != "less than"), None)
    anchor_one = pub["strong"][anchor] / (8 * eff[anchor]) if anchor else None
    for label in pub["weak"]:
        one_gpu = pub["strong"][label] / (8 * eff[label])  # images/s of one GPU at the global batch
        one_step = c["global_batch"] / one_gpu
        weak_step = 8 * c["batch_per_gpu"] / pub["weak"][label]
        strong_step = c["global_batch"] / pub["strong"][label]
        rows = {r["gpus"]: r for r in result["systems"][label]["rows"]}
        strong_compute = rows[8]["strong_compute_s"] * one_step / rows[1]["weak_compute_s"] if 1 in rows else one_step / 8
        out[label] = {
            "one_gpu_images_per_s": one_gpu, "one_gpu_relation": "at least" if eff.get(f"{label}_relation") == "less than" else "about",
            "one_gpu_step_s": one_step, "weak_step_s": weak_step, "strong_step_s": strong_step,
            "weak_excess_over_one_gpu_s": weak_step - one_step,
            "batch_independent_cost_at_most_s": strong_step - one_step / 8,
            "batch_independent_cost_at_most_with_batch_curve_s": strong_step - strong_compute,
            "grows_with_batch_at_least_s": (weak_step - one_step) - (strong_step - one_step / 8),
            "grows_with_batch_with_batch_curve_s": (weak_step - one_step) - (strong_step - strong_compute),
        }
        if anchor_one:  # the efficiency read against the anchor system's single GPU ("speedup vs. a single P100")
            out[label]["efficiency_against_anchor_one_gpu"] = pub["strong"][label] / (8 * anchor_one)
            out[label]["anchor"] = anchor
        if 1 in rows:  # the model's own single GPU at the global batch, against the published figure
            sim_one = rows[1]["strong_samples_per_s"]
            out[label]["simulated_one_gpu_images_per_s"] = sim_one
            out[label]["simulated_one_gpu_vs_published"] = sim_one / one_gpu - 1
    return out

