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


def test_counts_of_sets_met_again_are_what_add_at_adds(monkeypatch):
    """``Counts``: sets of routes met again reuse their places and values; after any sequence of
    starts and ends the counts, hash sums (mod 2**64) and touched components are np.add.at's."""
    from dgxstudio.sim import active_flows
    from dgxstudio.sim.active_flows import Counts

    rng = np.random.default_rng(5)
    n_comp, n_routes = 30, 90
    route_comp = rng.integers(0, n_comp, n_routes)
    h1 = rng.integers(0, 2**62, n_routes, dtype=np.int64)
    h2 = rng.integers(0, 2**62, n_routes, dtype=np.int64)
    pool = [rng.integers(0, n_routes, int(rng.integers(1, 40))) for _ in range(12)]
    for trial in (256, 8):  # (8: stops remembering after 8 calls that were not met again enough)
        monkeypatch.setattr(active_flows, "REMEMBER_TRIAL", trial)
        counts = Counts(route_comp, h1, h2, n_comp, n_routes)
        acc = np.zeros((3, n_comp), dtype=np.int64)
        route_count = np.zeros(n_routes, dtype=np.int64)
        for step in range(400):
            routes = pool[int(rng.integers(len(pool)))] if trial == 256 else rng.integers(0, n_routes, 20)
            sign = 1 if step % 2 == 0 else -1
            counts.change(routes, sign, key=None if step % 3 else ("tpl", routes.tobytes()))
            rc = route_comp[routes]
            dirty = np.zeros(n_comp, dtype=bool)
            for row, v in enumerate((sign * h1[routes], sign * h2[routes], sign)):
                np.add.at(acc[row], rc, v)
            np.add.at(route_count, routes, sign)
            dirty[rc] = True
            np.testing.assert_array_equal(counts.acc, acc)
            np.testing.assert_array_equal(counts.route_count, route_count)
            np.testing.assert_array_equal(counts.dirty, dirty)
            counts.dirty[:] = False
        assert (counts._hits > 300) == (trial == 256)


def test_started_sequences_met_again_add_the_flows_started_builds():
    """``Started``: a sequence of templates met again gives the same flows (routes, groups, places,
    bytes, latencies) as ``started`` builds them, in order, after those already active."""
    from dgxstudio.sim.active_flows import Started, started

    rng = np.random.default_rng(9)
    tpls = [{"route": rng.integers(0, 50, k), "latency": rng.random(k)} for k in (1, 1, 3, 8, 5)]
    bytes_each = rng.random(1000) * 1e6
    seqs = [(0, 1), (2, 3, 3), (4,), (1, 0, 2)]
    starting = Started(tpls, bytes_each)
    flows, ref = ActiveFlows(room=4), ActiveFlows(room=4)
    for step in range(60):
        tids = seqs[step % len(seqs)]
        groups = [int(g) for g in rng.choice(1000, len(tids), replace=False)]
        routes = starting.into(flows, tids, groups)
        want_routes = np.concatenate([tpls[i]["route"] for i in tids])
        ref.add(*started(want_routes, groups, [len(tpls[i]["route"]) for i in tids],
                         [tpls[i]["latency"] for i in tids], bytes_each))
        np.testing.assert_array_equal(routes, want_routes)
        for a, b in zip(flows.views(), ref.views()):
            np.testing.assert_array_equal(a, b)
        if step % 5 == 4:  # some end (the oldest), as a run's pieces do
            n = flows.views()[0].shape[1]
            ended = np.zeros(n, dtype=bool)
            ended[:n // 2] = True
            flows.drop(ended)
            ref.drop(ended)
    assert starting._hits >= 50
