"""The steady-state shortcut's bookkeeping kept in forms whose cost follows the run, not its pieces,
reads as the plain forms did:

- a skip's groups are kept in FlowEnds as arrays (one block per skip), not a dict entry per group;
  what a reader gets is what an entry per group gave: the end times of the group repeated, shifted;
- the watcher's history of snapshots and the logs they read: each snapshot's logs are exactly what
  was logged after it, however much of the front was dropped, and the index files exactly the
  snapshots kept, under their images.
"""

import types

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.sim.periods import FlowEnds
from dgxstudio.sim.steady import Shortcut


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_blocks_read_as_an_entry_per_group(data):
    ends = FlowEnds()
    truth: dict[int, np.ndarray] = {}
    next_id = 0
    for _ in range(data.draw(st.integers(1, 6))):
        if not truth or data.draw(st.booleans()):  # a group simulated: its own ends
            flows = data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=4))
            ends.store(next_id, np.asarray(flows))
            truth[next_id] = np.asarray(flows)
            next_id += 1
        else:  # a skip: k periods of some earlier groups (stored or themselves skipped), shifted
            of = data.draw(st.lists(st.sampled_from(sorted(truth)), min_size=1, max_size=3, unique=True))
            k = data.draw(st.integers(1, 4))
            T = data.draw(st.floats(1e-6, 1.0))
            gs = np.arange(next_id, next_id + k * len(of)).reshape(k, len(of))
            shifts = np.arange(1, k + 1, dtype=float) * T
            ends.repeat_block(gs, np.asarray(of), shifts)
            for j in range(k):
                for i, o in enumerate(of):
                    truth[int(gs[j, i])] = truth[o] + shifts[j]
            next_id += k * len(of)
    assert len(ends) == len(truth)
    for g in range(next_id + 2):
        assert (g in ends) == (g in truth)
        got = ends.get(g)
        if g in truth:
            np.testing.assert_allclose(got, truth[g], rtol=1e-15, atol=0)
        else:
            assert got is None


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_each_snapshot_reads_the_logs_since_it_and_the_index_files_the_history(data):
    from dgxstudio.sim.steady import _Now

    n = 40
    succ = np.where(np.arange(n) % 10 < 9, np.arange(n) + 1, -1)  # four lanes of ten groups
    cut = Shortcut.__new__(Shortcut)
    cut.per = types.SimpleNamespace(succ=succ)
    cut.arrival, cut.partial, cut.open_ends = np.zeros(n), np.zeros(n, dtype=bool), {}
    cut.segments, cut.delivered = [], []
    cut.logs, cut.log_base = ([], [], []), [0, 0, 0]
    cut.history, cut.index, cut.held_flows = __import__("collections").deque(), {}, 0
    cut.HISTORY = data.draw(st.integers(1, 6))
    cut.HISTORY_FLOWS = data.draw(st.integers(2, 20))  # past it, the newest stay and so does the oldest
    cut.LOG_SLACK = data.draw(st.sampled_from([0, 3, 4096]))
    logged: list[tuple[int, int]] = []  # (list, value), in the order logged
    since = {}  # id of a snapshot -> how many entries were logged before it
    taken = {}  # id of a snapshot -> when it was taken
    for step in range(data.draw(st.integers(1, 40))):
        for _ in range(data.draw(st.integers(0, 30 if step % 7 == 3 else 3))):
            which = data.draw(st.integers(0, 2))
            cut.logs[which].append(len(logged))
            logged.append((which, len(logged)))
        if data.draw(st.booleans()):
            gs = np.unique(np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))))
            a_group = np.repeat(gs, 2)
            kept = cut.take_snapshot(gs, gs, _Now(a_group, np.zeros(len(a_group), dtype=np.int64), np.ones(len(a_group)),
                                              [], float(step), 0.0))
            assert kept == bool((_step(succ, gs, 1) >= 0).all())
            if kept:
                since[id(cut.history[-1])] = len(logged)
                taken[id(cut.history[-1])] = step
        if data.draw(st.integers(0, 9)) == 0:
            cut.forget()
            since.clear()
        assert len(cut.history) <= cut.HISTORY
        assert cut.held_flows <= cut.HISTORY_FLOWS or len(cut.history) <= 2
        order = [taken[id(s)] for s in cut.history]
        assert order == sorted(order)  # oldest first
        filed = {(key, id(s)) for key, snaps in cut.index.items() for s in snaps}
        assert filed == {(key, id(s)) for s in cut.history for key in s["keys"]}
        for s in cut.history:
            for which in range(3):
                got = cut.logs[which][s["log_at"][which] - cut.log_base[which]:]
                assert got == [v for w, v in logged[since[id(s)]:] if w == which]
        assert cut.held_flows == sum(len(s["a_group"]) for s in cut.history)


