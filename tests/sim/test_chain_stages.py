"""Chain stages without events (sim/chain_stages.py) against the engine's events, piece by piece.

The reference is ``Engine.run(..., periods=False)``: every piece an event, no shortcut of any kind.
Where a stage's flows could contend the recurrence must refuse (None) and the engine run it."""

import numpy as np
import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model import Device, Link, Topology
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import chain_stages
from dgxstudio.sim import collectives as C
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.latency_bound import moving_time_s
from dgxstudio.sim.run import SimOptions, Simulator

MiB = 2**20


def _close(a, b, rel=1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    scale = np.maximum(np.abs(b).max(initial=0.0), 1e-300)
    assert np.abs(a - b).max(initial=0.0) <= rel * scale


def _same_run(quick, ref):
    """The eventless record against the events' one: times, bytes, states and time spent moving."""
    _close(quick.group_start, ref.group_start)
    _close(quick.group_sent, ref.group_sent)
    _close(quick.group_done, ref.group_done)
    assert quick.time_s == pytest.approx(ref.time_s, rel=1e-12)
    _close(quick.channel_bytes, ref.channel_bytes)
    assert moving_time_s(quick) == pytest.approx(moving_time_s(ref), rel=1e-12)
    assert quick.delivered[-1][1] == pytest.approx(ref.delivered[-1][1], rel=1e-12)
    # the same network states, in the same order, over the same stretches
    assert len(quick.segments) == len(ref.segments)
    assert [s[2] for s in quick.segments] == [s[2] for s in ref.segments]
    _close(np.asarray(quick.segments)[:, :2], np.asarray(ref.segments)[:, :2])
    assert len(quick.rate_patterns) == len(ref.rate_patterns)
    for a, b in zip(quick.rate_patterns, ref.rate_patterns):
        order_a, order_b = np.argsort(a.channels), np.argsort(b.channels)
        assert (a.channels[order_a] == b.channels[order_b]).all()
        _close(a.load_Bps[order_a], b.load_Bps[order_b])
    assert not quick.flow_ends.get(0) and quick.periods_skipped == 0


def _simulator(name):
    if name == "2 dgx-a100":
        topo = build_fat_tree(2, "dgx-a100")
    elif name == "4 dgx-h100":
        topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    else:
        topo = load_preset(name)
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))


@pytest.mark.parametrize("name", ["2 dgx-a100", "4 dgx-h100", "dgx-a100", "dgx1-v100"])
@pytest.mark.parametrize("size", [1024, 4 * MiB, 12 * MiB, 64 * MiB + 3])
def test_hierarchical_equals_the_events(name, size):
    sim = _simulator(name)
    sched = sim.schedule("all-reduce", "hierarchical", size)
    engine = Engine(sim.router)
    ref = engine.run(sched, periods=False)
    quick = chain_stages.run(engine, sched, 0.0)
    assert quick is not None
    _same_run(quick, ref)
    assert quick.events < ref.events or size <= 4 * MiB
    # and the engine itself answers with it
    assert engine.run(sched).events == quick.events


def test_reduction_time_and_many_pieces():
    sim = _simulator("2 dgx-a100")
    sim.options.reduce_s_per_byte = 2e-12
    sched = sim.schedule("all-reduce", "hierarchical", 256 * MiB)
    engine = Engine(sim.router)
    _same_run(chain_stages.run(engine, sched, 0.0), engine.run(sched, periods=False))


def test_hops_of_different_speeds_times_by_the_recurrence():
    """DGX-1's chain crosses single and double NVLinks: the faster hops pause between pieces, a
    state change per piece. The times still follow the recurrence; the record is left to the
    engine past the few pauses the eventless path takes."""
    sim = _simulator("dgx1-v100")
    sched = sim.schedule("all-reduce", "hierarchical", 1024 * MiB)
    engine = Engine(sim.router)
    ref = engine.run(sched, periods=False)
    times = chain_stages.stage_times(engine, sched)
    assert times is not None
    for got, want in zip(times, (ref.group_start, ref.group_sent, ref.group_done)):
        _close(got, want, 1e-12)
    assert chain_stages.run(engine, sched, 0.0) is None


