"""NCCL's channels on the drawn topology: which rings and trees a call runs on, and how many channels.

- One system: the NVLink rings the analysis finds (NVSwitch planes or the cube-mesh's Hamiltonian
  rings), each driven in both directions, as NCCL's ring search finds them; NCCL opens two channels
  per NVLink of a GPU (24 on an A100, 12 on a DGX-1 V100), at most ``max_channels``.
- Several systems: one ring per pair of NIC rails. Inside every system the ring enters at the GPU
  closest to one rail's NIC and leaves from the GPU closest to the partner rail's NIC, so consecutive
  systems meet on the same rail (leaf) and every NIC carries one ring in each direction; NCCL opens
  ``channels_per_nic`` channels per NIC. Traffic leaves a system through the NIC closest to the GPU.
- Trees: NCCL's double binary tree across systems with a chain inside, one pair of trees per rail,
  each chain starting at the GPU of its rail's NIC.

Each ring direction carries an equal share of the data; a ring direction stands for
``channels / directions`` identical NCCL channels (same GPUs, same links), so per-channel ceilings
are multiplied by that count rather than simulating identical channels one by one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..cancel import check_cancelled
from ..model.catalog import LinkFamilies
from ..model.topology import Topology
from ..sim.tuning import tuning_data
from .fabric import system_devices, system_map


@dataclass
class ChannelPlan:
    systems: list[list[str]]                  # GPUs of each system, in ring order
    rings: list[list[str]]                    # ring GPU orders (each also driven reversed)
    hops: list[list[list[str]] | None]        # pinned device paths per ring hop, or None (router)
    channels: int                             # NCCL channels
    rails: int                                # NIC rails used across systems (0 on one system)
    via: list[list[list[str] | None] | None] = field(default_factory=list)  # waypoints per hop (rails)
    tree_chains: list[list[list[str]]] = field(default_factory=list)  # per rail: each system's chain
    notes: list[str] = field(default_factory=list)

    @property
    def nodes(self) -> int:
        return len(self.systems)

    @property
    def directions(self) -> int:
        return 2 * len(self.rings)


def group_by_system(topo: Topology, gpus: list[str], system_of: dict[str, str | None] | None = None) -> list[list[str]]:
    """The GPUs of each system, in order: a system frame's, or outside frames the GPUs their NVLink,
    PCIe and CPU links join (``Topology.system_of``, model/nodes.py: NCCL's node is a host). ``system_of``:
    ``system_map(topo)`` already worked out (a router's), used where that map is (more than 64 GPUs)."""
    systems: dict[str, list[str]] = {}
    if len(gpus) > 64:
        system_of = system_of if system_of is not None else system_map(topo)
    else:
        system_of = {g: topo.system_of(g) for g in gpus}
    for g in gpus:
        systems.setdefault(system_of.get(g) or g, []).append(g)
    return list(systems.values())


def nvlink_counts(topo: Topology) -> dict[str, int]:
    """``nvlinks_per_gpu`` of every device that has an NVLink, in one pass over the links (a link type
    looked up once): the same sums, without a walk per device."""
    counts: dict[str, int] = {}
    family = LinkFamilies(topo.catalog)
    for lk in topo.links.values():
        if family[lk.type] == "nvlink":
            counts[lk.a] = counts.get(lk.a, 0) + lk.count
            if lk.b != lk.a:
                counts[lk.b] = counts.get(lk.b, 0) + lk.count
    return counts


def nvlinks_per_gpu(topo: Topology, gpu: str) -> int:
    n = 0
    for lk in topo.links_of(gpu):
        lt = topo.link_type_of(lk)
        if lt is not None and lt.family == "nvlink":
            n += lk.count
    return n


def channel_count(topo: Topology, gpus: list[str], rails: int) -> int:
    c = tuning_data()["channels"]
    if rails:
        n = c["channels_per_nic"] * rails
    else:
        links = min(nvlinks_per_gpu(topo, g) for g in gpus)
        n = 2 * links if links else 2
    return max(1, min(int(c["max_channels"]), n))


def nic_gpus_per_system(topo: Topology, fabric, systems: list[list[str]], router=None) -> list[list[tuple[str, str]]]:
    """``_nic_gpus`` of each system's members. With ``router`` (over this ``fabric``, spreading
    evenly), a system the router finds wired like the first of its class (``Router.local_twin``),
    with the same GPUs selected, takes that one's answer with the prefix swapped: its searches from
    its NICs see the same graph, renamed, so they find the same GPUs. Any other is worked out. The
    router keeps the last answer: asked again for the same systems, it is that one."""
    if router is not None and router.topo is topo:
        devices_of = router.system_devices
    else:
        by_system = system_devices(topo)
        devices_of = lambda sid: by_system.get(sid, [])   # noqa: E731
    if router is None or router.fabric is not fabric or router.spread != "even" or len(systems) < 8:
        out = []
        for m in systems:
            check_cancelled()
            out.append(_nic_gpus(topo, fabric, m, devices_of))
        return out
    # the channel plan and the router's rails ask for every system's GPUs alike: answered once
    key = tuple(map(tuple, systems))
    last = router._nic_gpus_known
    if last is not None and last[0] == key:
        return last[1]
    system = router.system_of
    sids = [system.get(m[0]) if m else None for m in systems]
    router.offsets_in_bulk([sid for sid in sids if sid is not None])  # (as the ring loads then do)
    answers: dict[str, tuple[list[str], list[tuple[str, str]]]] = {}  # first of a class -> (its GPUs, answer), relative
    out = []
    for members, sid, twin in zip(systems, sids, router.local_twins(sids, topo)):
        check_cancelled()
        if twin is None:
            out.append(_nic_gpus(topo, fabric, members, devices_of))
            continue
        prefix = router._signatures[sid][2]
        n = len(prefix)
        rel = [g[n:] for g in members] if all(g.startswith(prefix) for g in members) else None
        known = answers.get(twin)
        if rel is not None and known is not None and known[0] == rel:
            out.append([(prefix + a, prefix + b) for a, b in known[1]])
            continue
        found = _nic_gpus(topo, fabric, members, devices_of)
        out.append(found)
        if twin == sid and rel is not None and known is None:
            answers[sid] = (rel, [(a[n:], b[n:]) for a, b in found])
    router._nic_gpus_known = (key, out)  # (read, never changed, by its callers)
    return out


def _nic_gpus(topo: Topology, fabric, members: list[str], devices_of=None) -> list[tuple[str, str]]:
    """(NIC, its GPU) for each compute NIC of the members' system, in rail (document) order.

    A NIC's GPU is one of the selected GPUs nearest to it over the system's own links (the GPUs
    under its PCIe switch); NICs sharing a switch take different GPUs, as NCCL pairs them. ``devices_of``:
    a system's devices by its id (``fabric.system_devices``'s, as ``Router.system_devices`` keeps them)."""
    if not members:
        return []
    sid = topo.system_of(members[0])
    if sid is None or sid not in topo.groups:
        return []
    wanted = set(members)
    taken: set[str] = set()
    out = []
    for did in cabled_compute_nics(topo, fabric, devices_of(sid) if devices_of is not None
                                   else system_devices(topo).get(sid, [])):
        nearest = _nearest_gpus(fabric, did, wanted)
        if not nearest:
            continue
        free = [g for g in nearest if g not in taken]
        gpu = free[0] if free else nearest[0]
        taken.add(gpu)
        out.append((did, gpu))
    return out


def cabled_compute_nics(topo: Topology, fabric, devices):
    """The compute NICs among ``devices`` (a system's, in its order) with an InfiniBand or Ethernet
    link in ``fabric``: the NICs a run can send through."""
    for did in devices:
        dev = topo.devices[did]
        if dev.kind != "nic" or dev.properties.get("role", "compute") != "compute":
            continue
        if any(fabric.bundle(did, v).family in ("infiniband", "ethernet") for v in fabric.adj.get(did, [])):
            yield did


def _nearest_gpus(fabric, nic: str, wanted: set[str]) -> list[str]:
    """The selected GPUs at the fewest hops from a NIC over non-network links, in document order."""
    seen = {nic}
    frontier = [nic]
    adj, bundles, kind = fabric.adj, fabric.bundles, fabric.kind
    while frontier:
        found, nxt = [], []
        for u in frontier:
            for v in adj[u]:
                if v in seen or bundles[(u, v) if u <= v else (v, u)].family in ("infiniband", "ethernet"):
                    continue
                seen.add(v)
                if v in wanted:
                    found.append(v)
                elif kind.get(v) != "gpu":
                    nxt.append(v)
        if found:
            return sorted(found, key=_natural) if len(found) > 1 else found
        frontier = nxt
    return []


_DIGIT_RUNS = re.compile(r"(\d+)")


def _natural(name: str):
    return [int(x) if x.isdigit() else x for x in _DIGIT_RUNS.split(name)]


def _hamiltonian_path(members: list[str], start: str, end: str, adj: dict[str, set[str]]) -> list[str] | None:
    """A path through every member over direct NVLinks from start to end (small systems)."""
    if start == end:
        return None
    n = len(members)
    path = [start]
    used = {start}
    budget = [20000]

    def extend() -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if len(path) == n - 1:
            if end in adj.get(path[-1], ()):
                path.append(end)
                return True
            return False
        for v in sorted(adj.get(path[-1], ())):
            if v in used or v == end or v not in members_set:
                continue
            used.add(v)
            path.append(v)
            if extend():
                return True
            path.pop()
            used.discard(v)
        return False

    members_set = set(members)
    return path if extend() else None


def _chain(members: list[str], start: str, end: str | None, direct: dict[str, set[str]],
           switched: bool) -> list[str]:
    """Members from start to end: any order through NVSwitches, a Hamiltonian NVLink path on a mesh."""
    if end is None or end == start:
        return [start] + [g for g in members if g != start]
    if not switched:
        path = _hamiltonian_path(members, start, end, direct)
        if path is not None:
            return path
    return [start] + [g for g in members if g not in (start, end)] + [end]


def plan(topo: Topology, gpus: list[str], fabric, local_rings, system_of: dict | None = None,
         router=None) -> ChannelPlan:
    """NCCL's channels for ``gpus``. ``local_rings`` gives one system's NVLink rings (a RingResult);
    ``system_of``: ``system_map(topo)`` if already worked out; ``router``: a ``Router`` over
    ``fabric``, whose classes of systems wired alike serve the NICs' GPUs (``nic_gpus_per_system``)."""
    systems = group_by_system(topo, gpus, system_of)
    if len(systems) == 1:
        rings = [list(r.gpus) for r in local_rings.rings]
        hops = [list(r.hops) if any(fabric.kind.get(d) == "gpu" for h in r.hops for d in h[1:-1]) else None
                for r in local_rings.rings]
        return ChannelPlan(systems, rings, hops, channel_count(topo, gpus, 0), 0)
    direct: dict[str, set[str]] = {}
    switched_sys = []
    adj, bundles, kind = fabric.adj, fabric.bundles, fabric.kind
    for members in systems:
        check_cancelled()
        sw = False
        for g in members:
            for v in adj.get(g, ()):
                if bundles[(g, v) if g <= v else (v, g)].family != "nvlink":
                    continue
                if kind.get(v) == "gpu":
                    direct.setdefault(g, set()).add(v)
                elif kind.get(v) == "nvswitch":
                    sw = True
        switched_sys.append(sw)
    nic_gpus = nic_gpus_per_system(topo, fabric, systems, router)
    rails = min(len(x) for x in nic_gpus)
    notes = []
    if rails == 0:
        rails_used = 1
        notes.append("a system has no compute NIC near the selected GPUs: one ring over whatever route joins them")
        entry_exit = [[(m[0], m[-1])] for m in systems]
    else:
        rails_used = rails
        entry_exit = []
        for x in nic_gpus:
            pairs = []
            for r in range(0, rails, 2):
                a = x[r][1]
                b = x[r + 1][1] if r + 1 < rails else None
                pairs.append((a, b))
            entry_exit.append(pairs)
    n_rings = len(entry_exit[0])
    nic_of = {gpu: nic for x in nic_gpus for nic, gpu in x}
    rings: list[list[str]] = []
    ring_hops: list[list[list[str]] | None] = []
    for k in range(n_rings):
        order: list[str] = []
        bounds = []
        for s, members in enumerate(systems):
            check_cancelled()
            a, b = entry_exit[s][k]
            if b is None or a == b:
                b = next((g for g in reversed(members) if g != a), None)
            start, end = (a, b) if s % 2 == 0 else (b, a)
            if start is None:
                start, end = end, None
            chain = _chain(members, start, end, direct, switched_sys[s])
            bounds.append((len(order), len(order) + len(chain) - 1))
            order.extend(chain)
        hops: list[list[str] | None] = [None] * len(order)
        for s in range(len(systems)):
            i = bounds[s][1]
            j = bounds[(s + 1) % len(systems)][0]
            ga, gb = order[i], order[j]
            if ga in nic_of and gb in nic_of:
                hops[i] = [ga, nic_of[ga], nic_of[gb], gb]
        rings.append(order)
        ring_hops.append(hops if any(h is not None for h in hops) else None)
    chains = []
    for r in range(max(rails, 1)):
        per_sys = []
        for s, members in enumerate(systems):
            head = nic_gpus[s][r][1] if rails else members[0]
            if switched_sys[s]:
                # NCCL's tree search on NVSwitch systems tries each GPU's previous neighbour first
                # (NCCL 2.19 and later, src/graph/search.cc, ncclTopoSearchNextGpuSort: "NVSwitches
                # prefer when we talk to a limited set of peers. Try to use neighbors first", prevGpu
                # first for the tree patterns): the chain from the head GPU runs down the GPU indices
                # and wraps around, so each rail's chain uses every GPU's NVLinks alike
                k = members.index(head)
                per_sys.append([members[(k - i) % len(members)] for i in range(len(members))])
            else:
                per_sys.append(_chain(members, head, None, direct, False) if not direct
                               else _mesh_chain(members, head, direct))
        chains.append(per_sys)
    return ChannelPlan(systems, rings, [None] * len(rings), channel_count(topo, gpus, rails_used), rails,
                       via=ring_hops, tree_chains=chains, notes=notes)


def tree_rails(plan: ChannelPlan) -> list[list[list[str]]]:
    """The rails NCCL's tree runs its pairs of trees on: ``plan.tree_chains`` up to half the channels.

    NCCL searches its tree graph with as many channels as its ring graph found, at most MAXCHANNELS/2
    (src/init.cc: ringGraph->maxChannels = MAXCHANNELS/2, treeGraph->maxChannels = ringGraph->nChannels),
    a NIC each, then doubles them, one channel per tree of a pair. A pair for each of a GB200 NVL72
    rack's 72 rails made 144 trees for 32 channels, each a fifth of a channel through a chain of 72
    GPUs that its 3 or 4 pieces could not fill: 34 GB/s busbw on 4 racks at 256 MiB, the ring 284.
    Where the rails outnumber the pairs, the pairs take rails evenly spread, as many as the largest
    divisor of the rail count within the cap (12 of a rack's 72), so that the pairs stay images of each
    other under a rail shift and tree_fold.py runs them as one: the first 16 rails took 9.4 s for one
    256 MiB run on 2 racks (56,347 events; 0.3 s so), and 174.9 GB/s against 171.8."""
    chains = plan.tree_chains
    rails = len(chains)
    cap = max(plan.channels // 2, 1)
    if rails <= cap:
        return chains
    pairs = max(k for k in range(1, cap + 1) if rails % k == 0)
    return chains[::rails // pairs]


def _mesh_chain(members: list[str], head: str, direct: dict[str, set[str]]) -> list[str]:
    for end in members:
        if end == head:
            continue
        path = _hamiltonian_path(members, head, end, direct)
        if path is not None:
            return path
    return [head] + [g for g in members if g != head]


def reverse_ring(order: list[str], *per_hop: list | None):
    """A ring driven the other way: its order from the same start, and each per-hop list (device
    paths, waypoints) re-indexed and reversed: hop i of the reverse is hop n-1-i backwards."""
    n = len(order)
    out = [[order[0], *order[:0:-1]]]
    for hops in per_hop:
        out.append([h[::-1] if (h := hops[(n - 1 - i) % n]) is not None else None for i in range(n)]
                   if hops is not None else None)
    return out


def ring_directions(plan: ChannelPlan) -> list[tuple[list[str], list | None, list | None]]:
    """Every ring direction of a plan: (GPU order, pinned hops, waypoints per hop)."""
    out = []
    vias = plan.via or [None] * len(plan.rings)
    for order, hops, via in zip(plan.rings, plan.hops, vias):
        out.append((order, hops, via))
        out.append(tuple(reverse_ring(order, hops, via)))
    return out


def hop_route(router, order: list[str], hops, via, k: int):
    a, b = order[k], order[(k + 1) % len(order)]
    hop = hops[k] if hops is not None else None
    way = via[k] if via is not None else None
    return router.direct(hop) if hop is not None else router.via(way) if way is not None else router.routes(a, b)


def hop_loads(router, order: list[str], hops, via, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``hop_route(...).channels, .weights`` without building device paths where the router can say
    them from a shape it already searched (the same arrays, element by element)."""
    hop = hops[k] if hops is not None else None
    if hop is None:
        way = via[k] if via is not None else None
        if way is not None:
            return router.via_loads(way)
        fast = router.channel_loads(order[k], order[(k + 1) % len(order)])
        if fast is not None:
            return fast[0], fast[1]
    r = hop_route(router, order, hops, via, k)
    return r.channels, r.weights


def ring_loads(plan: ChannelPlan, router, fast: bool = True, by_hop: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every ring direction's hops' channels and weights, one after the other (hop order). ``fast``:
    runs of hops through one system and GPU-NIC-NIC-GPU hops read from templates kept once per class
    of systems wired alike (``ring_segments``), the other hops without device paths where the router
    can (``hop_loads``); else every hop's route. ``by_hop``: every hop's route, read from those
    templates where it can (``ring_segments.HopRoutes``, which keeps them for the engine's rings over
    the same hops). All give the same arrays, element by element."""
    if fast and not by_hop:
        from .ring_segments import ring_loads_by_template

        return ring_loads_by_template(plan, router)
    hops_of = None
    if by_hop:
        from .ring_segments import HopRoutes

        hops_of = HopRoutes.of(router)
        system = router.system_of
        if router.spread == "even":  # every system's channel offset, checked together
            router.offsets_in_bulk([sid for members in plan.systems if (sid := system.get(members[0])) is not None])
    chans, weights = [], []
    for order, hops, via in ring_directions(plan):
        check_cancelled()
        n = len(order)
        for k in range(n):
            if k % 64 == 63:
                check_cancelled()
            r = None
            if hops_of is not None and (hops is None or hops[k] is None):
                r = hops_of.route(order[k], order[(k + 1) % n], via[k] if via is not None else None)
            if r is None:
                r = hop_route(router, order, hops, via, k)
            chans.append(r.channels)
            weights.append(r.weights)
    if not chans:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(chans).astype(np.int64), np.concatenate(weights)


def ring_rates(plan: ChannelPlan, router, by_hop: bool = False) -> list[float]:
    """Per-direction rate of every ring direction when all run at once at one rate: each link's
    capacity shared by the ring directions its routes put on it (the routes the engine uses).
    ``by_hop``: the loads read hop by hop from routes kept for the engine's rings (a simulation's),
    else by runs of hops (the same arrays)."""
    dirs = ring_directions(plan)
    chans, weights = ring_loads(plan, router, by_hop=by_hop)
    cap = np.asarray(router.capacity, dtype=float)
    if not len(chans):
        return [0.0] * len(dirs)
    load = np.bincount(chans, weights=weights, minlength=len(cap))
    used = load > 0
    slowest = float(np.min(cap[used] / load[used])) if used.any() else 0.0
    return [slowest] * len(dirs)
