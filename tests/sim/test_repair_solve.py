"""Fair rates of a large part re-solved around what changed (sim/repair_solve.py; issue #13's
992-GPU tree): every answer is the whole solve's to rounding, on random parts whose flows come and
go, and a tree all-reduce whose parts are re-solved so gives the run's answer."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import repair_solve
from dgxstudio.sim.maxmin import maxmin
from dgxstudio.sim.rates import RouteTable
from tests.sim.test_part_components import _spied
from tests.sim.test_split_solve import _tree
from tests.sim.test_tree_fold import _assert_same

MiB = 2**20


def _part(rng, n_routes=300, n_links=250, planes=4, capped=False):
    """A random part: each route crosses a few links (weight 1) and spreads over ``planes`` parallel
    channels of one of a few bundles (weight 1 / planes, the class a fat tree's spine planes make);
    some bundles can never bind (they are ``never_binds``, and roomy enough never to bind)."""
    n_bundles = 6
    n_ch = n_links + n_bundles * planes
    capacity = np.concatenate([rng.choice([10.0, 25.0, 40.0], n_links), np.full(n_bundles * planes, 1e6)])
    route_ch, route_w = [], []
    for _ in range(n_routes):
        links = rng.choice(n_links, rng.integers(1, 4), replace=False)
        b = rng.integers(n_bundles)
        ch = np.concatenate([links, n_links + b * planes + np.arange(planes)])
        route_ch.append(ch.astype(np.int64))
        route_w.append(np.concatenate([np.ones(len(links)), np.full(planes, 1.0 / planes)]))
    table = RouteTable(route_ch, route_w)
    table.never_binds = np.arange(n_ch) >= n_links
    route_cap = np.full(n_routes, 3.0) if capped else None
    return table, capacity, route_cap


def _states(rng, n_routes, steps):
    """Active routes and flow counts as a run's events change them: a few at a time."""
    counts = np.where(rng.random(n_routes) < 0.6, rng.integers(1, 4, n_routes), 0)
    for _ in range(steps):
        k = rng.integers(1, 6) if rng.random() < 0.9 else rng.integers(20, 60)
        idx = rng.choice(n_routes, k, replace=False)
        counts[idx] = np.where(rng.random(k) < 0.4, 0, rng.integers(1, 4, k))
        active = np.flatnonzero(counts > 0)
        yield active, counts[active].copy()


@pytest.mark.parametrize("seed,capped", [(1, False), (2, True), (3, False)])
def test_every_answer_is_the_whole_solves(seed, capped):
    rng = np.random.default_rng(seed)
    table, capacity, route_cap = _part(rng, capped=capped)
    n = len(table.lens)
    solver = repair_solve.RepairSolver(table, capacity, route_cap, np.arange(n), np.array([0, n]))
    for routes, counts in _states(rng, n, 300):
        rates, uch, load = solver.solve(0, routes, counts)
        ref_rates, ref_uch, ref_load = maxmin(routes, counts, table, capacity, route_cap)
        np.testing.assert_allclose(rates, ref_rates, rtol=1e-12)
        np.testing.assert_array_equal(uch, ref_uch)
        np.testing.assert_allclose(load, ref_load, rtol=1e-12)
    # most of them re-solved around their changes, not whole
    assert solver.repaired > 200 and solver.whole < solver.repaired / 4


def test_a_check_that_passes_anything_is_caught(monkeypatch):
    """The check is what makes a region's answer the whole solve's: without it, answers go wrong."""
    rng = np.random.default_rng(1)
    table, capacity, route_cap = _part(rng)
    n = len(table.lens)
    monkeypatch.setattr(repair_solve._Part, "_check", lambda self, *a: set())
    solver = repair_solve.RepairSolver(table, capacity, route_cap, np.arange(n), np.array([0, n]))
    worst = 0.0
    for routes, counts in _states(rng, n, 300):
        rates = solver.solve(0, routes, counts)[0]
        ref = maxmin(routes, counts, table, capacity, route_cap)[0]
        worst = max(worst, float(np.max(np.abs(rates - ref) / ref)))
    assert worst > 1e-3


def test_small_parts_are_solved_whole():
    rng = np.random.default_rng(4)
    table, capacity, route_cap = _part(rng, n_routes=60)
    solver = repair_solve.RepairSolver(table, capacity, route_cap, np.arange(60), np.array([0, 60]))
    for routes, counts in _states(rng, 60, 20):
        solver.solve(0, routes, counts)
    assert solver.repaired == 0 and not solver.parts


def test_a_tree_whose_parts_are_re_solved_gives_the_runs_answer(monkeypatch):
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    made = _spied(monkeypatch)
    monkeypatch.setattr(repair_solve, "MIN_ROUTES", 8)  # this small cluster's parts are small
    sched, _, new, _, _ = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    assert made and made[-1].repair.repaired > 50
    monkeypatch.setattr(repair_solve, "MIN_ROUTES", 10**9)  # every part solved whole
    _, _, old, _, _ = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    assert made[-1].repair.repaired == 0
    _assert_same(new, old, len(sched.groups))


def test_the_kept_scans_follow_the_flows():
    """What the repair reads instead of scanning a class (sim/repair_solve.py): each class's active
    routes in the order of all its routes, the routes bottlenecked at it, and the channel layout of
    the classes in use, equal after every answer to what a scan of the state gives."""
    rng = np.random.default_rng(5)
    table, capacity, route_cap = _part(rng)
    n = len(table.lens)
    solver = repair_solve.RepairSolver(table, capacity, route_cap, np.arange(n), np.array([0, n]))
    checked = 0
    for routes, counts in _states(rng, n, 200):
        _, uch, _ = solver.solve(0, routes, counts)
        part = solver.parts[0]
        if not part.has_base:
            continue
        active = set(routes.tolist())
        for k, lst in part.on.items():
            assert part.act[k] == [(r, w) for r, w in lst if r in active]
        at = {}
        for r, b in part.bott.items():
            if b >= 0:
                at.setdefault(b, set()).add(r)
        assert {k: set(v) for k, v in part.bott_at.items() if v} == at
        assert set(part.bott) == active
        np.testing.assert_array_equal(part.in_use > 0, np.asarray(part.iu) > 0)
        np.testing.assert_array_equal(uch, maxmin(routes, counts, table, capacity, route_cap)[1])
        checked += 1
    assert checked > 150


def test_a_class_a_leaving_route_loaded_is_not_full_any_more(monkeypatch):
    """A route leaves a class that was full (A) at the event that slows the routes of another class
    (B): the one route still on A, bottlenecked at B before, is no longer bottlenecked there and must
    rise to 4/3; A, on which it now runs alone, holds it only while A's load still counts the route
    that left (the 8-DGX-1 tree run with NCCL's tree shape hit this: 8% off on one route)."""
    monkeypatch.setattr(repair_solve, "MIN_ROUTES", 8)
    C, B, A, n_spare = 0, 1, 2, 12
    planes = [3 + n_spare, 4 + n_spare]  # a bundle every route spreads over, that never binds (merged)
    links = {"g": [A], "q": [B, A], "s": [C, B], "h": [C]}  # (q's order: B is where it is found bottlenecked)
    links.update({f"spare{i}": [3 + i] for i in range(n_spare)})  # routes alone on their own links
    names = list(links)
    table = RouteTable([np.array(links[r] + planes, dtype=np.int64) for r in names],
                       [np.array([1.0] * len(links[r]) + [0.5, 0.5]) for r in names])
    capacity = np.array([2.0, 2.0, 2.0] + [1.0] * n_spare + [1e6, 1e6])
    table.never_binds = np.arange(len(capacity)) >= 3 + n_spare
    n = len(names)
    solver = repair_solve.RepairSolver(table, capacity, None, np.arange(n), np.array([0, n]))
    # every route at 1: A, B and C full
    before = np.ones(n, dtype=np.int64)
    assert np.array_equal(solver.solve(0, np.arange(n), before)[0], np.ones(n))
    # g leaves and h takes a second flow: h and s fall to 2/3 on C, B is not full, q rises
    routes = np.arange(1, n)
    counts = before[1:].copy()
    counts[names.index("h") - 1] = 2
    rates = solver.solve(0, routes, counts)[0]
    assert solver.repaired == 1
    ref = maxmin(routes, counts, table, capacity, None)[0]
    assert ref[names.index("q") - 1] == pytest.approx(4 / 3)
    np.testing.assert_allclose(rates, ref, rtol=1e-12)


def test_each_part_of_a_larger_table_answers_with_its_own_channels():
    """Two parts in one table (the engine's parts share the run's table): each part's answer names
    the channels of its classes in use, read from that part's channels only, as the whole solve of
    its routes gives them."""
    rng = np.random.default_rng(6)
    (t1, cap1, _), (t2, cap2, _) = _part(rng, n_routes=200), _part(rng, n_routes=250, planes=2)
    n1, n2, off = len(t1.lens), len(t2.lens), len(cap1)
    table = RouteTable([t1.ch[o:o + k] for o, k in zip(t1.offsets, t1.lens)] +
                       [off + t2.ch[o:o + k] for o, k in zip(t2.offsets, t2.lens)],
                       [t1.w[o:o + k] for o, k in zip(t1.offsets, t1.lens)] +
                       [t2.w[o:o + k] for o, k in zip(t2.offsets, t2.lens)])
    table.never_binds = np.concatenate([t1.never_binds, t2.never_binds])
    capacity = np.concatenate([cap1, cap2])
    solver = repair_solve.RepairSolver(table, capacity, None, np.arange(n1 + n2), np.array([0, n1, n1 + n2]))
    for (r1, c1), (r2, c2) in zip(_states(rng, n1, 150), _states(rng, n2, 150)):
        for c, routes, counts in ((0, r1, c1), (1, n1 + r2, c2)):
            rates, uch, load = solver.solve(c, routes, counts)
            ref_rates, ref_uch, ref_load = maxmin(routes, counts, table, capacity, None)
            np.testing.assert_array_equal(uch, ref_uch)
            np.testing.assert_allclose(rates, ref_rates, rtol=1e-12)
            np.testing.assert_allclose(load, ref_load, rtol=1e-12)
    assert solver.repaired > 200
