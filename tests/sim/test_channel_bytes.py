"""The run's channel bytes (sim/accounting.py ``channel_bytes``) against the plain loop they replace:
each (component, class pattern) pair's time summed over the network states in order, then, pair
after pair, ``out[channels] += loads * time``. The vectorised sums must be the same sums in the same
order, so the same bits, whichever way the pairs are binned and however they are cut in blocks."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import accounting
from dgxstudio.sim.run import SimOptions, Simulator


def loop_channel_bytes(n_channels, global_parts, pattern_time, n_comp, comp_ch, cp_lch, cp_load):
    per = max(1, len(cp_lch))
    spent: dict[int, float] = {}
    for part, dt in zip(global_parts, pattern_time):
        for c, q in zip(part[0].tolist(), part[1].tolist()):
            key = c * per + q
            spent[key] = spent.get(key, 0.0) + dt
    out = np.zeros(n_channels)
    for key in sorted(spent):
        if spent[key] > 0:
            c, q = divmod(key, per)
            out[comp_ch[c][cp_lch[q]]] += cp_load[q] * spent[key]
    return out


def _captured_run(monkeypatch, topo, algorithm, size):
    seen = []
    real = accounting.channel_bytes

    def spy(*args):
        out = real(*args)
        seen.append((args, out))
        return out

    monkeypatch.setattr(accounting, "channel_bytes", spy)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    result = sim.run("all-reduce", algorithm, size)
    monkeypatch.setattr(accounting, "channel_bytes", real)
    assert len(seen) == 1
    return result, *seen[0]


@pytest.mark.parametrize("algorithm", ["tree", "ring"])
def test_channel_bytes_equal_the_loop_over_pairs_bit_for_bit(monkeypatch, algorithm):
    topo = build_fat_tree(4, "dgx-a100", per_leaf=2, oversubscription=2.0)
    result, args, got = _captured_run(monkeypatch, topo, algorithm, 2**20)
    want = loop_channel_bytes(*args[:7])
    assert len(args[1]) > (10 if algorithm == "tree" else 0) and want.sum() > 0  # the tree: many network states
    # (what the engine's run accounted; a tree's result spreads it over channels alike: sim/tree_fold.py)
    assert got.tobytes() == want.tobytes()
    if algorithm == "ring":
        assert result.sim.channel_bytes.tobytes() == want.tobytes()
    # the pairs one at a time and all vectorised; without the classes (bins over every component x
    # pattern), in blocks of a few entries, and by sorting
    monkeypatch.setattr(accounting, "LOOP_PAIRS", 10**9)
    assert accounting.channel_bytes(*args).tobytes() == want.tobytes()
    monkeypatch.setattr(accounting, "LOOP_PAIRS", -1)
    assert accounting.channel_bytes(*args).tobytes() == want.tobytes()
    assert accounting.channel_bytes(*args[:7]).tobytes() == want.tobytes()
    monkeypatch.setattr(accounting, "CHUNK", 7)
    assert accounting.channel_bytes(*args).tobytes() == want.tobytes()
    monkeypatch.setattr(accounting, "PAIR_BINS", (-1, -1))
    assert accounting.channel_bytes(*args).tobytes() == want.tobytes()
    assert accounting.channel_bytes(*args[:7]).tobytes() == want.tobytes()


def test_a_pattern_of_another_class_gets_its_own_bins(monkeypatch):
    """Two components of different classes, each with its own patterns: a pair's bin is numbered
    among its class's patterns, so patterns of the other class must not shift it."""
    comp_ch = [np.array([0, 1]), np.array([2, 3, 4])]
    cp_lch = [np.array([0, 1]), np.array([2, 0]), np.array([1]), np.array([0, 1, 2])]
    cp_load = [np.array([1.0, 2.0]), np.array([0.1, 0.3]), np.array([5.0]), np.array([7.0, 1e-3, 3.0])]
    comp_class = np.array([0, 1])
    cp_class = [0, 1, 0, 1]
    parts = [np.array([[0, 1], [0, 1]]), np.array([[0, 1], [2, 3]]), np.array([[1], [1]]), np.array([[0], [0]])]
    times = [0.1, 0.7, 1.0 / 3, 0.2]
    want = loop_channel_bytes(5, parts, times, 2, comp_ch, cp_lch, cp_load)
    monkeypatch.setattr(accounting, "LOOP_PAIRS", -1)  # (four pairs: vectorised all the same)
    got = accounting.channel_bytes(5, parts, times, 2, comp_ch, cp_lch, cp_load, comp_class, cp_class)
    assert got.tobytes() == want.tobytes()
    assert (got > 0).all()
