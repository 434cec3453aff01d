"""How far a steady-state skip goes (``Shortcut._periods_ahead``): as far as its window's groups stay
alike, one period further than the old rule (every group one link short), and no further.

A hierarchical all-reduce's stage inside the systems is a pipeline of hops; its skip used to stop a
whole period before hop 0's last piece, which was then played event by event. Now the skip fills in
that last piece; a ragged last piece (fewer bytes: not alike) is never filled in as if alike, and
the runs equal the piece-by-piece ones.
"""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import steady
from dgxstudio.sim.collectives import pieces
from dgxstudio.sim.run import SimOptions, Simulator

from .test_engine_periods import assert_same, both

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")

MiB = 2**20


def _sim(system="dgx-a100", systems=2):
    topo = build_fat_tree(systems, system, rail_optimized=system == "dgx-h100")
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))


def _filled_by_skips(monkeypatch):
    """The groups whose start every skip of the next run filled in (a list, filled as it runs)."""
    filled = []
    original = steady.Shortcut.jump

    def jump(self, T, r):
        before = np.isnan(self.start)
        ok = original(self, T, r)
        if ok:
            filled.extend(np.flatnonzero(before & ~np.isnan(self.start)).tolist())
        return ok

    monkeypatch.setattr(steady.Shortcut, "jump", jump)
    return filled


@pytest.mark.parametrize("size", [2**30, 2**32])
def test_a_hierarchical_stages_last_piece_is_filled_in_by_its_skip(monkeypatch, size):
    sim = _sim()
    filled = _filled_by_skips(monkeypatch)
    result = sim.run("all-reduce", "hierarchical", size)
    n, _ = pieces(size, sim.options.chunk)
    names = [result.schedule.groups[g].name for g in filled]
    # the last piece of the first hop, in both stages inside the systems
    for word in ("reduce", "broadcast"):
        assert f"{word} in systems hop 0 piece {n - 1}" in names
        assert f"{word} in systems hop 1 piece {n - 1}" not in names  # (started by the last piece's send)


@pytest.mark.parametrize("system, algorithm, size", [
    ("dgx-a100", "hierarchical", 2**30 + 3 * MiB + 12_345), ("dgx-a100", "hierarchical", 2**30),
    ("dgx-h100", "hierarchical", 2**29 + 777), ("dgx-a100", "ring", 2**28 + 3 * MiB + 12_345),
    ("dgx-h100", "nvls-tree", 2**28 + 3 * MiB + 12_345)])
def test_skips_to_their_windows_reach_equal_the_run_piece_by_piece(monkeypatch, system, algorithm, size):
    """A ragged size's last piece moves fewer bytes than the others: a skip one period too far would
    copy a full piece's times into it."""
    sim = _sim(system)
    fast, slow = both(monkeypatch, lambda: sim.run("all-reduce", algorithm, size).sim)
    assert_same(fast, slow)
    assert fast.periods_skipped > 0 and slow.periods_skipped == 0


def test_a_long_window_whose_last_period_ends_lanes_keeps_the_few_period_check(monkeypatch):
    """Five DGX H100 in an NVLS tree: its skip's window, taken to its reach, would end lanes in its last
    period, where the few-period check declines and every group would be read; it stops a period short."""
    from dgxstudio.sim import periodic_releases

    before = periodic_releases.uses[0]
    # (the NVLS tree over 5 DGX H100 at 4 GiB declined such a window while its NICs ran at NVLS's 0.85
    # of their figure; at their whole figure it declines none, CollNet's run there does)
    _sim("dgx-h100", 5).run("all-reduce", "collnet", 2**32)
    assert periodic_releases.uses[0] == before + 1


def test_a_window_that_ends_its_lanes_is_turned_down_before_its_slices_are_read(monkeypatch):
    """The few-period check asks the last periods first, and the dependents' counts before their
    lists: a window one period too long for it (its last period ends lanes) is turned down without
    reading every period's dependent lists as slices (``moving_before_end``)."""
    from dgxstudio.sim import periodic_releases, steady

    calls = []
    before_end, stretched = periodic_releases.moving_before_end, steady.stretched

    def before(*a, **k):
        calls.append("before")
        return before_end(*a, **k)

    def check(*a, **k):
        calls.append("check")
        got = stretched(*a, **k)
        calls.append(got is None)
        return got

    monkeypatch.setattr(periodic_releases, "moving_before_end", before)
    monkeypatch.setattr(steady, "stretched", check)
    # (the NVLS tree over 5 DGX H100 at 4 GiB declined such a window while its NICs ran at NVLS's 0.85
    # of their figure; at their whole figure it declines none, CollNet's run there does)
    _sim("dgx-h100", 5).run("all-reduce", "collnet", 2**32)
    checks = [i for i, c in enumerate(calls) if c == "check"] + [len(calls)]
    declined = 0
    for a, b in zip(checks, checks[1:]):
        mine = calls[a + 1:b]
        if mine[-1] is True:  # turned down
            declined += 1
            assert "before" not in mine
    assert declined >= 1


def test_a_window_whose_tables_move_by_different_shifts_is_turned_down_first():
    """Asked before every table was known to move by one shift, the end's dependents were read a
    shift past the last group (CollNet over four DGX A100 at 8 GiB: an IndexError in a sweep)."""
    result = _sim("dgx-a100", 4).run("all-reduce", "collnet", 2**33)
    assert result.sim.periods_skipped > 0
