"""Lanes read along their stride (sim/lane_strides.py) reach as far as the whole lane order says.

``StrideLanes.reach`` answers, for a few groups, how many alike links follow each along its lane,
from the ids where lanes laid out at a stride break; the skip uses it instead of ordering every
group's lane. Wherever it answers, it must equal ``periods.lane_order``'s reach (and its images the
lane order's groups k links on): on random lanes that change stride, end, and stop being alike
part way, and on the schedules the simulator builds. A skip that reads lanes this way must give
what a skip that orders them all gives, bit for bit. (Schedules of any size read lanes along strides
here: ``MIN_GROUPS`` 0; by default small ones are ordered whole, which costs less.)
"""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import lane_strides
from dgxstudio.sim.lane_strides import StrideLanes
from dgxstudio.sim.periods import lane_order
from dgxstudio.sim.run import SimOptions, Simulator

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")

MiB = 2**20


@pytest.fixture(autouse=True)
def any_size(monkeypatch):
    monkeypatch.setattr(lane_strides, "MIN_GROUPS", 0)


def random_lanes(rng, n):
    """Lanes over ids 0..n-1: each a few segments of constant stride, some links not alike (a
    column that changes) -- a successor map, its predecessors and one column."""
    succ = np.full(n, -1, dtype=np.int64)
    free = np.ones(n, dtype=bool)
    col = np.zeros(n)
    for head in range(n):
        if not free[head]:
            continue
        free[head] = False
        x = head
        for _ in range(int(rng.integers(1, 4))):  # segments
            s = int(rng.choice([1, 2, 3, 7]))
            for _ in range(int(rng.integers(1, 30))):
                y = x + s
                if y >= n or not free[y]:
                    break
                free[y] = False
                succ[x] = y
                col[y] = col[x] if rng.random() > 0.05 else col[x] + 1
                x = y
    pred = np.full(n, -1, dtype=np.int64)
    has = np.flatnonzero(succ >= 0)
    pred[succ[has]] = has
    return succ, pred, col


@pytest.mark.parametrize("seed", range(12))
def test_reach_along_strides_equals_the_lane_order_on_random_lanes(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    succ, pred, col = random_lanes(rng, n)

    def alike_at(at):
        s_ = np.maximum(succ[at], 0)
        return (succ[at] >= 0) & (col[at] == col[s_])

    order, idx, reach = lane_order(succ, alike_at(slice(None)), pred)
    lanes = StrideLanes(succ, alike_at, (col,))
    answered = refused = 0
    for g in np.flatnonzero(succ >= 0).tolist():
        for gs in (np.array([g]), np.flatnonzero((succ - np.arange(n) == succ[g] - g) & (succ >= 0))[:5]):
            got = lanes.reach(gs)
            if got is None:
                refused += 1
                continue
            answered += 1
            np.testing.assert_array_equal(got, reach[gs])
            k = int(got.min())
            np.testing.assert_array_equal(gs + k * (succ[g] - g) if k else gs, order[idx[gs] + k])
    assert answered and refused  # lanes read along their stride, and lanes that change it (refused)


def _sim(system):
    topo = build_fat_tree(2, system, rail_optimized=system == "dgx-h100")
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))


@pytest.mark.parametrize("system, algorithm, size", [
    ("dgx-h100", "nvls-tree", 2**28 + 3 * MiB + 12_345), ("dgx-h100", "nvls-tree", 2**34),
    ("dgx-a100", "hierarchical", 2**30 + 5 * MiB + 3), ("dgx-h100", "hierarchical", 2**34),
    ("dgx-a100", "ring", 2**32 - 1)])
def test_a_skip_reading_lanes_along_strides_equals_one_ordering_them_all(monkeypatch, system, algorithm, size):
    from dgxstudio.sim.periods import _Periods

    sim = _sim(system)
    ordered = []
    original = _Periods._prepare
    monkeypatch.setattr(_Periods, "_prepare", lambda self: (ordered.append(1), original(self)))
    fast = sim.run("all-reduce", algorithm, size).sim
    assert not ordered  # every question was answered along the strides
    monkeypatch.setattr(lane_strides, "ENABLED", False)
    full = sim.run("all-reduce", algorithm, size).sim
    assert ordered
    assert fast.time_s == full.time_s and fast.events == full.events
    assert fast.periods_skipped == full.periods_skipped > 0
    for x, y in ((fast.group_start, full.group_start), (fast.group_sent, full.group_sent),
                 (fast.group_done, full.group_done), (fast.channel_bytes, full.channel_bytes)):
        np.testing.assert_array_equal(x, y)


def test_a_16_gib_nvls_tree_reads_lanes_along_strides_by_default(monkeypatch):
    from dgxstudio.sim.periods import _Periods

    from dgxstudio.sim import spliced_run

    monkeypatch.undo()  # the default threshold
    monkeypatch.setattr(spliced_run, "ENABLED", False)  # (the long schedule: a short one has too few groups)
    ordered = []
    original = _Periods._prepare
    monkeypatch.setattr(_Periods, "_prepare", lambda self: (ordered.append(1), original(self)))
    _sim("dgx-h100").run("all-reduce", "nvls-tree", 2**34)
    assert not ordered
