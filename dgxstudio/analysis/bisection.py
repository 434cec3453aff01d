"""Bisection bandwidth of a GPU set: the least link capacity crossing any split into equal halves.

Capacity counts both directions, as the white papers do (seed 002, Table 1 note a). For a given split
the crossing capacity is a minimum s-t cut in which switches, NICs and CPUs may fall on either side.
Small sets are enumerated exactly. Large sets are coarsened (a system's GPUs stay together, since
splitting a system costs its internal links) and a few good splits, from document order, a spectral
ordering and Kernighan-Lin, are each measured by max-flow and then refined by swapping units; the
least is returned as an upper bound.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..model.topology import Topology

EXACT_SPLIT_LIMIT = 1000
# A dense eigen-solve is cubic: above this many coarse nodes (1,024 DGX H100 and their 640 switches
# give 1,664, 12 s) the split candidates come from document order and Kernighan-Lin only.
SPECTRAL_LIMIT = 1200


@dataclass
class Bisection:
    bidir_Bps: float
    exact: bool
    method: str
    half_a: list[str]
    half_b: list[str]


def _capacity_graph(topo: Topology) -> nx.Graph:
    """Undirected graph with ``capacity`` = both directions of every link between a pair."""
    g = nx.Graph()
    g.add_nodes_from(topo.devices)
    caps: dict[tuple[str, str], float] = {}
    for lk in topo.links.values():
        if lk.a == lk.b or lk.a not in topo.devices or lk.b not in topo.devices:
            continue
        key = (lk.a, lk.b) if (lk.b, lk.a) not in caps else (lk.b, lk.a)
        caps[key] = caps.get(key, 0.0) + 2 * topo.link_bandwidth_per_direction_Bps(lk)
    g.add_edges_from((a, b, {"capacity": c}) for (a, b), c in caps.items())
    return g


class _Cutter:
    """Min s-t cuts on one graph for many splits, reusing the graph (only terminal edges change)."""

    def __init__(self, g: nx.Graph):
        self.h = g.copy()
        self.big = sum(c for _, _, c in g.edges(data="capacity")) + 1.0
        self.h.add_node("__s")
        self.h.add_node("__t")

    def __call__(self, side_a: list[str], side_b: list[str]) -> float:
        h = self.h
        h.remove_edges_from(list(h.edges("__s")) + list(h.edges("__t")))
        h.add_edges_from((("__s", n) for n in side_a), capacity=self.big)
        h.add_edges_from(((n, "__t") for n in side_b), capacity=self.big)
        return nx.maximum_flow_value(h, "__s", "__t", capacity="capacity")


def _direct_cut(g: nx.Graph, side_a: set[str]) -> float:
    return sum(c for u, v, c in g.edges(data="capacity") if (u in side_a) != (v in side_a))


def _exact(g: nx.Graph, gpus: list[str]) -> Bisection:
    n = len(gpus)
    half = n // 2
    only_gpus = all(g.nodes[x].get("gpu") for x in g.nodes)
    cut = None if only_gpus else _Cutter(g)
    best = None
    first, rest = gpus[0], gpus[1:]
    # Fixing the first GPU on side A visits each split once.
    for combo in itertools.combinations(rest, half - 1 if n % 2 == 0 or half > 0 else 0):
        a = [first, *combo]
        aset = set(a)
        b = [x for x in gpus if x not in aset]
        value = _direct_cut(g, aset) if only_gpus else cut(a, b)
        if best is None or value < best[0]:
            best = (value, a, b)
    if n % 2 == 1:
        # With an odd count the half holding the first GPU may be the larger one too.
        for combo in itertools.combinations(rest, half):
            a = [first, *combo]
            aset = set(a)
            b = [x for x in gpus if x not in aset]
            value = _direct_cut(g, aset) if only_gpus else cut(a, b)
            if value < best[0]:
                best = (value, a, b)
    return Bisection(best[0], True, "enumeration", best[1], best[2])


def _units(topo: Topology, gpus: list[str]) -> list[list[str]]:
    """GPUs that move together: one unit per system, or per GPU outside systems."""
    units: dict[str, list[str]] = {}
    for gpu in gpus:
        key = topo.system_of(gpu) or gpu
        units.setdefault(key, []).append(gpu)
    return list(units.values())


def _coarse_graph(topo: Topology, g: nx.Graph, units: list[list[str]]) -> tuple[nx.Graph, list[str]]:
    """Contract each multi-GPU unit's system (all its devices) into one node."""
    mapping = {}
    names = []
    by_system: dict[str, list[str]] = {}
    for d in topo.devices:  # every system's devices at any depth, in document order (devices_in_group, once)
        sid = topo.system_of(d)
        if sid is not None:
            by_system.setdefault(sid, []).append(d)
    for i, unit in enumerate(units):
        name = f"__unit{i}"
        names.append(name)
        sid = topo.system_of(unit[0]) if len(unit) > 1 or topo.system_of(unit[0]) else None
        members = by_system.get(sid, []) if sid else unit
        for d in members:
            mapping[d] = name
    c = nx.Graph()
    for n in g.nodes:
        c.add_node(mapping.get(n, n))
    for u, v, cap in g.edges(data="capacity"):
        a, b = mapping.get(u, u), mapping.get(v, v)
        if a == b:
            continue
        if c.has_edge(a, b):
            c.edges[a, b]["capacity"] += cap
        else:
            c.add_edge(a, b, capacity=cap)
    return c, names


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


