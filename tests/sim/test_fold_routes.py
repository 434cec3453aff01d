"""tree_fold's refinement read per route (``sim/fold_routes.py``) computes what the slot-by-slot
refinement computed: the same signatures bit for bit, and the same verdict of the exact check."""

import numpy as np
import pytest

from dgxstudio.sim import fold_routes, tree_fold
from dgxstudio.sim.rates import RouteTable
from dgxstudio.sim.relation_ids import row_ids


def _slot_signature(owner, n, other_col, wmul, wadd, seed):
    """The slot-by-slot refinement's signature: per owner, a wrapping sum over its entries."""
    rng = np.random.default_rng(seed)
    k = int(other_col.max()) + 1 if len(other_col) else 1
    term = rng.integers(1, 2**62, size=k, dtype=np.int64)[other_col]
    term *= wmul
    term += wadd
    sig = np.zeros(n, dtype=np.int64)
    np.add.at(sig, owner, term)
    return sig


def _same_rows(keys, owner, n, cls):
    """Whether every owner's sorted keys equal those of the first owner of its class."""
    rows = [sorted(keys[owner == o].tolist()) for o in range(n)]
    first = {}
    for o in range(n):
        first.setdefault(int(cls[o]), o)
    return all(rows[o] == rows[first[int(cls[o])]] for o in range(n))


def _instance(seed, copies=1):
    """Random routes (some empty) over channels with a few weights, slots sharing them; ``copies``
    of one graph side by side, so that each copy's slot and channel i are images of each other."""
    rng = np.random.default_rng(seed)
    n_ch, n_routes = int(rng.integers(3, 30)), int(rng.integers(2, 25))
    weights = np.array([1.0, 0.5, 0.25, 1 / 3])
    route_ch, route_w = [], []
    for _ in range(n_routes):
        k = int(rng.integers(0, min(6, n_ch + 1)))
        route_ch.append(rng.choice(n_ch, size=k, replace=False).astype(np.int64))
        route_w.append(weights[rng.integers(0, len(weights), k)])
    s_route = rng.integers(0, n_routes, int(rng.integers(n_routes, 4 * n_routes)))
    ch = [c + n_ch * j for j in range(copies) for c in route_ch]
    w = [x for _ in range(copies) for x in route_w]
    s = np.concatenate([s_route + n_routes * j for j in range(copies)])
    return s, ch, w, n_ch


def _by_slot(s_route, route_ch, route_w):
    table = RouteTable(route_ch, route_w)
    lens, ch, w = table.gather(s_route)
    e_slot = np.repeat(np.arange(len(s_route)), lens)
    uch, e_ch = np.unique(ch, return_inverse=True)
    e_w = np.unique(np.ascontiguousarray(w, dtype=float).view(np.int64), return_inverse=True)[1].ravel()
    return table, e_slot, uch, e_ch.ravel(), e_w


@pytest.mark.parametrize("seed", range(25))
def test_signatures_per_route_equal_the_slot_by_slot_sums(seed):
    s_route, route_ch, route_w, _ = _instance(seed)
    table, e_slot, uch, e_ch, e_w = _by_slot(s_route, route_ch, route_w)
    g = fold_routes.RouteGraph(s_route, table, tree_fold._MIX)
    assert g.uch.tolist() == uch.tolist()
    wmul, wadd = 2 * e_w + 1, e_w * tree_fold._MIX
    rng = np.random.default_rng(seed + 100)
    for rnd in range(3):
        col_s = rng.integers(0, 4, len(s_route))
        col_c = rng.integers(0, 3, len(uch))
        ref_s = _slot_signature(e_slot, len(s_route), col_c[e_ch], wmul, wadd, rnd)
        ref_c = _slot_signature(e_ch, len(uch), col_s[e_slot], wmul, wadd, rnd + 7919)
        assert g.slot_signature(col_c, rnd).tolist() == ref_s.tolist()
        assert g.channel_signature(col_s, rnd + 7919).tolist() == ref_c.tolist()


