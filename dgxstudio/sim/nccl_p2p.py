"""NCCL's all-to-all: grouped send/receive to every peer (nccl-tests' alltoall_perf), with NCCL's
point-to-point channels, protocol and a per-call latency.

NCCL runs an all-to-all as ncclGroupStart, a send and a receive to every rank, ncclGroupEnd: one p2p
kernel a call, each peer's bytes cut over that peer's p2p channels (thread blocks). NCCL's tuning
model has no p2p entry; what it does instead is data in ``resources/nccl_p2p.json`` with its source
(src/enqueue.cc, src/graph/paths.cc, src/init.cc at v2.18.5-1 and master):

- protocol: LL while a peer's bytes are at most its channels x NCCL_P2P_LL_THRESHOLD (16 KiB), else
  Simple (LL carries 8 data bytes in 16: the engine runs the links at half their figure);
- channels: a peer gets 2 per NVLink of its path (NVSwitch: the GPU's NVLinks), 2 over PCIe, over the
  network max(the GPU's NICs, their path GB/s / 14) (``net_peer_channels``); all rounded to powers
  of two, at most the communicator's p2p channels and, across nodes, halved until every peer of a
  batch of 8 fits; each call gives a peer min(channels-for-one-channel-each, its bytes / minimum
  part) channels, doubled while parts exceed the maximum part; the thread blocks are shared by all
  peers, and a channel carries half an NVLink (NCCL's sizing read as a ceiling,
  ``per_channel_nvlink_reading``) or 14 GB/s over the network;
- latency: NCCL's ring launch and one hop for the protocol (no p2p figure exists), plus the serial
  launches of a thread that drives several GPUs.

The schedule is the existing direct all-to-all (by symmetry class where the fabric allows), its pairs
capped at the channels' rate, with that latency; so it keeps running 4,096 GPUs in seconds.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib.resources import files

from . import collectives as C
from . import symmetry
from . import tuning as T
from ..analysis.channels import channel_count, group_by_system, nic_gpus_per_system, nvlink_counts
from ..analysis.nccl_paths import gpu_nic_path, rank, sm_range
from ..analysis.routing import RoutingError
from ..cancel import cancellable
from .results import CollectiveResult, SimulationError
from .setup_steps import step


@lru_cache(maxsize=1)
def p2p_data() -> dict:
    data = json.loads(files("dgxstudio.resources").joinpath("nccl_p2p.json").read_text(encoding="utf-8"))
    if data.get("format") != "dgxstudio-nccl-p2p":
        raise T.TuningError("resources/nccl_p2p.json is not a DGX Studio NCCL p2p file")
    return data


def _pow2_up(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


@dataclass(frozen=True)
class P2pFacts:
    """What NCCL's p2p setup reads from the communicator (one call's GPUs)."""

    ranks: int
    nodes: int
    intra_class: str          # 'nvlink' or 'pci'
    path_nvlinks: int         # NVLinks of a GPU's path to its peers in its system (0: PCIe peers)
    sm: int | None            # the GPUs' least SM version (NCCL's NVLink bandwidth is by SM)
    coll_channels: int        # the communicator's collective channels
    net_channels: int         # ncclTopoGetNchannels for a network peer, least over the GPUs (0: one system)


@dataclass(frozen=True)
class P2pCall:
    """How NCCL runs one all-to-all of ``size`` bytes (each GPU sends size/ranks to each peer)."""

    protocol: str             # 'll' or 'simple'
    channels: int             # thread blocks the call uses on a GPU
    channels_per_peer: int    # channels NCCL gives each peer's bytes
    p2p_channels: int         # the communicator's p2p channels
    pair_cap_Bps: float       # rate of one peer's bytes (its share of the channels), data bytes/s
    launch_s: float           # per-call latency (kernel launch, serial launches)
    hop_s: float              # per-transfer latency of the protocol on the slowest link class
    classes: tuple[str, ...]  # link classes crossed ('nvlink', 'pci', 'net')


def _nvlink_Bps(sm: int | None) -> float:
    bw = p2p_data()["nvlink_bw_Bps"]
    keys = sorted(int(k) for k in bw)
    if sm is None:
        return float(bw["80"])
    if sm == 86:
        return float(bw["86"])
    best = max((k for k in keys if k <= sm and k != 86), default=keys[0])
    return float(bw[str(best)])


def peer_channels(facts: P2pFacts) -> tuple[int, int]:
    """(p2pnChannels, p2pnChannelsPerPeer) as NCCL works them out for this communicator."""
    d = p2p_data()
    p2p = _pow2_up(max(facts.coll_channels, 1))
    per_peer = []
    if facts.ranks > facts.nodes:   # peers inside a system
        if facts.intra_class == "nvlink" and facts.path_nvlinks:
            per_peer.append(d["channels_per_nvlink"] * max(1, facts.path_nvlinks))
        else:
            per_peer.append(d["channels_per_pci_peer"])
    if facts.nodes > 1:            # peers across the network
        per_peer.append(facts.net_channels)
    per = _pow2_up(min(per_peer) if per_peer else 1)
    if facts.nodes > 1:
        batches = math.ceil(facts.ranks / d["peers_per_batch"])
        while per * batches > p2p and per > 1:
            per //= 2
    else:
        per = min(p2p, per)
    return p2p, per


def plan_call(facts: P2pFacts, size: float, gpus_per_thread: int = 1) -> P2pCall:
    """NCCL's p2p plan for an all-to-all of ``size`` bytes in all per GPU (size/ranks to each peer)."""
    d = p2p_data()
    p2p, per_max = peer_channels(facts)
    per_min = per_max
    while per_min * facts.ranks > p2p and per_min > 1:
        per_min //= 2
    multi = facts.nodes > 1
    kind = "net" if multi else ("nvlink" if facts.intra_class == "nvlink" and facts.path_nvlinks else "pci")
    chunk = float(d["chunk_bytes"][kind])
    parts = d["part_bytes"]
    min_part = chunk * (parts["min_fraction_multi_node"] if multi else parts["min_fraction_one_node"])
    max_part = chunk * (parts["max_factor_multi_node"] if multi else parts["max_factor_one_node"])
    nbytes = size / max(facts.ranks, 1)
    n = max(1, min(per_min, math.ceil(nbytes / min_part)))
    part = max(min_part, nbytes / n)
    while part > max_part and n <= per_max // 2:
        n *= 2
        part = nbytes / n
    proto = "ll" if nbytes <= n * d["ll_threshold_bytes"] else "simple"
    peers = max(facts.ranks - 1, 1)
    used = min(p2p, peers * n)
    share = min(n, p2p / peers)   # the thread blocks are shared by all peers at once
    per_channel = []
    if facts.ranks > facts.nodes and facts.intra_class == "nvlink" and facts.path_nvlinks:
        per_channel.append(_nvlink_Bps(facts.sm) / d["channels_per_nvlink"])
    if multi:
        per_channel.append(float(d["net_channel_Bps"]))
    cap = share * min(per_channel) if per_channel else math.inf
    classes = tuple(c for c, on in ((facts.intra_class, facts.ranks > facts.nodes), ("net", multi)) if on)
    hop = max(T.hop_latency(c, "ring", proto) for c in classes) if classes else 0.0
    launch = T.base_latency("ring", proto) + T.serial_launch(gpus_per_thread)
    return P2pCall(proto, used, n, p2p, cap, launch, hop, classes)


