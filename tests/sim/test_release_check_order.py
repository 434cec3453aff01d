"""The skip's release checks answer as before, for less work on a 16 GiB ring (issue #17's 16 GiB / 16 MiB).

- The few-period check (``periodic_releases.stretched``) asks the dependents' counts (the finishes'
  first) before it compares every table of the window whole (``constant_shift``): a ring's long
  windows fail on the counts (its last step's pieces finish releasing nothing), so they are turned
  down without that comparison. Counted here, not timed.
- The group-by-group check (``Shortcut._releases``) that then decides such a window answers a skip that
  holds without building what only a failing one reads. Compared here, at every full check of several
  runs, with the check's definition read one release at a time.
"""

import math

import numpy as np
import pytest

from dgxstudio.sim import periodic_releases, steady

from .test_skip_reach import _sim

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")


@pytest.mark.parametrize("system", ["dgx-a100", "dgx-h100"])
def test_a_16_gib_rings_windows_are_turned_down_on_their_counts(monkeypatch, system):
    compared = []
    original = periodic_releases.constant_shift

    def counting(parts):
        compared.append(parts)
        return original(parts)

    monkeypatch.setattr(periodic_releases, "constant_shift", counting)
    asked = []
    stretched = steady.stretched

    def spy(*a, **k):
        got = stretched(*a, **k)
        asked.append(got)
        return got

    monkeypatch.setattr(steady, "stretched", spy)
    fast = _sim(system).run("all-reduce", "ring", 2**34).sim
    assert len(asked) == 2 and asked == [None, None]  # the window to its reach and one period shorter
    assert compared == []  # neither compared its tables whole
    assert fast.events == 7
    monkeypatch.setattr(periodic_releases, "ENABLED", False)
    full = _sim(system).run("all-reduce", "ring", 2**34).sim
    assert full.time_s == fast.time_s and full.events == fast.events
    np.testing.assert_array_equal(full.group_done, fast.group_done)


def _check_by_definition(self, parts, T, k, tol):
    """What the group-by-group check decides, read from its definition one release at a time: every
    group the window starts is released as often as it waits, last at its start, and was not started
    before; no count goes below zero, and each one brought to zero is started. The released groups
    (ascending) and their counts left, or None."""
    per = self.per
    count, last = {}, {}
    for (gs, w), deps in ((parts[1], per.on_sent), (parts[2], per.on_done)):
        for g, t in zip(gs.ravel().tolist(), w.ravel().tolist()):
            for x in deps[g]:
                count[x] = count.get(x, 0) + 1
                last[x] = max(last.get(x, -math.inf), t)
    starts = dict(zip(parts[0][0].ravel().tolist(), parts[0][1].ravel().tolist()))
    if not all(count.get(g, 0) > 0 and math.isnan(self.start[g]) and self.deps_left[g] == count[g]
               and abs(last[g] - t) <= tol for g, t in starts.items()):
        return None
    left = {x: int(self.deps_left[x]) - c for x, c in count.items()}
    if not all(v > 0 or (v == 0 and x in starts) for x, v in left.items()):
        return None
    u = sorted(count)
    return np.asarray(u, dtype=np.int64), np.asarray([left[x] for x in u], dtype=np.int64)


@pytest.mark.parametrize("system, systems, algorithm, size", [
    ("dgx-a100", 2, "ring", 2**34), ("dgx-h100", 2, "ring", 2**34), ("dgx-a100", 2, "ring", 2**28 + 3 * 2**20 + 12_345),
    ("dgx-a100", 2, "hierarchical", 2**30 + 3 * 2**20 + 12_345), ("dgx-h100", 2, "nvls-tree", 2**28 + 777),
    ("dgx-h100", 5, "collnet", 2**32)])
def test_the_full_check_answers_as_its_definition(monkeypatch, system, systems, algorithm, size):
    """Every full check of these runs (the few-period check off, so that every window is read group by
    group) answers as its definition, list for list (a window that does not hold: not a skip either)."""
    monkeypatch.setattr(periodic_releases, "ENABLED", False)
    original = steady.Shortcut._releases
    answers = {"holds": 0, "fails": 0}

    def both(self, parts, T, k, tol=None):
        got = original(self, parts, T, k, tol)
        if tol is None:
            expected = _check_by_definition(self, parts, T, k, self._tol(parts, T, k))  # (the window's own tolerance)
            if expected is not None:
                assert isinstance(got, tuple)
                np.testing.assert_array_equal(got[0], expected[0])
                np.testing.assert_array_equal(got[1], expected[1])
                answers["holds"] += 1
            else:
                assert not isinstance(got, tuple)
                answers["fails"] += 1
        return got

    monkeypatch.setattr(steady.Shortcut, "_releases", both)
    _sim(system, systems).run("all-reduce", algorithm, size)
    assert answers["holds"] > 0
