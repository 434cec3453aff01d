"""The steady-state shortcut's looks, spaced so that a state that repeats is found whatever its
period (issue #17: CollNet at 16 GiB ran piece by piece at every scale). Once CollNet's chains
inside systems have run ahead of its SHARP stage (as far as their buffers let them: see
test_collnet_buffers.py), its state repeats every few events; looks a constant 17 events apart (the
longest wait) never saw two states one or two periods apart."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.steady import Shortcut

GiB = 2**30


def test_collnet_settles_once_its_chains_have_run_ahead():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    r = sim.run("all-reduce", "collnet", GiB)
    sched, scale, _ = sim.nccl_schedule("all-reduce", "collnet", "simple", GiB)
    full = Engine(sim.router, scale).run(sched, periods=False)  # every piece, the reference
    assert r.sim.periods_skipped > 0
    assert r.sim.events < full.events / 3  # (4,082 events piece by piece; 785 with the skip)
    assert r.time_s == pytest.approx(full.time_s, rel=1e-9)


def test_looks_lie_every_number_of_events_apart():
    """After looks that find nothing, the waits between looks grow to 16 events but vary: the gaps
    between looks take every length from 1 to 32 within a cycle, so a period of P events (or of 2P,
    a double tree's) lies between two looks."""
    shortcut = Shortcut.__new__(Shortcut)
    shortcut.backoff, shortcut.waits = [0, 0, 0], 0
    for _ in range(40):  # (the wait has grown to its longest)
        shortcut._fruitless()
    gaps = set()
    for _ in range(64):
        shortcut._fruitless()
        gaps.add(shortcut.backoff[0] + 1)  # (events from this look to the next)
    assert gaps == set(range(1, 33))


def _sums_agree(snap_rem, rem, groups, bytes_each):
    """``Shortcut._sums_agree`` on a bare watcher (the piece sizes ``bytes_each``, per group)."""
    import numpy as np

    shortcut = Shortcut.__new__(Shortcut)
    shortcut.bytes_each = np.asarray(bytes_each, dtype=float)
    snap = {"a_rem": np.asarray(snap_rem, dtype=float), "rem_sum": None}
    return shortcut._sums_agree(snap, np.asarray(groups, dtype=np.int64), np.asarray(rem, dtype=float))


@pytest.mark.parametrize("seed", range(40))
def test_the_sums_turn_down_no_state_whose_flows_agree(seed):
    """A look's sums of remaining bytes are a necessary condition: flows that each agree within
    their tolerance (REL_BYTES of their piece and bytes, at the very edge here) always pass, in
    any order and at any scale, with float sums' rounding; flows a hair further apart in total
    than the tolerances allow are turned down."""
    import numpy as np

    from dgxstudio.sim.periods import _Periods

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    bytes_each = rng.choice([1e3, 4e6, 2**27, 0.5, 3.3e9], size=8)
    groups = rng.integers(0, 8, n)
    scale = np.maximum(bytes_each[groups], 1.0)
    rem = rng.random(n) * bytes_each[groups] * rng.choice([1e-12, 1e-3, 1.0], n)
    tol = _Periods.REL_BYTES * (scale + rem)
    sign = rng.choice([-1.0, 1.0], n) if seed % 2 else np.full(n, 1.0 if seed % 4 == 0 else -1.0)
    snap_rem = np.maximum(rem + sign * tol * (1 - 1e-6), 0.0)
    off = np.abs(snap_rem - rem) > tol  # (rem + tol rounded past the edge: those as they are)
    snap_rem[off] = rem[off]
    assert (np.abs(snap_rem - rem) <= tol).all()  # (each flow agrees: what states_match accepts)
    perm = rng.permutation(n)  # (the snapshot lists its flows in another order)
    assert _sums_agree(snap_rem[perm], rem, groups, bytes_each)
    # every flow a whole tolerance and more the same way: the sums differ by more than they allow
    far = rem + 1.01 * tol + 1e-9 * scale
    assert not _sums_agree(far[perm], rem, groups, bytes_each)


def test_the_sums_change_no_skip(monkeypatch):
    """The 16 GiB NVLS tree on two DGX H100 (a transient of 81 events whose looks compare 75 states,
    50 of them turned down by the sums) gives the same run to the bit with the sums' check
    switched off, and the check did turn states down."""
    import numpy as np

    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    calls = {"down": 0}
    check = Shortcut._sums_agree

    def counted(self, snap, a_group, a_rem):
        ok = check(self, snap, a_group, a_rem)
        calls["down"] += not ok
        return ok

    monkeypatch.setattr(Shortcut, "_sums_agree", counted)
    with_sums = sim.run("all-reduce", "nvls-tree", 16 * GiB)
    assert calls["down"] > 10
    monkeypatch.setattr(Shortcut, "_sums_agree", lambda self, snap, a_group, a_rem: True)
    without = sim.run("all-reduce", "nvls-tree", 16 * GiB)
    assert with_sums.time_s == without.time_s and with_sums.sim.events == without.sim.events
    for a, b in ((with_sums.sim.group_done, without.sim.group_done), (with_sums.sim.group_start, without.sim.group_start)):
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
