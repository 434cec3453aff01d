"""The steady-state shortcut skips from the first repeat it can prove, and only from one.

The watcher keeps a snapshot of every recent look and finds at once an earlier state whose image is
the state now, so the skip starts one period after the pattern begins to repeat (a 16 GiB NVLS tree
on two DGX H100 used to play 105 events, its first skip at event 67, though it repeats from about
event 27). Skipping earlier plays fewer events and must change nothing else: every group's times,
every channel's bytes and the makespan equal the piece-by-piece run (``both``/``assert_same`` of
test_engine_periods.py). A pattern that has not repeated must not be skipped: lanes whose last
piece is short, lanes of different lengths (an uneven tree's branches), sizes that are no whole
number of chunks and uneven NVLS trees (NCCL's over 6 systems, and over 3 and 5, whose second tree is
the first shifted by one) are run both ways.
"""

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model import Device, Link, Topology
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.engine import Engine, Group, Pattern, Schedule
from dgxstudio.sim.run import SimOptions, Simulator

from .test_engine_periods import CATALOG, assert_same, both

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only", "eight_mib_nvls_tree_pieces")  # (tests/conftest.py)

GiB = 2**30
RAGGED = 2**28 + 3 * 2**20 + 12_345  # 256 MiB, 3 MiB and an odd remainder
RAGGED_ODD = 2**29 + 3 * 2**20 + 12_345  # (512 MiB: the NVLS tree over an odd count repeats later)


def _run(topo, algorithm, size):
    gpus = [d.id for d in topo.gpus()]
    return lambda: Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", algorithm, size).sim


@pytest.mark.parametrize("system, algorithm", [("dgx-h100", "hierarchical"), ("dgx-a100", "hierarchical"),
                                               ("dgx-h100", "nvls-tree"), ("dgx-h100", "ring")])
def test_the_early_skip_equals_the_run_piece_by_piece(monkeypatch, system, algorithm):
    topo = build_fat_tree(2, system, rail_optimized=system == "dgx-h100")
    fast, slow = both(monkeypatch, _run(topo, algorithm, 2**28))
    assert_same(fast, slow)
    assert fast.periods_skipped > 0 and slow.periods_skipped == 0


def switch(n: int) -> Topology:
    t = Topology("switch", CATALOG)
    t.add_device(Device("s", "pcie_switch", "pcie-switch-gen3", "S"))
    for i in range(n):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
        t.add_link(Link(f"l{i}", f"g{i}", "s", "PCIe3", bandwidth_per_direction_Bps=1e9 * (1 + i % 2), latency_s=1e-6))
    return t


def lanes(sched: Schedule, specs) -> list[list[int]]:
    """Pipelined lanes: (source, destination, piece sizes, the lane it forwards from or None); a
    piece leaves after its lane's previous one and, when it forwards, once that lane's piece arrived."""
    out = []
    for a, b, sizes, source in specs:
        pattern = Pattern([(f"g{a}", f"g{b}")], latency_s=None)
        lane = []
        for j, size in enumerate(sizes):
            done = (out[source][j],) if source is not None and j < len(out[source]) else ()
            lane.append(sched.add(Group(f"g{a}->g{b} piece {j}", pattern, size, done, (lane[-1],) if lane else ())))
        out.append(lane)
    return out


@pytest.mark.parametrize("short", [0.37e6, 1.9e6, 0.0])
@pytest.mark.parametrize("at", [79, 50, 20])
def test_a_short_piece_is_not_skipped_as_a_repeat(monkeypatch, short, at):
    # three lanes that share g1's link (their rates depend on each other); one piece of the first
    # (its last, or one in the middle) is short (or longer, or empty): alike in all but its bytes
    topo = switch(4)
    router = Router(topo)

    def run():
        sched = Schedule([])
        sizes = [1e6] * 80
        sizes[at] = short
        lanes(sched, [(0, 1, sizes, None), (2, 1, [1e6] * 80, None), (1, 3, [1e6] * 80, 0)])
        return Engine(router).run(sched)

    fast, slow = both(monkeypatch, run)
    assert_same(fast, slow)
    assert fast.periods_skipped > 0


