"""``periods.Dependents`` lists each group's dependents in group order, whether the schedule named its
dependencies in id order (then the flat lists are taken as they are, without a sort) or not."""

import numpy as np
import pytest

from dgxstudio.sim.periods import Dependents


def _brute(rows):
    out = {}
    for g, deps in enumerate(rows):
        for x in deps:
            out.setdefault(x, []).append(g)
    return out


@pytest.mark.parametrize("rows", [
    [(), (0,), (1,), (1, 2), (3,), (3, 4)],                # every dependency at or after the one before
    [(), (0,), (0,), (0, 1), (2, 3), (4,)],
    [(), (0,), (1,), (2, 0), (3,), (4, 1)],                # a second dependency back in the ids
    [(3,), (), (1,), (), (5,), ()],                        # later groups first
    [(), ()],                                              # none
])
def test_each_group_lists_its_dependents_in_group_order(rows):
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    flat = np.asarray([x for r in rows for x in r], dtype=np.int64)
    dep = Dependents(ptr, flat)
    want = _brute(rows)
    for g in range(len(rows)):
        assert dep[g] == want.get(g, [])
    np.testing.assert_array_equal(dep.waits, [len(r) for r in rows])
