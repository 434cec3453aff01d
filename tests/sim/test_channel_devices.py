"""The router numbers its channels' ends once (``Router.channel_devices``), and the engine's test for
channels that can never bind (sim/dominated.py) reads that numbering instead of numbering 300,000
channel ends again per run (0.08 s of a tree all-reduce over 16,384 GPUs): the same channels found."""

import numpy as np

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import split_solve
from dgxstudio.sim.dominated import never_binding
from dgxstudio.sim.run import SimOptions, Simulator


def test_the_routers_numbers_name_each_channels_own_ends():
    topo = build_fat_tree(8, "dgx-h100", rail_optimized=True)
    router = Router(topo)
    tail, head, n_dev = router.channel_devices()
    devices = router._bundle_ends()[0]
    assert n_dev == len(devices) and len(tail) == len(head) == router.n_channels
    assert [(devices[a], devices[b]) for a, b in zip(tail.tolist(), head.tolist())] == router.channel_ends
    assert router.channel_devices()[0] is tail  # worked out once
    assert type(router.channel_ends) is list  # (the ends by name; no router held in them)


def test_channels_that_cannot_bind_are_the_same_from_the_routers_numbers(monkeypatch):
    """A DGX-1 fat tree's tree all-reduce (whose spine planes the NIC links cover): the run's own call,
    with the router's numbering, against the same call on a plain copy of the ends (numbered there)."""
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", 8 * 2**20)
    seen = []
    real = split_solve.never_binding

    def spy(lens, ch, w, capacity, ends, numbered=None):
        got = real(lens, ch, w, capacity, ends, numbered)
        assert ends is sim.router.channel_ends and numbered is sim.router.channel_devices()
        seen.append((got, real(lens, ch, w, capacity, list(ends))))
        return got

    monkeypatch.setattr(split_solve, "never_binding", spy)
    monkeypatch.setattr(split_solve, "PART_ROUTES", 4)
    monkeypatch.setattr(split_solve, "WORTH", 0.0)
    from dgxstudio.sim.engine import Engine

    Engine(sim.router, scale).run(sched)
    assert seen
    for mine, plain in seen:
        assert mine.any() and np.array_equal(mine, plain)


def test_a_list_that_is_not_a_routers_is_numbered_as_it_comes():
    ends = [("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")]
    lens, ch, w = np.array([2]), np.array([0, 2]), np.array([1.0, 1.0])
    cap = np.array([1.0, 1.0, 2.0, 2.0])
    assert never_binding(lens, ch, w, cap, ends).tolist() == never_binding(lens, ch, w, cap, list(ends)).tolist()
