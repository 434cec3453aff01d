"""GPU memory a training iteration needs per GPU, against the GPU's own memory.

Model states (parameters, gradients, optimizer) per parameter and a transformer layer's stored
activations per token come from ``resources/training.json`` (``memory``), each with its source
(ZeRO's 16 bytes per parameter for Adam; Korthikanti et al.'s per-layer activations, itemised so
that tensor parallelism splits the components it splits). How many micro-batches' activations a
stage holds at once is read from the simulated schedule, so GPipe, 1F1B, interleaved and the
zero-bubble schedules each hold what they really hold in this run."""

from __future__ import annotations

from ..model.topology import Topology
from .pipeline import last_reader, peak_held
from .scaling import training_data


class MemoryModelError(ValueError):
    """resources/training.json's memory section is missing or malformed."""


def _memory_data() -> dict:
    data = training_data().get("memory")
    if not isinstance(data, dict) or "activation_components" not in data:
        raise MemoryModelError("resources/training.json has no 'memory' section with activation_components")
    return data


def activation_bytes_per_layer(model, tp: int, data: dict | None = None) -> float:
    """Bytes one transformer layer stores for one micro-batch on one of its ``tp`` tensor-parallel
    GPUs (the components tensor parallelism splits divided by ``tp``; an MoE layer's MLP inputs once
    per expert a token runs in)."""
    data = data or _memory_data()
    sbh = float(model.microbatch_size * model.seq_len * model.hidden)
    per_value = model.bytes_per_value / 2.0   # the components are given at 2 bytes per value
    runs = model.top_k if model.moe else 1
    total = 0.0
    for c in data["activation_components"]:
        b = float(c["bytes_per_sbh"]) * (per_value if c["kind"] == "value" else 1.0)
        if c.get("per_expert"):
            b *= runs
        if c.get("tensor_parallel"):
            b /= tp
        total += b
    return total * sbh


def memory_per_gpu(topo: Topology, stage_gpus: list[str], model, tp: int, pp: int, ep: int,
                   pipe=None) -> dict:
    """Per pipeline stage: model-state and activation bytes on each of its GPUs, the GPU's memory
    from the catalog, and whether the stage fits. ``pipe`` is the iteration's PipelineResult (None
    without pipeline parallelism: one micro-batch at a time, gradients accumulated)."""
    data = _memory_data()
    state_per_param = float(data["model_state_bytes_per_parameter"][model.precision])
    state = model.parameters_per_gpu(tp, pp, ep) * state_per_param
    per_layer = activation_bytes_per_layer(model, tp, data)
    if pipe is None:
        held = [float(model.layers)] * pp
    else:
        chunks = pipe.spec.chunks
        held = peak_held(pipe.timeline, pp, model.layers / (pp * chunks), last_reader(pipe.spec))
    stages = []
    for s in range(pp):
        part = topo.part_of(stage_gpus[s])
        capacity = (part.specs or {}).get("memory_bytes") if part else None
        activations = per_layer * held[s]
        total = state + activations
        stages.append({"gpu": stage_gpus[s], "model_state_bytes": state, "activation_bytes": activations,
                       "microbatches_held": held[s] / (model.layers / pp), "total_bytes": total,
                       "capacity_bytes": float(capacity) if capacity else None,
                       "gpu_model": part.label if part else None,
                       "fits": None if not capacity else total <= float(capacity)})
    worst = max(range(pp), key=lambda s: stages[s]["total_bytes"] / (stages[s]["capacity_bytes"] or 1.0)
                if stages[s]["capacity_bytes"] else stages[s]["total_bytes"])
    known = [st["fits"] for st in stages if st["fits"] is not None]
    return {"per_stage": stages, "worst_stage": worst,
            "fits": (all(known) if known else None),
            "model_state_bytes_per_parameter": state_per_param,
            "activation_bytes_per_layer_per_microbatch": per_layer,
            "basis": "model states (ZeRO's 16 bytes per parameter, Adam, no optimizer sharding) and the layers' "
                     "stored activations (Korthikanti et al., attention scores recomputed as FlashAttention does), "
                     "without the embeddings, the framework's workspace and fragmentation: a lower bound"}
