"""``periodic_dependents``: the dependents of a schedule whose last rows repeat a piece, built from one
period, equal the full transpose entry for entry; a hint the rows do not bear out is turned down; and
where the lists are said to repeat (``Repeats``), they do. A run that reads them (the NVLS tree's
steady-state skip) gives the same answer as one that transposes every list."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import periodic_dependents
from dgxstudio.sim.periods import Dependents
from dgxstudio.sim.run import SimOptions, Simulator

pytestmark = pytest.mark.usefixtures("eight_mib_nvls_tree_pieces")  # (tests/conftest.py)

MiB = 2**20


@pytest.fixture(scope="module")
def sims():
    out = {}
    for n in (2, 4):
        topo = build_fat_tree(n, "dgx-h100", rail_optimized=True)
        out[n] = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    topo = load_preset("dgx-h100")
    out[1] = Simulator(topo, [d.id for d in topo.gpus()])
    return out


def _full(ptr, flat):
    return Dependents(ptr, flat)  # (no period: the full transpose)


def _schedule(sim, systems, size):
    algorithm = "nvls" if systems == 1 else "nvls-tree"
    return sim.nccl_schedule("all-reduce", algorithm, "simple", size)[0]


@pytest.mark.parametrize("systems,size", [(2, 64 * MiB), (2, 1024 * MiB + 4097), (2, 16 * 2**30),
                                          (4, 256 * MiB), (4, 4 * 2**30), (1, 1024 * MiB)])
def test_built_by_period_equals_the_full_transpose(sims, systems, size):
    cols = _schedule(sims[systems], systems, size).columns()
    assert cols.period is not None
    for ptr, flat in ((cols.done_ptr, cols.done_flat), (cols.sent_ptr, cols.sent_flat)):
        before = periodic_dependents.uses[0]
        fast = Dependents(ptr, flat, period=cols.period)
        assert periodic_dependents.uses[0] == before + 1  # (the path compared was taken)
        full = _full(ptr, flat)
        np.testing.assert_array_equal(fast.flat, full.flat)
        np.testing.assert_array_equal(fast.ptr, full.ptr)
        np.testing.assert_array_equal(fast.waits, full.waits)
        assert fast.flat.dtype == full.flat.dtype and fast.ptr.dtype == full.ptr.dtype


@pytest.mark.parametrize("systems,size", [(2, 1024 * MiB + 4097), (4, 256 * MiB)])
def test_the_lists_repeat_where_it_says(sims, systems, size):
    cols = _schedule(sims[systems], systems, size).columns()
    fast = Dependents(cols.done_ptr, cols.done_flat, period=cols.period)
    rep = fast.repeats
    assert rep is not None
    n = len(fast)
    for d in (rep.m, 2 * rep.m, 3 * rep.m):
        last = rep.hi + rep.m - d - 1
        assert rep.moved(rep.lo, last, d) and not rep.moved(rep.lo, last + 1, d) and not rep.moved(rep.lo - 1, last, d)
        assert not rep.moved(rep.lo, rep.lo, d + 1)  # (a shift that is not a whole number of periods)
        for x in range(rep.lo, last + 1):
            assert fast[x + d] == [g + d for g in fast[x]], (x, d)
        # (and past the range some list is cut off at the last row: the range is not too short by much)
    tail = [x for x in range(rep.hi, n - rep.m) if fast[x + rep.m] != [g + rep.m for g in fast[x]]]
    assert tail and min(tail) < rep.hi + rep.m


def _csr(rows):
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    return ptr, np.asarray([x for r in rows for x in r], dtype=np.int64)


def _piece_rows(pieces, barrier=False):
    """Two groups of head, then pieces of three rows: row i of a piece waits for row i of the one
    before (and its row 2 for row 0 of its own); with ``barrier`` every row 1 also waits for group 0."""
    rows = [(), (0,)]
    for p in range(pieces):
        b = 2 + 3 * p
        prev = b - 3 if p else 0
        rows += [(prev,), (prev + 1,) + ((0,) if barrier else ()), (b, prev + 2 if p else 1)]
    return rows


@pytest.mark.parametrize("rows,period,why", [
    (_piece_rows(12, barrier=True), (8, 3), "a group every piece waits for (an id that does not move)"),
    (_piece_rows(12), (8, 4), "a period the rows do not repeat"),
    ([(1,), (), (3,), (), (5,), (), (7,), ()], (4, 2), "rows that wait for later ones"),
])
def test_a_hint_the_rows_do_not_bear_out_is_turned_down(rows, period, why):
    ptr, flat = _csr(rows)
    assert periodic_dependents.transposed(ptr, flat, np.diff(ptr), period) is None, why
    dep = Dependents(ptr, flat, period=period)
    full = _full(ptr, flat)
    np.testing.assert_array_equal(dep.flat, full.flat)
    np.testing.assert_array_equal(dep.ptr, full.ptr)
    assert dep.repeats is None


def test_small_pieces_by_period():
    rows = _piece_rows(12)
    ptr, flat = _csr(rows)
    got = periodic_dependents.transposed(ptr, flat, np.diff(ptr), (8, 3))
    assert got is not None
    full = _full(ptr, flat)
    np.testing.assert_array_equal(got[0], full.flat)
    np.testing.assert_array_equal(got[1], full.ptr)


def test_a_run_reading_them_gives_the_same_answer(sims, monkeypatch):
    """The 16 GiB NVLS tree on two DGX H100 (its skip reads the known repeats instead of the lists):
    every group's times, the channels' bytes and the events as with every list transposed in full."""
    sim = sims[2]
    size = 16 * 2**30
    before = periodic_dependents.uses[0]
    fast = sim.run("all-reduce", "nvls-tree", size).sim
    assert periodic_dependents.uses[0] >= before + 2
    monkeypatch.setattr(periodic_dependents, "transposed", lambda *a: None)
    full = sim.run("all-reduce", "nvls-tree", size).sim
    for a, b in ((fast.group_start, full.group_start), (fast.group_sent, full.group_sent),
                 (fast.group_done, full.group_done), (fast.channel_bytes, full.channel_bytes)):
        np.testing.assert_array_equal(a, b)
    assert (fast.time_s, fast.events, fast.periods_skipped) == (full.time_s, full.events, full.periods_skipped)


def test_the_release_check_reads_only_where_it_does_not_know(sims):
    """``periodic_releases`` asks the lists whether x + d's dependents are x's moved on by d: where
    they are known to repeat it reads only the ids before that, with the same answers as reading all."""
    from types import SimpleNamespace

    from dgxstudio.sim import periodic_releases

    cols = _schedule(sims[2], 2, 1024 * MiB + 4097).columns()
    fast = {key: Dependents(ptr, flat, period=cols.period)
            for key, ptr, flat in (("done", cols.done_ptr, cols.done_flat), ("sent", cols.sent_ptr, cols.sent_flat))}
    full = {"done": _full(cols.done_ptr, cols.done_flat), "sent": _full(cols.sent_ptr, cols.sent_flat)}
    rep = fast["done"].repeats
    m, n = rep.m, len(fast["done"])
    asked = 0
    for d in (m, 2 * m, m + 1):
        for lo, hi in ((0, n - 1), (rep.lo - 3 * m, rep.lo + 20 * m), (rep.lo + 5, n - 1 - 4 * m), (1, rep.lo + 2 * m)):
            for key in ("done", "sent"):
                known = periodic_releases._known_from(fast[key], lo, hi - d, d)
                asked += lo < known <= hi - d
                got = periodic_releases.periodic_lists(fast[key], lo, hi, d)
                want = periodic_releases.periodic_lists(full[key], lo, hi, d)
                assert (got is None) == (want is None) and (got is None or np.array_equal(got, want)), (d, lo, hi, key)
        # counts_move over a window of the run's shape: a period per row, each d on
        gs = (np.arange(40, dtype=np.int64)[:, None] * d + np.arange(rep.lo - 2 * m, rep.lo - m)[None, :])
        for sent in (True, False):
            per_fast = SimpleNamespace(on_sent=fast["sent"], on_done=fast["done"])
            per_full = SimpleNamespace(on_sent=full["sent"], on_done=full["done"])
            assert periodic_releases.counts_move(per_fast, gs, sent, d) == periodic_releases.counts_move(per_full, gs, sent, d)
    assert asked  # (some questions were answered partly by the known repeats)


def _periods(cols, on_sent):
    from dgxstudio.sim.periods import _Periods

    return _Periods(cols, np.zeros(cols.n, dtype=np.int64), [], on_sent, on_sent)


@pytest.mark.parametrize("systems,size", [(2, 64 * MiB), (2, 16 * 2**30), (4, 4 * 2**30 + 777), (1, 1024 * MiB)])
def test_lane_successors_by_period_equal_the_full_count(sims, systems, size):
    cols = _schedule(sims[systems], systems, size).columns()
    on_sent = Dependents(cols.sent_ptr, cols.sent_flat, period=cols.period)
    assert on_sent.repeats is not None  # (the path compared is taken)
    np.testing.assert_array_equal(_periods(cols, on_sent).succ, _periods(cols, _full(cols.sent_ptr, cols.sent_flat)).succ)


def test_lane_successors_at_the_last_rows():
    """Two rows of every period name the same group first (so it has no successor), but past the
    last row only one of them is left: that group has one, which moving the period on would miss."""
    from types import SimpleNamespace

    n = 31  # (group n - 3 is named first by rows n - 1 and n: only the first is left)
    rows = [(), (), (), ()] + [((r - 2,) if r % 2 == 0 else (r - 3,)) for r in range(4, n)]
    ptr, flat = _csr(rows)
    cols = SimpleNamespace(n=n, sent_ptr=ptr, sent_flat=flat)
    on_sent = Dependents(ptr, flat, period=(6, 2))
    assert on_sent.repeats is not None
    got = _periods(cols, on_sent).succ
    np.testing.assert_array_equal(got, _periods(cols, _full(ptr, flat)).succ)
    assert got[n - 3] == n - 1 and got[n - 5] == -1
