"""FlowEnds keeps each group's distinct flow end times and a per-flow index into them; short records
are built on Python floats, long ones with np.unique: both give np.unique's arrays. (A skip's blocks:
tests/sim/test_skip_bookkeeping.py.)"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.sim.periods import FlowEnds

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
