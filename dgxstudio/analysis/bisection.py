"""Bisection bandwidth of a GPU set: the least link capacity crossing any split into equal halves.

Capacity counts both directions, as the white papers do (seed 002, Table 1 note a). For a given split
the crossing capacity is a minimum s-t cut in which switches, NICs and CPUs may fall on either side.
Small sets are enumerated exactly. Large sets are coarsened (a system's GPUs stay together, since
splitting a system costs its internal links) and a few good splits, from document order, a spectral
ordering and Kernighan-Lin, are each measured by max-flow and then refined by swapping units, within
a budget of max-flow work; the least is returned as an upper bound.

Every cut is computed in exact arithmetic (capacities as whole numbers of 1/scale bytes/s, Python
integers) and rounded once, so the answer is the same bytes on every run: it depends neither on
PYTHONHASHSEED (which orders sets) nor on the machine's speed or load.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..cancel import check_cancelled
from ..model.topology import Topology
from .fabric import Fabric, system_devices, system_map

EXACT_SPLIT_LIMIT = 1000
# A dense eigen-solve is cubic: above this many coarse nodes (1,024 DGX H100 and their 640 switches
# give 1,664, 12 s) the split candidates come from document order and Kernighan-Lin only.
SPECTRAL_LIMIT = 1200


@dataclass
class Refinement:
    """What the heuristic's refinement did: cuts measured, max-flow work spent and allowed, and
    whether the budget ended it before every swap it meant to try was measured."""
    cuts: int
    work: int
    budget: int
    ended_by_budget: bool


@dataclass
class Bisection:
    bidir_Bps: float
    exact: bool
    method: str
    half_a: list[str]
    half_b: list[str]
    refinement: Refinement | None = None  # the heuristic's; None for an enumeration


def _link_capacities(topo: Topology) -> dict[tuple[str, str], float]:
    """Both directions of every link between a pair, summed in link order, keyed by the pair as first
    seen. A link's figure depends only on its type, width, count and override: looked up once each."""
    caps: dict[tuple[str, str], float] = {}
    figures: dict[tuple, float] = {}
    devices = topo.devices
    for k, lk in enumerate(topo.links.values()):
        if not k & 16383:
            check_cancelled()
        if lk.a == lk.b or lk.a not in devices or lk.b not in devices:
            continue
        key = (lk.a, lk.b) if (lk.b, lk.a) not in caps else (lk.b, lk.a)
        spec = (lk.type, lk.width, lk.count, lk.bandwidth_per_direction_Bps)
        bw = figures.get(spec)
        if bw is None:
            bw = figures[spec] = topo.link_bandwidth_per_direction_Bps(lk)
        caps[key] = caps.get(key, 0.0) + 2 * bw
    return caps


def _graph_edges(topo: Topology) -> list[tuple[str, str, float]]:
    """The capacity graph's edges (both directions of every link between a pair) in the order an
    undirected networkx graph of them lists its edges, without building the graph: devices in document order, each one's neighbours in the order their first link appears."""
    caps = _link_capacities(topo)
    nbrs: dict[str, list[str]] = {d: [] for d in topo.devices}
    for a, b in caps:
        nbrs[a].append(b)
        nbrs[b].append(a)
    out = []
    seen: set[str] = set()
    for k, (n, ms) in enumerate(nbrs.items()):
        if not k & 4095:
            check_cancelled()
        for m in ms:
            if m not in seen:
                out.append((n, m, caps[(n, m)] if (n, m) in caps else caps[(m, n)]))
        seen.add(n)
    return out


def _fabric_edges(topo: Topology, fab: Fabric | None) -> list[tuple[str, str, float]] | None:
    """``_graph_edges(topo)`` read from a ``Fabric`` of the topology (every family, rated figures)
    that the caller already built, or None when it cannot stand for it. Its bundles are the same
    device pairs in the same order (``Fabric._build`` walks the links as ``_graph_edges`` does), each
    first end the one earlier in the document, and each capacity is twice its per-direction sum
    over the same links in the same order, which is the sum of the doubled figures bit for bit
    (doubling is exact). A fabric that left a pair out (no bandwidth) does not stand for it."""
    if fab is None or fab.topo is not topo or fab.families is not None or fab.achievable or fab.dropped:
        return None
    check_cancelled()
    pos = {d: i for i, d in enumerate(topo.devices)}
    check_cancelled()
    return [(u, v, 2 * b.total_bw) if pos[u] < pos[v] else (v, u, 2 * b.total_bw)
            for (u, v), b in fab.bundles.items()]


