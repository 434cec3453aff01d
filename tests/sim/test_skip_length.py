"""How long a skip is when its window could reach one period further than ``k_sure``
(``Shortcut._length``): the few-period release check answers the longer window, or neither the
longer nor the shorter one (then the full check decides the longer: a ring's lane runs through its
steps, whose last step's pieces release nothing, so no long window of a ring repeats its dependents
period by period); a window one period too long for that check, which it answers one period
shorter, is still turned down to the shorter length.
"""

import numpy as np
import pytest

from dgxstudio.sim import periodic_releases, steady

from .test_engine_periods import assert_same, both
from .test_skip_reach import _sim

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only", "eight_mib_nvls_tree_pieces")  # (tests/conftest.py)


def _reaches(monkeypatch):
    """(k, k_sure) of every skip the next runs try (a list, filled as they run)."""
    seen = []
    original = steady.Shortcut._periods_ahead

    def periods_ahead(self, e, ms):
        got = original(self, e, ms)
        seen.append(got)
        return got

    monkeypatch.setattr(steady.Shortcut, "_periods_ahead", periods_ahead)
    return seen


@pytest.mark.parametrize("system", ["dgx-a100", "dgx-h100"])
def test_a_16_gib_ring_skips_to_its_windows_reach(monkeypatch, system):
    """The few periods answer neither length: the skip goes to its reach (k, not k_sure), checked
    group by group, and leaves the run's end to 3 fewer events than a period shorter did."""
    seen = _reaches(monkeypatch)
    before = periodic_releases.uses[0]
    fast = _sim(system).run("all-reduce", "ring", 2**34).sim
    (k, k_sure), = seen
    assert k == k_sure + 1 and fast.periods_skipped == k
    assert periodic_releases.uses[0] == before  # checked in full
    assert fast.events == 7
    monkeypatch.setattr(periodic_releases, "ENABLED", False)
    full = _sim(system).run("all-reduce", "ring", 2**34).sim
    assert (full.periods_skipped, full.events) == (fast.periods_skipped, fast.events)  # the same length with it off
    assert full.time_s == fast.time_s
    np.testing.assert_array_equal(full.group_done, fast.group_done)


@pytest.mark.parametrize("size", [2**30, 2**30 + 3 * 2**20 + 12_345])
def test_a_ring_skipped_to_its_reach_equals_the_run_piece_by_piece(monkeypatch, size):
    """With the few-period check asked for every window (``MIN_GROUPS`` 0), a ring of 1 GiB has the
    16 GiB one's windows: the longer skip, checked in full, against the run piece by piece."""
    monkeypatch.setattr(periodic_releases, "MIN_GROUPS", 0)
    seen = _reaches(monkeypatch)
    sim = _sim()
    fast, slow = both(monkeypatch, lambda: sim.run("all-reduce", "ring", size).sim)
    assert_same(fast, slow)
    assert [fast.periods_skipped] == [k for k, k_sure in seen if k > k_sure]
    assert slow.periods_skipped == 0


def test_a_window_the_few_periods_answer_only_a_period_shorter_still_stops_there(monkeypatch):
    """Five DGX H100 in CollNet at 4 GiB: the window to its reach ends lanes in its last period, the
    few periods answer one period less; the skip stops there (not checked group by group). (The NVLS
    tree there had such a window while its NICs ran at NVLS's 0.85 of their figure; it has none now.)"""
    seen = _reaches(monkeypatch)
    before = periodic_releases.uses[0]
    result = _sim("dgx-h100", 5).run("all-reduce", "collnet", 2**32).sim
    longer = [(k, k_sure) for k, k_sure in seen if k > k_sure and k > 8]
    assert longer
    assert periodic_releases.uses[0] == before + 1
    assert result.periods_skipped == sum(k_sure for k, k_sure in longer) + sum(k for k, k_sure in seen
                                                                               if (k, k_sure) not in longer)


def _counts_alike(per, gs, sent, d, tail=3):
    """counts_move's answer, id by id: every id of each span but its last tail + 1 periods, and each
    window group in them, has as many dependents as the id d on."""
    ptr = (per.on_sent if sent else per.on_done).ptr
    spans, span_of = periodic_releases._spans(gs)
    count = [int(b - a) for a, b in zip(ptr[:-1], ptr[1:])]
    for a, b in spans:
        if any(count[x] != count[x + d] for x in range(a, b - (tail + 1) * d + 1)):
            return False
    for col in range(gs.shape[1]):
        last = spans[span_of[col]][1] - (tail + 1) * d
        if any(count[x] != count[x + d] for x in gs[:-1, col].tolist() if x > last):
            return False
    return True


@pytest.mark.parametrize("system, systems, algorithm, size", [
    ("dgx-a100", 2, "ring", 2**30), ("dgx-a100", 2, "hierarchical", 2**30 + 3 * 2**20 + 12_345),
    ("dgx-h100", 5, "nvls-tree", 2**30), ("dgx-h100", 2, "nvls-tree", 2**28 + 777)])
def test_the_counts_asked_first_are_those_the_lists_comparison_asks(monkeypatch, system, systems, algorithm, size):
    """``counts_move`` turns a window down exactly when its groups' dependents differ in number from
    those of the ids a period on, where the lists are compared (against a count id by id); where it
    lets a window through, the lists read without their own count comparison answer as with it."""
    monkeypatch.setattr(periodic_releases, "MIN_GROUPS", 0)
    windows = []
    original = periodic_releases.stretched

    def spy(per, deps_left, start, parts, T, k, tol, check, count=True):
        d = periodic_releases.constant_shift(parts) if periodic_releases.applies(parts, k) else None
        if d is not None:
            windows.extend((per, gs, sent, d) for (gs, _), sent in ((parts[1], True), (parts[2], False))
                           if gs.shape[1])
        return original(per, deps_left, start, parts, T, k, tol, check, count)

    monkeypatch.setattr(steady, "stretched", spy)
    _sim(system, systems).run("all-reduce", algorithm, size)
    assert windows
    for per, gs, sent, d in windows:
        at_end = periodic_releases.moving_at_end(per, gs, sent, d)
        before = periodic_releases.moving_before_end(per, gs, sent, d)
        ok = periodic_releases.counts_move(per, gs, sent, d)
        assert ok == _counts_alike(per, gs, sent, d)
        if not ok:
            assert at_end is None or before is None
        else:
            counted = periodic_releases.moving_before_end(per, gs, sent, d, counted=True)
            assert (before is None) == (counted is None)
            if before is not None:
                np.testing.assert_array_equal(before, counted)
