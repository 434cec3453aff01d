"""What it would take to meet a published scaling case, read from its simulated 8-GPU step.

An analysis printed beside a case (``benchmarks/resnet50_scaling.py``), never a model input. With
everything else as simulated it finds, for one system, the range of its gradient all-reduce time
(and the bus bandwidth a ring bound by one crossing would need for it) and the range of its compute
scale over which every published target is met; it puts a candidate figure from a public source
against those ranges; and it costs the all-reduce as one call per gradient matrix, the way a
framework that does not pack its gradients issues it.

The step is the one :func:`dgxstudio.sim.scaling.scaling` costs: compute + exposed all-reduce +
exposed input copy + overhead. Replacing a system's all-reduce time needs a step where the whole
all-reduce is exposed (no overlap with the backward pass); the analysis refuses otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .results import busbw_factor
from .scaling import ScalingError

FIGURE_KINDS = ("cross_socket_busbw_Bps", "compute_scale")


@dataclass(frozen=True)
class Targets:
    """The tolerances a case is judged by: each throughput and each throughput ratio."""

    throughput: float = 0.15
    ratio: float = 0.10


def _row(result: dict, label: str, gpus: int) -> dict:
    rows = {r["gpus"]: r for r in result["systems"][label]["rows"]}
    if gpus not in rows:
        raise ScalingError(f"the case has no {gpus}-GPU row for {label!r}")
    return rows[gpus]


def _ratio_pair(cmp: dict) -> tuple[str, str]:
    """The (numerator, denominator) systems of the published ratio."""
    a, b = list(cmp["published"])[:2]
    pub = cmp["published"]
    return (a, b) if math.isclose(pub[a] / pub[b], cmp["published_ratio"]) else (b, a)


def comparison(result: dict, overrides: dict[str, dict] | None = None, gpus: int = 8) -> dict:
    """The case's comparison at ``gpus`` recomputed with per-system ``overrides``: ``allreduce_s``
    replaces the system's gradient all-reduce time, ``compute_factor`` multiplies its compute. All else
    as simulated. With no overrides this reproduces the simulated throughputs."""
    overrides = overrides or {}
    for label in overrides:
        if label not in result["systems"]:
            raise ScalingError(f"unknown system {label!r} (one of {', '.join(result['systems'])})")
    out = {}
    for kind, cmp in result["comparison"].items():
        sim = {}
        for label in cmp["published"]:
            r, model = _row(result, label, gpus), result["systems"][label]["model"]
            o = overrides.get(label, {})
            comp, comm, exposed_in = r[f"{kind}_compute_s"], r[f"{kind}_exposed_comm_s"], r[f"{kind}_exposed_input_s"]
            step = comp + comm + exposed_in + r["overhead_s"]
            images = r[f"{kind}_samples_per_s"] * step
            if "allreduce_s" in o:
                if model["overlap"]:
                    raise ScalingError(f"{label}: its all-reduce overlaps the backward pass, so its exposed part "
                                       "is not the all-reduce time; replace it only in a step without overlap")
                comm = float(o["allreduce_s"])
            factor = float(o.get("compute_factor", 1.0))
            if factor != 1.0:
                comp *= factor
                copy = r[f"{kind}_input_copy_s"]
                exposed_in = max(copy - comp, 0.0) if model["input_prefetch"] else copy
            sim[label] = images / (comp + comm + exposed_in + r["overhead_s"])
        num, den = _ratio_pair(cmp)
        ratio = sim[num] / sim[den]
        out[kind] = {"simulated": sim, "error": {k: sim[k] / cmp["published"][k] - 1 for k in sim},
                     "simulated_ratio": ratio, "ratio_error": ratio / cmp["published_ratio"] - 1}
    return out


def misses(cmp: dict, targets: Targets = Targets()) -> list[str]:
    """The targets a comparison misses, in words ("strong pcie -22.1%"); empty when all are met."""
    out = []
    for kind, c in cmp.items():
        out += [f"{kind} {k} {100 * e:+.1f}%" for k, e in c["error"].items() if abs(e) > targets.throughput]
        if abs(c["ratio_error"]) > targets.ratio:
            out.append(f"{kind} ratio {100 * c['ratio_error']:+.1f}%")
    return out


def passing_ranges(result: dict, label: str, knob: str, lo: float, hi: float, points: int = 2000,
                   targets: Targets = Targets(), gpus: int = 8) -> list[tuple[float, float]]:
    """The intervals of ``knob`` (``allreduce_s`` or ``compute_factor``) in [lo, hi] over which every
    target is met with ``label``'s value set to it, all else as simulated. Edges found on a grid of
    ``points`` and refined by bisection."""
    if knob not in ("allreduce_s", "compute_factor"):
        raise ScalingError(f"unknown knob {knob!r}: allreduce_s or compute_factor")
    if not (0 <= lo < hi) or points < 2:
        raise ScalingError("the range needs 0 <= lo < hi and at least 2 points")

    def ok(x: float) -> bool:
        return not misses(comparison(result, {label: {knob: x}}, gpus), targets)

    def edge(good: float, bad: float) -> float:
        for _ in range(50):
            mid = (good + bad) / 2
            good, bad = (mid, bad) if ok(mid) else (good, mid)
        return good

    xs = [lo + (hi - lo) * i / (points - 1) for i in range(points)]
    flags = [ok(x) for x in xs]
    out, start = [], None
    for i, (x, f) in enumerate(zip(xs, flags)):
        if f and start is None:
            start = x if i == 0 else edge(x, xs[i - 1])
        if start is not None and (not f or i == len(xs) - 1):
            out.append((start, x if f else edge(xs[i - 1], x)))
            start = None
    return out


def ring_busbw(allreduce_s: float, nbytes: float, n: int) -> float:
    """Bus bandwidth of an all-reduce of ``nbytes`` on ``n`` GPUs in ``allreduce_s`` (nccl-tests' 2(n-1)/n)."""
    return busbw_factor("all-reduce", n) * nbytes / allreduce_s


def ring_allreduce_s(busbw_Bps: float, nbytes: float, n: int) -> float:
    """The all-reduce time of a ring bound everywhere by ``busbw_Bps`` (the inverse of :func:`ring_busbw`)."""
    return busbw_factor("all-reduce", n) * nbytes / busbw_Bps


def check_findings(data: dict) -> list[dict]:
    """The findings of a case's data file, each checked: an id, what was looked at, a public address
    (``url``), what the source ``says`` and its ``bearing`` on the case; an optional ``figures`` list of
    {kind, value, what}. Errors name the finding."""
    items = data.get("findings")
    if not isinstance(items, list) or not items:
        raise ScalingError("the findings file has no 'findings' list")
    for i, f in enumerate(items):
        name = f.get("id") or f"finding #{i + 1}"
        for key in ("id", "what", "url", "says", "bearing"):
            if not isinstance(f.get(key), str) or not f[key].strip():
                raise ScalingError(f"{name}: '{key}' is missing or empty")
        if not f["url"].startswith(("https://", "http://")):
            raise ScalingError(f"{name}: url {f['url']!r} is not a public address")
        for fig in f.get("figures", []):
            if fig.get("kind") not in FIGURE_KINDS:
                raise ScalingError(f"{name}: figure kind {fig.get('kind')!r} is not one of {', '.join(FIGURE_KINDS)}")
            v = fig.get("value")
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ScalingError(f"{name}: figure value {v!r} must be a positive number")
            if not isinstance(fig.get("what"), str) or not fig["what"].strip():
                raise ScalingError(f"{name}: a figure needs 'what' it measures")
    return items


def figure_reading(result: dict, label: str, figure: dict, targets: Targets = Targets(), gpus: int = 8) -> dict:
    """What a sourced figure would give if it held for ``label``: the all-reduce time or compute factor it
    implies, the recomputed comparison and the targets it misses."""
    model = result["systems"][label]["model"]
    if figure["kind"] == "cross_socket_busbw_Bps":
        value = ring_allreduce_s(figure["value"], model["grad_bytes"], gpus)
        override = {"allreduce_s": value}
    else:
        value = figure["value"] / model["compute_scale"]
        override = {"compute_factor": value}
    cmp = comparison(result, {label: override}, gpus)
    return {**override, "comparison": cmp, "misses": misses(cmp, targets)}


def bottleneck_resnet_matrices(arch: dict) -> list[int]:
    """Parameter counts of each learnable matrix of a bottleneck ResNet, in network order: the stem
    convolution, per block three convolutions (1x1, 3x3, 1x1) and a 1x1 projection in each stage's first
    block, every convolution without bias and followed by a batch normalization with a scale and a bias
    per channel, then the classifier's weight and bias. ``arch``: stem [kernel, in, out], stages
    [[blocks, inner, out], ...], classes."""
    k, cin, c0 = arch["stem"]
    out = [k * k * cin * c0, c0, c0]
    cin = c0
    for blocks, inner, cout in arch["stages"]:
        for b in range(blocks):
            for kk, ci, co in ((1, cin, inner), (3, inner, inner), (1, inner, cout)):
                out += [kk * kk * ci * co, co, co]
            if b == 0:
                out += [cin * cout, cout, cout]
            cin = cout
    return out + [cin * arch["classes"], arch["classes"]]


def per_matrix_allreduce_s(topo, gpus: list[str], sizes_bytes: list[float], achievable: bool = True) -> float:
    """One all-reduce per gradient matrix, one after another on one stream: the sum of each call's
    simulated time (calls of equal size simulated once)."""
    from .run import SimOptions, Simulator

    sim = Simulator(topo, gpus, SimOptions(achievable=achievable))
    seen: dict[float, float] = {}
    for b in sizes_bytes:
        if b not in seen:
            seen[b] = sim.run("all-reduce", "auto", b).time_s
    return sum(seen[b] for b in sizes_bytes)


def gap_analysis(result: dict, findings: dict, achievable: bool = True, targets: Targets = Targets(),
                 label: str | None = None, gpus: int = 8) -> dict:
    """The whole analysis for one system of a case (default: the one whose published ratio is the
    denominator, the PCIe server of the ResNet-50 case), from the case's result and its findings file."""
    from ..analysis.gpuset import select_gpus
    from ..model.presets import load_preset

    items = check_findings(findings)
    cmp0 = next(iter(result["comparison"].values()))
    label = label or _ratio_pair(cmp0)[1]
    if label not in result["systems"]:
        raise ScalingError(f"unknown system {label!r} (one of {', '.join(result['systems'])})")
    model = result["systems"][label]["model"]
    nbytes = model["grad_bytes"]
    now_ar = _row(result, label, gpus)["allreduce_s"]
    ar = passing_ranges(result, label, "allreduce_s", 0.0, 20 * now_ar, targets=targets, gpus=gpus)
    cf = passing_ranges(result, label, "compute_factor", 0.5, 2.0, targets=targets, gpus=gpus)
    figures = [{"id": f["id"], **fig, **figure_reading(result, label, fig, targets, gpus)}
               for f in items for fig in f.get("figures", [])]
    pm = findings.get("per_matrix")
    if not pm or "architecture" not in pm:
        raise ScalingError("the findings file has no per_matrix.architecture for the per-matrix reading")
    pm_id = pm.get("finding", "per-matrix calls")   # the finding the computed reading stands for
    if "finding" in pm and pm_id not in {f["id"] for f in items}:
        raise ScalingError(f"per_matrix.finding {pm_id!r} names no finding of the file")
    counts = bottleneck_resnet_matrices(pm["architecture"])
    per_call = {}
    for sys_label, entry in result["systems"].items():
        topo = load_preset(entry["preset"])
        sys_bytes = entry["model"]["grad_bytes"]
        sizes = [c * sys_bytes / sum(counts) for c in counts]  # the matrices' shares of the case's gradient bytes
        per_call[sys_label] = per_matrix_allreduce_s(topo, select_gpus(topo, "all")[:gpus], sizes, achievable)
    pm_cmp = comparison(result, {k: {"allreduce_s": v} for k, v in per_call.items()}, gpus)
    # a per-call latency the model does not have (NCCL 1.x's is not published), added alike on every system
    extra = [i * 1e-6 for i in range(0, 201)]
    extra_ok = [x for x in extra if not misses(comparison(
        result, {k: {"allreduce_s": v + len(counts) * x} for k, v in per_call.items()}, gpus), targets)]
    return {
        "system": label,
        "now": {"allreduce_s": now_ar, "busbw_Bps": ring_busbw(now_ar, nbytes, gpus),
                "compute_scale": model["compute_scale"]},
        "allreduce_s": ar,
        "cross_socket_busbw_Bps": [(ring_busbw(hi, nbytes, gpus), ring_busbw(lo, nbytes, gpus)) for lo, hi in ar if lo > 0],
        "compute_scale": [(lo * model["compute_scale"], hi * model["compute_scale"]) for lo, hi in cf],
        "figures": figures,
        "per_matrix": {"id": pm_id, "calls": len(counts), "allreduce_s": per_call, "comparison": pm_cmp,
                       "misses": misses(pm_cmp, targets), "extra_latency_scanned_s": (extra[0], extra[-1]),
                       "extra_latency_meeting_all_s": (extra_ok[0], extra_ok[-1]) if extra_ok else None},
        # (the per-matrix finding has a figure: the one computed above)
        "without_figure": [f["id"] for f in items if not f.get("figures") and f["id"] != pm_id],
    }
