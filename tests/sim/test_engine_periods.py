"""Skipping the repeats of a steady state is exact.

Once every lane of a pipelined schedule (a ring's pieces, connection by connection) advances in step,
the network's state repeats one piece later; the engine then fills in the repeats' times and moves
the state ahead in one step. These tests run the same schedules with the shortcut and piece by piece
and compare every group's times, every channel's bytes and the makespan to 1e-9, with and without
contention, and check that the shortcut did fire where a steady state exists.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.analysis.routing import Router
from dgxstudio.model import Device, Link, Topology
from dgxstudio.model.catalog import load_catalog
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives as C
from dgxstudio.sim.engine import Engine, Group, Pattern, Schedule
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.training import merge

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")

CATALOG = load_catalog(include_user=False)


def assert_same(a, b):
    assert a.time_s == pytest.approx(b.time_s, rel=1e-9, abs=1e-18)
    for x, y in ((a.group_start, b.group_start), (a.group_sent, b.group_sent), (a.group_done, b.group_done)):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-18)
    np.testing.assert_allclose(a.channel_bytes, b.channel_bytes, rtol=1e-9, atol=1e-3)
    assert a.delivered[-1][1] == pytest.approx(b.delivered[-1][1], rel=1e-9)


def both(monkeypatch, run):
    """``run()`` with the shortcut, then piece by piece."""
    original = Engine.run
    out = []
    for periods in (True, False):
        def patched(self, schedule, progress=None, cancel=None, progress_interval_s=0.05, periods=periods,
                    _orig=original):
            return _orig(self, schedule, progress, cancel, progress_interval_s, periods)
        monkeypatch.setattr(Engine, "run", patched)
        out.append(run())
    monkeypatch.setattr(Engine, "run", original)
    return out


@pytest.mark.parametrize("systems, size", [(2, 2**24), (2, 2**32), (4, 2**30), (16, 2**30)])
def test_ring_all_reduce_on_fat_trees_is_exact_and_skips_its_steady_state(monkeypatch, systems, size):
    topo = build_fat_tree(systems, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    fast, slow = both(monkeypatch, lambda: Simulator(topo, gpus, SimOptions(achievable=True))
                      .run("all-reduce", "ring", size).sim)
    assert_same(fast, slow)
    assert fast.periods_skipped > 0 and slow.periods_skipped == 0
    assert fast.events < slow.events


def test_a_16_gib_ring_costs_a_tenth_of_the_events(monkeypatch):
    topo = build_fat_tree(2, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    fast, slow = both(monkeypatch, lambda: Simulator(topo, gpus, SimOptions(achievable=True))
                      .run("all-reduce", "ring", 16 * 2**30).sim)
    assert_same(fast, slow)
    assert fast.events * 5 < slow.events


def plain_ring(p: int) -> Topology:
    t = Topology(f"ring of {p}", CATALOG)
    for i in range(p):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-sxm2", f"G{i}"))
    for i in range(p):
        t.add_link(Link(f"l{i}", f"g{i}", f"g{(i + 1) % p}", "NVLink2", latency_s=1e-6 * (1 + i % 3)))
    return t


def test_two_rings_contending_for_the_same_links_stay_exact(monkeypatch):
    """Two all-reduces at once, one ring each way round different lengths of pieces: they share
    every link, so each lane's rate depends on where the other is."""
    topo = plain_ring(6)
    router = Router(topo)
    order = [f"g{i}" for i in range(6)]

    def run():
        a = C.ring_collective("all-reduce", [C.RingSpec(order)], 48e6, 1e6, both=False)
        b = C.ring_collective("all-reduce", [C.RingSpec(order)], 30e6, 0.7e6, both=False)
        return Engine(router).run(merge([a, b]))

    fast, slow = both(monkeypatch, run)
    assert_same(fast, slow)


