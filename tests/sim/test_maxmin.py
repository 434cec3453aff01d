"""The class-wise max-min solver (sim/maxmin.py) against the numpy reference it replaces for small
problems: the same rates, channels and loads, bit for bit, on random route tables built to have
parallel channels (merged into classes), channels a route loads twice (kept alone), capacities and
caps that tie, routes without channels, and routes handed over in any order."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import accounting
from dgxstudio.sim import engine as engine_module
from dgxstudio.sim import maxmin as maxmin_module
from dgxstudio.sim import tree_fold
from dgxstudio.sim.maxmin import _channel_classes, _maxmin_large, maxmin, maxmin_arrays, maxmin_reference
from dgxstudio.sim.rates import RouteTable
from dgxstudio.sim.run import SimOptions, Simulator

CAPACITIES = [1.0, 2.0, 3.0, 0.7, 25e9, 36.8e9]


@st.composite
def route_tables(draw):
    """Channel groups of 1-4 parallel channels (an NVSwitch plane each, say) and routes that cross
    some groups either spread over every channel of the group (weight 1/k each) or on one channel."""
    groups, capacity = [], []
    for _ in range(draw(st.integers(1, 7))):
        k = draw(st.integers(1, 4))
        groups.append(list(range(len(capacity), len(capacity) + k)))
        capacity += [draw(st.sampled_from(CAPACITIES))] * k
    if draw(st.booleans()):  # one parallel channel a little wider: it must not share its group's class
        capacity[draw(st.integers(0, len(capacity) - 1))] *= 1.5
    capacity += [1.0] * draw(st.integers(0, 3))  # channels no route uses
    route_ch, route_w = [], []
    for _ in range(draw(st.integers(1, 12))):
        chans, weights = [], []
        for g in draw(st.lists(st.integers(0, len(groups) - 1), max_size=4)):  # a group twice: channels loaded twice
            if draw(st.booleans()):
                chans += groups[g]
                weights += [1.0 / len(groups[g])] * len(groups[g])
            else:
                chans.append(draw(st.sampled_from(groups[g])))
                weights.append(draw(st.sampled_from([1.0, 0.5, 1.0 / 3])))
        route_ch.append(np.asarray(chans, dtype=np.int64))
        route_w.append(np.asarray(weights, dtype=float))
    route_cap = None
    if draw(st.booleans()):
        route_cap = np.asarray(draw(st.lists(st.sampled_from([np.inf, 0.25, 0.5, 1.0, 20e9]),
                                             min_size=len(route_ch), max_size=len(route_ch))), dtype=float)
    calls = []
    for _ in range(draw(st.integers(1, 4))):  # several solves on one table: its caches are reused
        order = draw(st.permutations(range(len(route_ch))))
        ids = np.asarray(order[:draw(st.integers(1, len(order)))], dtype=np.int64)
        mult = np.asarray(draw(st.lists(st.integers(1, 7), min_size=len(ids), max_size=len(ids))), dtype=np.int64)
        if draw(st.booleans()):
            mult = mult.astype(float)  # the symmetry solver passes counts as floats
        calls.append((ids, mult))
    return RouteTable(route_ch, route_w), np.asarray(capacity, dtype=float), route_cap, calls


def assert_same_bits(got, want):
    for a, b, name in zip(got, want, ("rates", "channels", "loads")):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), f"{name}: {a} != {b}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route_tables())
def test_class_solver_equals_the_reference_bit_for_bit(case):
    table, capacity, route_cap, calls = case
    for ids, mult in calls:
        if not table.lens[ids].any():
            continue  # no channel at all: the reference has no filling to do (and fails); the engine never asks
        assert_same_bits(maxmin(ids, mult, table, capacity, route_cap),
                         maxmin_reference(ids, mult, table, capacity, route_cap))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route_tables())
def test_array_filling_over_classes_equals_the_reference_bit_for_bit(case):
    """Large problems (above SMALL_ENTRIES) fill on arrays over channel classes: forced here on the
    same random tables, the same bits as the filling over channels."""
    table, capacity, route_cap, calls = case
    for ids, mult in calls:
        if not table.lens[ids].any():
            continue
        cc = _channel_classes(table, capacity)
        if not cc.usable:
            continue
        assert_same_bits(_maxmin_large(ids, mult, cc, route_cap),
                         maxmin_reference(ids, mult, table, capacity, route_cap))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route_tables(), st.sampled_from([None, 0.25, 1.0, 20e9, np.inf]))
def test_the_filling_without_filled_channels_equals_the_reference_bit_for_bit(case, one_cap):
    """``maxmin_arrays`` (large solves) drops the channels that cannot fill from its rounds and takes
    a cap all routes share without an array: the same bits as the reference, with the random
    tables' own caps, and with one cap for every route (a protocol's)."""
    table, capacity, route_cap, calls = case
    if one_cap is not None:
        route_cap = np.full(len(table.lens), one_cap)
    for ids, mult in calls:
        if not table.lens[ids].any():
            continue
        assert_same_bits(maxmin_arrays(ids, mult, table, capacity, route_cap),
                         maxmin_reference(ids, mult, table, capacity, route_cap))


def test_the_filling_without_filled_channels_on_a_large_tree_solve(monkeypatch):
    """Every solve of NCCL's tree on a 4:1 fat tree of 8 DGX A100 (hundreds of routes, channels
    filling round after round until the arrays are cut down) against the reference."""
    topo = build_fat_tree(8, "dgx-a100", per_leaf=2, oversubscription=4.0)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    real = maxmin_module.maxmin_arrays
    seen = []

    def checked(ids, mult, table, capacity, route_cap=None):
        got = real(ids, mult, table, capacity, route_cap)
        assert_same_bits(got, maxmin_reference(ids, mult, table, capacity, route_cap))
        seen.append(len(ids))
        return got

    monkeypatch.setattr(maxmin_module, "maxmin_arrays", checked)
    monkeypatch.setattr(maxmin_module, "SMALL_ENTRIES", -1)
    # flow by flow (NCCL's chain order makes the trees alike, and a folded run solves far fewer)
    monkeypatch.setattr(tree_fold.Fold, "of", classmethod(lambda cls, engine, sched: None))
    sim.run("all-reduce", "tree", 8 * 2**20)
    assert len(seen) > 50 and max(seen) > 100  # (1,000 solves with the chains NCCL 2.18 and before made)


def test_parallel_channels_share_a_class_and_a_twice_loaded_one_stays_alone():
    # route 0 spreads over channels 0-2 (one plane each) then 3; route 1 the same planes; route 2
    # loads channel 4 twice; channel 5 is as wide as 0-2 but route 1 alone loads it
    route_ch = [np.array([0, 1, 2, 3]), np.array([0, 1, 2, 5]), np.array([4, 4])]
    route_w = [np.array([1 / 3, 1 / 3, 1 / 3, 1.0]), np.array([1 / 3, 1 / 3, 1 / 3, 1.0]), np.array([0.5, 0.5])]
    capacity = np.array([3.0, 3.0, 3.0, 1.0, 2.0, 3.0, 9.0])
    cc = _channel_classes(RouteTable(route_ch, route_w), capacity)
    cls = cc.cls_of
    assert cls[0] == cls[1] == cls[2]
    assert len({cls[0], cls[3], cls[4], cls[5]}) == 4 and cls[6] == -1
    assert len(cc.entry(0)) == 2 and len(cc.entry(2)) == 2  # one entry for the planes, both for channel 4
    table = RouteTable(route_ch, route_w)
    ids, mult = np.array([2, 0, 1]), np.array([1, 2, 1])
    rates, uch, load = maxmin(ids, mult, table, capacity)
    assert_same_bits((rates, uch, load), maxmin_reference(ids, mult, table, capacity))
    assert uch.tolist() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("system, size", [("dgx-a100", 4 * 2**20), ("dgx-h100", 2 * 2**20)])
def test_a_tree_all_reduce_gives_the_same_bits_with_either_solver(system, size, monkeypatch):
    """The case the class solver was written for: every event of NCCL's tree on two systems
    re-solves the two systems' NVSwitch domains together."""
    topo = build_fat_tree(2, system, rail_optimized=system == "dgx-h100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    fast = sim.run("all-reduce", "tree", size)
    monkeypatch.setattr(engine_module, "_maxmin", maxmin_reference)
    ref = sim.run("all-reduce", "tree", size)
    assert fast.sim.events == ref.sim.events > 100
    assert fast.time_s == ref.time_s
    for a, b in ((fast.sim.group_done, ref.sim.group_done), (fast.sim.group_sent, ref.sim.group_sent),
                 (fast.sim.channel_bytes, ref.sim.channel_bytes)):
        assert a.tobytes() == b.tobytes()


def _same_run(a, b):
    assert a.sim.events == b.sim.events
    assert a.time_s == b.time_s and a.busbw_Bps == b.busbw_Bps
    for x, y in ((a.sim.group_done, b.sim.group_done), (a.sim.group_sent, b.sim.group_sent),
                 (a.sim.group_start, b.sim.group_start), (a.sim.channel_bytes, b.sim.channel_bytes)):
        assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("oversubscription", [1.0, 4.0])
def test_fat_tree_runs_with_every_solve_on_class_arrays_give_the_reference_bits(oversubscription, monkeypatch):
    """The array filling over channel classes (large problems: a fat tree's network) inside whole
    runs: NCCL's tree and ring on 6 DGX A100 over a fat tree with parallel spine links, non-blocking
    and 4:1 oversubscribed (the spines then bind: contention), every solve forced onto it, against
    the reference filling over channels."""
    topo = build_fat_tree(6, "dgx-a100", per_leaf=2, oversubscription=oversubscription)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    monkeypatch.setattr(maxmin_module, "SMALL_ENTRIES", -1)
    widest = []  # the largest class of parallel channels each forced solve saw
    large = maxmin_module._maxmin_large

    def spy(route_ids, mult, cc, route_cap):
        widest.append(int(cc.sizes.max()))
        return large(route_ids, mult, cc, route_cap)
    monkeypatch.setattr(maxmin_module, "_maxmin_large", spy)
    fast = [sim.run("all-reduce", alg, 2 * 2**20) for alg in ("tree", "ring")]
    assert len(widest) > 20 and max(widest) > 1  # solved over classes, some of several channels
    monkeypatch.setattr(engine_module, "_maxmin", maxmin_reference)
    ref = [sim.run("all-reduce", alg, 2 * 2**20) for alg in ("tree", "ring")]
    assert fast[0].sim.events > 100  # the tree: an event per piece end
    for a, b in zip(fast, ref):
        _same_run(a, b)


def test_channel_bytes_summed_in_bins_equal_the_sorted_sum(monkeypatch):
    """The run's channel bytes: a bin per (component, pattern) pair, or (forced here) a sort of the
    pairs; the same sums in the same order."""
    topo = build_fat_tree(4, "dgx-a100", per_leaf=2, oversubscription=2.0)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    binned = sim.run("all-reduce", "tree", 2**20)
    monkeypatch.setattr(accounting, "PAIR_BINS", (-1, -1))
    sorted_ = sim.run("all-reduce", "tree", 2**20)
    _same_run(binned, sorted_)
    assert binned.sim.channel_bytes.sum() > 0
