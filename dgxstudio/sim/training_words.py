"""A training iteration's result in words, for the CLI and the Results dock alike (no Qt here)."""

from __future__ import annotations

from ..units import format_size, format_time
from .training import TrainResult, boundary_crossings


def data_parallel_words(r: TrainResult) -> str | None:
    """The gradient all-reduce in words: how much of it the backward pass hid (DDP overlaps the buckets
    with the last micro-batch's backward, gradient accumulation holding them until then)."""
    d = r.details
    if r.dp < 2 or not d.get("dp_allreduce_s"):
        return None
    n, bucket = d["dp_buckets"], d["dp_bucket_bytes"]
    experts = d.get("expert_gradient_bytes_per_gpu") or 0.0
    alone = experts if (d.get("expert_data_parallel_size") or 0) < 2 else 0.0   # no other replica holds them
    cut = f"in {n:,} buckets of {format_size(bucket)}" if n > 1 else "in one all-reduce"
    hidden = (f"{format_time(d['dp_hidden_by_overlap_s'])} hidden behind the last micro-batch's backward"
              if d["dp_hidden_by_overlap_s"] > 0 else "none hidden (after the backward pass)")
    return (f"{format_size(d['gradient_bytes_per_gpu'] - alone)} of gradients per GPU {cut}"
            + (f" (the experts' {format_size(alone)} have no replica to reduce with)" if alone else "")
            + f": all-reduce {format_time(d['dp_allreduce_s'])}, {hidden}, "
            f"{format_time(r.breakdown_s['data_parallel'])} exposed")


def pipeline_words(r: TrainResult) -> str | None:
    """What the pipeline category is made of: its boundary sends can take at most every crossing of one
    lane in turn (each micro-batch crosses each boundary forward and back, twice per stage pair for
    ZB-V's two chunks), the rest is the schedule's bubble - so a bubble is not read as the network's."""
    d = r.details
    if r.pp < 2:
        return None
    total = r.breakdown_s["pipeline_bubble_and_transfers"]
    # boundary crossings of one micro-batch's forward (its backward crosses back as many): ZB-V's V goes
    # down and back up (the turn stays on the last GPU); interleaved chunks loop back to the first stage
    crossings = boundary_crossings(d.get("schedule"), r.pp, d.get("chunks", 1), r.microbatches)
    sends = min(crossings * d["boundary_send_s"], total)
    net = r.bottleneck.get("pipeline_bubble_and_transfers", "none")
    return (f"{format_time(total)} of bubble and boundary sends; the sends take at most {format_time(sends)} of it "
            f"({crossings:,} crossings of {format_time(d['boundary_send_s'])}, every lane at once"
            + (f", over {net}" if net != "none" else "") + f"), the rest is the {d.get('schedule')} schedule's bubble")


def critical_headline(r: TrainResult) -> str:
    """The critical resource with the basis it is judged on. Where the iteration's critical path waits
    longest on another class than the lecture's verdict at rated figures names (the expert all-to-all or
    the exposed gradient all-reduce), that class, with the verdict on each basis beside it; else the
    verdict at rated figures (so a run that NCCL's achievable rates and the engine's simulated rates find
    NVLink-bound still heads "infiniband" at rated figures), the other bases following when they differ,
    as the verdict lines below it name them."""
    d = r.details
    verdicts = d.get("verdicts") or {}
    rated = verdicts.get("rated")
    if not isinstance(rated, dict):
        return f"critical resource: {d['critical_resource']}"
    if d["critical_resource"] != rated["limit"]:
        # the critical path waits longest on another resource than the lecture's verdict names
        by: dict[str, list[str]] = {}
        for k in ("rated", "achievable", "simulated"):
            if isinstance(verdicts.get(k), dict):
                by.setdefault(verdicts[k]["limit"], []).append(k)
        said = (f"{next(iter(by))} on every basis" if len(by) == 1 else
                ", ".join(f"{lim} ({' and '.join(ks)})" for lim, ks in by.items()))
        return (f"critical resource on the iteration's critical path: {d['critical_resource']} "
                f"(the lecture's tensor-against-boundary verdict: {said})")
    others = [k for k in ("achievable", "simulated") if isinstance(verdicts.get(k), dict)]
    differ: dict[str, list[str]] = {}
    for k in others:
        if verdicts[k]["limit"] != d["critical_resource"]:
            differ.setdefault(verdicts[k]["limit"], []).append(k)
    head = f"critical resource at rated figures: {d['critical_resource']}"
    if differ:
        head += " (" + "; ".join(f"{' and '.join(ks)}: {lim}" for lim, ks in differ.items()) + ")"
    elif others:
        head += f" ({' and '.join(others)} agree)"
    return head