def test_tree_and_hierarchical_runs_are_unchanged(monkeypatch):
    topo = build_fat_tree(4, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    for algorithm in ("tree", "hierarchical"):
        fast, slow = both(monkeypatch, lambda: Simulator(topo, gpus, SimOptions(achievable=True))
                          .run("all-reduce", algorithm, 2**27).sim)
        assert_same(fast, slow)


def test_a_step_whose_queue_grows_and_drains_is_skipped_too(monkeypatch):
    """A ring pass sends all pieces of a step before the next step: while step 0 runs, step 1's
    pieces queue up (their data has arrived, the connection is busy), and in the last step the queue
    drains. Neither state is an image of the one a piece earlier, yet the run repeats: the skip
    counts the releases of the periods it fills in and must stay exact. 800 pieces a step cost about
    as many events as 8."""
    topo = plain_ring(6)
    router = Router(topo)
    order = [f"g{i}" for i in range(6)]
    events = []
    for size in (48e6, 4800e6):
        fast, slow = both(monkeypatch, lambda: Engine(router).run(
            C.ring_collective("all-reduce", [C.RingSpec(order)], size, 1e6, both=True)))
        assert_same(fast, slow)
        events.append((fast.events, slow.events))
    (small_fast, _), (big_fast, big_slow) = events
    assert big_fast * 100 < big_slow
    assert big_fast <= 2 * small_fast


def exact_on_a_switch(monkeypatch, topo, sched):
    router = Router(topo)

    def run():
        return Engine(router).run(Schedule([Group(g.name, g.pattern, g.bytes_each, g.deps_done, g.deps_sent)
                                            for g in sched.groups]))

    fast, slow = both(monkeypatch, run)
    assert_same(fast, slow)


def gpus_on_a_switch(draw, low: int) -> tuple[Topology, int]:
    t = Topology("switch", CATALOG)
    n_gpu = draw(st.integers(low, 5))
    t.add_device(Device("s", "pcie_switch", "pcie-switch-gen3", "S"))
    for i in range(n_gpu):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
        t.add_link(Link(f"l{i}", f"g{i}", "s", "PCIe3", bandwidth_per_direction_Bps=draw(st.sampled_from([1e9, 2e9, 3e9])),
                        latency_s=draw(st.sampled_from([0.0, 1e-6, 3e-6]))))
    return t, n_gpu


@st.composite
def lanes_on_a_switch(draw):
    """A few lanes of pieces (each piece waits for the previous one's send and, optionally, for a
    piece of another lane to arrive) on GPUs around one PCIe switch with uneven links."""
    t, n_gpu = gpus_on_a_switch(draw, 2)
    sched = Schedule([])
    lanes = []
    for _ in range(draw(st.integers(1, 3))):
        a = draw(st.integers(0, n_gpu - 1))
        b = draw(st.integers(0, n_gpu - 1).filter(lambda x: x != a))
        lanes.append((Pattern([(f"g{a}", f"g{b}")]), draw(st.sampled_from([1e5, 1e6, 4e6])), []))
    pieces = draw(st.integers(2, 40))
    feed = draw(st.booleans())
    for j in range(pieces):
        for li, (pattern, size, ids) in enumerate(lanes):
            done = (lanes[li - 1][2][j],) if feed and li > 0 and len(lanes[li - 1][2]) > j else ()
            sent = (ids[-1],) if ids else ()
            ids.append(sched.add(Group(f"lane {li} piece {j}", pattern, size, done, sent)))
    return t, sched


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lanes_on_a_switch())
def test_random_lanes_are_exact_with_and_without_the_shortcut(monkeypatch, case):
    exact_on_a_switch(monkeypatch, *case)


@st.composite
def lanes_with_taps_and_barriers(draw):
    """Lanes that start part-way through another lane (a tap on one of its pieces), lanes fed piece
    by piece by a slower or faster lane (a queue that grows or drains), and a stage that waits for
    every piece of a lane (a barrier): the releases a skip must count, and stop before."""
    t, n_gpu = gpus_on_a_switch(draw, 3)
    sched = Schedule([])
    lanes: list[list[int]] = []
    for li in range(draw(st.integers(2, 4))):
        a = draw(st.integers(0, n_gpu - 1))
        b = draw(st.integers(0, n_gpu - 1).filter(lambda x: x != a))
        pattern, size = Pattern([(f"g{a}", f"g{b}")]), draw(st.sampled_from([1e5, 1e6, 4e6]))
        pieces = draw(st.integers(2, 60))
        how = draw(st.sampled_from(["root", "tap", "feed", "barrier"])) if lanes else "root"
        src = lanes[draw(st.integers(0, len(lanes) - 1))] if lanes else []
        tap = draw(st.integers(0, len(src) - 1)) if src else 0
        ids: list[int] = []
        for j in range(pieces):
            if how == "tap" and j == 0:
                done = (src[tap],)
            elif how == "feed":
                done = (src[min(j, len(src) - 1)],)
            elif how == "barrier" and j == 0:
                done = tuple(src)
            else:
                done = ()
            ids.append(sched.add(Group(f"lane {li} piece {j}", pattern, size, done, (ids[-1],) if ids else ())))
        lanes.append(ids)
    return t, sched


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lanes_with_taps_and_barriers())
def test_taps_queues_and_barriers_are_exact_with_and_without_the_shortcut(monkeypatch, case):
    exact_on_a_switch(monkeypatch, *case)


