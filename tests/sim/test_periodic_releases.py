"""The skip's release check read from a few periods (sim/periodic_releases.py) answers as the full one.

When a skip's periods are one period's images by a constant id shift, the check of what they release
is done on a few periods and stretched. These runs take that path (``uses`` counts it) and must give
what the group-by-group check gives, bit for bit (the check only decides how far to skip), and what
the piece-by-piece run gives (``assert_same`` of test_engine_periods.py): hierarchical and NVLS tree
all-reduces on two systems, at sizes that are whole numbers of pieces and at ragged ones. The path
is taken for windows of any size here (``MIN_GROUPS`` 0: by default small windows are checked group
by group, which costs less), so that small and ragged cases exercise it too.
"""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import periodic_releases
from dgxstudio.sim.run import SimOptions, Simulator

from .test_engine_periods import assert_same, both

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only", "eight_mib_nvls_tree_pieces")  # (tests/conftest.py)

MiB = 2**20
RAGGED = 2**28 + 3 * MiB + 12_345


@pytest.fixture(autouse=True)
def every_window(monkeypatch):
    monkeypatch.setattr(periodic_releases, "MIN_GROUPS", 0)


def _sim(system):
    topo = build_fat_tree(2, system, rail_optimized=system == "dgx-h100")
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))


def _identical(a, b):
    assert a.time_s == b.time_s
    for x, y in ((a.group_start, b.group_start), (a.group_sent, b.group_sent), (a.group_done, b.group_done),
                 (a.channel_bytes, b.channel_bytes)):
        np.testing.assert_array_equal(x, y)
    assert a.periods_skipped == b.periods_skipped and a.events == b.events
    assert list(a.delivered) == list(b.delivered)


CASES = [("dgx-h100", "nvls-tree", RAGGED), ("dgx-h100", "nvls-tree", 2**30 - 777), ("dgx-h100", "nvls-tree", 2**34),
         ("dgx-h100", "hierarchical", RAGGED), ("dgx-a100", "hierarchical", 2**30 + 5 * MiB + 3),
         ("dgx-a100", "hierarchical", 2**34), ("dgx-a100", "ring", RAGGED)]


@pytest.mark.parametrize("system, algorithm, size", CASES)
def test_the_check_on_a_few_periods_answers_as_the_full_one(monkeypatch, system, algorithm, size):
    sim = _sim(system)
    before = periodic_releases.uses[0]
    fast = sim.run("all-reduce", algorithm, size).sim
    taken = periodic_releases.uses[0]
    assert taken > before  # the path under test was taken
    monkeypatch.setattr(periodic_releases, "ENABLED", False)
    full = sim.run("all-reduce", algorithm, size).sim
    assert periodic_releases.uses[0] == taken  # and then not
    _identical(fast, full)


@pytest.mark.parametrize("system, algorithm, size", [c for c in CASES if c[2] < 2**31])
def test_the_check_on_a_few_periods_equals_the_run_piece_by_piece(monkeypatch, system, algorithm, size):
    sim = _sim(system)
    before = periodic_releases.uses[0]
    fast, slow = both(monkeypatch, lambda: sim.run("all-reduce", algorithm, size).sim)
    assert periodic_releases.uses[0] > before
    assert_same(fast, slow)
    assert fast.periods_skipped > 0 and slow.periods_skipped == 0


@pytest.mark.parametrize("system, algorithm, size", CASES)
def test_every_stretched_check_lists_the_groups_and_counts_of_the_full_one(monkeypatch, system, algorithm, size):
    """Not only the times: the released groups and the counts they keep (which later releases read)
    equal the group-by-group check's, at every skip that took the few periods."""
    from dgxstudio.sim.steady import Shortcut

    original = Shortcut._releases
    compared = []

    def both_ways(self, parts, T, k, tol=None):
        before = periodic_releases.uses[0]
        got = original(self, parts, T, k, tol)
        if periodic_releases.uses[0] > before:
            monkeypatch.setattr(periodic_releases, "ENABLED", False)
            full = original(self, parts, T, k, tol)
            monkeypatch.setattr(periodic_releases, "ENABLED", True)
            assert isinstance(full, tuple)
            np.testing.assert_array_equal(got[0], full[0])
            np.testing.assert_array_equal(got[1], full[1])
            compared.append(k)
        return got

    monkeypatch.setattr(Shortcut, "_releases", both_ways)
    _sim(system).run("all-reduce", algorithm, size)
    assert compared


@pytest.mark.parametrize("systems, system, algorithm, size", [
    (3, "dgx-h100", "nvls-tree", 2 * RAGGED), (6, "dgx-h100", "nvls-tree", 2 * RAGGED), (5, "dgx-h100", "nvls-tree", 2**32),
    (5, "dgx-a100", "hierarchical", RAGGED)])
def test_uneven_trees_and_more_systems_skip_as_with_every_group_checked(monkeypatch, systems, system, algorithm, size):
    """Uneven trees (NCCL's over 6 systems has leaves at two depths; over 3 and 5 its second tree is
    the first shifted by one system) have lanes that change stride, so part of the skip falls back to
    the whole lane order; with both shortcuts and with neither, the runs are the same bit for bit.
    (Both at 512 MiB and more: at 256 MiB the 3-system pair ends before it repeats, some 700 events
    in, and the 6-system one skips its few periods without this path.)"""
    from dgxstudio.sim import lane_strides

    topo = build_fat_tree(systems, system, rail_optimized=system == "dgx-h100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    before = periodic_releases.uses[0]
    fast = sim.run("all-reduce", algorithm, size).sim
    assert periodic_releases.uses[0] > before
    monkeypatch.setattr(periodic_releases, "ENABLED", False)
    monkeypatch.setattr(lane_strides, "ENABLED", False)
    _identical(fast, sim.run("all-reduce", algorithm, size).sim)


def test_a_16_gib_nvls_tree_takes_the_few_periods_by_default(monkeypatch):
    from dgxstudio.sim import spliced_run

    monkeypatch.undo()  # the default threshold
    monkeypatch.setattr(spliced_run, "ENABLED", False)  # (the long schedule: a short one's window is below it)
    before = periodic_releases.uses[0]
    _sim("dgx-h100").run("all-reduce", "nvls-tree", 2**34)
    assert periodic_releases.uses[0] == before + 1