def critical_reason(r: TrainResult) -> str:
    """What follows the headline: `critical_resource_words` without what the headline and the verdict
    lines below it already say (the limit's name, the offered and required ratios, the other bases'
    verdicts), so the explanation adds the headroom instead of repeating them."""
    d = r.details
    words = d["critical_resource_words"]
    rated = (d.get("verdicts") or {}).get("rated")
    if isinstance(rated, dict) and d["critical_resource"] != rated["limit"] and "critical path: " in words:
        return words.split("critical path: ", 1)[1]
    if isinstance(rated, dict):
        share = rated["offered_ratio"] / rated["required_ratio"]
        if rated["limit"] == "nvlink":
            return f"NVLink offers {share:.2f}x the bandwidth the tensor traffic needs against the network"
        return f"the pipeline boundary's {rated['limit']} limits; NVLink has {share:.2f}x the headroom the tensor traffic needs"
    if d["critical_resource"] == "compute" and words.startswith("compute is "):
        return words[len("compute is "):]
    return words


CLI_MEMORY_ADVICE = ("split the model over more GPUs (--tp, --pp) or shorten the micro-batch "
                     "(--micro-batch-size, --seq-len)")


def memory_words(r: TrainResult, advice: str = CLI_MEMORY_ADVICE) -> str | None:
    """GPU memory per GPU of the stage that needs the most (of its capacity), in decimal GB as GPU
    memory is sold; says plainly when a stage does not fit and what would make it fit (``advice``,
    in the controls of the caller: the CLI's options or the GUI's fields)."""
    mem = r.details.get("memory")
    if not mem:
        return None
    st = mem["per_stage"][mem["worst_stage"]]
    held = st["microbatches_held"]
    acts = (f"activations of {held:g} micro-batch{'' if held == 1 else 'es'} {st['activation_bytes'] / 1e9:.2f} GB")
    where, need = (f"stage {mem['worst_stage']}'s GPUs", "need") if r.pp > 1 else ("each GPU", "needs")
    parts = f"model states {st['model_state_bytes'] / 1e9:.2f} GB, {acts}"
    if st["capacity_bytes"] is None:
        return f"{where} {need} at least {st['total_bytes'] / 1e9:.2f} GB ({parts}); the catalog gives no memory for this GPU"
    of = f"the {st['gpu_model']}'s {st['capacity_bytes'] / 1e9:.0f} GB" if st["gpu_model"] else \
        f"{st['capacity_bytes'] / 1e9:.0f} GB"
    if st["fits"]:
        return f"{where} {need} at least {st['total_bytes'] / 1e9:.2f} GB of {of} ({parts})"
    return f"DOES NOT FIT: {where} {need} at least {st['total_bytes'] / 1e9:.2f} GB, more than {of} ({parts}); {advice}"


def breakdown_rows(r: TrainResult) -> list[tuple[str, str, str]]:
    """The iteration's time by category in words for a reader (the JSON keys stay the CLI's table):
    each category, its time ("none" for a category the run does not have, not "0.0 ns") and the link
    class that bounds it ("" where none does)."""
    rows = []
    for key, t in r.breakdown_s.items():
        words = key.replace("_", " ") + (" (exposed)" if key == "data_parallel" else "")
        neck = r.bottleneck.get(key, "none")
        absent = t <= 1e-9 * r.iteration_s   # (a difference of sums a rounding error above 0: not "0.0 ns")
        rows.append((words, "none" if absent else format_time(t), "" if neck == "none" or absent else neck))
    return rows
