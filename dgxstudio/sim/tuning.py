"""NCCL's tuning model as data: protocols, per-call and per-hop latencies, per-channel ceilings,
and the cost model NCCL uses to pick an algorithm and a protocol for each call.

The constants live in ``resources/nccl_tuning.json`` with their source (NCCL's src/graph/tuning.cc);
this module only reads them and applies NCCL's formulas (ncclTopoTuneModel, ncclTopoGetAlgoTime,
the channel tuning of topoGetAlgoInfo). The simulator uses the same numbers on the drawn topology:
the model picks, the flow engine measures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

PROTOCOLS = ("ll", "ll128", "simple")
PROTOCOL_LABELS = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}
# NCCL's algorithms as its users name them (NCCL_ALGO), in NCCL's order.
NCCL_ALGORITHMS = ("tree", "ring", "collnet", "nvls", "nvls-tree")


class TuningError(ValueError):
    """The tuning file is unreadable or incomplete."""


@lru_cache(maxsize=1)
def tuning_data() -> dict:
    raw = files("dgxstudio.resources").joinpath("nccl_tuning.json").read_text(encoding="utf-8")
    data = json.loads(raw)
    if data.get("format") != "dgxstudio-nccl-tuning":
        raise TuningError("resources/nccl_tuning.json is not a DGX Studio NCCL tuning file")
    return data


def generation_of(sm: int | None) -> str:
    """NCCL's compute-capability class (Volta, Ampere, Hopper, Blackwell) for an SM version."""
    gens = tuning_data()["generations"]
    best = "volta"
    for name, g in gens.items():
        if name == "source":
            continue
        if sm is not None and sm >= g["min_sm"] and g["min_sm"] >= gens[best]["min_sm"]:
            best = name
    return best


def _node_index(nodes: int) -> int:
    return 0 if nodes <= 1 else (1 if nodes == 2 else 2)


@dataclass(frozen=True)
class CallShape:
    """What NCCL's model needs to know about a communicator."""

    collective: str
    ranks: int
    nodes: int
    generation: str
    channels: int
    ring_busbw_Bps: float      # bus bandwidth of NCCL's ring with Simple on this topology
    tree_busbw_Bps: float      # bus bandwidth of the tree's slowest level with Simple
    intra_class: str           # 'nvlink' or 'pci': what joins GPUs inside a system
    cpu_vendor: str = "intel"
    nvls_busbw_Bps: float = 0.0  # GPU-to-switch NVLink bandwidth per direction (0: no NVLink SHARP)
    net_busbw_Bps: float = 0.0   # the network's share: bus bandwidth of the rails between systems
    collnet_busbw_Bps: float = 0.0  # NIC bandwidth per system toward SHARP switches (0: none)
    net_path: str = "PIX"       # NCCL's typeInter: worst GPU-NIC path type of the channels (analysis/nccl_paths)
    net_path_where: str = ""    # which GPU and NIC that is, for a refusal
    sms: tuple[int, int] | None = None  # the GPUs' least and greatest SM version (None: not in the catalog)


def nsteps(collective: str, ranks: int) -> int:
    if collective == "all-reduce":
        return 2 * (ranks - 1)
    if collective in ("all-gather", "reduce-scatter"):
        return ranks - 1
    return ranks


def protocol_efficiency(proto: str) -> float:
    """Data bytes per byte on the wire (LL 8/16, LL128 120/128, Simple 1)."""
    return float(tuning_data()["protocols"][proto]["data_per_wire"])


def base_latency(algo: str, proto: str) -> float:
    return float(tuning_data()["base_latency_s"][algo].get(proto, 0.0))


def serial_launch(gpus_per_thread: int) -> float:
    """What a thread that drives several GPUs adds to a call: their kernels start one after another."""
    return max(int(gpus_per_thread) - 1, 0) * float(tuning_data()["serial_launch_s"]["per_gpu"])


def threads_gpus(want: int, gpus, system_of) -> int:
    """GPUs one launching thread drives: ``want`` (``--gpus-per-thread``), but never more than a system
    holds of ``gpus`` (a thread drives the GPUs of its own system; ``system_of(g)``: g's system, or None
    for a GPU of none, counted alone)."""
    want = int(want)
    if want <= 1:
        return 1
    per_system: dict = {}
    for g in gpus:
        key = system_of(g) or g
        per_system[key] = per_system.get(key, 0) + 1
    return min(want, max(per_system.values(), default=1))


