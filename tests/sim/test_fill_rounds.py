"""The large solves' rounds with less work per round (sim/fill_rounds.py: entries counted where every
weight is 1, no update after the round that freezes the last open routes) against
``maxmin_reference``: rates, channels and loads bit for bit on random tables (every weight 1 or
not, one flow per route or several, one cap for all routes, several, none), and every large solve
of an NVLS tree over DGX H100 systems (its routes all of weight 1)."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import fill_rounds
from dgxstudio.sim import maxmin as maxmin_module
from dgxstudio.sim import tree_fold
from dgxstudio.sim import tuning as T
from dgxstudio.sim.maxmin import maxmin_arrays, maxmin_reference
from dgxstudio.sim.rates import RouteTable
from dgxstudio.sim.run import SimOptions, Simulator

from .test_maxmin import assert_same_bits, route_tables


def _unit(table: RouteTable) -> RouteTable:
    out = RouteTable.__new__(RouteTable)
    out.lens, out.offsets, out.ch, out.w = table.lens, table.offsets, table.ch, np.ones_like(table.w)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route_tables(), st.booleans(), st.booleans(), st.sampled_from(["table", None, 0.25, 20e9]))
def test_the_rounds_equal_the_reference_bit_for_bit(case, unit, one_flow, cap):
    table, capacity, route_cap, calls = case
    if unit:
        table = _unit(table)
    if cap != "table":
        route_cap = None if cap is None else np.full(len(table.lens), cap)
    for ids, mult in calls:
        if not table.lens[ids].any():
            continue  # (no channel at all: the reference fails; the engine never asks)
        if one_flow:
            mult = np.ones(len(ids), dtype=mult.dtype)
        assert_same_bits(maxmin_arrays(ids, mult, table, capacity, route_cap),
                         maxmin_reference(ids, mult, table, capacity, route_cap))


def test_the_last_round_and_the_counted_entries_on_a_chain():
    """Four routes of weight 1: the first round fills the middle channel (three routes), the cap
    freezes the last; with a weight of 0.5 on one entry the weights are summed again, as the
    reference sums them."""
    ids, mult = np.arange(4), np.ones(4, dtype=np.int64)
    capacity, cap = np.array([10.0, 3.0, 4.0]), np.full(4, 2.5)
    for w1, rates in ((1.0, [1.0, 1.0, 1.0, 2.5]), (0.5, [1.2, 1.2, 1.2, 2.5])):
        table = RouteTable([np.array([0, 1]), np.array([1, 2]), np.array([1]), np.array([2])],
                           [np.ones(2), np.array([w1, 1.0]), np.ones(1), np.ones(1)])
        got = maxmin_arrays(ids, mult, table, capacity, cap)
        assert_same_bits(got, maxmin_reference(ids, mult, table, capacity, cap))
        assert got[0].tolist() == rates


def test_every_large_solve_of_an_nvls_tree_is_the_reference(monkeypatch):
    """The NVLS tree over 8 DGX H100 run flow by flow, every solve on arrays (most with every route
    of weight 1: the rounds count entries): each against the reference, bit for bit."""
    topo = build_fat_tree(8, "dgx-h100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    real, seen, counted = maxmin_module.maxmin_arrays, [], []

    def checked(ids, mult, table, capacity, route_cap=None):
        got = real(ids, mult, table, capacity, route_cap)
        assert_same_bits(got, maxmin_reference(ids, mult, table, capacity, route_cap))
        seen.append(len(ids))
        return got

    rounds = fill_rounds.rounds

    def spy(n, ridx, ch_local, w, *rest):
        counted.append(bool(len(w)) and bool((w == 1.0).all()))
        return rounds(n, ridx, ch_local, w, *rest)

    monkeypatch.setattr(maxmin_module, "maxmin_arrays", checked)
    monkeypatch.setattr(maxmin_module, "SMALL_ENTRIES", -1)
    monkeypatch.setattr(fill_rounds, "rounds", spy)
    monkeypatch.setattr(tree_fold.Fold, "of", classmethod(lambda cls, engine, sched: None))
    # network pairs above NCCL's per-head NVLS-tree ceiling: at the ceiling they all run at one rate
    # and the run needs only ~12 solves, too few to be a check; above it the NICs set the rates
    monkeypatch.setattr(T, "nvls_tree_head_algbw_Bps", lambda shape: 1e13)
    sim.run("all-reduce", "nvls-tree", 64 * 2**20)
    assert len(seen) > 20 and max(seen) > 100 and sum(counted) > len(counted) // 2  # (50, 192 and 44 of 50)
