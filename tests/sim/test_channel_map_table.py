"""tree_orbits' map of channels read from one table of every route (``_table``, the usual case on
the tree's parts) or chunk by chunk from each route's own arrays: the same answers, refusals
included, and the same orbits on a real tree."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold, tree_orbits
from dgxstudio.sim.engine import Engine

from .test_tree_orbits import _schedule, _spy


def _routes():
    capacity = np.array([1.0, 1.0, 1.0, 2.0])
    ch = [np.array([0, 1]), np.array([1, 2]), np.array([0, 2]), np.array([0, 3]), np.array([2])]
    w = [np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([1.0])]
    return ch, w, capacity


@pytest.mark.parametrize("a, b, expected", [
    ([0, 2], [2, 0], [0, 2, 1, -1]),   # 0 -> 0, 1 -> 2, 2 -> 1
    ([0, 1], [1, 0], None),            # channel 1 onto 2 by route 0 and onto 0 by route 1
    ([1, 2], [0, 0], None),            # channels 1 and 0 onto 0: two onto one
    ([0, 3], [3, 0], None),            # onto a channel of another capacity
    ([0, 4], [2, 4], None),            # routes of different lengths
    ([4], [4], [-1, -1, 2, -1]),
])
def test_the_table_answers_as_the_chunks(a, b, expected):
    ch, w, capacity = _routes()
    table = tree_orbits._table(ch, w)
    assert table is not None
    for t in (None, table):
        pi = tree_orbits._channel_map(np.array(a), np.array(b), ch, w, capacity, t)
        assert (pi is None if expected is None else pi.tolist() == expected), t


def test_other_weights_refuse_the_map_from_the_table_too():
    ch, w, capacity = _routes()
    w[2] = np.array([1.0, 0.25])
    assert tree_orbits._channel_map(np.array([0, 2]), np.array([2, 0]), ch, w, capacity,
                                    tree_orbits._table(ch, w)) is None


def test_orbits_from_one_table_equal_those_read_chunk_by_chunk(monkeypatch):
    sim, sched, scale = _schedule(build_fat_tree(16, "dgx-h100", rail_optimized=True))
    seen = _spy(monkeypatch)
    assert tree_fold.Fold.of(Engine(sim.router, scale), sched) is not None
    monkeypatch.setattr(tree_orbits, "_FLAT", 0)  # (every route too many: chunk by chunk)
    made = []
    real = tree_orbits._table
    monkeypatch.setattr(tree_orbits, "_table", lambda *x: made.append(real(*x)) or made[-1])
    assert tree_fold.Fold.of(Engine(sim.router, scale), sched) is not None
    assert made == [None]
    one, chunked = seen["orbits"]
    assert one is not None and chunked is not None
    np.testing.assert_array_equal(one.uch, chunked.uch)
    np.testing.assert_array_equal(one.col_c, chunked.col_c)