def hop_latency(hw: str, algo: str, proto: str) -> float:
    return float(tuning_data()["hop_latency_s"][hw][algo].get(proto, 0.0))


def net_overhead(vendor: str, proto: str) -> float:
    d = tuning_data()["net_overhead_s"]
    value = float(d.get(vendor, d["other"]))
    return value * (d["simple_factor"] if proto == "simple" else 1.0)


def per_channel_cap(algo: str, proto: str, generation: str, nodes: int, channels: int) -> float:
    """The bus bandwidth one channel can carry under a protocol (inf where NCCL sets none)."""
    g = tuning_data()["generations"][generation]
    i = _node_index(nodes)
    if algo == "ring" and proto == "ll":
        return g["ll_max_Bps"][i] / max(channels, 1)
    if algo == "ring" and proto == "ll128":
        return g["ring_ll128_per_channel_Bps"][i]
    if algo == "tree" and proto == "ll":
        return g["ll_max_Bps"][i] / max(channels, 1)
    if algo == "tree" and proto == "ll128":
        return g["tree_ll128_per_channel_Bps"][i]
    if algo == "tree":
        return g["tree_per_channel_Bps"][i]
    return math.inf


def tree_efficiency(proto: str, nodes: int) -> float:
    """NCCL's tree refinements: Simple x0.92, LL x1/3.8, LL128 x7/9 on one node, 120/128 across."""
    f = tuning_data()["model_factors"]
    if proto == "ll":
        return f["tree_ll"] * f["tree_allreduce"]
    if proto == "ll128":
        return f["tree_allreduce"] * (f["tree_ll128_one_node"] if nodes <= 1 else f["tree_ll128_multi_node"])
    return f["tree_allreduce"]


def ll128_refusal(shape: CallShape) -> str | None:
    """Why NCCL leaves LL128 off by default for this call (``ll128_rule`` in the data), or None."""
    rule = tuning_data()["ll128_rule"]
    # (GPUs without an SM in the catalog: their class's, at least the rule's least)
    lo, hi = shape.sms or (max(tuning_data()["generations"][shape.generation]["min_sm"], rule["min_sm"]),) * 2
    if shape.intra_class != "nvlink":
        return "it needs NVLink inside systems"
    if lo < rule["min_sm"]:
        return f"it needs sm{rule['min_sm']} or later (these GPUs are sm{lo})"
    if lo != hi and lo < rule["mixed_sm_from"]:
        # (read after "NCCL does not enable LL128 here: ", as every refusal here is)
        return (f"on mixed GPU generations it is enabled only when every GPU is sm{rule['mixed_sm_from']} or later; "
                f"these GPUs range from sm{lo} to sm{hi}")
    limit = rule["max_net_path"]["from_sm90" if lo >= 90 else "below_sm90"]
    order, words = rule["path_types"], rule["path_words"]
    if order.index(shape.net_path) > order.index(limit):
        return (f"across systems on sm{lo} each GPU must reach its NIC within PATH_{limit} ({words[limit]}); "
                f"{shape.net_path_where}: PATH_{shape.net_path}, {words[shape.net_path]}")
    return None


def protocol_words() -> str:
    """What the protocol choice does, in one text for `simulate --protocol`'s help and the GUI's
    protocol box: NCCL's algorithms only, auto's choice, and where LL128 is refused, read from
    ``ll128_rule`` (the CLI and the GUI each said it in their own words, which drifted apart)."""
    rule = tuning_data()["ll128_rule"]
    words, limit = rule["path_words"], rule["max_net_path"]
    below, from90 = limit["below_sm90"], limit["from_sm90"]
    return (f"NCCL's protocol for ring, tree, nvls, nvls-tree and collnet, not the lecture's algorithms; auto (the "
            f"default) lets NCCL's cost model choose. ll128 only where NCCL enables it (resources/nccl_tuning.json's "
            f"ll128_rule): NVLink inside systems, sm{rule['min_sm']} (Volta) or later, and across systems each GPU "
            f"reaching the NIC its channels use within PATH_{below} ({words[below]}; from sm90 PATH_{from90}, "
            f"{words[from90]}); elsewhere a forced ll128 is refused with NCCL's reason (across systems the GPU and NIC "
            f"at fault). nvls, nvls-tree and collnet run simple only")


