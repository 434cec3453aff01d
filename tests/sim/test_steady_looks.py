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