def _step(succ, gs, m):
    x = np.asarray(gs, dtype=np.int64)
    for _ in range(m):
        x = np.where(x >= 0, succ[np.maximum(x, 0)], -1)
    return x


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_released_by_a_slice_is_every_release_of_the_groups(data):
    """``_Periods.released`` reads the dependents of many groups as one slice of the flat list: the
    (dependent, time) pairs must be those of gathering group by group, a group twice counting twice,
    whether the groups fill their ids densely or not."""
    from dgxstudio.sim.periods import Dependents, _Periods

    n = data.draw(st.integers(1, 40))
    rows = [data.draw(st.lists(st.integers(0, n - 1).filter(lambda x, g=g: x != g), max_size=4)) for g in range(n)]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    dep = Dependents(ptr, np.asarray([x for r in rows for x in r], dtype=np.int64))
    per = _Periods.__new__(_Periods)  # only its dependents lists are read
    per.on_sent = per.on_done = dep
    gs = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n)), dtype=np.int64)
    if data.draw(st.booleans()):
        gs = np.unique(gs)  # each group once (a skip's usual case: the slice)
    when = np.asarray(data.draw(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=len(gs), max_size=len(gs))))
    if len(gs) and data.draw(st.booleans()):
        when[0] = np.nan
    shape = data.draw(st.sampled_from(["flat", "rows"]))
    if shape == "rows" and len(gs) % 2 == 0:
        gs2, w2 = gs.reshape(2, -1), when.reshape(2, -1)
    else:
        gs2, w2 = gs, when
    got_d, got_t = per.released(gs2, w2, sent=True)
    want_d, cnt = per.dependents(gs, sent=True)
    want_t = np.repeat(when, cnt)
    key = lambda d, t: sorted(zip(d.tolist(), [repr(x) for x in t.tolist()]))  # noqa: E731 (NaN compared as text)
    assert key(got_d, got_t) == key(want_d, want_t)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=40), st.lists(st.integers(0, 30), max_size=5), st.booleans())
def test_a_look_reads_small_states_in_python_as_numpy_does(flows, waiting, large):
    """``heads_and_groups`` reads up to SMALL active flows in Python: the heads (each run of flows'
    group, in order) and the sorted groups are those the numpy path gives."""
    from dgxstudio.sim import steady

    a_group = np.asarray(flows, dtype=np.int64)
    heap = [(0.1 * i, i, g) for i, g in enumerate(waiting)]
    got = steady.heads_and_groups(a_group, heap)
    old, steady.SMALL = steady.SMALL, -1 if large else steady.SMALL  # every state through numpy
    try:
        want = steady.heads_and_groups(a_group, heap)
    finally:
        steady.SMALL = old
    if not large:
        runs = [g for i, g in enumerate(flows) if not i or flows[i - 1] != g]
        want = (np.asarray(runs, dtype=np.int64), np.asarray(sorted(set(runs) | set(waiting)), dtype=np.int64))
    for x, y in zip(got, want):
        assert x.dtype == y.dtype == np.int64 and x.tolist() == y.tolist()
