"""The bisection shortcuts of issues 12/16/17 give the figures of the general computation.

- The coarse graph is built from the links' capacities directly, in the order contracting the full
  device graph edge by edge gives (Kernighan-Lin's split depends on that order).
- Each split's cut is a max-flow over the switches alone (units merged into source and sink, Dinic
  on whole numbers of 1/scale bytes/s), equal to networkx's max-flow over every unit on the same
  whole numbers, whatever the capacities (EDR's 64b/66b and PCIe's 128b/130b are not whole numbers
  of bytes/s), and its value is the exact sum of the crossing capacities rounded once (math.fsum).
"""

import itertools
import math
import random
from fractions import Fraction

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


def _capacity_graph(topo):
    """The device graph as first built: both directions of every link between a pair."""
    g = nx.Graph()
    g.add_nodes_from(topo.devices)
    g.add_edges_from((a, b, {"capacity": c}) for (a, b), c in B._link_capacities(topo).items())
    return g


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
    g = _capacity_graph(topo)
    edges = B._graph_edges(topo)
    assert edges == list(g.edges(data="capacity"))
    units = B._units(topo, gpus)
    c, names, whole, scale = B._coarse_graph(topo, units, edges)
    old_c, old_names = _old_coarse(topo, g, units)
    assert names == old_names
    _same_graph(c, old_c, "capacity")
    _same_graph(B._affinity(c, names), _old_affinity(c, names), "weight")
    # the exact capacities: the same pairs, each the exact sum of its device edges
    assert [(a, b) for a, b, _ in whole] == [(a, b) for a, b, _ in c.edges(data="capacity")]
    for a, b, cap in whole:
        assert cap % 1 == 0 and math.isclose(cap / scale, c.edges[a, b]["capacity"], rel_tol=1e-12)


class _Reference:
    """The cut of a split by networkx's max-flow over the whole graph (every unit a node, tied to the
    source or the sink), on the same whole numbers: Python integers, exact in networkx as well."""

    def __init__(self, whole, units):
        self.g = nx.Graph()
        self.g.add_weighted_edges_from(whole, weight="capacity")
        self.g.add_nodes_from(units)
        self.big = sum(cap for *_, cap in whole) + 1

    def __call__(self, side_a, side_b):
        h = self.g.copy()
        h.add_edges_from((("__s", n) for n in side_a), capacity=self.big)
        h.add_edges_from(((n, "__t") for n in side_b), capacity=self.big)
        value, (reach, _) = nx.minimum_cut(h, "__s", "__t", capacity="capacity")
        return value, reach


