"""The replay's ring structures: each ring's GPU order is the ring's own, read back from the run's edges
when the run gives no orders (a closed cycle, each GPU once), and taken from the run when it does."""

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import simulate
from dgxstudio.ui.replay_structure import _ring_order, structures


def test_a_long_ring_reads_back_in_order_and_closes():
    gpus = [f"g{i}" for i in range(5000)]
    edges = [(gpus[i - 1], gpus[i]) for i in range(1, len(gpus))] + [(gpus[-1], gpus[0])]
    assert _ring_order(edges) == gpus
    assert _ring_order(edges[:-1]) == gpus   # an open chain stops at its end
    assert _ring_order([("a", "b"), ("b", "c"), ("c", "b")]) == ["a", "b", "c"]   # a loop short of the start


def test_ring_orders_read_back_or_taken_from_the_run():
    r = simulate(load_preset("dgx-a100"), "all-reduce", "ring", 2**26)
    read = [s for s in structures(r.sim) if s.kind == "ring"]
    assert read
    for s in read:   # a cycle along the ring's own edges, each GPU once
        edges = set(s.edges)
        assert len(set(s.order)) == len(s.order) == 8
        assert all((a, b) in edges for a, b in zip(s.order, s.order[1:] + s.order[:1]))
    given = [list(reversed(s.order)) for s in read]   # orders the run gives are used as they are
    assert [s.order for s in structures(r.sim, given) if s.kind == "ring"] == given