def intra_class(topo, gpus: list[str], counts: dict[str, int] | None = None) -> str:
    """NCCL's intra-node hardware class of a call's GPUs: 'nvlink' when every GPU has NVLink, else
    'pci' (the one definition: ``Simulator._intra_class`` and ``facts_of`` read it). ``counts``:
    ``nvlink_counts(topo)`` where the caller has it (one pass over the links)."""
    counts = nvlink_counts(topo) if counts is None else counts
    return "nvlink" if all(counts.get(g, 0) for g in gpus) else "pci"


def facts_of(topo, router, gpus: list[str], known: dict | None = None) -> P2pFacts:
    """``P2pFacts`` of ``gpus`` read from the drawn topology: systems (the router's), NVLinks of each
    GPU (to its NVSwitches, or to every peer directly), SM version, and across systems each GPU's
    network channels (``net_peer_channels``). ``known``: a dict kept across calls on the same
    topology and router (MoE's expert groups), where what does not depend on the GPUs is kept."""
    known = {} if known is None else known
    system = router.system_of
    by_system: dict[object, list[str]] = {}
    for g in gpus:
        by_system.setdefault(system.get(g) or g, []).append(g)
    nodes = len(by_system)
    counts = known.get("nvlink_counts")
    if counts is None:
        counts = known["nvlink_counts"] = nvlink_counts(topo)
    intra = intra_class(topo, gpus, counts)
    members = max(by_system.values(), key=len)
    fabric = router.fabric
    links = 0
    if intra == "nvlink" and len(members) > 1:
        switched = any(fabric.kind.get(v) == "nvswitch" for v in fabric.adj.get(members[0], ()))
        if switched:
            links = min(counts.get(g, 0) for g in members)
        else:   # direct NVLinks: NCCL takes the least over peers; a peer without one is over PCIe
            links = min(_direct_nvlinks(fabric, a, b) for a in members for b in members if a != b)
    sms = sm_range(topo, gpus)
    rails, net = 0, 0
    if nodes > 1:   # the NICs NCCL's channels use (near the GPUs: a DGX A100's storage NIC is not one)
        rails = len(nic_gpus_per_system(topo, fabric, [members], router)[0])
        net = net_peer_channels(topo, router, gpus, known.setdefault("net_channels", {}))
    coll = channel_count(topo, members, rails)
    return P2pFacts(len(gpus), nodes, intra, links, sms[0] if sms else None, coll, net)