def _splits(names, seed=7, count=6):
    rnd = random.Random(seed)
    splits = [(names[: len(names) // 2], names[len(names) // 2:]), (names[:1], names[1:])]
    for _ in range(count):
        order = names[:]
        rnd.shuffle(order)
        k = rnd.randint(1, len(order) - 1)
        splits.append((order[:k], order[k:]))
    return splits


def _check_cuts(whole, scale, names, splits):
    """Each split's exact cut equals networkx's on the same whole numbers, and rounded once it is
    math.fsum of the float capacities crossing that least partition, in any order."""
    fast, general = B._ExactCuts(whole, names), _Reference(whole, names)
    for a, b in splits:
        value, reach = general(a, b)
        assert fast(a, b) == value
        crossing = [cap / scale for u, v, cap in whole if (u in reach) != (v in reach)]
        assert value / scale == math.fsum(crossing) == math.fsum(reversed(crossing))
    assert fast.work > 0


# NDR and HDR capacities are whole numbers of bytes/s; EDR's (FABRICS[2], FABRICS[8]) are not.
@pytest.mark.parametrize("make", FABRICS)
def test_exact_cuts_equal_networkx_max_flow_over_every_unit(make):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    units = B._units(topo, gpus)
    c, names, whole, scale = B._coarse_graph(topo, units, B._graph_edges(topo))
    _check_cuts(whole, scale, names, _splits(names))


def test_units_wired_to_each_other_directly_are_cut_once():
    """An irregular hand-drawn graph: units joined directly and through a chain of switches long
    enough for the one-path-at-a-time Dinic, capacities that are not whole numbers, and sums past
    2**53 (where floats would round)."""
    units = [f"__unit{i}" for i in range(6)]
    chain = [f"sw{i}" for i in range(450)]
    edges = [(units[0], units[1], 7.0), (units[1], units[2], 3.0 + 2 ** -20)]
    edges += [(x, y, 5.0) for x, y in zip([units[3], *chain], [*chain, units[4]])]
    edges += [(chain[10], units[5], 2.0 ** 60), (chain[200], units[0], 11.0 / 3), (chain[300], units[2], 2.0 ** 60 + 2 ** 8)]
    whole_of, scale = B._whole_numbers(cap for *_, cap in edges)
    assert scale == (11.0 / 3).as_integer_ratio()[1] == 2 ** 51  # the finest of the capacities
    assert all(whole_of[cap] == Fraction(cap) * scale for *_, cap in edges)
    whole = [(u, v, whole_of[cap]) for u, v, cap in edges]
    splits = [(list(a), [u for u in units if u not in a]) for k in range(1, 6) for a in itertools.combinations(units, k)]
    _check_cuts(whole, scale, units, splits)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_a_capacity_that_cannot_be_cut_is_named(bad):
    with pytest.raises(ValueError, match="cannot be cut"):
        B._whole_numbers([1.0, bad])


class _ReferenceCuts(B._ExactCuts):
    """``_ExactCuts`` whose cuts come from networkx over every unit (its twins, work and budget as
    the real one's: the work is counted the same way, on the same contracted graph)."""

    def __init__(self, whole, units):
        super().__init__(whole, units)
        self.reference = _Reference(whole, units)

    def __call__(self, side_a, side_b):
        value = super().__call__(side_a, side_b)
        assert value == self.reference(side_a, side_b)[0]
        return value


@pytest.mark.parametrize("make", [FABRICS[0], FABRICS[2], FABRICS[3], _irregular, FABRICS[-1]])
def test_heuristic_bisection_equals_the_general_cut(make, monkeypatch):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    edges = B._graph_edges(topo)
    fast = B._heuristic(topo, edges, gpus)
    monkeypatch.setattr(B, "_ExactCuts", _ReferenceCuts)
    general = B._heuristic(topo, edges, gpus)
    assert (fast.bidir_Bps, fast.half_a, fast.half_b) == (general.bidir_Bps, general.half_a, general.half_b)
    assert fast.refinement == general.refinement and not fast.refinement.ended_by_budget


def test_a_link_of_fractional_bandwidth_is_cut_exactly():
    topo = build_fat_tree(6, "dgx-a100")
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    ib[0].bandwidth_per_direction_Bps = 1.25e9 + 0.25
    gpus = [d.id for d in topo.gpus()]
    c, names, whole, scale = B._coarse_graph(topo, B._units(topo, gpus), B._graph_edges(topo))
    assert scale >= 2  # PCIe's 128b/130b inside the systems, and the quarter byte
    _check_cuts(whole, scale, names, _splits(names))
    assert B.bisection_bandwidth(topo, gpus).bidir_Bps > 0


def test_twins_share_neighbours_and_capacities_and_never_touch_a_unit():
    units = [f"__unit{i}" for i in range(5)]
    edges = [(u, leaf, 4) for u in units[:3] for leaf in ("leaf0", "leaf1")]
    edges.append((units[2], "leaf2", 1))      # one more neighbour: not a twin
    edges.append((units[3], "leaf0", 4))
    edges.append((units[3], units[4], 4))     # joined to a unit: its own class
    edges.append((units[4], "leaf1", 4))
    twin = B._twins(B._ExactCuts(edges, units), units)
    assert twin[0] == twin[1]
    assert len({twin[1], twin[2], twin[3], twin[4]}) == 4


@pytest.mark.parametrize("make", [lambda: build_fat_tree(96, "dgx-h100", rail_optimized=True),
                                  lambda: build_fat_tree(48, "dgx-a100", oversubscription=2)])
def test_refinement_measuring_twins_once_equals_measuring_every_swap(make, monkeypatch):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    edges = B._graph_edges(topo)
    fast = B._heuristic(topo, edges, gpus)
    monkeypatch.setattr(B, "_twins", lambda cut, names: list(range(len(names))))
    every = B._heuristic(topo, edges, gpus)
    assert (fast.bidir_Bps, fast.half_a, fast.half_b) == (every.bidir_Bps, every.half_a, every.half_b)
