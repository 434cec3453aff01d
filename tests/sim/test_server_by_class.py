"""The parameter server by symmetry class (issue 17, 16,384 GPUs): workers alike in their relation to
the server push and pull as one flow per class, with the pair-by-pair answer; and the ids symmetry
numbers colours and system relations with (``sim/relation_ids.py``) are ``np.unique``'s.
"""

import numpy as np
import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives as C
from dgxstudio.sim import relation_ids, symmetry
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator

from .test_symmetry import _assert_same

MiB = 2**20


@pytest.mark.parametrize("label, build, server", [
    ("rail-optimized DGX H100", lambda: build_fat_tree(6, "dgx-h100", rail_optimized=True, per_leaf=2), "s1.gpu0"),
    ("rail-optimized DGX H100, server inside", lambda: build_fat_tree(6, "dgx-h100", rail_optimized=True, per_leaf=2),
     "s4.gpu5"),
    ("DGX A100, leaves oversubscribed 4:1", lambda: build_fat_tree(8, "dgx-a100", oversubscription=4), "s3.gpu2"),
    ("DGX-1 V100 (GPUs share NICs)", lambda: build_fat_tree(6, "dgx1-v100"), "s1.gpu0"),
    ("three tiers, pods of 20 and 2 leaves", lambda: build_fat_tree(22, "dgx-a100", per_leaf=1, tiers=3), "s21.gpu1"),
])
def test_the_server_by_class_equals_the_pair_by_pair_run(label, build, server):
    topo = build()
    gpus = [d.id for d in topo.gpus()]
    router = Router(topo, achievable=True)
    sym = C.parameter_server(gpus, server, 24 * MiB, 4 * MiB, 1e-12, router)
    classes = sym.meta.get("classes")
    assert classes is not None, "the fabric is symmetric: the server must run by class"
    workers = len([g for g in gpus if g != server])
    assert classes.flows == 2 * workers and len(classes.pairs) * 2 <= classes.flows
    # the same pieces, the reduction's delay counted over every worker
    full = C.parameter_server(gpus, server, 24 * MiB, 4 * MiB, 1e-12)
    assert [g.name for g in sym.groups] == [g.name for g in full.groups]
    assert [g.post_delay_s for g in sym.groups] == [g.post_delay_s for g in full.groups]
    a = symmetry.run(router, sym)
    b = Engine(Router(topo, achievable=True)).run(full)
    assert len(a.segments) >= 2
    _assert_same(a, b)


def test_the_simulator_runs_the_server_by_class_and_says_so():
    topo = build_fat_tree(8, "dgx-h100", rail_optimized=True, per_leaf=2)
    gpus = [d.id for d in topo.gpus()]
    r = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-reduce", "parameter-server", 64 * MiB)
    assert "symmetry classes of its 126 transfers" in r.reason
    full = Engine(Router(topo, achievable=True)).run(C.parameter_server(gpus, gpus[0], 64 * MiB, SimOptions().chunk))
    assert r.time_s == pytest.approx(full.time_s, rel=1e-12)


def test_a_server_on_a_fabric_without_symmetry_runs_pair_by_pair():
    topo = build_fat_tree(4, "dgx-a100")
    link = next(lk for lk in topo.links.values() if {lk.a, lk.b} & {"s1.ib0"} and "leaf1" in (lk.a, lk.b))
    topo.remove_link(link.id)
    gpus = [d.id for d in topo.gpus()]
    sched = C.parameter_server(gpus, gpus[0], 8 * MiB, 4 * MiB, 0.0, Router(topo, achievable=True))
    assert "classes" not in sched.meta and len(sched.groups[0].pattern.pairs) == 31


# ---- the ids: np.unique's, computed on what differs ----------------------------------------------

def test_row_ids_are_unique_over_stacked_columns():
    rng = np.random.default_rng(3)
    for t in range(60):
        n = int(rng.integers(1, 3000))
        first = rng.integers(0, int(rng.integers(1, 40)), n)
        second = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64) if t % 2 else rng.integers(-3, 4, n)
        ref = np.unique(np.stack([first, second]), axis=1, return_inverse=True)[1].ravel()
        assert relation_ids.row_ids(first, second).tolist() == ref.tolist()
    assert relation_ids.row_ids(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []


@pytest.mark.parametrize("dense", [relation_ids.DENSE, 0])
def test_value_ids_are_unique_s_inverse(dense):
    rng = np.random.default_rng(4)
    for values in (rng.integers(0, 9, (40, 40)), rng.integers(-5, 5, (7, 9)), rng.integers(0, 2**40, (30, 30)),
                   np.zeros((3, 3), np.int64)):
        ref = np.unique(values, return_inverse=True)[1].reshape(values.shape)
        assert relation_ids.value_ids(values, dense).tolist() == ref.tolist()


def test_distinct_is_unique_by_one_sort():
    rng = np.random.default_rng(5)
    for values in (rng.integers(0, 9, 500), rng.integers(-2**62, 2**62, 300), rng.integers(-3, 3, 1),
                   np.zeros(0, np.int64), np.repeat(rng.integers(0, 2**40, 50), 7)):
        assert relation_ids.distinct(values).tolist() == np.unique(values).tolist()


def _relations_by_every_pair(qid, slot, weights, scolor, between):
    """symmetry's relation ids as it numbered them before: every pair of systems hashed and sorted."""
    m = len(scolor)
    rel = np.zeros((m, m), dtype=np.int64)
    for a in range(m):
        rel[a] = np.einsum("kbl,kl->b", qid[slot[a]][:, slot], weights)
    same = np.eye(m, dtype=np.int64)
    ns = int(scolor.max()) + 1
    _, bid = np.unique(between, return_inverse=True)
    small = ((scolor[:, None] * ns + scolor[None, :]) * 2 + same) * (int(bid.max()) + 1) + bid.reshape(m, m)
    return np.unique(symmetry._hash_rows([rel.ravel(), small.ravel()]), return_inverse=True)[1].reshape(m, m)


@pytest.mark.parametrize("seed", range(8))
def test_relations_per_kind_of_system_equal_every_pair_hashed(seed):
    rng = np.random.default_rng(seed)
    m, ports, switches = int(rng.integers(2, 60)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
    qid = rng.integers(0, 4, (switches, switches))
    # systems under a few sets of switches, a few colours, transfers joining some pairs
    sets = rng.integers(0, switches, (int(rng.integers(1, 5)), ports))
    slot = sets[rng.integers(0, len(sets), m)]
    scolor = rng.integers(0, int(rng.integers(1, 3)), m)
    between = np.where(rng.random((m, m)) < 0.1, rng.integers(1, 4, (m, m)), 0)
    weights = rng.integers(1, 2**62, (ports, ports), dtype=np.int64)
    for dense in (relation_ids.DENSE, 0):
        relation_ids.DENSE, keep = dense, relation_ids.DENSE
        try:
            got = relation_ids.relations(qid, slot, weights, scolor, between, symmetry._hash_rows)
        finally:
            relation_ids.DENSE = keep
        assert got.tolist() == _relations_by_every_pair(qid, slot, weights, scolor, between).tolist()
