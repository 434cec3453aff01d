"""A large solve's start read from its table's columns (sim/filling_start.py) against
``maxmin._filling_start``, bit for bit: on random tables whose channels are a few among many (the
numbering over the table's own channels) and on dense ones, with one flow per route and several,
with channels that never bind given before the first solve and after it."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.sim import filling_start as fs
from dgxstudio.sim.maxmin import _filling_start
from dgxstudio.sim.rates import RouteTable

from .test_maxmin import route_tables


def _same(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        if isinstance(a, tuple):
            _same(a, b)
        elif a is None or b is None:
            assert a is b
        else:
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _spread(table: RouteTable, capacity: np.ndarray, stride: int) -> tuple[RouteTable, np.ndarray]:
    """The same table with channel c renumbered c * stride + 3 in a network ``stride`` times larger."""
    ch = table.ch * stride + 3
    big = np.full(len(capacity) * stride + 3, 7.0)
    big[np.arange(len(capacity)) * stride + 3] = capacity
    out = RouteTable.__new__(RouteTable)
    out.lens, out.offsets, out.ch, out.w = table.lens, table.offsets, ch, table.w
    return out, big


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route_tables(), st.sampled_from([1, 9]), st.booleans(), st.booleans(), st.integers(0, 2**31))
def test_the_start_from_columns_is_the_reference_start(case, stride, ones, never, seed):
    table, capacity, route_cap, calls = case
    table, capacity = _spread(table, capacity, stride)
    rng = np.random.default_rng(seed)
    for k, (ids, mult) in enumerate(calls):
        if never and k == 1:  # (given after a solve: the columns read the new mask)
            table.never_binds = rng.random(len(capacity)) < 0.3
        if ones:
            mult = np.ones(len(ids), dtype=mult.dtype)
        _same(fs.filling_start(ids, mult, table, capacity, route_cap),
              _filling_start(ids, mult, table, capacity, route_cap))
    assert (fs._columns(table, capacity).chans is not None) == (fs.SPARSE * len(np.unique(table.ch)) <= len(capacity))


def test_a_table_few_of_whose_channels_are_in_the_network_numbers_its_own():
    """A table loading 3 of 1,000 channels numbers them among its own 3: the solve's channels are
    the network's ids, ascending, and its bounds each route's alone."""
    table = RouteTable([np.array([700, 5]), np.array([5, 998]), np.array([998])],
                       [np.array([1.0, 0.5]), np.array([0.25, 1.0]), np.array([1.0])])
    capacity = np.arange(1.0, 1001.0)
    cols = fs._columns(table, capacity)
    assert cols.chans.tolist() == [5, 700, 998] and cols.place.tolist() == [1, 0, 0, 2, 2]
    assert cols.bound_one.tolist() == [min(701.0, 6.0 / 0.5), min(6.0 / 0.25, 999.0), 999.0]
    ids, mult = np.array([2, 0]), np.array([1, 1])
    got = fs.filling_start(ids, mult, table, capacity, None)
    assert got[0].tolist() == [5, 700, 998]
    _same(got, _filling_start(ids, mult, table, capacity, None))
    assert fs._columns(table, capacity) is cols  # kept for the table's next solve
    table.never_binds = np.zeros(1000, dtype=bool)
    assert fs._columns(table, capacity) is not cols
