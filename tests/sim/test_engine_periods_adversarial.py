"""Adversarial schedules for the steady-state shortcut: it must stay exact (equal to the
piece-by-piece run to 1e-9) on schedules built to trip it, not only on the collectives it was
written for.

The strategies here tangle lanes: pieces with several send and arrival dependencies, some on other
lanes' future pieces; lanes of zero-byte, latency-only or multi-pair pieces (flows of one group
ending at different times); compute pieces with post delays; barriers that fire part-way through a
lane; many ties (equal links, equal pieces); lanes contending for the same links. Each case runs
with the shortcut and piece by piece (``both``/``assert_same`` of test_engine_periods.py).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.analysis.routing import Router
from dgxstudio.model import Device, Link, Topology
from dgxstudio.sim import collectives as C
from dgxstudio.sim.engine import Engine, Group, Pattern, Schedule
from dgxstudio.sim.training import merge

from .test_engine_periods import CATALOG, assert_same, both

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def switch_topology(draw, n_gpu: int) -> Topology:
    """GPUs around one PCIe switch; links drawn from few values so that many events tie."""
    t = Topology("switch", CATALOG)
    t.add_device(Device("s", "pcie_switch", "pcie-switch-gen3", "S"))
    for i in range(n_gpu):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
        t.add_link(Link(f"l{i}", f"g{i}", "s", "PCIe3",
                        bandwidth_per_direction_Bps=draw(st.sampled_from([1e9, 1e9, 2e9, 3e9])),
                        latency_s=draw(st.sampled_from([0.0, 0.0, 1e-6, 2.5e-6]))))
    return t


def lane_pattern(draw, n_gpu: int):
    """A lane's shared pattern: None (compute), or 1-3 pairs, with the route's latency or a fixed one."""
    kind = draw(st.sampled_from(["transfer", "transfer", "transfer", "multi", "latency-only", "compute"]))
    if kind == "compute":
        return None, 0.0
    pairs = []
    for _ in range(draw(st.integers(2, 3)) if kind == "multi" else 1):
        a = draw(st.integers(0, n_gpu - 1))
        b = draw(st.integers(0, n_gpu - 1).filter(lambda x, a=a: x != a))
        pairs.append((f"g{a}", f"g{b}"))
    if kind == "latency-only":
        return Pattern(pairs, latency_s=draw(st.sampled_from([1e-6, 1e-5, 1e-4]))), draw(st.sampled_from([0.0, 1.0]))
    latency = draw(st.sampled_from([None, None, 0.0, 3e-6]))
    return Pattern(pairs, latency_s=latency), draw(st.sampled_from([0.0, 1e3, 1e5, 1e6, 1e6, 4e6]))


@st.composite
def tangled_lanes(draw):
    """Lanes whose pieces wait for their lane's previous piece (sent) and for pieces of other lanes
    (sent or arrived), some of them ahead of the piece in lane order (each lane has a head start:
    piece j of a lane may wait for piece j + 3 of another); compute lanes with post delays; a barrier
    that waits for a prefix of one lane and lets another lane start. Dependencies only point to
    groups of a lower key (piece + head start, lane), so the schedule has no cycle."""
    n_gpu = draw(st.integers(2, 5))
    t = switch_topology(draw, n_gpu)
    n_lanes = draw(st.integers(2, 5))
    lanes = []
    for li in range(n_lanes):
        pattern, size = lane_pattern(draw, n_gpu)
        post = draw(st.sampled_from([0.0, 0.0, 1e-6, 1e-4])) if pattern is None else 0.0
        lanes.append(dict(pattern=pattern, size=size, post=post, pieces=draw(st.integers(1, 50)),
                          head=draw(st.integers(0, 3)), ids=[]))
    links = []  # (lane, other lane, offset, kind)
    for _ in range(draw(st.integers(0, 2 * n_lanes))):
        a = draw(st.integers(0, n_lanes - 1))
        b = draw(st.integers(0, n_lanes - 1).filter(lambda x, a=a: x != a))
        links.append((a, b, draw(st.integers(-3, 3)), draw(st.sampled_from(["sent", "done"]))))
    barrier = None
    if draw(st.booleans()):
        barrier = (draw(st.integers(0, n_lanes - 1)), draw(st.integers(0, n_lanes - 1)), draw(st.integers(1, 20)))
        lanes[barrier[1]]["head"] = barrier[2]  # its first piece comes after the prefix it waits for
    sched = Schedule([])
    order = sorted(((j + lane["head"]) * n_lanes + li, li, j)
                   for li, lane in enumerate(lanes) for j in range(lane["pieces"]))
    key_of = {(li, j): key for key, li, j in order}
    for key, li, j in order:
        lane = lanes[li]
        sent, done = [], []
        if lane["ids"]:
            sent.append(lane["ids"][-1])
        for a, b, off, kind in links:
            if a != li:
                continue
            jb = j + off
            if 0 <= jb < len(lanes[b]["ids"]) and key_of[(b, jb)] < key:
                (sent if kind == "sent" else done).append(lanes[b]["ids"][jb])
        if barrier is not None and barrier[1] == li and j == 0 and barrier[0] != li:
            src = lanes[barrier[0]]["ids"][:barrier[2]]
            done.extend(src)
        g = Group(f"lane {li} piece {j}", lane["pattern"], lane["size"] if lane["pattern"] is not None else 0.0,
                  tuple(dict.fromkeys(done)), tuple(dict.fromkeys(sent)), post_delay_s=lane["post"])
        lane["ids"].append(sched.add(g))
    return t, sched


def exact(monkeypatch, topo, sched):
    router = Router(topo)

    def run():
        return Engine(router).run(Schedule([Group(g.name, g.pattern, g.bytes_each, g.deps_done, g.deps_sent,
                                                  g.duration_s, g.post_delay_s) for g in sched.groups]))

    fast, slow = both(monkeypatch, run)
    assert_same_with_flow_ends(fast, slow)
    return fast, slow


def assert_same_with_flow_ends(fast, slow):
    """``assert_same``, and every flow's end time where a group's flows ended apart."""
    assert_same(fast, slow)
    assert fast.events <= slow.events
    for g in range(len(slow.groups)):
        a, b = fast.flow_ends.get(g), slow.flow_ends.get(g)
        if b is None:
            # the shortcut may record ends that happen to be equal (an image of uneven ends)
            assert a is None or np.allclose(a, slow.group_sent[g], rtol=1e-9, atol=1e-18), g
        else:
            assert a is not None, g
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-18)


@settings(max_examples=60, **SETTINGS)
@given(tangled_lanes())
def test_tangled_lanes_are_exact(monkeypatch, case):
    exact(monkeypatch, *case)


def ring_order(draw, n_gpu: int, low: int = 2) -> list[str]:
    members = draw(st.permutations(list(range(n_gpu))))[:draw(st.integers(low, n_gpu))]
    return [f"g{i}" for i in members]


@st.composite
def collectives_at_once(draw):
    """Two or three collectives built by the real builders, run at once on GPUs around one switch:
    rings (pieces of unequal size where the segment does not divide), double trees, hierarchical
    all-reduces, with reduction time per byte (post delays). They contend for the switch's links, so
    each lane's rate depends on where the others are; sizes include zero, single-piece and
    many-piece segments."""
    n_gpu = draw(st.integers(3, 5))
    t = switch_topology(draw, n_gpu)
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["ring", "ring", "tree", "hierarchical"]))
        size = draw(st.sampled_from([0.0, 1e3, 3e6, 2.5e7, 4e7 + 12345]))
        chunk = draw(st.sampled_from([2.5e5, 1e6, 1e6 + 7]))
        reduce = draw(st.sampled_from([0.0, 0.0, 1e-12, 1e-9]))
        if kind == "ring":
            rings = [C.RingSpec(ring_order(draw, n_gpu), latency_s=draw(st.sampled_from([None, 0.0, 2e-6])))
                     for _ in range(draw(st.integers(1, 2)))]
            p = len(rings[0].order)
            rings = [r if len(r.order) == p else C.RingSpec(rings[0].order[::-1]) for r in rings]
            collective = draw(st.sampled_from(["all-reduce", "all-gather", "reduce-scatter"]))
            parts.append(C.ring_collective(collective, rings, size, chunk, draw(st.booleans()), reduce))
        elif kind == "tree":
            order = ring_order(draw, n_gpu)
            cut = draw(st.integers(1, len(order)))
            chains = [order[:cut], order[cut:]] if cut < len(order) else [order]
            collective = draw(st.sampled_from(["all-reduce", "reduce", "broadcast"]))
            parts.append(C.tree_collective(collective, chains, size, chunk, root=order[0], reduce_s_per_byte=reduce))
        else:
            order = ring_order(draw, n_gpu, 3)
            cut = draw(st.integers(1, len(order) - 1))
            systems = [order[:cut], order[cut:]]
            parts.append(C.hierarchical(systems, [C.RingSpec(s) for s in systems], size, chunk, reduce))
    return t, merge(parts)


@settings(max_examples=35, **SETTINGS)
@given(collectives_at_once())
def test_collectives_run_at_once_are_exact(monkeypatch, case):
    exact(monkeypatch, *case)


def three_lanes_and_a_disturbance(small_link: float, small_bytes: float, disturbance: float):
    """Three lanes of one piece per 4 ms: 4 MB pieces on two links (the second lane starting 1 ms
    later) and small pieces on a slow link g4 -> g5, each starting with a piece of the first lane.
    Once, a transfer of ``disturbance`` bytes from g6 (whose link carries it in exactly 1 ms) shares
    the slow link for the first millisecond of the second small piece and ends with the second lane's
    piece, where the watcher takes its snapshot. Returns the topology, the schedule and the lanes."""
    t = Topology("switch", CATALOG)
    t.add_device(Device("s", "pcie_switch", "pcie-switch-gen3", "S"))
    for i, bw in enumerate([1e9, 1e9, 1e9, 1e9, small_link, small_link, disturbance / 1e-3]):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
        t.add_link(Link(f"l{i}", f"g{i}", "s", "PCIe3", bandwidth_per_direction_Bps=bw, latency_s=0.0))
    sched = Schedule([])
    big, other, small = [], [], []
    delay = sched.add(Group("1 ms", None, post_delay_s=1e-3))
    for lane, (a, b), size in ((big, (0, 1), 4e6), (other, (2, 3), 4e6), (small, (4, 5), small_bytes)):
        pattern = Pattern([(f"g{a}", f"g{b}")], latency_s=0.0)
        for j in range(60):
            sent = (lane[-1],) if lane else ()
            if lane is small and j:
                sent = (*sent, big[j - 1])
            lane.append(sched.add(Group(f"g{a} piece {j}", pattern, size, (delay,) if lane is other and not j else (),
                                        sent)))
    sched.add(Group("disturbance", Pattern([("g6", "g5")], latency_s=0.0), disturbance, (), (big[0],)))
    return t, sched, other


def test_a_small_flow_disturbed_before_the_snapshot_is_not_taken_for_its_image(monkeypatch):
    """A 2 mB disturbance leaves the snapshot's 1 kB piece 2 mB behind its successor one period on.
    When remaining bytes were compared to 1e-9 of the largest active piece (4 mB here), the states
    matched and the skip copied the late piece's end into every period it filled in: every later
    1 kB piece ended 7 ns late (6.1e-7 relative). Each flow is now compared to its own size."""
    t, sched, _ = three_lanes_and_a_disturbance(1e3 / 3.5e-3, 1e3, 2e-3)
    fast, _ = exact(monkeypatch, t, sched)
    assert fast.periods_skipped > 0


def crawl_case(disturbance: float, crowd: int = 999):
    """As above, but the small piece (1000.5 B on a 1 MB/s link) moves 1000 B in its first
    millisecond and its last half byte at 1/1000 of the link, beside a crowd of 999 one-byte flows
    that start with the second lane's pieces."""
    t, sched, other = three_lanes_and_a_disturbance(1e6, 1000.5, disturbance)
    pattern = Pattern([("g4", "g5")] * crowd, latency_s=0.0)
    crowd_ids = []
    for j in range(59):
        crowd_ids.append(sched.add(Group(f"crowd {j}", pattern, 1.0, (),
                                         (crowd_ids[-1], other[j]) if j else (other[0],))))
    return t, sched


