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

from ..cancel import check_cancelled
from ..model.topology import Topology
from .fabric import Fabric, system_map


# From this many classes of systems on, their searches run all at once (``_batched_nearest``).
BATCH_CLASSES = 3


@dataclass
class PathInfo:
    src: str
    dst: str
    latency_s: float
    hops: int
    path: list[str]


def _dijkstra(fab: Fabric, sources: list[str], targets: set[str] | None = None,
              allowed: set[str] | None = None, least_pushes: bool = False, targets_only_gpus: bool = False
              ) -> tuple[dict[str, float], dict[str, str | None]]:
    """Least-latency search from ``sources`` (stopping once every target is reached), entering only
    ``allowed`` nodes when given. With ``least_pushes`` a node is pushed only when it beats the least
    (distance, predecessor) already pushed for it: the heap pops (d, v, u) in order, so a push that is
    not below it can never be the first popped for v. The same distances and predecessors, with a
    fraction of the heap traffic (a large fabric offers most nodes from many neighbours).

    With ``targets_only_gpus`` a GPU that is not a target is never pushed: a route ends at a GPU and
    never passes through one, so such a GPU only ends the search there, and leaving it out of the heap
    changes no other entry's order. Every other node's distance and predecessor are the same; those
    GPUs are left out (every GPU of a large cluster, when the caller reads only the targets')."""
    dist: dict[str, float] = {}
    prev: dict[str, str | None] = {}
    pending: dict[str, tuple[float, str]] = {}
    far = (math.inf, "")
    heap = []
    hop = fab.hop_latency
    for s in sources:
        heapq.heappush(heap, (hop[s], s, None))
        pending[s] = min(pending.get(s, far), (hop[s], ""))
    remaining = set(targets) if targets else None
    if targets_only_gpus and remaining is None:
        raise ValueError("targets_only_gpus needs the targets")
    popped = 0
    adj, bundles, kind = fab.adj, fab.bundles, fab.kind
    push, pop, waiting = heapq.heappush, heapq.heappop, pending.get
    while heap:
        d, u, p = pop(heap)
        popped += 1
        if not popped & 4095:
            check_cancelled()
        if u in dist:
            continue
        dist[u] = d
        prev[u] = p
        if remaining is not None:
            remaining.discard(u)
            if not remaining:
                break
        if p is not None and kind.get(u) == "gpu":
            continue
        for v in adj[u]:
            if v in dist or (allowed is not None and v not in allowed):
                continue
            if targets_only_gpus and v not in remaining and kind.get(v) == "gpu":
                continue
            nd = d + bundles[(u, v) if u <= v else (v, u)].latency_s + hop[v]  # fab.bundle(u, v), inlined
            if least_pushes:
                if not (nd, u) < waiting(v, far):
                    continue
                pending[v] = (nd, u)
            push(heap, (nd, v, u))
    return dist, prev


def _network_dijkstra(fab: Fabric, sources: list[str], adj: dict[str, list], extra: dict[str, list],
                      gpus: set[str] | None = None) -> tuple[dict[str, float], dict[str, str | None]]:
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
    waiting = pending.get
    if gpus is None:  # GPUs among the nodes (a search does not pass through one); callers pass it once
        gpus = {n for n in adj if fab.is_gpu(n)} | {n for n in extra if fab.is_gpu(n)}
    none: tuple = ()
    popped = 0
    while heap:
        d, u, p = pop(heap)
        popped += 1
        if not popped & 4095:
            check_cancelled()
        if u in dist:
            continue
        dist[u] = d
        prev[u] = p
        if p is not None and u in gpus:
            continue
        more = extra.get(u)
        for v, lat, hop in (itertools.chain(adj.get(u, none), more) if more else adj.get(u, none)):
            if v in dist:
                continue
            nd = d + lat + hop
            if (nd, u) < waiting(v, far):
                pending[v] = (nd, u)
                push(heap, (nd, v, u))
    return dist, prev


def path_latency(topo: Topology, src: str, dst: str, fab: Fabric | None = None) -> PathInfo | None:
    """Lowest-latency path between two devices, or None if they are not connected."""
    return path_latencies(topo, src, [dst], fab)[0]