def net_peer_channels(topo, router, gpus: list[str], known: dict | None = None) -> int:
    """NCCL's channels for a network peer (ncclTopoGetNchannels, graph/paths.cc master :941-953):
    max(netCount, divUp((int)netBw, 14)) with netCount NICs of the GPU and netBw their path GB/s
    (ncclTopoGetLocalNetCountByBw), 2 for a GPU without a NIC; the least over ``gpus`` (each rank
    has its own; one plan a call takes the least). Sources: ``net_channel_source`` in the p2p file.

    ``known``: each system's answer for its selected GPUs, kept across calls; systems the router finds
    wired alike (``Router.local_twins``) with the same GPUs selected and the same NIC parts share it
    (wired alike is the graph and the inside links' figures: a NIC's speed is its part's)."""
    d = p2p_data()
    known = {} if known is None else known
    fabric = router.fabric
    systems = group_by_system(topo, gpus, router.system_of)
    nic_lists = nic_gpus_per_system(topo, fabric, systems, router)   # (also readies Router.local_twin)
    per_channel = int(d["net_channel_Bps"] / 1e9)
    answers = []
    sids = [router.system_of.get(members[0]) for members in systems]
    for members, pairs, sid, twin in zip(systems, nic_lists, sids, router.local_twins(sids, topo)):
        n = router.prefix_length(sid) if twin is not None else 0
        key = ((twin, tuple(g[n:] for g in members), tuple(topo.devices[nic].part for nic, _gpu in pairs))
               if twin is not None else (sid, tuple(members)))
        if key not in known:
            nics = [nic for nic, _gpu in pairs]
            gpus_of = [g for g in router.system_devices(sid) if fabric.kind.get(g) == "gpu"] if sid else members
            table = {g: _paths_row(topo, fabric, g, nics) for g in members}
            least = None
            for g in members:
                count, bw = _local_net_count_by_bw(table, g, nics, members, gpus_of)
                c = max(count, -(-int(bw) // per_channel)) if count else d["net_channels_without_nic"]
                least = c if least is None else min(least, c)
            known[key] = least
        answers.append(known[key])
    return int(min(answers, default=d["net_channels_without_nic"]))


def _local_net_count_by_bw(table: dict, g: str, nics: list[str], members: list[str], gpus_of: list[str]):
    """(netCount, netBw) of ncclTopoGetLocalNetCountByBw (graph/topo.cc master 5067397:1974-2000) for
    GPU ``g``: the NICs its channels rotate through (ncclTopoGetLocalNet, :2039-2076), each path's GB/s
    added until the sum reaches the GPU's to its CPU. ``table``: each member's (cpu GB/s, {nic: (GB/s,
    path rank)})."""
    cpu_bw, paths = table[g]
    local = _locals(paths, nics)
    if not local:
        return 0, 0.0
    # the GPUs of the call local to its first local NIC (ncclTopoGetLocal from the NIC: best bandwidth, then type)
    to_first = {h: table[h][1][local[0]] for h in members if local[0] in table[h][1]}
    best = max(to_first.values(), key=lambda x: (x[0], -x[1]))
    local_gpus = sum(1 for x in to_first.values() if x == best)
    nets_per_gpu = -(-len(local) // max(local_gpus, 1))
    dev = gpus_of.index(g) if g in gpus_of else members.index(g)   # the CUDA device index on its host
    net = dev % max(local_gpus, 1)
    if len(local) & (len(local) - 1) == 0:
        net = _mirror_bits(net, len(local))
    count, total = 0, 0.0
    for c in range(nets_per_gpu):
        total += paths[local[(net + c) % len(local)]][0]
        count += 1
        if total >= cpu_bw:
            break
    return count, total


def _locals(paths: dict, nics: list[str]) -> list[str]:
    """ncclTopoGetLocal (graph/topo.cc master 5067397:1943-1972): the NICs at the best path bandwidth,
    then the least path type, in NIC order."""
    reached = [n for n in nics if n in paths]
    if not reached:
        return []
    best = max((paths[n] for n in reached), key=lambda x: (x[0], -x[1]))
    return [n for n in reached if paths[n] == best]


def _mirror_bits(val: int, pow2: int) -> int:
    """mirrorBits (graph/topo.h master 5067397:288-294): ``val``'s bits reversed within log2(pow2) bits."""
    mirror, b, mb = 0, 1, pow2 >> 1
    while b < pow2:
        if val & b:
            mirror |= mb
        b, mb = b << 1, mb >> 1
    return mirror


def _paths_row(topo, fabric, g: str, nics: list[str]):
    """(GB/s of ``g``'s path to its local CPU, {NIC: (path GB/s, NCCL path type's rank)}) in NCCL's
    figures (ncclGetLocalCpu, graph/paths.cc master 5067397:188-201: the CPU at the best bandwidth)."""
    widths = _widest_fewest_hops(topo, fabric, g)
    cpu_bw = max((bw for v, bw in widths.items() if fabric.kind.get(v) == "cpu"), default=math.inf)
    paths = {}
    for nic in nics:
        if nic in widths:
            t = gpu_nic_path(fabric, g, nic)
            paths[nic] = (min(widths[nic], _nic_GBps(topo, nic)), rank(t) if t else 99)
    return cpu_bw, paths


def _widest_fewest_hops(topo, fabric, g: str) -> dict[str, float]:
    """NCCL's bandwidth (GB/s) of the widest of the fewest-hop paths from GPU ``g`` to each device it
    reaches over its host's links (PCIe, C2C, CPU links; never through a GPU, NVSwitch or NIC)."""
    d = p2p_data()["nccl_path_bandwidth"]
    adj, bundles, kind = fabric.adj, fabric.bundles, fabric.kind
    width = {g: math.inf}
    frontier = [g]
    while frontier:
        level: dict[str, float] = {}
        for u in frontier:
            for v in adj.get(u, ()):
                if v in width:
                    continue
                b = bundles[(u, v) if u <= v else (v, u)]
                if b.family not in ("pcie", "cpu") or kind.get(v) in ("gpu", "nvswitch"):
                    continue
                w = min(width[u], _bundle_GBps(topo, b, d))
                level[v] = max(level.get(v, 0.0), w)
        width.update(level)
        frontier = [v for v in level if kind.get(v) != "nic"]
    return width


def _bundle_GBps(topo, bundle, d: dict) -> float:
    """NCCL's bandwidth of a PCIe bundle: width x the generation's per-lane figure (the catalog's
    nccl_gen_factor) / ``pcie_divisor``, a width of 0 read as ``pcie_unknown_width`` (``d``: the p2p
    file's nccl_path_bandwidth); other families: not limiting (no NCCL figure held)."""
    if bundle.family != "pcie":
        return math.inf
    total = 0.0
    for lid in bundle.links:
        lk = topo.links[lid]
        lt = topo.link_type_of(lk)
        factor = lt.extra.get("nccl_gen_factor") if lt is not None else None
        if not isinstance(factor, (int, float)):
            return math.inf
        total += (lk.width or d["pcie_unknown_width"]) * factor / d["pcie_divisor"] * lk.count
    return total


def _nic_GBps(topo, nic: str) -> float:
    """A NIC's bandwidth as NCCL reads it: its speed in Mb/s / 8000, 10000 Mb/s where none is given."""
    d = p2p_data()["nccl_path_bandwidth"]
    part = topo.catalog.part(topo.devices[nic].part)
    speed = part.extra.get("nccl_speed_mbps") if part is not None else None
    mbps = speed if isinstance(speed, (int, float)) and speed > 0 else d["nic_unknown_speed_mbps"]
    return mbps / d["nic_mbps_per_GBps"]


def _direct_nvlinks(fabric, a: str, b: str) -> int:
    bundle = fabric.bundles.get((a, b) if a <= b else (b, a))
    if bundle is None or bundle.family != "nvlink":
        return 0
    return int(bundle.units)


def describe(call: P2pCall) -> str:
    """The plan in words, for a result's reason."""
    kib = f"{p2p_data()['ll_threshold_bytes'] / 1024:g} KiB"   # (NCCL_P2P_LL_THRESHOLD, as plan_call reads it)
    why = f"each peer's bytes within its channels x {kib}" if call.protocol == "ll" else f"over {kib} a channel"
    return (f"NCCL's grouped send/receive to every peer: {T.PROTOCOL_LABELS[call.protocol]} ({why}), "
            f"{call.channels_per_peer} channel{'s' if call.channels_per_peer != 1 else ''} a peer, "
            f"{call.channels} of {call.p2p_channels} p2p channels in use, "
            f"{(call.launch_s + call.hop_s) * 1e6:.1f} us a call (NCCL's launch and one hop; its model has no p2p figure)")


def run_all_to_all(sim, size: float, progress=None, cancel=None, requested: str = "direct"):
    """An all-to-all on a ``Simulator`` as NCCL runs it: the direct schedule (by symmetry class where
    the fabric allows) with NCCL's p2p protocol, channels and per-call latency. (Its size and pieces
    are checked by ``Simulator._run``, auto's too.)"""
    o = sim.options
    with cancellable(cancel):
        step("planning channels")
        facts = sim._facts.get("p2p") or sim._facts.setdefault("p2p", facts_of(sim.topo, sim.router, sim.gpus))
        call = plan_call(facts, size, sim.gpus_per_thread())
        step("building the schedule")
        try:
            sched = C.all_to_all(sim.gpus, size, o.chunk, sim.router, call.hop_s, call.pair_cap_Bps)
        except ValueError as exc:
            raise SimulationError(str(exc)) from None
        C.with_launch(sched, call.launch_s)
    scale = T.protocol_efficiency(call.protocol)
    try:
        result = symmetry.run(sim.router, sched, progress, cancel, capacity_scale=scale)
    except RoutingError as exc:
        raise SimulationError(str(exc)) from None
    result.capacity_scale = scale
    reason = ("all-to-all sends every pair directly, as NCCL does; " if requested == "auto" else "") + describe(call)
    out = CollectiveResult("all-to-all", "direct", requested, sim.gpus, size, result.time_s,
                           partial(sim.bound_busbw, "all-to-all"), reason + symmetry.note(sched), result, sched,
                           options=o, protocol=call.protocol, channels=call.channels)
    out.p2p = call
    return out
