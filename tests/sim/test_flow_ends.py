"""FlowEnds: a group's flow end times, kept as its distinct ends and a per-flow index (short records
built on Python floats, long ones with np.unique, both giving np.unique's arrays); a skip's groups
are kept as arrays (one block per skip), not a dict entry per group, and read as an entry per group
gave: the end times of the group repeated, shifted."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.sim.periods import FlowEnds


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

TIMES = [1e-6, 1.5e-6, 2.0000000000000004e-6, 2e-6, 3.25e-3, 7.0, 0.0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TIMES), min_size=1, max_size=300))
def test_stored_ends_are_np_uniques_arrays(values):
    ends = np.asarray(values, dtype=float)
    fe = FlowEnds()
    fe.store(3, ends)
    u, inv = fe._own[3]
    want_u, want_inv = np.unique(ends, return_inverse=True)
    assert u.dtype == want_u.dtype and u.tobytes() == want_u.tobytes()
    assert inv.dtype == np.int32 and inv.tolist() == want_inv.tolist()
    assert fe[3].tobytes() == ends.tobytes()


def test_groups_with_the_same_ends_pattern_share_one_index_map():
    fe = FlowEnds()
    fe.store(0, np.array([2e-6, 1e-6, 2e-6]))
    fe.store(1, np.array([5e-6, 4e-6, 5e-6]))
    assert fe._own[0][1] is fe._own[1][1]
    assert fe[1].tolist() == [5e-6, 4e-6, 5e-6]