def path_latencies(topo: Topology, src: str, dsts: list[str], fab: Fabric | None = None) -> list[PathInfo | None]:
    """``path_latency`` from one device to each of several, from one search: the search pops nodes in
    the same order whatever it stops at, so each destination's distance and path are those of a
    search stopping at it."""
    fab = fab or Fabric(topo)
    system_of = system_map(topo)
    # Systems hanging off the rest of the fabric by one device (all their NICs on one leaf) hold no
    # route to anything outside them: a route in would leave by the same device, already settled.
    # Unless they hold an end, the search need not enter them.
    ends = {system_of.get(n) for n in (src, *dsts)}
    dist, prev = _dijkstra(fab, [src], set(dsts), allowed=_outside_hanging_systems(fab, system_of, ends),
                           least_pushes=True, targets_only_gpus=True)
    out: list[PathInfo | None] = []
    for dst in dsts:
        if dst not in dist:
            out.append(None)
            continue
        path = [dst]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        path.reverse()
        out.append(PathInfo(src, dst, dist[dst], len(path) - 1, path))
    return out


class _Outside:
    """The nodes a search may enter: all but the devices of ``hanging`` systems (``in`` only)."""

    def __init__(self, system_of: dict[str, str | None], hanging: set[str]):
        self.system_of, self.hanging = system_of, hanging

    def __contains__(self, node: str) -> bool:
        return self.system_of.get(node) not in self.hanging


def _outside_hanging_systems(fab: Fabric, system_of: dict[str, str | None], keep: set) -> _Outside | None:
    """The nodes outside every system (other than those in ``keep``) whose devices reach the rest of
    the fabric through one device alone, or None when there is no such system."""
    reach: dict[str, set[str] | None] = {}  # system -> the devices outside it that its devices touch
    adj = fab.adj
    for k, (d, sid) in enumerate(system_of.items()):
        if not k & 16383:
            check_cancelled()
        if sid is None or sid in keep:
            continue
        out = reach.get(sid, set())
        if out is None:
            continue
        for nb in adj.get(d, ()):
            if system_of.get(nb) != sid:
                out.add(nb)
        reach[sid] = out if len(out) <= 1 else None
    hanging = {sid for sid, out in reach.items() if out is not None and len(out) == 1}
    return _Outside(system_of, hanging) if hanging else None


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
    system_of = system_map(topo)
    for n in network_nodes:
        if fab.kind.get(n) == "nic":
            sid = system_of.get(n)
            if sid is not None:
                nics_of.setdefault(sid, []).append(n)
    order = [s for s in (systems or topo.groups) if s in nics_of]
    if len(order) < 2:
        return None
    owner = {n: s for s, ns in nics_of.items() for n in ns}
    kind, adj, bundles, hop = fab.kind, fab.adj, fab.bundles, fab.hop_latency
    # each network NIC's network neighbours, in adjacency order
    net_nbrs = {n: [nb for nb in adj[n] if nb in network_nodes] for n in network_nodes if kind.get(n) == "nic"}
    # Systems wired the same way to the same switches see the same network: one search per class.
    classes: dict[tuple, str] = {}
    for k, s in enumerate(order):
        if not k & 255:
            check_cancelled()
        sig = tuple(sorted((nb, round(hop[n] + bundles[(n, nb) if n <= nb else (nb, n)].latency_s, 15))
                           for n in nics_of[s] for nb in net_nbrs[n] if kind.get(nb) != "nic"))
        classes.setdefault(sig, s)
    # A NIC with one network link is a dead end: search the switches (and any NIC that can carry
    # traffic through, with two or more network links) only, then step to each end NIC from its switch.
    # The figures are those of a search over every network node: links here add a latency and every
    # device a positive hop latency, so ties pop in (distance, id) order either way.
    ends = {n for n, nbs in net_nbrs.items() if len(nbs) == 1}
    end_steps = []  # (NIC, its system, its switch, link latency, NIC hop latency), in a fixed order
    for t in sorted(ends):
        if owner.get(t) is None:
            continue
        sw = net_nbrs[t][0]
        end_steps.append((t, owner[t], sw, bundles[(sw, t) if sw <= t else (t, sw)].latency_s, hop[t]))
    # The network once, without the dead-end NICs: each class's search then visits switches only
    # (the figures of _dijkstra over network_nodes - (ends - sources), with the same sums in the same order).
    passable = network_nodes - ends
    reps = list(classes.values())
    # the nodes a search enters, and the classes' own dead-end NICs, which start their searches
    # (no other dead-end NIC is ever expanded)
    expanded = itertools.chain(passable, (t for s in reps for t in nics_of[s] if t in ends))
    net_adj = {u: [(v, bundles[(u, v) if u <= v else (v, u)].latency_s, hop[v]) for v in adj[u] if v in passable]
               for u in expanded}
    net_gpus = {n for n in network_nodes if kind.get(n) == "gpu"}
    step_switches = sorted({step[2] for step in end_steps})
    switch_index = {sw: i for i, sw in enumerate(step_switches)}
    systems_seen = sorted({step[1] for step in end_steps})
    system_index = {sid: i for i, sid in enumerate(systems_seen)}
    step_sw = np.array([switch_index[step[2]] for step in end_steps], dtype=np.int64)
    step_owner = np.array([system_index[step[1]] for step in end_steps], dtype=np.int64)
    step_lat = np.array([step[3] for step in end_steps], dtype=float)
    step_hop = np.array([step[4] for step in end_steps], dtype=float)
    def class_search(s: str) -> tuple[dict[str, tuple[float, str]], dict[str, str | None]]:
        """One class's search: each other system's nearest NIC (distance, id) and the predecessors."""
        sources = sorted(nics_of[s])
        own_ends: dict[str, list] = {}
        for t in sources:
            if t in ends:
                for sw in fab.adj[t]:
                    if sw in network_nodes:
                        own_ends.setdefault(sw, []).append((t, fab.bundle(sw, t).latency_s, fab.hop_latency[t]))
        dist, prev = _network_dijkstra(fab, sources, net_adj, own_ends, net_gpus)
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
        return nearest, prev

    def hops_to(n: str, prev: dict[str, str | None]) -> int:
        hops, cur = 0, n
        while prev[cur] is not None:
            if fab.kind.get(cur) in ("ib_switch", "eth_switch"):
                hops += 1
            cur = prev[cur]
        return hops

    if len(reps) < BATCH_CLASSES:  # a search or two: the figures straight from them
        worst = (-1.0, None, 0)
        best_any = float("inf")
        for s in reps:
            check_cancelled()
            nearest, prev = class_search(s)
            for other, (d, n) in sorted(nearest.items(), key=lambda item: item[1]):
                best_any = min(best_any, d)
                if d > worst[0]:
                    worst = (d, (s, other), hops_to(n, prev))
    else:
        # Every class at once (_batched_nearest: the same sums and minima as the searches), then the
        # worst class's own search again for the route of its worst pair.
        found = _batched_nearest(fab, reps, nics_of, owner, network_nodes, ends, net_adj, net_gpus, end_steps)
        worst = (-1.0, None, 0)
        best_any = float("inf")
        for s, (low, high, far) in zip(reps, found):
            if far is not None:
                best_any = min(best_any, low)
                if high > worst[0]:
                    worst = (high, (s, far), 0)
        if worst[1] is not None:
            s, far = worst[1]
            nearest, prev = class_search(s)
            worst = (worst[0], worst[1], hops_to(nearest[far][1], prev))
    if worst[1] is None:
        return None
    return SystemLatency(worst[0], best_any, worst[1], worst[2])


