"""A long fan-out is released at once (sim/fanout.py) with the outcome of the engine's loop: the same
counts, the same ready groups in the same order, the same partly released groups in the same order
(the frontier's order is the order later skips read it in)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import fanout
from dgxstudio.sim.run import SimOptions, Simulator

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")


loop = fanout.release_one_by_one   # the engine's loop for short lists (engine.py, ``release``)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_releasing_at_once_is_the_loop(data):
    n = data.draw(st.integers(1, 40))
    waits = data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    sorted_list = data.draw(st.booleans())
    if sorted_list:
        deps = sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n)))
    else:  # any order, a group possibly twice: the loop's business
        deps = data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n))
    before = data.draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))  # already partly released
    a, b = np.asarray(waits, dtype=np.int64), np.asarray(waits, dtype=np.int64)
    ready_a, ready_b = [7], [7]
    front_a, front_b = dict.fromkeys(before), dict.fromkeys(before)
    loop(deps, a, ready_a, front_a)
    if not fanout.release_many(deps, b, ready_b, front_b):
        assert len(set(deps)) < len(deps) or deps != sorted(deps)
        np.testing.assert_array_equal(b, np.asarray(waits))  # nothing done: the caller loops
        assert ready_b == [7] and list(front_b) == before
        return
    np.testing.assert_array_equal(a, b)
    assert ready_a == ready_b
    assert list(front_a) == list(front_b)


def test_a_hierarchical_barrier_is_released_at_once_and_answers_as_the_loop(monkeypatch):
    """16 GiB hierarchical on two DGX H100: its barriers release thousands of groups at once; with
    the loop instead, every group's times are the same bit for bit."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    used = []
    original = fanout.release_many

    def counting(dependents, *args):
        used.append(len(dependents))
        return original(dependents, *args)

    monkeypatch.setattr("dgxstudio.sim.fanout.release_many", counting)
    fast = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "hierarchical", 16 * 2**30).sim
    assert max(used) >= 2048
    monkeypatch.setattr("dgxstudio.sim.fanout.MANY", 10**9)
    slow = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "hierarchical", 16 * 2**30).sim
    for x, y in ((fast.group_start, slow.group_start), (fast.group_sent, slow.group_sent),
                 (fast.group_done, slow.group_done)):
        np.testing.assert_array_equal(x, y)
    assert fast.events == slow.events and fast.time_s == slow.time_s