def _candidate_orders(c: nx.Graph, names: list[str]) -> list[list[int]]:
    orders = [list(range(len(names)))]
    index = {n: i for i, n in enumerate(names)}
    spectral = _spectral_order(c, names)
    if spectral is not None:
        orders.append(spectral)
    # Kernighan-Lin on the units, with units that share a neighbour joined by that neighbour's bandwidth.
    affinity = nx.Graph()
    affinity.add_nodes_from(range(len(names)))
    for hub in c.nodes:
        attached = [(index[n], c.edges[hub, n]["capacity"]) for n in c.neighbors(hub) if n in index]
        if hub in index:
            for n, cap in attached:
                affinity.add_edge(index[hub], n, weight=affinity.get_edge_data(index[hub], n, {"weight": 0})["weight"] + cap)
            continue
        for (i, ci), (j, cj) in itertools.combinations(attached[:64], 2):
            w = min(ci, cj) + affinity.get_edge_data(i, j, {"weight": 0})["weight"]
            affinity.add_edge(i, j, weight=w)
    if affinity.number_of_edges():
        a, b = nx.algorithms.community.kernighan_lin_bisection(affinity, weight="weight", seed=1)
        orders.append(sorted(a) + sorted(b))
    return orders


def _heuristic(topo: Topology, g: nx.Graph, gpus: list[str], refine_rounds: int = 2,
               refine_budget_s: float = 2.0) -> Bisection:
    units = _units(topo, gpus)
    weights = [len(u) for u in units]
    c, names = _coarse_graph(topo, g, units)
    cut = _Cutter(c)
    best = None
    for order in _candidate_orders(c, names):
        a, b = _balanced_split(order, weights)
        value = cut([names[i] for i in a], [names[i] for i in b])
        if best is None or value < best[0]:
            best = (value, a, b)
    value, a, b = best
    # Refinement: swap equal-weight units near the boundary of the split while that lowers the cut,
    # within a time budget so very large fabrics still answer promptly.
    deadline = time.perf_counter() + refine_budget_s
    for _ in range(refine_rounds):
        improved = False
        for i in list(a)[-6:]:
            for j in list(b)[:6]:
                if weights[i] != weights[j] or time.perf_counter() > deadline:
                    continue
                na = [x for x in a if x != i] + [j]
                nb = [x for x in b if x != j] + [i]
                v = cut([names[x] for x in na], [names[x] for x in nb])
                if v < value - 1e-6:
                    value, a, b, improved = v, na, nb, True
                    break
            if improved:
                break
        if not improved:
            break
    half_a = [gpu for i in a for gpu in units[i]]
    half_b = [gpu for i in b for gpu in units[i]]
    exact = len(units) <= 1
    return Bisection(value, exact, "max-flow over partitioned units", half_a, half_b)


def bisection_bandwidth(topo: Topology, gpus: list[str]) -> Bisection:
    if len(gpus) < 2:
        return Bisection(0.0, True, "trivial", list(gpus), [])
    g = _capacity_graph(topo)
    members = set(gpus)
    for n in g.nodes:
        g.nodes[n]["gpu"] = topo.devices[n].kind == "gpu" and n in members
    n = len(gpus)
    if math.comb(n - 1, n // 2 - 1) <= EXACT_SPLIT_LIMIT:
        # Only GPUs of the set and the devices between them matter; others still carry flow.
        return _exact(g, gpus)
    return _heuristic(topo, g, gpus)
