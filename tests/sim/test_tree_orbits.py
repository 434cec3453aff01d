"""tree_fold's classes from maps between trees checked outright (sim/tree_orbits.py): the same
classes as the colour refinement over every tree, the same answer as the flow-by-flow run, and no
map where a rail is wired otherwise."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold, tree_orbits
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator

from .test_tree_fold import _assert_same

MiB = 2**20


def _schedule(topo, size=6 * MiB, proto="simple"):
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", proto, size)
    return sim, sched, scale


def _canonical(classes):
    """Classes numbered in the order their first member comes."""
    _, first, inv = np.unique(classes, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inv]


def _spy(monkeypatch):
    """What ``orbits`` and ``coarsened`` answered during the calls that follow."""
    seen = {"orbits": [], "coarsened": []}
    for name in seen:
        real = getattr(tree_orbits, name)

        def wrapped(*a, _real=real, _name=name):
            out = _real(*a)
            seen[_name].append(out)
            return out
        monkeypatch.setattr(tree_orbits, name, wrapped)
    return seen


def assert_maps_give_the_refinements_fold(monkeypatch, sim, sched, scale, label):
    """The fold by maps (``orbits`` and ``coarsened`` both answering) puts every tree in one class,
    with the refinement's channel classes and representatives, and the flow-by-flow run's answer."""
    seen = _spy(monkeypatch)
    by_maps = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert by_maps is not None and seen["orbits"][0] is not None and seen["coarsened"][0] is not None, label
    assert by_maps.m == len(sched.meta["trees"]) and not by_maps.rep_of.any()  # every tree of every rail
    monkeypatch.setattr(tree_orbits, "orbits", lambda *a: None)  # the refinement over every tree
    refined = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert refined is not None
    np.testing.assert_array_equal(by_maps.uch, refined.uch)
    np.testing.assert_array_equal(_canonical(by_maps.col_c), _canonical(refined.col_c))  # (numbered otherwise)
    np.testing.assert_array_equal(np.sort(by_maps.rep_ch), np.sort(refined.rep_ch))
    a, b = by_maps.run(), refined.run()
    np.testing.assert_array_equal(a.group_done, b.group_done)
    _assert_same(a, Engine(sim.router, scale).run(sched), len(sched.groups))


def assert_guessed_then_refused(monkeypatch, sim, sched, scale):
    """Maps of trees are guessed but the outright check refuses them (``orbits`` answers None after
    a channel map fails); the fold, if any, keeps some tree apart and runs as the flow-by-flow run."""
    seen = _spy(monkeypatch)
    refused = []
    real = tree_orbits._channel_map

    def channel_map(*a):
        out = real(*a)
        refused.append(out is None)
        return out
    monkeypatch.setattr(tree_orbits, "_channel_map", channel_map)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert seen["orbits"] == [None] and refused and refused[-1]  # guessed, then refused by the check
    assert fold is None or fold.m < len(sched.meta["trees"])  # (the rail apart: classes of unequal sizes)
    folded = tree_fold.run(sim.router, sched, scale)
    _assert_same(folded, Engine(sim.router, scale).run(sched), len(sched.groups))


@pytest.mark.parametrize("label, build, proto", [
    ("4 DGX H100, rail-optimized", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True), "simple"),
    ("40 DGX H100 over spines, LL128", lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
     "ll128"),
])
def test_maps_between_trees_give_the_refinements_classes_and_answer(monkeypatch, label, build, proto):
    sim, sched, scale = _schedule(build(), proto=proto)
    assert_maps_give_the_refinements_fold(monkeypatch, sim, sched, scale, label)

def test_a_rail_with_a_slower_cable_is_not_mapped_onto_the_others(monkeypatch):
    """System 2's rail-3 cable at half speed: its trees have the same routes as every other rail's,
    but no map of trees keeps every channel's capacity, so none is taken; the refinement keeps that
    rail apart and the run is the flow-by-flow run's."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    cable = next(link for link in topo.links.values() if {link.a, link.b} == {"s2.ib3", "leaf4"})
    cable.bandwidth_per_direction_Bps = 25e9
    sim, sched, scale = _schedule(topo)
    seen = _spy(monkeypatch)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert seen["orbits"] == [None]
    assert fold is None or fold.m < len(sched.meta["trees"])
    folded = tree_fold.run(sim.router, sched, scale)
    _assert_same(folded, Engine(sim.router, scale).run(sched), len(sched.groups))


def test_a_map_of_channels_must_be_one_to_one_and_keep_weights_and_capacities():
    capacity = np.array([1.0, 1.0, 1.0, 2.0])
    ch = [np.array([0, 1]), np.array([1, 2]), np.array([0, 2]), np.array([0, 3])]
    w = [np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([1.0, 0.5])]
    # route 0 onto route 1 and route 1 onto route 0: channels 0 -> 1 -> 0, 2 -> 1 (1 -> 2 and 2 -> 1)
    pi = tree_orbits._channel_map(np.array([0, 1]), np.array([1, 0]), ch, w, capacity)
    assert pi is None  # channel 1 goes to 2 by route 0 and to 0 by route 1: not a map
    # routes 0 and 2 onto routes 2 and 0: 0 -> 0, 1 -> 2, 2 -> 1
    pi = tree_orbits._channel_map(np.array([0, 2]), np.array([2, 0]), ch, w, capacity)
    assert pi.tolist() == [0, 2, 1, -1]
    # routes 1 and 2 both onto route 0: channels 1 and 0 onto 0, 2 onto 1: two channels onto one
    assert tree_orbits._channel_map(np.array([1, 2]), np.array([0, 0]), ch, w, capacity) is None
    # onto a channel of another capacity
    assert tree_orbits._channel_map(np.array([0, 3]), np.array([3, 0]), ch, w, capacity) is None
    # the same channels with other weights
    w2 = [x.copy() for x in w]
    w2[2][1] = 0.25
    assert tree_orbits._channel_map(np.array([0, 2]), np.array([2, 0]), ch, w2, capacity) is None
