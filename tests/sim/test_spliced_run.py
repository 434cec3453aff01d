"""``spliced_run``: an NVLS tree of many pieces played on a shorter schedule gives back the long
schedule's run bit for bit (every group's start, send and end, the time, the channels' bytes, the
segments, the delivery curve, the events and skipped periods), as the engine runs the long one with
its steady-state skip, and to rounding as it runs it piece by piece (``periods=False``); where a
check turns the short schedule down, the long one runs and the answer is the same."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import periodic_releases, spliced_run
from dgxstudio.sim import tuning as T
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator

pytestmark = pytest.mark.usefixtures("eight_mib_nvls_tree_pieces")  # (tests/conftest.py)

GiB = 2**30


def _simulator(systems: int) -> Simulator:
    topo = build_fat_tree(systems, "dgx-h100", rail_optimized=True)
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))


@pytest.fixture(scope="module")
def sims():
    return {n: _simulator(n) for n in (2, 4)}


def _runs(sim, size, periods=True):
    """(the spliced run, the engine's run of the long schedule, whether the splice was taken)."""
    sched, scale, _ = sim.nccl_schedule("all-reduce", "nvls-tree", "simple", size)
    before = spliced_run.uses[0]
    new = spliced_run.run(sim.router, sched, scale)
    taken = spliced_run.uses[0] == before + 1
    long_sched, scale, _ = sim.nccl_schedule("all-reduce", "nvls-tree", "simple", size)
    assert spliced_run.block(long_sched) is not None  # (its copies are virtual rows: the engine builds them)
    ref = Engine(sim.router, scale).run(long_sched, periods=periods)
    return new, ref, taken


def _same(new, ref):
    assert len(new.groups) == len(ref.groups)
    for a, b in ((new.group_start, ref.group_start), (new.group_sent, ref.group_sent),
                 (new.group_done, ref.group_done), (new.channel_bytes, ref.channel_bytes)):
        assert len(a) == len(b)
        np.testing.assert_array_equal(np.asarray(a), b)
    assert new.time_s == ref.time_s
    assert list(new.segments) == list(ref.segments)
    assert list(new.delivered) == list(ref.delivered)
    assert (new.events, new.periods_skipped, new.flow_events, new.state_bytes) == \
        (ref.events, ref.periods_skipped, ref.flow_events, ref.state_bytes)
    assert len(new.flow_ends) == len(ref.flow_ends)
    if len(ref.flow_ends):
        for g in range(len(ref.groups)):
            assert (g in new.flow_ends) == (g in ref.flow_ends)
            if g in ref.flow_ends:
                np.testing.assert_array_equal(new.flow_ends[g], ref.flow_ends[g])
    assert len(new.rate_patterns) == len(ref.rate_patterns) and len(new.routes) == len(ref.routes)
    assert new.bottlenecks(10) == ref.bottlenecks(10)


@pytest.mark.parametrize("size", [4 * GiB, 8 * GiB + 3 * 2**20 + 5, 16 * GiB - 4097])
def test_two_systems_as_the_long_schedule_with_its_skip(sims, size):
    new, ref, taken = _runs(sims[2], size)
    assert taken  # (the path compared was taken)
    assert new.periods_skipped > 250
    _same(new, ref)


def test_as_the_long_schedule_played_piece_by_piece(sims, monkeypatch):
    """At 2 GiB (256 pieces; spliced with the few-period check's bar lowered, for both runs) against
    the long schedule's every event: the skips' times drift from the events' by rounding only."""
    monkeypatch.setattr(periodic_releases, "MIN_GROUPS", 4000)
    new, ref, taken = _runs(sims[2], 2 * GiB + 4097, periods=False)
    assert taken and new.periods_skipped > 100 and ref.periods_skipped == 0
    assert new.time_s == pytest.approx(ref.time_s, rel=1e-12)
    for a, b in ((new.group_start, ref.group_start), (new.group_sent, ref.group_sent), (new.group_done, ref.group_done)):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(new.channel_bytes, ref.channel_bytes, rtol=1e-12)
    # and the long schedule with its own skip, bit for bit
    _, ref_skip, _ = _runs(sims[2], 2 * GiB + 4097)
    _same(new, ref_skip)


def _unceiled(monkeypatch):
    """Network pairs above NCCL's per-head NVLS-tree ceiling (``nccl_schedules`` caps them at it), so
    that they run at the rates the NICs leave them: a group's flows then end apart on 4 systems and
    the short schedules' skips are as narrow as the retry test needs. The splice must give back the
    long run either way."""
    monkeypatch.setattr(T, "nvls_tree_head_algbw_Bps", lambda shape: 1e13)


def _noting(monkeypatch):
    """The reasons short schedules were turned down, and each one's copies, as they are noted."""
    why, built = [], []
    real, short = spliced_run._NoSplice.__init__, spliced_run._short

    def noted(self, text, more=0):
        why.append(text)
        real(self, text, more)

    monkeypatch.setattr(spliced_run._NoSplice, "__init__", noted)
    monkeypatch.setattr(spliced_run, "_short", lambda *a: built.append(a[-1]) or short(*a))
    return why, built


@pytest.mark.parametrize("margin,tries,taken", [(0, 2, True), (-12, 3, False)])
def test_a_short_schedule_without_a_skip_to_hold_the_cut_is_played_again_longer(sims, monkeypatch, margin,
                                                                                 tries, taken):
    """Short schedules whose skips are too narrow to hold the cut (too few copies: no margin) are
    turned down and a twice as long one is played, at most three in all; then the long one runs.
    Either way the long run's answer."""
    _unceiled(monkeypatch)
    monkeypatch.setattr(spliced_run, "MARGIN_COPIES", margin)
    monkeypatch.setattr(spliced_run, "_window_copies", lambda m: 0)  # (no window for the few-period check either)
    why, built = _noting(monkeypatch)
    new, ref, took = _runs(sims[2], 8 * GiB)
    assert took == taken and len(built) == tries and built[1] == 2 * built[0]
    assert why == ["no skip held the cut"] * (tries - taken)
    _same(new, ref)


def test_a_window_too_short_for_the_few_period_check_is_played_again_longer(sims, monkeypatch):
    """1,025 pieces: the window ends its lanes a period early and chooses its length by the
    few-period check; a first short schedule without the window for it (as before ``_window_copies``)
    is turned down and played once more as long as it needs, then taken."""
    monkeypatch.setattr(spliced_run, "_window_copies", lambda m: 0)
    why, built = _noting(monkeypatch)
    new, ref, taken = _runs(sims[2], 8 * GiB + 3 * 2**20 + 5)
    assert taken and len(built) == 2 and built[1] > built[0]
    assert why == ["the short window is too small for the few-period check"]
    _same(new, ref)


@pytest.mark.parametrize("size", [4 * GiB, 8 * GiB + 3 * 2**20 + 5, 16 * GiB])
def test_two_systems_spliced_on_the_first_short_schedule(sims, monkeypatch, size):
    """The window the few-period check needs is given at once (the skip's length chosen by it, as
    NCCL's per-head NVLS-tree ceiling has two systems' runs do): one short schedule, none turned down."""
    why, built = _noting(monkeypatch)
    new, ref, taken = _runs(sims[2], size)
    assert taken and len(built) == 1 and why == []
    assert new.periods_skipped > 250
    _same(new, ref)


@pytest.mark.parametrize("size", [4 * GiB, 16 * GiB])
def test_four_systems_per_flow_end_times_given_back_renumbered(sims, size, monkeypatch):
    """Four systems keep per-flow end times (a group's flows ending apart), stored by events and
    repeated by the skip: given back under the long schedule's ids, the crossing skip's block as
    long as the long run's; and their period a piece, the short schedule has the few-period check's
    window from the first."""
    _unceiled(monkeypatch)
    new, ref, taken = _runs(sims[4], size)
    assert taken and len(ref.flow_ends) > 1000
    _same(new, ref)


def test_simulator_takes_it_and_reads_like_arrays(sims):
    before = spliced_run.uses[0]
    r = sims[2].run("all-reduce", "nvls-tree", 16 * GiB)
    assert spliced_run.uses[0] == before + 1
    done = r.sim.group_done
    n = len(r.schedule.groups)
    assert len(done) == n and done.shape == (n,)
    whole = np.asarray(done)
    assert whole.shape == (n,) and not np.isnan(whole).any()
    assert float(done.max()) == r.time_s == whole.max()
    assert done[n - 1] == whole[n - 1] and np.array_equal(done[10:20], whole[10:20])
    # the groups' times move on piece by piece through the left-out copies
    assert (np.diff(whole[len(whole) // 2:len(whole) // 2 + 1000]) != 0).any()


def test_a_group_after_the_copies_is_renumbered(sims):
    """A launch group after the copies (every first group waits for it): the short schedule moves
    it down (``nvls_virtual.shorter``), the long run's answer is the same."""
    from dgxstudio.sim import collectives as C

    sim = sims[2]
    scheds = []
    for _ in range(2):
        sched, scale, _ = sim.nccl_schedule("all-reduce", "nvls-tree", "simple", 4 * GiB)
        C.with_launch(sched, 3e-6)
        assert sched.groups._chunks[-1][-1].name == "launch"  # (after the copies)
        scheds.append(sched)
    before = spliced_run.uses[0]
    new = spliced_run.run(sim.router, scheds[0], scale)
    assert spliced_run.uses[0] == before + 1
    _same(new, Engine(sim.router, scale).run(scheds[1]))