def test_a_flow_that_crawls_at_its_end_turns_a_tolerated_difference_into_a_late_end(monkeypatch):
    # remaining bytes are compared to 1e-12 of a flow's size (_Periods.REL_BYTES): at 1e-9 a flow ending
    # at 1/1000 of its link's rate turned 9e-7 B into 0.9 ns, copied into every skipped period (9.5e-8 relative)
    fast, _ = exact(monkeypatch, *crawl_case(0.9e-6))
    assert fast.periods_skipped > 0


def test_a_groups_flows_that_ended_early_are_not_copied_into_later_periods(monkeypatch):
    """Found by test_collectives_run_at_once_are_exact: two rings of two 250 kB pieces per step over
    g0, g1, g2 (one each way, g2's link twice as fast) and two small tree transfers. Ring 1's first
    piece has its g0 -> g2 flow end 1 us before its other flows; in the pieces after it that flow
    ends with the first. Every running flow repeats from the first piece on, so the shortcut
    skipped from there and copied the early end into every later piece (0.9995 ms instead of
    1.0005 ms for piece 1): the flows that already ended must repeat too."""
    t = Topology("switch", CATALOG)
    t.add_device(Device("s", "pcie_switch", "pcie-switch-gen3", "S"))
    for i, bw in enumerate([1e9, 1e9, 2e9, 1e9, 1e9]):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
        t.add_link(Link(f"l{i}", f"g{i}", "s", "PCIe3", bandwidth_per_direction_Bps=bw, latency_s=0.0))
    sched = Schedule([])
    for ring, pairs in enumerate(([("g0", "g1"), ("g1", "g2"), ("g2", "g0")],
                                  [("g2", "g1"), ("g1", "g0"), ("g0", "g2")])):
        ids = []
        for step in range(4):
            for piece in range(2):
                done = (ids[-2],) if len(ids) >= 2 else ()
                sent = (ids[-1],) if ids else ()
                ids.append(sched.add(Group(f"ring {ring} step {step} piece {piece}", Pattern(pairs), 250e3,
                                           done, sent)))
    for tree, (a, b, c) in enumerate((("g2", "g1", "g0"), ("g1", "g2", "g0"))):
        first = sched.add(Group(f"tree {tree} up level 2", Pattern([(a, b)]), 500.0))
        sched.add(Group(f"tree {tree} up level 1", Pattern([(b, c)]), 500.0, (first,)))
    fast, slow = exact(monkeypatch, t, sched)
    assert slow.flow_ends.get(9) is not None
    np.testing.assert_allclose(fast.flow_ends.get(9), [1.0005e-3, 1.0015e-3, 1.0005e-3], rtol=1e-9)
