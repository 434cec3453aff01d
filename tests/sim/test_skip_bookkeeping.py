"""The steady-state shortcut's bookkeeping kept in forms whose cost follows the run, not its pieces,
reads as the plain forms did:

- a skip's groups are kept in FlowEnds as arrays (one block per skip), not a dict entry per group;
  what a reader gets is what an entry per group gave: the end times of the group repeated, shifted;
- the groups a snapshot allows (its groups and partly released groups and their successors within
  the span) are checked by walking back from each group, not by building their union.
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


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_allowed_is_the_union_of_successors_within_the_span(data):
    n = data.draw(st.integers(1, 30))
    perm = data.draw(st.permutations(range(n)))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, n), max_size=6))) | {0, n})
    succ = np.full(n, -1, dtype=np.int64)
    for a, b in zip(cuts, cuts[1:]):
        for x, y in zip(perm[a:b], perm[a + 1:b]):
            succ[x] = y
    pred = np.full(n, -1, dtype=np.int64)
    pred[succ[succ >= 0]] = np.flatnonzero(succ >= 0)
    own = set(data.draw(st.lists(st.integers(0, n - 1), max_size=5)))
    waiting = dict.fromkeys(data.draw(st.lists(st.integers(0, n - 1), max_size=5)))
    span = data.draw(st.sampled_from([1, 2]))
    gs = np.asarray(sorted(set(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6)))), dtype=np.int64)
    # the union as the snapshot used to build it: the base, then its successors, span times
    allowed = set(own) | set(waiting)
    for _ in range(span):
        allowed |= {int(succ[g]) for g in allowed if succ[g] >= 0}
    cut = Shortcut.__new__(Shortcut)
    cut.per = types.SimpleNamespace(pred=pred)
    cut.snap = {"base": (own, waiting), "span": span}
    assert cut.allowed(gs) == (set(gs.tolist()) <= allowed)