def ll128_enabled(shape: CallShape) -> bool:
    return ll128_refusal(shape) is None


def channels_for(size: float, algo: str, proto: str, channels: int, ranks: int) -> int:
    """NCCL drops channels while bytes < channels x threads x threadThreshold (enqueue.cc)."""
    c = tuning_data()["channels"]
    threshold = c["thread_threshold_bytes"][proto] * (ranks if (algo == "ring" and proto == "ll") else 1)
    nt = c["threads"][proto]
    nc = channels
    while nc > 1 and size < nc * nt * threshold:
        nc -= 1
    return nc


def nvls_channels(generation: str, nodes: int) -> int:
    """The channels NCCL runs an NVLS or NVLS-tree call on (nvls.cc ncclNvlsInit's nvlsChannels: 16 on
    sm90; on Blackwell 24 inside one system, 32 across systems), at every size; 0 on GPUs without
    NVLink SHARP. ``nvls_channels`` in the data, with NCCL's versions."""
    sm = tuning_data()["generations"][generation]["min_sm"]
    rows = [r for r in tuning_data()["nvls_channels"]["rule"] if r["min_sm"] <= sm]
    if not rows:
        return 0
    row = max(rows, key=lambda r: r["min_sm"])
    return int(row["across_systems" if nodes > 1 else "one_system"])


