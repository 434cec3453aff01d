"""The engine keeps each distinct array of its class patterns once (sim/kept_arrays.py): a run
whose state keeps moving (the NVLS tree over 2,048 DGX H100 at 16 GiB) kept 610 MB of channel and
load arrays, most equal to one kept before. Counted, not timed; and the answers are those of a run
that keeps every array as it came."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import engine as engine_mod
from dgxstudio.sim.kept_arrays import KeptArrays
from dgxstudio.sim.run import simulate


def _engine_runs(monkeypatch) -> list:
    runs = []
    run = engine_mod.Engine._run

    def spy(self, *args, **kwargs):
        runs.append(run(self, *args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(engine_mod.Engine, "_run", spy)
    return runs


@pytest.mark.parametrize("system, n, algorithm, size", [
    ("dgx-a100", 2, "tree", 2**22),        # 42 class patterns, 2 distinct channel sets
    ("dgx-h100", 4, "nvls-tree", 2**30),   # 14 class patterns, 5 distinct channel sets
])
def test_equal_class_pattern_arrays_are_held_once(monkeypatch, system, n, algorithm, size):
    runs = _engine_runs(monkeypatch)
    simulate(build_fat_tree(n, system), "all-reduce", algorithm, size)
    assert runs
    for sim in runs:
        patterns = sim.rate_patterns
        held = {}
        for arrays in (patterns._lch, patterns._loads):
            assert len(arrays) > 1
            by_content = {}
            for a in arrays:
                by_content.setdefault((a.dtype.str, a.tobytes()), set()).add(id(a))
                held[id(a)] = a.nbytes
            # one object per content (the old engine kept a new array per class pattern)
            assert all(len(ids) == 1 for ids in by_content.values())
            assert len({id(a) for a in arrays}) < len(arrays)
        # the network states' bytes count what is held, each array once (channels and loads here;
        # the routes and rates beside them make the rest)
        assert sum(held.values()) <= sim.state_bytes


def test_the_answers_are_those_of_keeping_every_array(monkeypatch):
    topo = build_fat_tree(4, "dgx-a100")
    shared = simulate(topo, "all-reduce", "tree", 2**26)
    def keep_each(self, a):
        self.nbytes += a.nbytes
        return a

    monkeypatch.setattr(KeptArrays, "keep", keep_each)
    each = simulate(topo, "all-reduce", "tree", 2**26)
    assert shared.time_s == each.time_s
    assert np.array_equal(shared.sim.channel_bytes, each.sim.channel_bytes)
    assert shared.sim.events == each.sim.events
    assert list(shared.sim.segments) == list(each.sim.segments)
    assert shared.sim.state_bytes < each.sim.state_bytes


def test_kept_arrays_compare_every_element_and_the_dtype():
    kept = KeptArrays()
    a = np.arange(100, dtype=np.int64)
    assert kept.keep(a) is a
    assert kept.keep(a.copy()) is a
    b = a.copy()
    b[[3, 5]] = b[[5, 3]]  # the same bits summed, another array
    assert kept.keep(b) is b
    c = a.astype(np.float64)
    assert kept.keep(c) is c
    assert kept.keep(a.astype(np.int32)) is not a
    assert kept.nbytes == a.nbytes + b.nbytes + c.nbytes + 400


def test_arrays_alike_in_their_sums_are_all_found_again():
    # a deep tree's route lists: one length, the same indices in other orders and mixes, so their
    # elements' bits sum alike. Each is held and found again, past the candidates kept per key
    # (picked by their sums, the ninth and later were never found again: a copy was kept as new)
    kept = KeptArrays()
    base = np.arange(40, dtype=np.int32)
    firsts = []
    for i in range(3 * KeptArrays.CANDIDATES):
        a = np.roll(base, i)
        firsts.append(a)
        assert kept.keep(a) is a
    for a in firsts:
        assert kept.keep(a.copy()) is a
    assert kept.nbytes == sum(a.nbytes for a in firsts)


def test_arrays_whose_keys_collide_are_told_apart(monkeypatch):
    # every key the same hash: candidates are compared by dtype, shape and bits, never taken on the key
    from dgxstudio.sim import kept_arrays
    monkeypatch.setattr(kept_arrays, "hash", lambda _: 7, raising=False)
    kept = KeptArrays()
    a = np.arange(6, dtype=np.int64)
    same_bits = a.view(np.float64)
    reshaped = a.reshape(2, 3)
    other = a[::-1].copy()
    for x in (a, same_bits, reshaped, other):
        assert kept.keep(x) is x
    assert kept.keep(a.copy()) is a
    assert kept.keep(other.copy()) is other
    assert kept.keep(same_bits.copy()) is same_bits
    assert kept.keep(reshaped.copy()) is reshaped
    assert kept.nbytes == 4 * a.nbytes