def _twin_groups(n_nodes: int, tails: list[int], heads: list[int], lats: list[float], hops: list[float]) -> list[int]:
    """Each node's group of twins: nodes with the same edges out (head, link, head's hop) and in (tail,
    link, own hop). Any permutation of twins maps the edge list onto itself, so relaxing from a start
    so permuted gives each node the distance its image had, bit for bit (every sum and minimum is
    taken over the same figures). A leaf's systems hang off it: the leaves of one pod are twins."""
    out_e: list[list] = [[] for _ in range(n_nodes)]
    in_e: list[list] = [[] for _ in range(n_nodes)]
    for t, h, link, hp in zip(tails, heads, lats, hops):
        out_e[t].append((h, link, hp))
        in_e[h].append((t, link, hp))
    ids: dict[tuple, int] = {}
    return [ids.setdefault((tuple(sorted(o)), tuple(sorted(i))), len(ids)) for o, i in zip(out_e, in_e)]


def _relax(starts: list[dict[int, float]], n_nodes: int, tail: np.ndarray, head: np.ndarray, lat: np.ndarray,
           hop: np.ndarray) -> np.ndarray:
    """Distances from each start (one column each): Bellman-Ford in numpy, each step adding
    ``(d + link) + hop`` over the edges (sorted by head) whose tail changed, until nothing does."""
    dist = np.full((n_nodes, len(starts)), np.inf)
    changed = np.zeros(n_nodes, dtype=bool)
    for c, start in enumerate(starts):
        for i, d in start.items():
            dist[i, c] = d
            changed[i] = True
    while True:
        check_cancelled()
        sel = np.flatnonzero(changed[tail])
        if not len(sel):
            break
        h = head[sel]
        cand = dist[tail[sel]]
        cand += lat[sel]
        cand += hop[sel]
        first = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
        low = np.minimum.reduceat(cand, first, axis=0)
        targets = h[first]
        current = dist[targets]
        moved = (low < current).any(axis=1)
        targets = targets[moved]
        dist[targets] = np.minimum(low[moved], current[moved])
        changed = np.zeros(n_nodes, dtype=bool)
        changed[targets] = True
    return dist


