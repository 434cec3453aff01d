"""The engine's active flows closed up and appended to in place (sim/active_flows.py): after any
sequence of starts and ends, the flows left in the order they started, with their values."""

import numpy as np
import pytest

from dgxstudio.sim.active_flows import ActiveFlows


def _check(flows, ref):
    ints, floats = flows.views()
    assert ints.tolist() == [[r[k] for r in ref] for k in range(3)]
    assert floats.tolist() == [[r[3 + k] for r in ref] for k in range(2)]


def _start(flows, ref, rng, nxt, k):
    """k flows start (numbered from nxt, random values), in ``flows`` and the reference list."""
    rows = [(nxt + j, int(rng.integers(100)), j, float(rng.random()), float(rng.random())) for j in range(k)]
    if k:
        flows.add(np.array([[r[i] for r in rows] for i in range(3)], dtype=np.int64),
                  np.array([[r[3 + i] for r in rows] for i in range(2)]))
        ref += rows
    return nxt + k


def _cluster(rng, n):
    """A cluster of ends, near the front or the back (as a tree's pieces end), or anywhere."""
    ended = np.zeros(n, dtype=bool)
    where = rng.random()
    centre = int(n * (0.1 if where < 0.4 else 0.9 if where < 0.8 else rng.random()))
    lo, hi = max(0, centre - 5), min(n, centre + 5)
    ended[lo:hi] = rng.random(hi - lo) < 0.5
    if rng.random() < 0.1:
        ended[rng.integers(n)] = True  # and a stray one far away
    return ended


def _one_run(rng, n):
    """One run of ends (a group's flows ending together), anywhere."""
    ended = np.zeros(n, dtype=bool)
    first = int(rng.integers(n))
    ended[first:first + int(rng.integers(1, 25))] = True
    return ended


@pytest.mark.parametrize("seed,most,ends", [(3, 30, _cluster), (7, 40, _one_run)])
def test_starts_and_ends_keep_the_others_in_order(seed, most, ends):
    # (one run of ends is closed up with two slice copies that overlap their destination, from
    # the front when the run lies nearer it, else from the back)
    rng = np.random.default_rng(seed)
    flows, ref = ActiveFlows(room=8), []
    nxt = 0
    fronts = backs = 0
    for step in range(500):
        nxt = _start(flows, ref, rng, nxt, int(rng.integers(0, most)))
        _check(flows, ref)
        n = len(ref)
        if n:
            ended = ends(rng, n)
            lo_before, hi_before = flows.lo, flows.hi
            # (the engine hands the places of the ends it found: every other step here)
            flows.drop(ended, np.flatnonzero(ended) if step % 2 else None)
            fronts += flows.lo > lo_before
            backs += flows.hi < hi_before
            ref = [r for r, e in zip(ref, ended.tolist()) if not e]
        _check(flows, ref)
    assert fronts > 50 and backs > 50  # both ways of closing up were taken


def test_nothing_ended_changes_nothing():
    flows = ActiveFlows(room=4)
    flows.add(np.arange(15).reshape(3, 5), np.arange(10, dtype=float).reshape(2, 5))
    ints, floats = flows.drop(np.zeros(5, dtype=bool))
    assert ints.tolist() == np.arange(15).reshape(3, 5).tolist() and floats.shape == (2, 5)
    ints, floats = flows.drop(np.ones(5, dtype=bool))
    assert ints.shape == (3, 0) and floats.shape == (2, 0)