@pytest.mark.parametrize("seed", range(40))
def test_the_exact_check_per_route_agrees_with_the_slot_by_slot_check(seed):
    s_route, route_ch, route_w, n_ch = _instance(seed, copies=2)
    table, e_slot, uch, e_ch, e_w = _by_slot(s_route, route_ch, route_w)
    g = fold_routes.RouteGraph(s_route, table, tree_fold._MIX)
    n_w = int(e_w.max()) + 1 if len(e_w) else 1
    n_s, n_c = len(s_route), len(uch)
    rng = np.random.default_rng(seed)
    half_s = n_s // 2
    # the two copies paired (equitable), the same with one pair split, and random colourings
    pair_s = np.concatenate([np.arange(half_s)] * 2)
    pair_c = uch % n_ch
    partitions = [(pair_s, pair_c), (np.arange(n_s), np.arange(n_c))]
    if half_s:
        split = pair_s.copy()
        split[0] = half_s
        partitions.append((split, pair_c))
    partitions += [(rng.integers(0, 3, n_s), rng.integers(0, 2, n_c)) for _ in range(4)]
    verdicts = []
    for col_s, col_c in partitions:
        col_s, col_c = row_ids(col_s), row_ids(col_c) if n_c else col_c
        ref = (_same_rows(col_c[e_ch] * n_w + e_w, e_slot, n_s, col_s)
               and _same_rows(col_s[e_slot] * n_w + e_w, e_ch, n_c, col_c))
        assert g.exact(col_s, col_c) == ref
        verdicts.append(ref)
    assert verdicts[0] and verdicts[1]


def test_a_weight_changed_on_one_copy_is_refused():
    s_route, route_ch, route_w, n_ch = _instance(7, copies=2)
    n_routes = len(route_ch) // 2
    r = next(i for i in range(n_routes) if len(route_ch[i]) and (s_route == i).any())
    route_w = [w.copy() for w in route_w]
    route_w[n_routes + r][0] = 0.125  # one entry of the second copy's route weighs otherwise
    table, e_slot, uch, e_ch, e_w = _by_slot(s_route, route_ch, route_w)
    g = fold_routes.RouteGraph(s_route, table, tree_fold._MIX)
    half_s = len(s_route) // 2
    col_s = row_ids(np.concatenate([np.arange(half_s)] * 2))
    col_c = row_ids(uch % n_ch)
    assert g.exact(col_s, col_c) is False



def _graph(routes, s_route):
    """A RouteGraph of explicit routes: each a list of (channel, weight)."""
    table = RouteTable([np.asarray([c for c, _ in r], dtype=np.int64) for r in routes],
                       [np.asarray([w for _, w in r], dtype=float) for r in routes])
    return fold_routes.RouteGraph(np.asarray(s_route), table, tree_fold._MIX)


def test_a_channels_multiset_counts_every_slot_of_each_route():
    # channel 0 carries two slots of one route, channel 1 one slot of each of two routes: alike
    g = _graph([[(0, 1.0)], [(1, 1.0)], [(1, 1.0)]], [0, 0, 1, 2])
    assert g.exact(np.zeros(4, dtype=np.int64), np.zeros(2, dtype=np.int64))
    # channel 1 carries a third slot: no longer alike
    g = _graph([[(0, 1.0)], [(1, 1.0)], [(1, 1.0)]], [0, 0, 1, 2, 2])
    assert not g.exact(np.zeros(5, dtype=np.int64), np.zeros(2, dtype=np.int64))


def test_a_route_with_slots_of_two_colours_counts_both():
    # channel 0: one route with a slot of each colour; channel 1: two routes, one slot of each
    g = _graph([[(0, 1.0)], [(1, 1.0)], [(1, 1.0)]], [0, 0, 1, 2])
    col_s = np.array([0, 1, 0, 1])
    assert g.exact(col_s, np.zeros(2, dtype=np.int64))
    assert not g.exact(np.array([0, 1, 0, 0]), np.zeros(2, dtype=np.int64))


def test_slots_of_a_class_must_load_channel_classes_alike():
    # each channel alone in its class carries what it carries; but the two slots of one class load
    # different channel classes
    g = _graph([[(0, 1.0)], [(1, 0.5)]], [0, 1])
    assert not g.exact(np.zeros(2, dtype=np.int64), np.array([0, 1]))
    assert g.exact(np.array([0, 1]), np.array([0, 1]))


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 22])
def test_rows_compared_a_few_entries_at_a_time_give_the_whole_answer(chunk):
    rng = np.random.default_rng(chunk)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        lens = rng.integers(0, 5, n)
        values = rng.integers(0, 3, int(lens.sum()))
        a, b = rng.integers(0, n, 20), rng.integers(0, n, 20)
        start = np.cumsum(lens) - lens
        want = all(lens[x] == lens[y] and (values[start[x]:start[x] + lens[x]] == values[start[y]:start[y] + lens[y]]).all()
                   for x, y in zip(a, b))
        assert fold_routes._pairs_equal(values, lens, a, b, chunk) == want