def test_lanes_of_different_lengths_are_not_skipped_past_the_shortest(monkeypatch):
    # an uneven tree: two leaves feed a node (sharing its link) that forwards one of them; one leaf
    # has fewer pieces than the other, so the state stops repeating when it ends (the other leaf
    # then runs twice as fast), and the repeat after that is another one
    topo = switch(4)
    router = Router(topo)

    def run():
        sched = Schedule([])
        lanes(sched, [(0, 2, [1e6] * 90, None), (1, 2, [1e6] * 40, None), (2, 3, [1e6] * 90, 0)])
        return Engine(router).run(sched)

    fast, slow = both(monkeypatch, run)
    assert_same(fast, slow)
    assert fast.periods_skipped > 0


@pytest.mark.parametrize("systems, algorithm, size", [
    (2, "hierarchical", RAGGED), (2, "nvls-tree", RAGGED), (2, "ring", RAGGED), (6, "nvls-tree", RAGGED),
    (3, "nvls-tree", RAGGED_ODD), (5, "nvls-tree", RAGGED_ODD), (3, "hierarchical", RAGGED)])
def test_ragged_sizes_and_uneven_trees_are_exact(monkeypatch, systems, algorithm, size):
    # a size of no whole number of chunks (pieces are cut even: other sizes per stage) and trees whose
    # branches differ: NCCL's tree over 6 systems has leaves at two depths (0 -> 4 -> 2, 5 and 2 -> 1,
    # 3; its mirror alike); over an odd count the second tree is the first shifted by one system, not
    # its mirror (3: the chains 0 -> 2 -> 1 and 1 -> 0 -> 2; 5: 0 -> 4 -> 2 -> 1, 3 and 1 -> 0 -> 3 ->
    # 2, 4), and the two trees' pieces settle into a repeat only after some 700 (3) and 1,000 (5)
    # events, so those run a size twice as large, which still skips
    topo = build_fat_tree(systems, "dgx-h100", rail_optimized=True)
    fast, slow = both(monkeypatch, _run(topo, algorithm, size))
    assert_same(fast, slow)
    assert fast.periods_skipped > 0


@pytest.mark.parametrize("algorithm, most", [("nvls-tree", 130), ("hierarchical", 190), ("ring", 12)])
def test_a_16_gib_run_skips_from_its_first_repeat(algorithm, most):
    """Events of a 16 GiB all-reduce on two DGX H100: filling the pipeline, one period to see it repeat,
    the skip, and draining. The watcher that compared with one snapshot at a time skipped later: 105
    (NVLS tree), 212 (hierarchical) and 19 (ring) events; from the first repeat, 84, 182 and 10. The
    same number of events at 1 GiB, within a few: the cost does not follow the bytes. (The NVLS tree
    played 81 until its network pairs carried NCCL's per-head ceiling, sim/tuning.py
    nvls_tree_head_algbw_Bps: the NVLink side then fills its buffers against the slower trees
    before the pieces repeat, 122 at 1, 4 and 16 GiB alike.)"""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    big = _run(topo, algorithm, 16 * GiB)()
    small = _run(topo, algorithm, GiB)()
    assert big.periods_skipped > 0
    assert big.events <= most
    assert big.events <= small.events + 4  # (the ragged last pieces differ)


def test_a_hierarchical_all_reduce_inside_one_system_is_skipped_from_its_first_repeat():
    """Inside one DGX H100 the single snapshot once held came back to its image too late most of the
    time: a 16 GiB hierarchical all-reduce played 32,877 events (1.4 s). From the first repeat: 173."""
    from dgxstudio.model.presets import load_preset

    big = _run(load_preset("dgx-h100"), "hierarchical", 16 * GiB)()
    assert big.periods_skipped > 0
    assert big.events <= 250
