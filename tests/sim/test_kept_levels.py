"""Class patterns' rates and loads held as their few distinct values and a one-byte index each
(sim/kept_arrays.py ``Levels``, ``KeptLevels``): the NVLS tree over 2,048 DGX H100 at 16 GiB kept
258 MB of them as float64. Read back bit for bit, and the engine's answers are those of keeping
every array as it came. Counted, not timed."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import kept_arrays
from dgxstudio.sim.kept_arrays import KeptArrays, KeptLevels, Levels
from dgxstudio.sim.run import simulate


def _bits(a: np.ndarray) -> bytes:
    return a.dtype.str.encode() + a.tobytes()


@pytest.mark.parametrize("n_levels", [1, 3, kept_arrays.FEW_LEVELS, kept_arrays.FEW_LEVELS + 1, 256])
def test_levels_give_the_array_back_bit_for_bit(n_levels):
    rng = np.random.default_rng(n_levels)
    values = rng.random(n_levels) * 1e11
    a = values[rng.integers(0, n_levels, 4000)]
    a[:n_levels] = values  # (every level present)
    lv = Levels.of(a)
    assert lv is not None and len(lv.values) == n_levels and lv.index.dtype == np.uint8
    assert _bits(lv.array()) == _bits(a)
    assert lv.values.nbytes + lv.index.nbytes < a.nbytes


def test_levels_tell_values_apart_by_their_bits():
    nan2 = np.array([0x7FF8000000000001], dtype=np.int64).view(np.float64)[0]  # (another NaN)
    a = np.tile(np.array([0.0, -0.0, np.nan, nan2, np.inf, -np.inf, 1.5, 5e-324]), 100)
    lv = Levels.of(a)
    assert lv is not None and len(lv.values) == 8  # (-0.0 is not 0.0, two NaNs are two)
    assert _bits(lv.array()) == _bits(a)
    ints = np.repeat(np.array([-7, 2**62, 3], dtype=np.int64), 200)
    assert _bits(Levels.of(ints).array()) == _bits(ints)


def test_arrays_that_levels_would_not_shrink_are_kept_as_they_are():
    assert Levels.of(np.arange(1000, dtype=float)) is None  # more than 256 values
    assert Levels.of(np.zeros(kept_arrays.MIN_LEVELS_LEN - 1)) is None  # too short
    assert Levels.of(np.zeros(100, dtype=np.int32)) is None  # (4-byte elements: not worth it)
    kept = KeptArrays()
    held = KeptLevels(kept)
    a = np.arange(1000, dtype=float)
    held.append(a)
    assert held.held(0) is a and held[0] is a


def test_kept_levels_share_equal_parts_and_count_them_once():
    kept = KeptArrays()
    held = KeptLevels(kept)
    a = np.repeat([3.0, 1.0, 2.0], 500)
    held.append(a)
    held.append(a.copy())
    b = np.repeat([9.0, 7.0, 8.0], 500)  # other values in the same order: the index is shared
    held.append(b)
    c = a.copy()
    c[[0, -1]] = c[[-1, 0]]  # (the same bits summed, another array)
    held.append(c)
    first, second, third, fourth = (held.held(i) for i in range(4))
    assert type(first) is Levels and second is first  # (an equal array: the same Levels, not worked out again)
    assert third.index is first.index and third.values is not first.values
    assert fourth is not first and fourth.values is first.values and fourth.index is not first.index
    assert kept.nbytes == 2 * first.index.nbytes + first.values.nbytes + third.values.nbytes
    assert len(held) == 4
    for got, want in zip(held, (a, a, b, c)):
        assert _bits(got) == _bits(want)
    assert held[0] is not held[0]  # (built again at each read: nothing holds the float64 array)


def test_the_engine_answers_as_when_it_keeps_every_array(monkeypatch):
    """64 DGX B200, NVLS tree: most of its class patterns' loads and rates are held as levels; the
    run equals one that keeps them as they came, field by field. (64 DGX H100 made 844 at 256 MiB
    until the NVLS tree's pairs carried NCCL's per-head ceiling, sim/tuning.py
    nvls_tree_head_algbw_Bps: their rates are then a few values, 28 arrays, 441 events.)"""
    topo = build_fat_tree(64, "dgx-b200")
    made = []
    of = Levels.of.__func__

    def counted(cls, a):
        made.append(of(cls, a))
        return made[-1]

    monkeypatch.setattr(Levels, "of", classmethod(counted))
    levels = simulate(topo, "all-reduce", "nvls-tree", 2**29)
    assert sum(x is not None for x in made) > 400
    loads = levels.sim.rate_patterns.patterns._loads  # (the folded run's own)
    assert any(type(loads.held(i)) is Levels for i in range(len(loads)))
    monkeypatch.setattr(Levels, "of", classmethod(lambda cls, a: None))
    whole = simulate(topo, "all-reduce", "nvls-tree", 2**29)
    assert levels.time_s == whole.time_s
    assert levels.sim.events == whole.sim.events
    assert np.array_equal(levels.sim.channel_bytes, whole.sim.channel_bytes)
    assert list(levels.sim.segments) == list(whole.sim.segments)
    assert np.array_equal(np.asarray(levels.sim.group_done), np.asarray(whole.sim.group_done))
    for p, q in zip(levels.sim.rate_patterns, whole.sim.rate_patterns):
        assert np.array_equal(p.channels, q.channels) and _bits(p.load_Bps) == _bits(q.load_Bps)
    assert levels.sim.state_bytes < whole.sim.state_bytes
