"""The large solves' filling with less work per solve (sim/array_fill.py) against ``maxmin_arrays``
as it solves without it and against ``maxmin_reference``: rates, channels and loads bit for bit on
random tables (one flow per route, the engine's solves; every weight 1 or not; channels that never
bind given before the first solve and after it; one cap for all routes, several, none), and a
whole run whose large solves take it."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import array_fill
from dgxstudio.sim import maxmin as maxmin_module
from dgxstudio.sim.maxmin import maxmin_arrays, maxmin_reference
from dgxstudio.sim.rates import RouteTable
from dgxstudio.sim.run import SimOptions, Simulator

from .test_filling_start import _spread
from .test_maxmin import assert_same_bits, route_tables


def _old(ids, mult, table, capacity, route_cap):
    """``maxmin_arrays`` as it solves without this module."""
    real = array_fill.solve
    array_fill.solve = lambda *args: None
    try:
        return maxmin_arrays(ids, mult, table, capacity, route_cap)
    finally:
        array_fill.solve = real


def _unit(table: RouteTable) -> RouteTable:
    out = RouteTable.__new__(RouteTable)
    out.lens, out.offsets, out.ch, out.w = table.lens, table.offsets, table.ch, np.ones_like(table.w)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route_tables(), st.booleans(), st.sampled_from([1, 9]), st.sampled_from(["table", None, 0.25, 20e9]),
       st.booleans(), st.integers(0, 2**31))
def test_the_filling_equals_the_arrays_and_the_reference_bit_for_bit(case, unit, stride, cap, never, seed):
    table, capacity, route_cap, calls = case
    table, capacity = _spread(table, capacity, stride)
    if unit:
        table = _unit(table)
    if cap != "table":
        route_cap = None if cap is None else np.full(len(table.lens), cap)
    rng = np.random.default_rng(seed)
    for k, (ids, mult) in enumerate(calls):
        if never and k == 1:  # (given after a solve: the entries that may bind are read again)
            table.never_binds = rng.random(len(capacity)) < 0.3
        mult = np.ones(len(ids), dtype=mult.dtype)
        if not table.lens[ids].all():
            assert array_fill.solve(ids, mult, table, capacity, route_cap) is None
            continue
        got = array_fill.solve(ids, mult, table, capacity, route_cap)
        assert got is not None
        assert_same_bits(got, _old(ids, mult, table, capacity, route_cap))
        assert_same_bits(got, maxmin_reference(ids, mult, table, capacity, route_cap))


def test_more_flows_than_one_on_a_route_are_left_to_the_arrays():
    table = RouteTable([np.array([0, 1]), np.array([1])], [np.array([1.0, 1.0]), np.array([1.0])])
    capacity = np.array([2.0, 3.0])
    assert array_fill.solve(np.array([0, 1]), np.array([1, 2]), table, capacity, None) is None
    assert array_fill.solve(np.array([0, 1]), np.array([1, 1]), table, capacity, None) is not None


def test_the_last_round_and_the_counted_entries_on_a_chain():
    """Three routes of weight 1 on a chain of channels: the first round fills the middle channel
    (three routes), the cap freezes the rest; the same bits as the reference, and a capacity the
    counting must not take for a weight (0.5 on one entry) moves the answer as the reference's does."""
    table = RouteTable([np.array([0, 1]), np.array([1, 2]), np.array([1]), np.array([2])],
                       [np.ones(2), np.ones(2), np.ones(1), np.ones(1)])
    capacity = np.array([10.0, 3.0, 4.0])
    ids, mult = np.arange(4), np.ones(4, dtype=np.int64)
    cap = np.full(4, 2.5)
    got = array_fill.solve(ids, mult, table, capacity, cap)
    assert_same_bits(got, maxmin_reference(ids, mult, table, capacity, cap))
    assert got[0].tolist() == [1.0, 1.0, 1.0, 2.5]
    half = RouteTable([np.array([0, 1]), np.array([1, 2]), np.array([1]), np.array([2])],
                      [np.ones(2), np.array([0.5, 1.0]), np.ones(1), np.ones(1)])
    got = array_fill.solve(ids, mult, half, capacity, cap)
    assert_same_bits(got, maxmin_reference(ids, mult, half, capacity, cap))
    assert got[0].tolist() == [1.2, 1.2, 1.2, 2.5]


def test_a_run_whose_large_solves_take_it_is_the_run_without_it(monkeypatch):
    """NCCL's tree on a 4:1 fat tree of 8 DGX A100 with every solve on arrays (hundreds of routes):
    the same answer, group times and channel bytes with the filling here and without it, and the
    filling here took most solves."""
    topo = build_fat_tree(8, "dgx-a100", per_leaf=2, oversubscription=4.0)
    gpus = [d.id for d in topo.gpus()]
    monkeypatch.setattr(maxmin_module, "SMALL_ENTRIES", -1)
    taken = []
    real = array_fill.solve

    def counted(*args):
        got = real(*args)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(array_fill, "solve", counted)
    new = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "tree", 64 * 2**20)
    monkeypatch.setattr(array_fill, "solve", lambda *args: None)
    old = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "tree", 64 * 2**20)
    assert len(taken) > 50 and sum(taken) > 0.9 * len(taken)
    assert new.time_s == old.time_s and new.busbw_Bps == old.busbw_Bps
    for name in ("group_start", "group_sent", "group_done"):
        a, b = np.asarray(getattr(new.sim, name)), np.asarray(getattr(old.sim, name))
        assert a.tobytes() == b.tobytes(), name
    assert new.sim.channel_bytes.tobytes() == old.sim.channel_bytes.tobytes()