def _switched(catalog, layout: dict[str, list[str]]) -> Topology:
    """GPUs under PCIe switches (``layout``: switch -> its GPUs), the switches joined in a line."""
    t = Topology("switched", catalog)
    for sw, gpus in layout.items():
        t.add_device(Device(sw, "pcie_switch", "pcie-switch-gen3", sw))
        for g in gpus:
            t.add_device(Device(g, "gpu", "tesla-v100-pcie", g))
            t.add_link(Link(f"{g}-{sw}", g, sw, "PCIe3", latency_s=1e-6))
    names = list(layout)
    for a, b in zip(names, names[1:]):
        t.add_link(Link(f"{a}-{b}", a, b, "PCIe3", latency_s=2e-6))
    return t


def _line(catalog, n: int) -> Topology:
    """GPU i under switch Si, the switches in a line (GPUs do not forward)."""
    return _switched(catalog, {f"S{i}": [f"g{i}"] for i in range(n)})


def _both(topo, chains, size, chunk=1 * MiB):
    sched = C.hierarchical(chains, [C.RingSpec(c) for c in chains], size, chunk)
    engine = Engine(Router(topo))
    return sched, engine, engine.run(sched, periods=False)


def test_a_chain_that_does_not_contend_is_taken(catalog):
    topo = _line(catalog, 4)
    sched, engine, ref = _both(topo, [["g0", "g1", "g2", "g3"]], 8 * MiB)
    _same_run(chain_stages.run(engine, sched, 0.0), ref)


def test_a_chain_whose_hops_share_a_link_falls_back(catalog):
    # in the order g0 g2 g1 g3 along a line, the reduce's hops g3->g1 and g2->g0 both cross S2->S1
    topo = _line(catalog, 4)
    sched, engine, ref = _both(topo, [["g0", "g2", "g1", "g3"]], 8 * MiB)
    assert chain_stages.stage_times(engine, sched) is None
    assert chain_stages.run(engine, sched, 0.0) is None
    got = engine.run(sched)
    _close(got.group_done, ref.group_done, 1e-9)
    # the shared link slows it well past the same chain in line order
    alone = Engine(Router(topo)).run(C.hierarchical([["g0", "g1", "g2", "g3"]], [C.RingSpec(["g0", "g1", "g2", "g3"])],
                                                    8 * MiB, MiB), periods=False)
    assert got.time_s > 1.2 * alone.time_s


def test_leaders_whose_routes_meet_fall_back(catalog):
    # leaders a0, a1 under switch A, b0, b1 under B: the ring a0 b0 a1 b1 crosses A->B twice at once
    topo = _switched(catalog, {"A": ["a0", "x0", "a1", "x1"], "B": ["b0", "y0", "b1", "y1"]})
    chains = [["a0", "x0"], ["b0", "y0"], ["a1", "x1"], ["b1", "y1"]]
    sched, engine, ref = _both(topo, chains, 8 * MiB)
    assert chain_stages.stage_times(engine, sched) is None
    got = engine.run(sched)
    _close(got.group_done, ref.group_done, 1e-9)
    # the same GPUs with leaders whose routes stay apart (a0 a1 b0 b1: one crossing each way) are taken
    chains = [["a0", "x0"], ["a1", "x1"], ["b0", "y0"], ["b1", "y1"]]
    sched, engine, ref = _both(topo, chains, 8 * MiB)
    _same_run(chain_stages.run(engine, sched, 0.0), ref)


def test_a_schedule_with_something_else_is_left_to_the_engine(catalog):
    topo = _line(catalog, 4)
    sched = C.hierarchical([["g0", "g1", "g2", "g3"]], [C.RingSpec(["g0", "g1", "g2", "g3"])], 8 * MiB, MiB)
    sched.set_deps_done(3, (0,))  # a row changed after it was built: no longer the lattice recorded
    engine = Engine(Router(topo))
    assert chain_stages.stage_times(engine, sched) is None


def test_a_ring_of_many_leaders_with_a_piece_a_step_is_left_to_the_engine(catalog):
    """40 leaders, one piece a step: each of the ring's 78 steps starts when the one before has
    arrived, a pause and a state change every step. Its times are the recurrence's; its record is
    the engine's (whose skip repeats such steps), not 78 stretches written out here."""
    gpus = [f"g{i}" for i in range(40)]
    topo = _switched(catalog, {"S": gpus})
    sched, engine, ref = _both(topo, [[g] for g in gpus], 4 * MiB)
    assert sched.meta["chain_stages"][0].steps == 78
    times = chain_stages.stage_times(engine, sched)
    assert times is not None
    _close(times[2], ref.group_done)
    assert chain_stages.run(engine, sched, 0.0) is None
    _close(engine.run(sched).group_done, ref.group_done, 1e-9)
