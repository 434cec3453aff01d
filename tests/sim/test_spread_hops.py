"""Hops spread over the spines taken in parts many at once (sim/spread_hops.py): every slot's parts,
joined, are what the router gives hop by hop (the engine's template asking ``_spread_parts``), the
same hops are in parts, and a hop the router would answer otherwise is left to it; on a cluster
with one leaf wired differently too, and the fold's run is then still the flow-by-flow run."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import spread_hops, tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.tree_parts import TreeParts

from .test_tree_fold import _assert_same
from .test_tree_orbits import _schedule


def _topo(odd_leaf: bool = False):
    """40 rail-optimized DGX H100 systems, 8 per leaf (hops between leaves spread over the spines);
    with ``odd_leaf``, one leaf has lost two of its links to the spines."""
    topo = build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8)
    if odd_leaf:
        leaf = next(x.a if x.b == "s10.ib2" else x.b for x in topo.links.values()
                    if "s10.ib2" in (x.a, x.b) and "leaf" in x.a + x.b)
        up = [x.id for x in topo.links.values() if leaf in (x.a, x.b) and "spine" in x.a + x.b]
        assert len(up) > 2
        for link in up[:2]:
            topo.remove_link(link)
    return topo


def _parts(monkeypatch, topo, bulk: bool, before=None):
    """TreeParts of every tree's patterns (as tree_fold asks them), with or without the hops taken
    many at once; and how many hops were taken so."""
    sim, sched, scale = _schedule(topo)
    engine = Engine(sim.router, scale)
    if before is not None:
        before(sim.router, sched)
    got = []
    real = TreeParts.of.__func__
    monkeypatch.setattr(TreeParts, "of", classmethod(lambda cls, *a: got.append(real(cls, *a)) or got[-1]))
    taken = []
    real_parts = spread_hops.SpreadHops.parts

    def parts(self, hops):
        out = real_parts(self, hops)
        taken.append(int(out[1].sum()))
        return out
    monkeypatch.setattr(spread_hops.SpreadHops, "parts", parts)
    if not bulk:
        monkeypatch.setattr(spread_hops.SpreadHops, "taken", lambda self, pairs, nums=None: [])
    tree_fold.Fold.of(engine, sched)
    monkeypatch.undo()
    return got[0], sum(taken)


def _joined(tp: TreeParts) -> tuple[list, np.ndarray]:
    rows = tp.rows.tolist()
    joined = [(np.concatenate([tp.ch[i] for i in r]), np.concatenate([tp.w[i] for i in r])) for r in rows]
    return joined, tp.rows[:, 1:] != tp.n_routes


def _compare(monkeypatch, topo, before=None) -> int:
    fast, n_fast = _parts(monkeypatch, topo, True, before)
    slow, n_slow = _parts(monkeypatch, topo, False, before)
    assert n_slow == 0
    (jf, in_f), (js, in_s) = _joined(fast), _joined(slow)
    assert (in_f == in_s).all()  # the same hops in parts, the same routes
    assert len(jf) == len(js)
    for (cf, wf), (cs, ws) in zip(jf, js):
        assert np.array_equal(cf, cs) and np.array_equal(wf, ws)
    assert np.array_equal(fast.lat, slow.lat) and np.array_equal(fast.cap, slow.cap)
    return n_fast


@pytest.mark.parametrize("odd_leaf", [False, True])
def test_hops_taken_at_once_are_the_routers_parts(monkeypatch, odd_leaf):
    n = _compare(monkeypatch, _topo(odd_leaf))
    assert n > 500  # (most hops between leaves taken at once)


def test_a_hop_the_router_keeps_a_route_for_is_left_to_it(monkeypatch):
    kept = []

    def before(router, sched):
        # a hop between leaves (s01-s08 under one leaf of each rail, s09-s16 the next) of some tree
        pair = next(pair for g in sched.groups if g.pattern is not None for pair in g.pattern.pairs
                    if int(pair[0][1:3]) <= 8 < int(pair[1][1:3]))
        kept.append(pair)
        router.routes(*pair)
    _compare(monkeypatch, _topo(), before)
    assert kept


def test_the_fold_on_a_leaf_wired_differently_is_the_whole_run():
    sim, sched, scale = _schedule(_topo(odd_leaf=True))
    folded = tree_fold.run(sim.router, sched, scale)
    _assert_same(folded, Engine(sim.router, scale).run(sched), len(sched.groups))


def test_every_patterns_hops_are_taken_in_one_ask(monkeypatch):
    """TreeParts asks SpreadHops.taken once for every pattern's new pairs (nothing is routed
    between them), not once per pattern, and gets the same parts as pattern by pattern."""
    asked = []
    real = spread_hops.SpreadHops.taken

    def taken(self, pairs, nums=None):
        asked.append(len(pairs))
        return real(self, pairs) if nums is None else real(self, pairs, nums)
    monkeypatch.setattr(spread_hops.SpreadHops, "taken", taken)
    sim, sched, scale = _schedule(_topo())
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    monkeypatch.undo()
    assert fold is not None and len(asked) == 1 and asked[0] > 500
    assert len(sched.meta["trees"]) > 1