def _scale(capacities: set[float]) -> int:
    """The least power of two D that makes every capacity (a float, finite and not negative) a whole
    multiple of 1/D: every float is an integer over a power of two, so D times each one is an exact
    integer, and sums and max-flows of those integers (Python's, unbounded) are exact."""
    d = 1
    for cap in capacities:
        if not (0.0 <= cap < math.inf):
            raise ValueError(f"a link capacity of {cap!r} bytes/s cannot be cut")
        d = max(d, cap.as_integer_ratio()[1])
    return d


def _scaled(cap: float, scale: int) -> int:
    num, den = cap.as_integer_ratio()
    return num * (scale // den)


class _ExactCuts:
    """Min cuts of splits of a graph's units, in exact arithmetic, so that no cut depends on the order
    in which a max-flow happens to add (a set's order changes with PYTHONHASHSEED).

    ``edges``: (u, v, capacity as a whole number of 1/scale bytes/s). Every split fixes all the units:
    the units of each side are merged into the source or the sink, so max-flow (Dinic's, on Python
    integers) runs over the free nodes (switches, NICs, CPUs, GPUs outside the set) alone. A cut is
    the exact sum of the capacities crossing a least partition; ``value`` rounds it once, to the float
    nearest it (what ``math.fsum`` of the crossing capacities gives). ``work`` counts what the max-flows
    did (arcs times phases), a measure of effort that does not depend on the machine."""

    def __init__(self, edges, units: list[str]):
        self.units = set(units)
        self.work = 0
        self.index: dict[str, int] = {"__s": 0, "__t": 1}
        self.touch: dict[str, list[tuple[str, int]]] = {u: [] for u in units}  # unit -> (node, capacity)
        heads: list[int] = []
        caps: list[int] = []
        for u, v, cap in edges:
            ut, vt = u in self.units, v in self.units
            if ut or vt:
                if ut:
                    self.touch[u].append((v, cap))
                if vt:
                    self.touch[v].append((u, cap))
                continue
            for x in (u, v):
                if x not in self.index:
                    self.index[x] = len(self.index)
            # an undirected edge: two arcs, each the other's reverse, each with the full capacity
            heads += [self.index[v], self.index[u]]
            caps += [cap, cap]
        self.heads, self.caps = heads, caps

    def __call__(self, side_a: list[str], side_b: list[str]) -> int:
        on_a = set(side_a)
        index = self.index
        across = 0
        terminal: list[dict[int, int]] = [{}, {}]
        for t, side in enumerate((side_a, side_b)):
            mine = terminal[t]
            for unit in side:
                for node, cap in self.touch[unit]:
                    if node in self.units:
                        if t == 0 and node not in on_a:
                            across += cap  # a direct unit-to-unit link crosses the split: counted once
                        continue
                    if node not in index:  # a free node with no free edge: it only joins the ends
                        index[node] = len(index)
                    i = index[node]
                    mine[i] = mine.get(i, 0) + cap
        heads, caps = list(self.heads), list(self.caps)
        for i, cap in terminal[0].items():
            heads += [i, 0]
            caps += [cap, cap]
        for i, cap in terminal[1].items():
            heads += [1, i]
            caps += [cap, cap]
        flow, phases = _dinic(len(index), heads, caps, 0, 1)
        self.work += phases * len(heads)
        return across + flow


def _dinic(n: int, heads: list[int], caps: list[int], s: int, t: int) -> tuple[int, int]:
    """Max-flow value by Dinic's algorithm, and the number of phases it took. Arc e runs from
    heads[e ^ 1] to heads[e] with residual capacity caps[e] (whole numbers, modified in place); arcs e
    and e ^ 1 are each other's reverse."""
    out: list[list[int]] = [[] for _ in range(n)]
    for e in range(len(heads)):
        out[heads[e ^ 1]].append(e)
    total = 0
    phases = 0
    bound = sum(caps[e] for e in out[s]) + 1  # more than can ever leave the source
    while True:
        phases += 1
        check_cancelled()  # each phase, and every few thousand paths or pushes within one (see below)
        level = [-1] * n
        level[s] = 0
        frontier = [s]
        while frontier and level[t] < 0:
            nxt = []
            for u in frontier:
                lu = level[u] + 1
                for e in out[u]:
                    v = heads[e]
                    if caps[e] > 0 and level[v] < 0:
                        level[v] = lu
                        nxt.append(v)
            frontier = nxt
        if level[t] < 0:
            return total, phases
        pos = [0] * n
        if level[t] < 400:  # the level graph is shallow: push along every branch at once
            total += _blocking_flow(s, t, out, heads, caps, level, pos, bound)
            continue
        paths = 0
        while True:  # a deep level graph: one path at a time, with an explicit stack
            paths += 1
            if not paths & 1023:
                check_cancelled()
            path: list[int] = []
            u = s
            while u != t:
                arcs = out[u]
                i = pos[u]
                while i < len(arcs):
                    e = arcs[i]
                    if caps[e] > 0 and level[heads[e]] == level[u] + 1:
                        break
                    i += 1
                pos[u] = i
                if i == len(arcs):
                    if u == s:
                        break
                    level[u] = -1  # dead end: never entered again this phase
                    e = path.pop()
                    u = heads[e ^ 1]
                    pos[u] += 1
                    continue
                path.append(arcs[i])
                u = heads[arcs[i]]
            if u != t:
                break
            push = min(caps[e] for e in path)
            for e in path:
                caps[e] -= push
                caps[e ^ 1] += push
            total += push


def _blocking_flow(s: int, t: int, out, heads, caps, level, pos, bound: int) -> int:
    """One Dinic phase: as much flow as the level graph takes, each node passing on what it receives
    along all its arcs (recursion as deep as the level graph, which the caller bounds). ``bound``:
    more than the source can send."""

    calls = [0]

    def push(u: int, limit: int) -> int:
        if u == t:
            return limit
        calls[0] += 1
        if not calls[0] & 4095:
            check_cancelled()
        sent = 0
        arcs = out[u]
        want = level[u] + 1
        while pos[u] < len(arcs):
            e = arcs[pos[u]]
            v = heads[e]
            c = caps[e]
            if c > 0 and level[v] == want:
                d = push(v, limit - sent if limit - sent < c else c)
                if d:
                    caps[e] = c - d
                    caps[e ^ 1] += d
                    sent += d
                    if sent == limit:
                        return sent
            pos[u] += 1
        level[u] = -1  # nothing more passes through u this phase
        return sent

    total = 0
    while True:
        f = push(s, bound)
        if not f:
            return total
        total += f


def _whole_numbers(capacities) -> tuple[dict[float, int], int]:
    """Each capacity as a whole number of 1/scale bytes/s (``_scale``), and the scale."""
    distinct = set(capacities)
    scale = _scale(distinct)
    return {cap: _scaled(cap, scale) for cap in distinct}, scale


def _exact(edges: list[tuple[str, str, float]], gpus: list[str]) -> Bisection:
    n = len(gpus)
    half = n // 2
    whole, scale = _whole_numbers(cap for *_, cap in edges)
    cut = _ExactCuts([(u, v, whole[cap]) for u, v, cap in edges], gpus)
    best = None
    first, rest = gpus[0], gpus[1:]
    # Fixing the first GPU on side A visits each split once.
    for combo in itertools.combinations(rest, half - 1 if n % 2 == 0 or half > 0 else 0):
        a = [first, *combo]
        aset = set(a)
        b = [x for x in gpus if x not in aset]
        value = cut(a, b)
        if best is None or value < best[0]:
            best = (value, a, b)
    if n % 2 == 1:
        # With an odd count the half holding the first GPU may be the larger one too.
        for combo in itertools.combinations(rest, half):
            a = [first, *combo]
            aset = set(a)
            b = [x for x in gpus if x not in aset]
            value = cut(a, b)
            if value < best[0]:
                best = (value, a, b)
    return Bisection(best[0] / scale, True, "enumeration", best[1], best[2])


def _units(topo: Topology, gpus: list[str]) -> list[list[str]]:
    """GPUs that move together: one unit per system, or per GPU outside systems."""
    units: dict[str, list[str]] = {}
    system_of = system_map(topo) if len(gpus) > 64 else {g: topo.system_of(g) for g in gpus}
    for gpu in gpus:
        key = system_of.get(gpu) or gpu
        units.setdefault(key, []).append(gpu)
    # A system holding more than half the GPUs (one GB200 NVL72 rack) cannot sit whole in either half:
    # its GPUs move one by one, and the cut goes through the system.
    half = len(gpus) // 2
    return [part for unit in units.values() for part in ([unit] if len(unit) <= half else [[g] for g in unit])]


def _coarse_graph(topo: Topology, units: list[list[str]], edges: list[tuple[str, str, float]]
                  ) -> tuple[nx.Graph, list[str], list[tuple[str, str, int]], int]:
    """Contract each multi-GPU unit's system (all its devices) into one node. ``edges``: the device
    graph's edges in its order (``_graph_edges``); nodes, neighbours and summed capacities come out
    in the order contracting that graph edge by edge gives. Also the same edges with their
    capacities summed exactly, as whole numbers of 1/scale bytes/s (``_whole_numbers``), and the scale:
    what the cuts are measured on."""
    mapping = {}
    names = []
    system_of = system_map(topo)
    by_system = system_devices(topo, system_of)  # every system's devices at any depth, in document order
    selected: dict[str | None, int] = {}   # selected GPUs per system, over all units
    for unit in units:
        sid = system_of.get(unit[0])
        selected[sid] = selected.get(sid, 0) + len(unit)
    for i, unit in enumerate(units):
        name = f"__unit{i}"
        names.append(name)
        sid = system_of.get(unit[0])
        # a unit that is all its system's selected GPUs stands for the whole system; a GPU of a split
        # system (``_units``) stands for itself
        members = by_system.get(sid, []) if sid and selected[sid] == len(unit) else unit
        for d in members:
            mapping[d] = name
    devices = list(topo.devices)
    mapped = list(map(mapping.get, devices, devices))  # each device's node: its unit's, or its own
    nodes = list(dict.fromkeys(mapped))
    at = {n: i for i, n in enumerate(nodes)}
    node_of = dict(zip(devices, map(at.__getitem__, mapped)))
    check_cancelled()
    firsts, seconds, caps = zip(*edges) if edges else ((), (), ())
    m = len(caps)
    first_end = np.fromiter(map(node_of.__getitem__, firsts), dtype=np.int64, count=m)
    second_end = np.fromiter(map(node_of.__getitem__, seconds), dtype=np.int64, count=m)
    kept = np.flatnonzero(first_end != second_end)  # an edge inside a unit is no edge of the coarse graph
    check_cancelled()
    # Each pair of nodes once, oriented and placed as it first appears; its capacities summed in edge
    # order (np.bincount adds in array order from 0.0, and 0.0 + c is c: the sums one by one).
    lo = np.minimum(first_end[kept], second_end[kept])
    hi = np.maximum(first_end[kept], second_end[kept])
    _, first_at, inverse = np.unique(lo * max(len(nodes), 1) + hi, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    kept_caps = np.asarray(caps, dtype=float)[kept]
    sums = np.bincount(inverse, weights=kept_caps, minlength=len(first_at)).tolist()
    whole_of, scale = _whole_numbers(caps)
    exact = [0] * len(first_at)
    for k, cap in zip(inverse.tolist(), kept_caps.tolist()):
        exact[k] += whole_of[cap]
    order = np.argsort(first_at, kind="stable")
    first_edge = kept[first_at[order]]
    order = order.tolist()
    pairs = list(zip(map(nodes.__getitem__, first_end[first_edge].tolist()),
                     map(nodes.__getitem__, second_end[first_edge].tolist())))
    import networkx as nx  # (here, not at import: every simulate imports this module, 70 ms)

    c = nx.Graph()
    c.add_nodes_from(nodes)
    c.add_edges_from((a, b, {"capacity": sums[k]}) for (a, b), k in zip(pairs, order))
    return c, names, [(a, b, exact[k]) for (a, b), k in zip(pairs, order)], scale


def _balanced_split(order: list[int], weights: list[int]) -> tuple[list[int], list[int]]:
    total = sum(weights)
    a, acc = [], 0
    for i in order:
        if acc + weights[i] <= total // 2 or not a:
            a.append(i)
            acc += weights[i]
    aset = set(a)
    return a, [i for i in order if i not in aset]


def _spectral_order(c: nx.Graph, names: list[str], limit: int = SPECTRAL_LIMIT) -> list[int] | None:
    """Units sorted by the Fiedler vector of the capacity-weighted Laplacian (numpy, dense)."""
    nodes = list(c.nodes)
    if len(nodes) > limit or len(nodes) < 3:
        return None
    pos = {n: i for i, n in enumerate(nodes)}
    lap = np.zeros((len(nodes), len(nodes)))
    scale = max((cap for _, _, cap in c.edges(data="capacity")), default=1.0)
    for u, v, cap in c.edges(data="capacity"):
        i, j, w = pos[u], pos[v], cap / scale
        lap[i, j] -= w
        lap[j, i] -= w
        lap[i, i] += w
        lap[j, j] += w
    _, vectors = np.linalg.eigh(lap)
    fiedler = vectors[:, 1]
    return sorted(range(len(names)), key=lambda i: (round(float(fiedler[pos[names[i]]]), 12), i))


def _affinity(c: nx.Graph, names: list[str]) -> nx.Graph:
    """Units joined by the bandwidth between them, and units that share a neighbour by that
    neighbour's bandwidth (the graph Kernighan-Lin splits). Summed per pair as first joined, then
    added in that order: the nodes, neighbour order and weights of adding the edges one by one,
    which Kernighan-Lin's result depends on.

    The pairs of every hub are listed in the order the hubs and their combinations come, and each
    pair's weights summed in that order (``np.bincount`` adds in array order, from 0.0, the sums a
    dict filled hub by hub makes); each pair keeps the orientation and the place of its first
    appearance."""
    index = {n: i for i, n in enumerate(names)}
    adj = c.adj
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    values: list[np.ndarray] = []
    pairs_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for k, hub in enumerate(c.nodes):
        if not k & 1023:
            check_cancelled()
        attached = [(index[n], data["capacity"]) for n, data in adj[hub].items() if n in index]
        if not attached:
            continue
        if hub in index:
            firsts.append(np.full(len(attached), index[hub], dtype=np.int64))
            seconds.append(np.fromiter((n for n, _ in attached), dtype=np.int64, count=len(attached)))
            values.append(np.fromiter((cap for _, cap in attached), dtype=float, count=len(attached)))
            continue
        attached = attached[:64]
        m = len(attached)
        if m < 2:
            continue
        if m not in pairs_of:
            pairs_of[m] = np.triu_indices(m, 1)  # itertools.combinations' order
        x, y = pairs_of[m]
        ids = np.fromiter((n for n, _ in attached), dtype=np.int64, count=m)
        caps = np.fromiter((cap for _, cap in attached), dtype=float, count=m)
        firsts.append(ids[x])
        seconds.append(ids[y])
        values.append(np.where(caps[y] < caps[x], caps[y], caps[x]))  # min(ci, cj): ci on a tie
    import networkx as nx

    affinity = nx.Graph()
    affinity.add_nodes_from(range(len(names)))
    if not firsts:
        return affinity
    i_all, j_all, v_all = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(values)
    n = max(len(names), 1)
    codes = np.minimum(i_all, j_all) * n + np.maximum(i_all, j_all)
    _, first_at, inverse = np.unique(codes, return_index=True, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=v_all, minlength=len(first_at))
    order = np.argsort(first_at, kind="stable")
    at = first_at[order]
    affinity.add_edges_from((i, j, {"weight": w}) for i, j, w in
                            zip(i_all[at].tolist(), j_all[at].tolist(), sums[order].tolist()))
    return affinity


def _candidate_orders(c: nx.Graph, names: list[str]) -> list[list[int]]:
    orders = [list(range(len(names)))]
    spectral = _spectral_order(c, names)
    if spectral is not None:
        orders.append(spectral)
    affinity = _affinity(c, names)
    check_cancelled()
    if affinity.number_of_edges():
        import networkx as nx

        a, b = nx.algorithms.community.kernighan_lin_bisection(affinity, weight="weight", seed=1)
        orders.append(sorted(a) + sorted(b))
    return orders


def _twins(cut: _ExactCuts, names: list[str]) -> list[int]:
    """A class per unit; units of one class are twins: no unit among their neighbours, and the same
    neighbours over the same capacities. Exchanging two twins maps the graph onto itself, so a split
    and the split with twins exchanged have the same min cut (the same whole number)."""
    classes: dict[tuple, int] = {}
    out = []
    for i, name in enumerate(names):
        nbrs = cut.touch[name]
        if any(n in cut.units for n, _ in nbrs):
            out.append(len(names) + i)  # its own class
            continue
        out.append(classes.setdefault(tuple(sorted(nbrs)), len(classes)))
    return out


# The refinement's budget, in max-flow work (``_ExactCuts.work``: arcs times phases), so that the
# answer does not depend on the machine or its load. It lets every preset and generated cluster up to
# 1,024 systems finish its refinement; larger fabrics stop after a few cuts (``Bisection.refinement``).
REFINE_WORK = 4_000_000


def _heuristic(topo: Topology, edges: list[tuple[str, str, float]], gpus: list[str], refine_rounds: int = 2,
               refine_work: int | None = None) -> Bisection:
    budget = REFINE_WORK if refine_work is None else refine_work
    units = _units(topo, gpus)
    weights = [len(u) for u in units]
    c, names, whole, scale = _coarse_graph(topo, units, edges)
    cut = _ExactCuts(whole, names)
    best = None
    for order in _candidate_orders(c, names):
        check_cancelled()
        a, b = _balanced_split(order, weights)
        value = cut([names[i] for i in a], [names[i] for i in b])
        if best is None or value < best[0]:
            best = (value, a, b)
    value, a, b = best
    # Refinement: swap equal-weight units near the boundary of the split while that lowers the cut,
    # within a budget of max-flow work so very large fabrics still answer promptly. Cuts are exact, so
    # swaps of twin units give the same cut: measured once.
    twin = _twins(cut, names)
    start, cuts, ended = cut.work, 0, False
    for _ in range(refine_rounds):
        improved = False
        seen: dict[tuple[int, int], int] = {}
        for i in list(a)[-6:]:
            for j in list(b)[:6]:
                if weights[i] != weights[j]:
                    continue
                check_cancelled()
                v = seen.get((twin[i], twin[j]))
                if v is None and cut.work - start >= budget:
                    ended = True
                    continue
                na = [x for x in a if x != i] + [j]
                nb = [x for x in b if x != j] + [i]
                if v is None:
                    v = seen[(twin[i], twin[j])] = cut([names[x] for x in na], [names[x] for x in nb])
                    cuts += 1
                if v < value:
                    value, a, b, improved = v, na, nb, True
                    break
            if improved:
                break
        if not improved:
            break
    half_a = [gpu for i in a for gpu in units[i]]
    half_b = [gpu for i in b for gpu in units[i]]
    exact = len(units) <= 2 and all(len(u) == 1 for u in units)
    return Bisection(value / scale, exact, "max-flow over partitioned units", half_a, half_b,
                     Refinement(cuts, cut.work - start, budget, ended))


def bisection_bandwidth(topo: Topology, gpus: list[str], fabric: Fabric | None = None) -> Bisection:
    """``fabric``: a ``Fabric(topo)`` the caller already has (rated figures, every family), whose
    bundles give the capacity graph without walking the links again."""
    if len(gpus) < 2:
        return Bisection(0.0, True, "trivial", list(gpus), [])
    n = len(gpus)
    edges = _fabric_edges(topo, fabric)
    if edges is None:
        edges = _graph_edges(topo)
    if math.comb(n - 1, n // 2 - 1) <= EXACT_SPLIT_LIMIT:
        # Only GPUs of the set and the devices between them matter; others still carry flow.
        return _exact(edges, gpus)
    return _heuristic(topo, edges, gpus)
