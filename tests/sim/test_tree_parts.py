"""tree_fold's maps between trees checked on the parts of hops spread over the spines
(sim/tree_parts.py): the other trees are not routed, the run is the flow-by-flow run's, and a link
slower in any part of a hop (the leg inside a system, the NIC's cable, the spread between leaves)
keeps its rail's trees from being mapped onto the others."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.system_fold import LazyTemplate
from dgxstudio.sim.tree_parts import TreeParts

from .test_tree_fold import _assert_same
from .test_tree_orbits import _schedule, _spy


def _over_spines():
    """40 rail-optimized DGX H100 systems, 8 per leaf: hops between leaves spread over the spines."""
    return build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8)


def _spy_parts(monkeypatch) -> list:
    seen = []
    real = TreeParts.of.__func__

    def wrapped(cls, *a):
        out = real(cls, *a)
        seen.append(out)
        return out
    monkeypatch.setattr(TreeParts, "of", classmethod(wrapped))
    return seen


def test_trees_over_the_spines_are_checked_in_parts_and_only_tree_0_is_routed(monkeypatch):
    sim, sched, scale = _schedule(_over_spines())
    parts = _spy_parts(monkeypatch)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None and fold.m == len(sched.meta["trees"]) and not fold.rep_of.any()
    rows = parts[0].rows
    in_parts = (rows[:, 1:] != parts[0].n_routes).any(axis=1)
    n_trees = len(sched.meta["trees"])
    # every tree has hops in parts, in the same places
    assert in_parts.any() and (in_parts.reshape(n_trees, -1) == in_parts.reshape(n_trees, -1)[0]).all()
    # a spread is one part however many hops cross it: fewer spreads than hops. (A spread is two ids,
    # its first path and its other paths, so it is counted as the pair: NCCL's tree keeps the systems
    # whose numbers differ by 1, 2 or 4 under one leaf, and only 192 hops cross leaves, over 112
    # spreads; a heap-shaped tree had 1,024 over 144)
    spreads = np.unique(rows[in_parts][:, [2, 5]], axis=0)
    assert len(spreads) < int(in_parts.sum())
    for pats in fold.role_patterns[1:]:
        assert all(isinstance(p._template, LazyTemplate) for p in pats)
    trees = [np.arange(*t) if isinstance(t, tuple) else np.asarray(t) for t in sched.meta["trees"]]
    g = next(g for g in trees[5].tolist() if sched.groups[g].pattern is not None)
    folded = fold.run()
    # a report reading a transfer of a tree not routed gets it routed then: the same paths
    paths = [t["paths"] for t in folded.transfers(g)]
    whole = Engine(sim.router, scale).run(sched)  # (its templates replace the patterns' own)
    _assert_same(folded, whole, len(sched.groups))
    assert paths == [t["paths"] for t in whole.transfers(g)]


@pytest.mark.parametrize("part", ["leg", "nic cable", "spread"])
def test_a_slower_link_in_a_part_keeps_its_rail_from_being_mapped(monkeypatch, part):
    # (one system per leaf: every hop between systems is spread, so its links are in parts only)
    topo = build_fat_tree(8, "dgx-h100", rail_optimized=True, per_leaf=1)
    links = list(topo.links.values())
    leaf = next(x.a if x.b == "s2.ib3" else x.b for x in links if "s2.ib3" in (x.a, x.b) and "leaf" in x.a + x.b)
    ends = {"leg": {"s2.pcie1", "s2.ib3"}, "nic cable": {"s2.ib3", leaf},  # system 2's, on rail 3
            "spread": {leaf, next(x.b for x in links if x.a == leaf and x.b.startswith("spine"))}}[part]
    link = next(x for x in links if {x.a, x.b} == ends)
    link.bandwidth_per_direction_Bps = 25e9
    sim, sched, scale = _schedule(topo)
    parts = _spy_parts(monkeypatch)
    seen = _spy(monkeypatch)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert parts and seen["orbits"] == [None]  # (checked in parts, and refused)
    assert fold is None or fold.m < len(sched.meta["trees"])
    folded = tree_fold.run(sim.router, sched, scale)
    _assert_same(folded, Engine(sim.router, scale).run(sched), len(sched.groups))


@pytest.mark.parametrize("seed", range(6))
def test_numbered_ends_are_the_slot_walks_numbers(seed):
    """``numbered_ends`` (one flat list of names, looked up in C) numbers every slot's ends as
    ``slot_rows.slot_ends`` does, in the order they first come, and lists the devices by number."""
    from dgxstudio.sim import slot_rows
    from dgxstudio.sim.schedule import Pattern
    from dgxstudio.sim.tree_parts import numbered_ends

    rng = np.random.default_rng(seed)
    gpus = [f"s{i}.gpu{k}" for i in range(6) for k in range(4)]
    patterns = [Pattern([(gpus[a], gpus[b]) for a, b in rng.integers(0, len(gpus), (int(rng.integers(0, 9)), 2))])
                for _ in range(int(rng.integers(1, 7)))]
    ends, names = numbered_ends(patterns)
    assert np.array_equal(ends, slot_rows.slot_ends(patterns).reshape(-1, 2))
    flat = [x for p in patterns for pair in p.pairs for x in pair]
    assert names == list(dict.fromkeys(flat)) and [names[i] for i in ends.ravel().tolist()] == flat