def test_a_stage_waiting_for_all_pieces_is_a_barrier_the_shortcut_counts_down(monkeypatch):
    """Hierarchical all-reduce: the leaders' ring waits for every piece of the reduction inside the
    systems (each of its first groups depends on all of them). Those groups stay put while the
    reduction's lanes repeat; the shortcut counts their releases down and never lets one fire early."""
    topo = build_fat_tree(4, "dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    fast, slow = both(monkeypatch, lambda: Simulator(topo, gpus, SimOptions(achievable=True))
                      .run("all-reduce", "hierarchical", 2**30).sim)
    assert_same(fast, slow)
    assert fast.periods_skipped > 0


# (2 systems skip from early on: 4x fewer events. NCCL's trees over 3 systems are the chains 0 -> 2
# -> 1 and, shifted by one system, 1 -> 0 -> 2: deeper than a root with two children, and the pair
# settles into its repeat only after some 700 events: 732 against 2,619 piece by piece at 1 GiB)
@pytest.mark.parametrize("systems, size", [(2, 2**30), (3, 2**30), (8, 2**30)])
def test_the_nvls_tree_repeats_every_second_step_and_the_shortcut_stays_exact(monkeypatch, systems, size):
    # The double tree's two trees take turns on each network link, so the state repeats every
    # second lane step; the shortcut must find that period and give the piece-by-piece answer.
    topo = build_fat_tree(systems, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    fast, slow = both(monkeypatch, lambda: Simulator(topo, gpus, SimOptions(achievable=True))
                      .run("all-reduce", "nvls-tree", size).sim)
    assert_same(fast, slow)
    assert fast.periods_skipped > 0 and slow.periods_skipped == 0
    # deeper trees fill and drain over more pieces before and after their steady state
    assert fast.events * {2: 4, 3: 3}.get(systems, 1.5) < slow.events


def test_nvls_tree_pieces_leave_each_network_connection_in_order():
    # NCCL's connections are FIFOs: piece j+1 of a tree level starts only once piece j has left,
    # and the switches' reduce runs at most NCCL_STEPS/slice pieces ahead of the trees.
    from dgxstudio.sim import tuning as T

    topo = build_fat_tree(3, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    r = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "nvls-tree", 2**29).sim
    lanes: dict[tuple, list[int]] = {}
    for i, g in enumerate(r.groups):
        if g.meta.get("tree", "").startswith("rail "):  # one key per rail and tree, every piece under it
            lane = (g.meta["tree"], g.meta["phase"], g.meta["level"])
            lanes.setdefault(lane, []).append(i)
    assert lanes
    for ids in lanes.values():
        assert len(ids) > 1
        for a, b in zip(ids, ids[1:]):
            assert r.group_start[b] >= r.group_sent[a] - 1e-15
    slots = T.slots_per_connection("all-reduce")
    # a receiver's buffers: a level runs at most `slots` pieces ahead of the level it forwards to
    # (up: the parent's own hop up, the root's first hop down; down: the next hop down)
    checked = 0
    for (tree, phase, level), ids in lanes.items():
        if phase == "up":
            onward = lanes.get((tree, "up", level - 1)) if level > 1 else lanes.get((tree, "down", 1))
        else:
            onward = lanes.get((tree, "down", level + 1))
        if onward is None:
            continue
        for j in range(slots, len(ids)):
            assert r.group_start[ids[j]] >= r.group_sent[onward[j - slots]] - 1e-15
            checked += 1
    assert checked
    reduces = [i for i, g in enumerate(r.groups) if g.meta.get("phase") == "nvls-reduce"
               and g.name.startswith("NVLS reduce s0 ") and g.name.endswith(f"piece {g.meta['piece']}")]
    taken = {g.meta["piece"]: i for i, g in enumerate(r.groups) if g.name.startswith("trees took piece")}
    first_switch = r.groups[reduces[0]].meta["switch"]
    for i in reduces:
        g = r.groups[i]
        j = g.meta["piece"]
        if g.meta["switch"] == first_switch and j >= slots:
            assert r.group_start[i] >= r.group_done[taken[j - slots]] - 1e-15
    assert slots == 4
