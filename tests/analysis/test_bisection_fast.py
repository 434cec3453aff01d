"""The bisection shortcuts of issues 12/16/17 give the figures of the general computation.

- The coarse graph is built from the links' capacities directly, in the order contracting the full
  device graph edge by edge gives (Kernighan-Lin's split depends on that order).
- Each split's cut is a max-flow over the switches alone (units merged into source and sink, Dinic
  on whole numbers), equal to the general max-flow over every unit; capacities that are not whole
  numbers fall back to the general one.
"""

import itertools
import random

import networkx as nx
import pytest

from dgxstudio.analysis import bisection as B
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from tests.analysis.test_analysis_speed_same import NETWORKS, _irregular

FABRICS = NETWORKS + [lambda: build_fat_tree(16, "dgx-h100", rail_optimized=True),
                      lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True, oversubscription=2),
                      lambda: build_fat_tree(5, "dgx-a100", nics_per_system=4),
                      lambda: load_preset("dgx1-fat-tree-124"),
                      lambda: load_preset("dgx-h100-superpod")]


def _old_coarse(topo, g, units):
    """The coarse graph as first written: contract the device graph edge by edge."""
    mapping = {}
    names = []
    for i, unit in enumerate(units):
        name = f"__unit{i}"
        names.append(name)
        sid = topo.system_of(unit[0])
        members = [d for d in topo.devices if topo.system_of(d) == sid] if sid else unit
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


def _old_affinity(c, names):
    index = {n: i for i, n in enumerate(names)}
    affinity = nx.Graph()
    affinity.add_nodes_from(range(len(names)))
    for hub in c.nodes:
        attached = [(index[n], c.edges[hub, n]["capacity"]) for n in c.neighbors(hub) if n in index]
        if hub in index:
            for n, cap in attached:
                affinity.add_edge(index[hub], n,
                                  weight=affinity.get_edge_data(index[hub], n, {"weight": 0})["weight"] + cap)
            continue
        for (i, ci), (j, cj) in itertools.combinations(attached[:64], 2):
            affinity.add_edge(i, j, weight=min(ci, cj) + affinity.get_edge_data(i, j, {"weight": 0})["weight"])
    return affinity


def _same_graph(a, b, data):
    assert list(a.nodes) == list(b.nodes)
    assert list(a.edges(data=data)) == list(b.edges(data=data))
    for n in a.nodes:
        assert list(a.adj[n]) == list(b.adj[n])


@pytest.mark.parametrize("make", FABRICS)
def test_coarse_and_affinity_graphs_equal_the_edge_by_edge_ones(make):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    g = B._capacity_graph(topo)
    edges = B._graph_edges(topo)
    assert edges == list(g.edges(data="capacity"))
    units = B._units(topo, gpus)
    c, names = B._coarse_graph(topo, units, edges)
    old_c, old_names = _old_coarse(topo, g, units)
    assert names == old_names
    _same_graph(c, old_c, "capacity")
    _same_graph(B._affinity(c, names), _old_affinity(c, names), "weight")


# Between systems these fabrics have whole-number capacities (NDR, HDR); EDR's 64b/66b does not.
WHOLE = [m for i, m in enumerate(FABRICS) if i not in (2, 8)]