def _twin_permutation(start_a: dict[int, float], start_b: dict[int, float], group: list[int],
                      members: dict[int, list[int]], n_nodes: int) -> np.ndarray:
    """A permutation of twins taking start ``a`` to start ``b`` (the same figures on twins): node x to
    perm[x]. Within each group the started nodes are paired by (figure, node), the rest in order."""
    perm = np.arange(n_nodes)
    by_group_a: dict[int, list] = {}
    by_group_b: dict[int, list] = {}
    for i, d in start_a.items():
        by_group_a.setdefault(group[i], []).append((d, i))
    for i, d in start_b.items():
        by_group_b.setdefault(group[i], []).append((d, i))
    for g, pairs_a in by_group_a.items():
        pairs_a.sort()
        pairs_b = sorted(by_group_b[g])
        taken_a = {i for _, i in pairs_a}
        taken_b = {i for _, i in pairs_b}
        src = [i for _, i in pairs_a] + [x for x in members[g] if x not in taken_a]
        dst = [i for _, i in pairs_b] + [x for x in members[g] if x not in taken_b]
        perm[src] = dst
    return perm


def _batched_nearest(fab: Fabric, reps: list[str], nics_of: dict[str, list[str]], owner: dict[str, str],
                     network_nodes: set[str], ends: set[str], net_adj: dict[str, list], net_gpus: set[str],
                     end_steps: list[tuple]) -> list[tuple[float, float, str | None]]:
    """For each class's system s, over the other systems' nearest NICs (least (distance, id)): the least
    distance, the greatest, and the system whose nearest NIC is farthest (least NIC id among ties),
    or (inf, -inf, None) when s reaches none.

    The distances are those of ``_network_dijkstra`` from s's NICs, bit for bit: every class is relaxed
    at once (Bellman-Ford in numpy, one column per class, one row per node so that a step gathers whole
    rows), each step adding ``(d + link) + hop`` as the search does. Rounding never lowers a sum, so both
    give each node the least such sum over its routes. Dead-end NICs are no nodes here: a class's own
    dead-end NICs start it at their switches with ``(hop + link) + switch hop`` (the search's first step
    from them), and another system's dead-end NIC is reached from its switch afterwards, as in
    ``system_to_system_latency``. Dead-end NICs of one system behind the same switch with the same
    figures have the same distance in every class, so only the least id among them is kept.
    """
    nodes = sorted(network_nodes - ends)
    at = {n: i for i, n in enumerate(nodes)}
    tails, heads, lats, hops = [], [], [], []
    for u in nodes:
        if u in net_gpus:  # a route never passes through a GPU (and no GPU is a source)
            continue
        iu = at[u]
        for v, lat, hop in net_adj.get(u, ()):
            tails.append(iu)
            heads.append(at[v])
            lats.append(lat)
            hops.append(hop)
    tail = np.asarray(tails, dtype=np.int64)
    head = np.asarray(heads, dtype=np.int64)
    by_head = np.argsort(head, kind="stable")
    tail, head = tail[by_head], head[by_head]
    lat = np.asarray(lats, dtype=float)[by_head][:, None]
    hop = np.asarray(hops, dtype=float)[by_head][:, None]
    n_nodes = len(nodes)
    # Candidates for "nearest NIC of another system": passable owned NICs (their own distance) and
    # dead-end NICs (their switch's distance plus the step), grouped by owner, ranked by id.
    systems = sorted({owner[n] for n in owner})
    sys_index = {sid: i for i, sid in enumerate(systems)}
    cand_ids = [n for n in nodes if n in owner] + [step[0] for step in end_steps]
    id_rank = {n: r for r, n in enumerate(sorted(cand_ids))}
    best: dict[tuple, tuple] = {}  # (owner, node, link, hop) -> the least rank among identical candidates
    for n in nodes:
        if n in owner:
            best[(sys_index[owner[n]], at[n], 0.0, 0.0, n)] = (id_rank[n],)
    for t, sid, sw, link, t_hop in end_steps:
        key = (sys_index[sid], at[sw], link, t_hop, None)
        r = id_rank[t]
        if key not in best or r < best[key][0]:
            best[key] = (r,)
    keys = sorted(best, key=lambda k: (k[0], best[k][0]))  # by owner
    c_owner = np.asarray([k[0] for k in keys], dtype=np.int64)
    c_node = np.asarray([k[1] for k in keys], dtype=np.int64)
    # x + 0.0 + 0.0 is x: a passable NIC's own distance goes through the same sums unchanged
    c_lat = np.asarray([k[2] for k in keys], dtype=float)[:, None]
    c_hop = np.asarray([k[3] for k in keys], dtype=float)[:, None]
    c_rank = np.asarray([best[k][0] for k in keys], dtype=np.int64)[:, None]
    starts = np.flatnonzero(np.r_[True, c_owner[1:] != c_owner[:-1]]) if len(keys) else c_owner
    counts = np.diff(np.r_[starts, len(keys)])
    group_owner = c_owner[starts]
    never = np.iinfo(np.int64).max

    out: list[tuple[float, float, str | None]] = []
    if not len(keys):
        return [(np.inf, -np.inf, None) for _ in reps]
    # Each class's start: the least first-step figure per node (as the searches start).
    class_starts: list[dict[int, float]] = []
    for s in reps:
        start: dict[int, float] = {}
        for t in nics_of[s]:
            h = fab.hop_latency[t]
            if t in ends:  # the search's first step from a dead-end source NIC
                for v, link, v_hop in net_adj.get(t, ()):
                    i = at[v]
                    d = (h + link) + v_hop
                    if d < start.get(i, np.inf):
                        start[i] = d
            else:
                i = at[t]
                if h < start.get(i, np.inf):
                    start[i] = h
        class_starts.append(start)
    # Classes alike up to twins share one relaxation (see _twin_groups); the others read it permuted.
    group = _twin_groups(n_nodes, tails, heads, lats, hops)
    first_of: dict[tuple, int] = {}   # a start's form -> the class whose relaxation serves it
    served: list[int] = []
    for r, start in enumerate(class_starts):
        form = tuple(sorted((group[i], d) for i, d in start.items()))
        served.append(first_of.setdefault(form, r))
    last_use: dict[int, int] = {}
    for r, base in enumerate(served):
        last_use[base] = r
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group):
        members.setdefault(g, []).append(i)
    relaxed: dict[int, np.ndarray] = {}  # a serving class -> its distances, kept while a class needs them
    chunk = max(1, min(256, 8_000_000 // max(1, len(tail), len(keys))))
    for lo in range(0, len(reps), chunk):
        batch = reps[lo:lo + chunk]
        cols = len(batch)
        own = [r for r in range(lo, lo + cols) if served[r] == r]
        if own:
            found = _relax([class_starts[r] for r in own], n_nodes, tail, head, lat, hop)
            for k, r in enumerate(own):
                relaxed[r] = found[:, k]
        dist = np.empty((n_nodes, cols))
        for c in range(cols):
            r = lo + c
            base = served[r]
            if base == r:
                dist[:, c] = relaxed[r]
            else:
                dist[_twin_permutation(class_starts[base], class_starts[r], group, members, n_nodes), c] = relaxed[base]
        for base in [b for b in relaxed if last_use[b] < lo + cols]:
            del relaxed[base]
        # candidate distances (one column per class), this class's own system left out
        vals = (dist[c_node] + c_lat) + c_hop
        mine = np.asarray([sys_index.get(s, -1) for s in batch], dtype=np.int64)
        vals[c_owner[:, None] == mine[None, :]] = np.inf
        least = np.minimum.reduceat(vals, starts, axis=0)
        reached = np.isfinite(least)
        # each owner's nearest NIC: the least id among its candidates at its least distance
        at_least = vals == np.repeat(least, counts, axis=0)
        nearest_rank = np.minimum.reduceat(np.where(at_least, c_rank, never), starts, axis=0)
        high = np.where(reached, least, -np.inf).max(axis=0)
        low_all = np.where(reached, least, np.inf).min(axis=0)
        far = np.where(reached & (least == high[None, :]), nearest_rank, never).argmin(axis=0)
        any_reached = reached.any(axis=0)
        for r in range(cols):
            if not any_reached[r]:
                out.append((np.inf, -np.inf, None))
            else:
                out.append((float(low_all[r]), float(high[r]), systems[int(group_owner[far[r]])]))
    return out
