"""Channels that can never bind left out of the filling, and the network solved part by part
(sim/dominated.py, sim/split_solve.py; issue #13's 992-GPU tree): the same answer as the joint
solve over every channel, per group, flow and channel, on DGX-1 fat trees (whose spine planes and
PCIe links behind the NICs the NIC links cover) and on oversubscribed leaves, whose uplinks do bind
and must stay in."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import split_solve
from dgxstudio.sim.dominated import never_binding
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from tests.sim.test_tree_fold import _assert_same

MiB = 2**20


def _tree(topo, size, monkeypatch, reference: bool):
    """The tree all-reduce's run on ``topo``, and the run's table (its ``never_binds`` and ``split``);
    ``reference``: every channel in every filling, one joint solve (what the run was before)."""
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", size)
    tables = []
    real = split_solve.never_binding

    def spy(lens, ch, w, capacity, ends, numbered=None):
        got = np.zeros(len(capacity), dtype=bool) if reference else real(lens, ch, w, capacity, ends, numbered)
        tables.append(got)
        return got

    with monkeypatch.context() as m:
        m.setattr(split_solve, "never_binding", spy)
        made = []
        of = split_solve.Split.of.__func__

        def keep(cls, *a):
            made.append(of(cls, *a))
            return made[-1]

        m.setattr(split_solve.Split, "of", classmethod(keep))
        m.setattr(split_solve, "PART_ROUTES", 4)  # small clusters' parts are small: split them anyway
        m.setattr(split_solve, "WORTH", 0.0)  # and at the first large solve
        result = Engine(sim.router, scale).run(sched)
    return sched, sim.router, result, tables[-1], made[-1] if made else None


def _kind(router, c):
    a, b = router.channel_ends[c]
    return a.split(".")[-1].rstrip("0123456789"), b.split(".")[-1].rstrip("0123456789")


def test_dgx1_fat_tree_solved_in_parts_gives_the_joint_answer(monkeypatch):
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    sched, router, new, never, split = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    _, _, ref, _, none = _tree(topo, 8 * MiB, monkeypatch, reference=True)
    assert none is None
    # the spine planes are left out, and the routes fell into parts that were solved apart, some of
    # them looked up
    spine = [c for c in range(len(never)) if "spine" in _kind(router, c)]
    used = np.zeros(len(never), dtype=bool)
    used[np.concatenate([r.channels for r in new.routes])] = True
    assert never[[c for c in spine if used[c]]].all()
    assert split is not None and len(set(split.part.tolist()) - {-1}) >= 2
    assert split.hits > 0 and split.misses > 0
    _assert_same(new, ref, len(sched.groups))


@pytest.mark.parametrize("label, build", [
    ("8 DGX-1, leaves 2:1 oversubscribed", lambda: build_fat_tree(8, "dgx1-v100", oversubscription=2, per_leaf=2)),
    # (7, not 5: with NCCL's tree over 5 systems, 0 -> 4 -> 2 -> 1, 3 and its shift by one, no uplink
    # fills at any instant, 92% at most; a tree with the root's two children filled them)
    ("7 DGX-1, uneven leaves 2:1 oversubscribed", lambda: build_fat_tree(7, "dgx1-v100", oversubscription=2, per_leaf=2)),
])
def test_uplinks_that_bind_stay_in_the_filling(monkeypatch, label, build):
    topo = build()
    sched, router, new, never, _ = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    _, _, ref, _, _ = _tree(topo, 8 * MiB, monkeypatch, reference=True)
    # the uplinks of a leaf with more NIC ports than uplink bandwidth stay in (a leaf of the uneven
    # tree holds one system, whose NICs its uplinks can take: those may go), and they do bind: one
    # is full at some instant of the joint run
    up = [c for c in range(len(never)) if _kind(router, c) == ("leaf", "spine") and not never[c]]
    assert len(up) >= 8, label
    busiest = 0.0
    for pid in range(len(ref.rate_patterns)):
        rp = ref.rate_patterns[pid]
        mine = np.isin(rp.channels, up)
        if mine.any():
            busiest = max(busiest, float((rp.load_Bps[mine] / ref.capacity[rp.channels[mine]]).max()))
    assert busiest > 1 - 1e-9, label
    _assert_same(new, ref, len(sched.groups))


def _toy(caps, routes):
    """A table of ``routes`` (lists of (channel, weight)) over channels with capacities ``caps``."""
    lens = np.array([len(r) for r in routes])
    ch = np.array([c for r in routes for c, _ in r], dtype=np.int64)
    w = np.array([x for r in routes for _, x in r], dtype=float)
    return lens, ch, w, np.asarray(caps, dtype=float)


def test_a_channel_is_covered_only_when_its_feeders_cannot_overfill_it():
    # A -a-> S, B -b-> S, S -c-> D, and a route that starts at S
    ends = [("A", "S"), ("B", "S"), ("S", "D"), ("S", "D")]
    for cap_c, covered in ((2.0, True), (1.999, False)):
        lens, ch, w, cap = _toy([1.0, 1.0, cap_c, 1.0], [[(0, 1.0), (2, 1.0)], [(1, 1.0), (2, 1.0)]])
        assert never_binding(lens, ch, w, cap, ends)[2] == covered, cap_c
    # half of each route's rate crosses c (two tied paths out of S): c needs only half the feeders'
    lens, ch, w, cap = _toy([1.0, 1.0, 1.0, 1.0], [[(0, 1.0), (2, 0.5), (3, 0.5)], [(1, 1.0), (2, 0.5), (3, 0.5)]])
    assert never_binding(lens, ch, w, cap, ends)[[2, 3]].all()
    # a route that starts at S has no feeder into S, and ends at D: nothing covers c
    lens, ch, w, cap = _toy([1.0, 1.0, 5.0, 1.0], [[(0, 1.0), (2, 1.0)], [(2, 1.0)]])
    assert not never_binding(lens, ch, w, cap, ends)[2]


def test_channels_that_cover_each_other_stay_in():
    # c0: X->Y and c1: Y->X, each route entering the other's tail over it: a cycle of covers
    ends = [("X", "Y"), ("Y", "X")]
    lens, ch, w, cap = _toy([1.0, 1.0], [[(0, 1.0), (1, 1.0)], [(1, 1.0), (0, 1.0)]])
    assert not never_binding(lens, ch, w, cap, ends).any()


def test_parts_that_share_a_channel_that_cannot_bind_add_their_loads_on_it(monkeypatch):
    """Two routes feeding one channel that cannot bind are solved apart: their rates and loads are
    the joint solve's, the shared channel's load the sum of both, the same whichever way it is added
    (over every channel at once, or by a sort of those used, as on a large fabric)."""
    from dgxstudio.sim.maxmin import maxmin
    from dgxstudio.sim.rates import RouteTable

    monkeypatch.setattr(split_solve, "PART_ROUTES", 1)
    ends = [("A", "S"), ("B", "S"), ("S", "D"), ("X", "A"), ("Y", "B")]
    routes = [[(3, 1.0), (0, 1.0), (2, 1.0)], [(4, 1.0), (1, 1.0), (2, 1.0)], [(3, 1.0), (0, 1.0), (2, 1.0)]]
    lens, ch, w, cap = _toy([1.0, 0.75, 2.0, 3.0, 3.0], routes)
    table = RouteTable([ch[:3], ch[3:6], ch[6:]], [w[:3], w[3:6], w[6:]])
    never = never_binding(lens, ch, w, cap, ends)
    assert never.tolist() == [False, False, True, True, True]
    split = split_solve.Split.of(table, never, len(cap))
    assert split is not None and split.part[0] != split.part[1]
    ids, mult = np.array([0, 1, 2]), np.array([2.0, 1.0, 1.0])
    joint = maxmin(ids, mult, table, cap)
    for n_channels in (len(cap), 10**6):
        split.n_channels = n_channels
        rate, uch, load = split.solve(ids, mult, table, cap, None)
        np.testing.assert_array_equal(uch, joint[1])
        np.testing.assert_allclose(rate, joint[0], rtol=1e-15)
        np.testing.assert_allclose(load, joint[2], rtol=1e-15)
        assert load[list(uch).index(2)] == pytest.approx(1.75)
    assert split.hits == 2 and split.misses == 2  # the second time, both parts were looked up
