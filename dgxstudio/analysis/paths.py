"""Latency and hop count between devices.

A path's latency is the sum of its links' latencies and the traversal latency of every device on it,
ends included (a NIC's latency is paid by the message whether the NIC ends the path or not). Routes
never pass through a GPU. This reproduces the white papers' system-to-system figure: NIC + three
switch hops + NIC = 1.01 us + 3 x 0.09 us = 1.28 us on the DGX-1 fat tree (seed 002, Table 1 note b).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..model.topology import Topology
from .fabric import Fabric


@dataclass
class PathInfo:
    src: str
    dst: str
    latency_s: float
    hops: int
    path: list[str]


def _dijkstra(fab: Fabric, sources: list[str], targets: set[str] | None = None,
              allowed: set[str] | None = None) -> tuple[dict[str, float], dict[str, str | None]]:
    dist: dict[str, float] = {}
    prev: dict[str, str | None] = {}
    heap = []
    for s in sources:
        heapq.heappush(heap, (fab.hop_latency[s], s, None))
    remaining = set(targets) if targets else None
    while heap:
        d, u, p = heapq.heappop(heap)
        if u in dist:
            continue
        dist[u] = d
        prev[u] = p
        if remaining is not None:
            remaining.discard(u)
            if not remaining:
                break
        if fab.is_gpu(u) and p is not None:
            continue
        for v in fab.adj[u]:
            if v in dist or (allowed is not None and v not in allowed):
                continue
            b = fab.bundle(u, v)
            heapq.heappush(heap, (d + b.latency_s + fab.hop_latency[v], v, u))
    return dist, prev


def _network_dijkstra(fab: Fabric, sources: list[str], adj: dict[str, list], extra: dict[str, list]
                      ) -> tuple[dict[str, float], dict[str, str | None]]:
    """``_dijkstra`` on a prepared adjacency: ``adj[u]`` and ``extra[u]`` list (v, link latency, v's hop
    latency) for the neighbours a search may enter; distances add up as in ``_dijkstra``."""
    dist: dict[str, float] = {}
    prev: dict[str, str | None] = {}
    # The least (distance, predecessor) pushed for a node not yet settled: the heap pops (d, v, u) in
    # order, so a later push for v that is not below it can never be the first popped for v.
    pending: dict[str, tuple[float, str]] = {}
    far = (math.inf, "")
    heap = []
    for s in sources:
        heapq.heappush(heap, (fab.hop_latency[s], s, None))
        pending[s] = min(pending.get(s, far), (fab.hop_latency[s], ""))
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        d, u, p = pop(heap)
        if u in dist:
            continue
        dist[u] = d
        prev[u] = p
        if fab.is_gpu(u) and p is not None:
            continue
        for v, lat, hop in itertools.chain(adj.get(u, ()), extra.get(u, ())):
            if v in dist:
                continue
            nd = d + lat + hop
            if (nd, u) < pending.get(v, far):
                pending[v] = (nd, u)
                push(heap, (nd, v, u))
    return dist, prev


def path_latency(topo: Topology, src: str, dst: str, fab: Fabric | None = None) -> PathInfo | None:
    """Lowest-latency path between two devices, or None if they are not connected."""
    fab = fab or Fabric(topo)
    dist, prev = _dijkstra(fab, [src], {dst})
    if dst not in dist:
        return None
    path = [dst]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    path.reverse()
    return PathInfo(src, dst, dist[dst], len(path) - 1, path)


@dataclass
class SystemLatency:
    max_s: float
    min_s: float
    worst_pair: tuple[str, str] | None
    switch_hops_worst: int


def system_to_system_latency(topo: Topology, systems: list[str] | None = None,
                             fab: Fabric | None = None) -> SystemLatency | None:
    """Worst case, over pairs of systems, of the best NIC-to-NIC latency through the network.

    Only network devices (NICs on a network link, network switches) are searched: system-to-system
    traffic does not detour through a third system's PCIe tree.
    """
    fab = fab or Fabric(topo)
    nets = {k for k, b in fab.bundles.items() if b.family in ("infiniband", "ethernet")}
    network_nodes = {end for k in nets for end in k}
    nics_of: dict[str, list[str]] = {}
    for n in network_nodes:
        if fab.kind.get(n) == "nic":
            sid = topo.system_of(n)
            if sid is not None:
                nics_of.setdefault(sid, []).append(n)
    order = [s for s in (systems or topo.groups) if s in nics_of]
    if len(order) < 2:
        return None
    owner = {n: s for s, ns in nics_of.items() for n in ns}
    # Systems wired the same way to the same switches see the same network: one search per class.
    classes: dict[tuple, str] = {}
    for s in order:
        sig = tuple(sorted((nb, round(fab.hop_latency[n] + fab.bundle(n, nb).latency_s, 15))
                           for n in nics_of[s] for nb in fab.adj[n] if nb in network_nodes and fab.kind.get(nb) != "nic"))
        classes.setdefault(sig, s)
    # A NIC with one network link is a dead end: search the switches (and any NIC that can carry
    # traffic through, with two or more network links) only, then step to each end NIC from its switch.
    # The figures are those of a search over every network node: links here add a latency and every
    # device a positive hop latency, so ties pop in (distance, id) order either way.
    net_degree = {n: sum(1 for nb in fab.adj[n] if nb in network_nodes) for n in network_nodes
                  if fab.kind.get(n) == "nic"}
    ends = {n for n, k in net_degree.items() if k == 1}
    end_steps = []  # (NIC, its system, its switch, link latency, NIC hop latency), in a fixed order
    for t in sorted(ends):
        if owner.get(t) is None:
            continue
        sw = next(nb for nb in fab.adj[t] if nb in network_nodes)
        end_steps.append((t, owner[t], sw, fab.bundle(sw, t).latency_s, fab.hop_latency[t]))
    # The network once, without the dead-end NICs: each class's search then visits switches only
    # (the figures of _dijkstra over network_nodes - (ends - sources), with the same sums in the same order).
    passable = network_nodes - ends
    net_adj = {u: [(v, fab.bundle(u, v).latency_s, fab.hop_latency[v]) for v in fab.adj[u] if v in passable]
               for u in network_nodes}
    step_switches = sorted({step[2] for step in end_steps})
    switch_index = {sw: i for i, sw in enumerate(step_switches)}
    systems_seen = sorted({step[1] for step in end_steps})
    system_index = {sid: i for i, sid in enumerate(systems_seen)}
    step_sw = np.array([switch_index[step[2]] for step in end_steps], dtype=np.int64)
    step_owner = np.array([system_index[step[1]] for step in end_steps], dtype=np.int64)
    step_lat = np.array([step[3] for step in end_steps], dtype=float)
    step_hop = np.array([step[4] for step in end_steps], dtype=float)
    worst = (-1.0, None, 0)
    best_any = float("inf")
    for s in classes.values():
        sources = sorted(nics_of[s])
        own_ends: dict[str, list] = {}
        for t in sources:
            if t in ends:
                for sw in fab.adj[t]:
                    if sw in network_nodes:
                        own_ends.setdefault(sw, []).append((t, fab.bundle(sw, t).latency_s, fab.hop_latency[t]))
        dist, prev = _network_dijkstra(fab, sources, net_adj, own_ends)
        nearest: dict[str, tuple[float, str]] = {}
        for n, d in dist.items():
            other = owner.get(n)
            if other is None or other == s:
                continue
            if other not in nearest or (d, n) < nearest[other]:
                nearest[other] = (d, n)
        # Each other system's nearest dead-end NIC, (distance, id) least, over all of them at once: the
        # same sums as dist[sw] + link latency + hop latency one NIC at a time (a dead-end NIC is reached
        # only from its switch; this system's own are its sources, never another system's nearest).
        reach = np.full(len(step_switches), np.inf)
        for i, sw in enumerate(step_switches):
            d = dist.get(sw)
            if d is not None:
                reach[i] = d
        at = reach[step_sw]
        idx = np.nonzero(np.isfinite(at) & (step_owner != system_index.get(s, -1)))[0]
        dd = (at[idx] + step_lat[idx]) + step_hop[idx]
        owners = step_owner[idx]
        order = np.lexsort((idx, dd, owners))
        first = np.ones(len(order), dtype=bool)
        first[1:] = owners[order][1:] != owners[order][:-1]
        for k in order[first].tolist():
            i = int(idx[k])
            t, other, sw = end_steps[i][0], end_steps[i][1], end_steps[i][2]
            cand = (float(dd[k]), t)
            if other not in nearest or cand < nearest[other]:
                nearest[other] = cand
                prev[t] = sw
        for other, (d, n) in sorted(nearest.items(), key=lambda item: item[1]):
            best_any = min(best_any, d)
            if d > worst[0]:
                hops, cur = 0, n
                while prev[cur] is not None:
                    if fab.kind.get(cur) in ("ib_switch", "eth_switch"):
                        hops += 1
                    cur = prev[cur]
                worst = (d, (s, other), hops)
    if worst[1] is None:
        return None
    return SystemLatency(worst[0], best_any, worst[1], worst[2])