@pytest.mark.parametrize("make", WHOLE)
def test_contracted_cuts_equal_max_flow_over_every_unit(make):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    units = B._units(topo, gpus)
    c, names = B._coarse_graph(topo, units, B._graph_edges(topo))
    assert B._whole_cuts(c, names)
    fast, general = B._ContractedCutter(c, names), B._Cutter(c)
    rnd = random.Random(7)
    splits = [(names[: len(names) // 2], names[len(names) // 2:]), (names[:1], names[1:])]
    for _ in range(6):
        order = names[:]
        rnd.shuffle(order)
        k = rnd.randint(1, len(order) - 1)
        splits.append((order[:k], order[k:]))
    for a, b in splits:
        assert fast(a, b) == general(a, b)


def test_units_wired_to_each_other_directly_are_cut_once():
    """An irregular hand-drawn graph: units joined directly and through a chain of switches long
    enough for the one-path-at-a-time Dinic, and one with a non-integral capacity (general cut)."""
    c = nx.Graph()
    units = [f"__unit{i}" for i in range(6)]
    c.add_nodes_from(units)
    c.add_edge(units[0], units[1], capacity=7.0)
    c.add_edge(units[1], units[2], capacity=3.0)
    chain = [f"sw{i}" for i in range(450)]
    nx.add_path(c, [units[3], *chain, units[4]], capacity=5.0)
    c.add_edge(chain[10], units[5], capacity=2.0)
    c.add_edge(chain[200], units[0], capacity=11.0)
    fast, general = B._ContractedCutter(c, units), B._Cutter(c)
    for k in range(1, 6):
        for a in itertools.combinations(units, k):
            b = [u for u in units if u not in a]
            assert fast(list(a), b) == general(list(a), b)
    assert not B._integral([1.0, 2.5])
    assert not B._integral([float("nan")])
    assert not B._integral([2.0 ** 53])
    assert B._integral([2.0 ** 52, 2.0 ** 52 - 1])
    big = nx.Graph()
    big.add_edge("__unit0", "sw", capacity=2.0 ** 52)
    big.add_edge("__unit1", "sw", capacity=2.0 ** 52)
    big.add_edge("sw", "sw2", capacity=2.0 ** 60)   # between switches: bounded by the units' links
    assert not B._whole_cuts(big, ["__unit0", "__unit1"])
    big.edges["__unit1", "sw"]["capacity"] = 2.0 ** 51
    assert B._whole_cuts(big, ["__unit0", "__unit1"])


@pytest.mark.parametrize("make", [FABRICS[0], FABRICS[3], _irregular, FABRICS[-1]])
def test_heuristic_bisection_equals_the_general_cut(make, monkeypatch):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    edges = B._graph_edges(topo)
    fast = B._heuristic(topo, edges, gpus, refine_budget_s=1e9)
    monkeypatch.setattr(B, "_whole_cuts", lambda c, names: False)
    general = B._heuristic(topo, edges, gpus, refine_budget_s=1e9)
    assert (fast.bidir_Bps, fast.half_a, fast.half_b) == (general.bidir_Bps, general.half_a, general.half_b)


def test_edr_fabrics_take_the_general_cut(monkeypatch):
    topo = FABRICS[2]()
    gpus = [d.id for d in topo.gpus()]
    c, names = B._coarse_graph(topo, B._units(topo, gpus), B._graph_edges(topo))
    assert not B._whole_cuts(c, names)
    monkeypatch.setattr(B, "_ContractedCutter", None)  # never built for such capacities
    assert B.bisection_bandwidth(topo, gpus).bidir_Bps > 0


def test_a_link_of_fractional_bandwidth_takes_the_general_cut():
    topo = build_fat_tree(6, "dgx-a100")
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    ib[0].bandwidth_per_direction_Bps = 1.25e9 + 0.25
    gpus = [d.id for d in topo.gpus()]
    c, names = B._coarse_graph(topo, B._units(topo, gpus), B._graph_edges(topo))
    assert not B._whole_cuts(c, names)
    assert B.bisection_bandwidth(topo, gpus).bidir_Bps > 0


def test_twins_share_neighbours_and_capacities_and_never_touch_a_unit():
    c = nx.Graph()
    units = [f"__unit{i}" for i in range(5)]
    c.add_nodes_from(units)
    for u in units[:3]:
        c.add_edge(u, "leaf0", capacity=4.0)
        c.add_edge(u, "leaf1", capacity=4.0)
    c.add_edge(units[2], "leaf2", capacity=1.0)      # one more neighbour: not a twin
    c.add_edge(units[3], "leaf0", capacity=4.0)
    c.add_edge(units[3], units[4], capacity=4.0)     # joined to a unit: its own class
    c.add_edge(units[4], "leaf1", capacity=4.0)
    twin = B._twins(c, units)
    assert twin[0] == twin[1]
    assert len({twin[1], twin[2], twin[3], twin[4]}) == 4


@pytest.mark.parametrize("make", [lambda: build_fat_tree(96, "dgx-h100", rail_optimized=True),
                                  lambda: build_fat_tree(48, "dgx-a100", oversubscription=2)])
def test_refinement_measuring_twins_once_equals_measuring_every_swap(make, monkeypatch):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    edges = B._graph_edges(topo)
    fast = B._heuristic(topo, edges, gpus, refine_budget_s=1e9)
    monkeypatch.setattr(B, "_twins", lambda c, names: list(range(len(names))))
    every = B._heuristic(topo, edges, gpus, refine_budget_s=1e9)
    assert (fast.bidir_Bps, fast.half_a, fast.half_b) == (every.bidir_Bps, every.half_a, every.half_b)