def nvls_heads(shape: CallShape) -> int:
    """The channels of NCCL's NVLS graph, which its cost model multiplies by (not ``nvls_channels``):
    one head per GPU of a system, at most ``max_heads`` (``nvls_channels.model_channels_source``)."""
    return min(shape.ranks // max(shape.nodes, 1), int(tuning_data()["nvls_channels"]["max_heads"]))


def nvls_tree_head_algbw_Bps(shape: CallShape) -> float:
    """NCCL's per-channel ceiling of the NVLS tree (perChMaxNVLSTreeBw) as the all-reduce data one
    NVLS head carries a second (algorithm bandwidth, bytes/s per direction; inf where NCCL sets none).

    NCCL states it as bus bandwidth per channel of the NVLS graph, whose channels are its heads
    (``nvls_heads``): busBw = heads x min(intraBw, interBw, perChMaxNVLSTreeBw), and algorithm
    bandwidth = busBw x nRanks / nsteps, nccl-tests' bus bandwidth factor turned round
    (``nvls_tree_per_channel_units`` in the data)."""
    per = tuning_data()["generations"][shape.generation]["nvls_tree_per_channel_Bps"][_node_index(shape.nodes)]
    if per <= 0:
        return math.inf
    return per * shape.ranks / nsteps("all-reduce", shape.ranks)


def nvls_tree_chunk_bytes(size: float, nodes: int, channels: int, heads: int) -> int:
    """NCCL's NVLS-tree chunk: the data one channel moves for one head per loop (``nvls_tree_chunk``
    in the data: nvlsChunkSize, at most 64 KiB from 4 nodes on, smaller for small calls)."""
    d = tuning_data()["nvls_tree_chunk"]
    chunk = int(d["default_chunk_bytes"])
    if nodes >= int(d["many_nodes"]):
        chunk = min(chunk, int(d["many_nodes_max_chunk_bytes"]))
    ops = max(int(channels), 1) * max(int(heads), 1)
    for k, smaller in d["size_rules"]:
        if size < k * ops * chunk and chunk > smaller:
            chunk = int(smaller)
    return chunk


def slice_bytes(proto: str, collective: str) -> float:
    """Data one channel moves per pipelined piece: NCCL's step buffer times its slice steps."""
    d = tuning_data()["pipeline"]
    return float(d["step_data_bytes"][proto] * d["slice_steps"].get(collective, 1))


def slots_per_connection(collective: str) -> int:
    """Pieces a connection can hold before its receiver frees one: NCCL_STEPS step buffers, a piece
    (slice) taking ``slice_steps`` of them."""
    d = tuning_data()["pipeline"]
    return max(1, int(d["nccl_steps"]) // int(d["slice_steps"].get(collective, 1)))


def tree_depth(ranks: int, nodes: int) -> int:
    """NCCL's tree depth (connect.cc): ranks per node - 1 + log2(nodes)."""
    nodes = max(int(nodes), 1)
    return max(ranks // nodes - 1 + (nodes.bit_length() - 1), 1)


def piece_budget(depth: int, chain: int = 0) -> int:
    """The pieces a tree connection may move (the simulator's budget, ``max_pieces_per_connection``).
    A chain inside a system at least as long as the budget could never hold a piece on each of its
    GPUs, so it never filled its pipeline (a 72-GPU NVL72 chain ran at a fifth of NCCL's estimate):
    there the budget is the tree's depth plus the budget, so the pipeline fills and then streams."""
    base = int(tuning_data()["tree_pipeline"]["max_pieces_per_connection"])
    return depth + base if chain >= base else base


def tree_chunk_bytes(proto: str, size: float, channels: int, depth: int, chain: int = 0) -> float:
    """Data one tree channel moves a piece: one step, halved as NCCL does for Simple so that every
    channel pipelines enough pieces through the tree's depth (see ``tree_pipeline`` in the data);
    ``chain``: GPUs per system less one (see ``piece_budget``)."""
    d = tuning_data()
    chunk = float(d["pipeline"]["step_data_bytes"][proto])
    tp = d["tree_pipeline"]
    if proto == "simple" or proto in tp["streaming_protocols"]:
        per_channel = size / max(channels, 1)
        for factor, floor in tp["halvings"]:
            while per_channel / chunk < depth * factor and chunk > floor:
                chunk /= 2
        chunk = max(chunk, per_channel / piece_budget(depth, chain))
    return chunk


def tree_pieces(proto: str, size: float, channels: int, depth: int, chain: int = 0) -> tuple[float, int]:
    """A tree channel's piece and how many pieces make one of NCCL's steps (chunks).

    Simple forwards whole chunks: a piece is ``tree_chunk_bytes``, one a step. LL and LL128 threads
    forward their part of each trip of lines as soon as they have it over NVLink or PCI (prims_ll.h
    LLGenericOp, prims_ll128.h GenericOp), so their steps are cut in trips, the channel's data in at
    most ``piece_budget``; a network hop still sends a step only once all its lines are
    written (net.cc sendProxyProgress), which ``tree_collective`` keeps."""
    step = tree_chunk_bytes(proto, size, channels, depth, chain)
    d = tuning_data()
    tp = d["tree_pipeline"]
    if proto not in tp["streaming_protocols"]:
        return step, 1
    trip = tp["trip_data_bytes_per_thread"][proto] * d["channels"]["threads"][proto]
    budget = piece_budget(depth, chain)
    per_channel = size / max(channels, 1)
    steps = min(max(1, math.ceil(per_channel / step - 1e-9)), budget)
    each = max(1, min(budget // steps, int(min(step, per_channel) / trip + 1e-9)))
    return per_channel / (steps * each), each


def model_busbw(shape: CallShape, algo: str, proto: str) -> float:
    """NCCL's bus-bandwidth estimate for an algorithm and protocol (0: not available)."""
    g = tuning_data()["generations"][shape.generation]
    f = tuning_data()["model_factors"]
    i = _node_index(shape.nodes)
    nch = shape.channels
    if algo == "ring":
        bus = shape.ring_busbw_Bps
        if proto == "ll":
            return min(g["ll_max_Bps"][i], bus * f["ring_ll"])
        if proto == "ll128":
            return min(bus * f["ring_ll128"], nch * g["ring_ll128_per_channel_Bps"][i])
        return bus
    if algo == "tree":
        if shape.collective not in ("all-reduce", "broadcast", "reduce"):
            return 0.0
        bus = min(shape.tree_busbw_Bps * f["tree_allreduce"], nch * g["tree_per_channel_Bps"][i])
        if proto == "ll":
            return min(bus * f["tree_ll"], g["ll_max_Bps"][i])
        if proto == "ll128":
            factor = f["tree_ll128_one_node"] if shape.nodes == 1 else f["tree_ll128_multi_node"]
            return min(bus * factor, nch * g["tree_ll128_per_channel_Bps"][i])
        return bus
    if algo == "nvls":
        if proto != "simple" or shape.nvls_busbw_Bps <= 0 or shape.collective != "all-reduce":
            return 0.0
        return _nvls_intra_busbw(shape, g)
    if algo == "nvls-tree":
        if proto != "simple" or shape.nvls_busbw_Bps <= 0 or shape.collective != "all-reduce" or shape.nodes < 2:
            return 0.0
        intra = _nvls_intra_busbw(shape, g)
        if intra <= 0.0:
            return 0.0
        inter = shape.net_busbw_Bps * (2 if shape.nodes <= 2 else 1)
        return min(intra, inter, nvls_heads(shape) * g["nvls_tree_per_channel_Bps"][i])
    if algo == "collnet":
        if proto != "simple" or shape.collnet_busbw_Bps <= 0 or shape.collective != "all-reduce":
            return 0.0
        return shape.collnet_busbw_Bps
    return 0.0


def _nvls_intra_busbw(shape: CallShape, g: dict) -> float:
    """NVLS's bus bandwidth inside a system, as NVLS and the NVLS tree both rate it over the NVLS
    graph's heads (``nvls_heads``); 0 below 2 heads ('NVLS/NVLStree needs at least 2 channels')."""
    nv = nvls_heads(shape)
    if nv < 2:
        return 0.0
    return shape.nvls_busbw_Bps * g["nvls_efficiency"] * (nv - 1) / nv * 2.0


def model_latency(shape: CallShape, algo: str, proto: str) -> float:
    """NCCL's per-call latency estimate (ncclTopoTuneModel), seconds."""
    p = shape.ranks
    nodes = shape.nodes
    steps = nsteps(shape.collective, p)
    lat = base_latency(algo, proto)
    intra = hop_latency(shape.intra_class, algo, proto)
    inter = hop_latency("net", algo if p // max(nodes, 1) > 1 else "tree", proto)
    if algo == "ring":
        if shape.collective in ("broadcast", "reduce"):
            return lat + steps * intra
        if nodes > 1:
            intra = max(intra, net_overhead(shape.cpu_vendor, proto))
        inter_steps = 0 if nodes == 1 else (2 * (nodes - 1) if shape.collective == "all-reduce" else nodes - 1)
        return lat + (steps - inter_steps) * intra + inter_steps * inter
    if algo == "tree":
        return lat + 2 * ((p // nodes - 1) * intra + int(math.log2(max(nodes, 1))) * inter)
    if algo == "nvls":
        return intra + (inter if nodes > 1 else 0.0)
    if algo == "nvls-tree":
        return lat + intra + 2 * int(math.log2(max(nodes, 1))) * inter
    if algo == "collnet":
        return lat + 2 * (p // nodes - 1) * hop_latency(shape.intra_class, "collnet", proto) + inter
    return lat


def model_time(shape: CallShape, algo: str, proto: str, size: float) -> float | None:
    """NCCL's estimate of a call's time (ncclTopoGetAlgoTime), or None where it is not available."""
    bus = model_busbw(shape, algo, proto)
    if bus <= 0:
        return None
    # NCCL's "Convert bus BW to algorithm BW": nRanks / nsteps for RING, NVLS and NVLS_TREE, 0.5 for
    # the rest (tuning.cc v2.28.9-1:345-350, the version whose NVLS constants the data holds)
    if algo in ("ring", "nvls", "nvls-tree"):
        algbw = bus * shape.ranks / nsteps(shape.collective, shape.ranks)
    else:
        algbw = bus * 0.5
    lat = model_latency(shape, algo, proto)
    if algo == "tree" and shape.collective == "all-reduce":
        log_size = int(math.log2(size / 64)) if size >= 64 else -1
        corr = tuning_data()["tree_correction"][proto]
        if 0 <= log_size < len(corr):
            algbw *= corr[log_size]
    if (algo == "ring" and proto == "simple" and shape.nodes > 1 and shape.collective == "all-reduce"
            and size / (shape.channels * shape.ranks) >= 64):
        plateau = tuning_data()["ring_simple_plateau"]
        lat *= plateau["before_sm80"] if shape.generation == "volta" else plateau["from_sm80"]
    return lat + size / algbw


def choose(shape: CallShape, size: float, algorithms: tuple[str, ...], protocols: tuple[str, ...]):
    """NCCL's pick: the (algorithm, protocol) with the least model time, and every estimate."""
    estimates: dict[tuple[str, str], float] = {}
    for a in algorithms:
        for p in protocols:
            if p == "ll128" and not ll128_enabled(shape):
                continue
            t = model_time(shape, a, p, size)
            if t is not None:
                estimates[(a, p)] = t
    if not estimates:
        return None, estimates
    best = min(estimates, key=lambda k: estimates[k])
    return best, estimates
