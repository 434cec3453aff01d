"""The ring bound's loads system by system (``ring_classes.ClassTables``): the same arrays as the
loop hop by hop (``ring_segments.ring_loads_by_template`` without the tables), on clusters with a
system wired differently, hops spread over the spines and routes the router already keeps; and the
tables do vouch for most hops (else they would cost without saving)."""

from __future__ import annotations

import pytest

from dgxstudio.analysis import ring_classes, ring_segments
from dgxstudio.analysis.channels import plan, ring_directions, ring_rates
from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree

from .test_analyze_structure import ALTERATIONS, _odd_system_cluster


def _loop_only(monkeypatch):
    monkeypatch.setattr(ring_classes.ClassTables, "of", staticmethod(lambda plan, router, loads: None))


def _both(topo, monkeypatch, prepare=None):
    """(arrays and rates with the tables, the same by the loop alone, the tables' vouched hops and
    runs read from a class's template), each on its own router."""
    gpus = [d.id for d in topo.gpus()]
    vouched = []
    original = ring_classes.ClassTables._vouch

    def counting(self, *args):
        out = original(self, *args)
        vouched.append(len(out[0]))
        return out

    with monkeypatch.context() as m:
        m.setattr(ring_classes.ClassTables, "_vouch", counting)
        fast, fast_rate = _arrays(topo, gpus, prepare)
    with monkeypatch.context() as m:
        _loop_only(m)
        loop, loop_rate = _arrays(topo, gpus, prepare)
    return fast, loop, fast_rate, loop_rate, vouched


def _arrays(topo, gpus, prepare):
    router = Router(topo)
    p = plan(topo, gpus, router.fabric, None, router.system_of, router)
    if prepare:
        prepare(router, p)
    return ring_segments.ring_loads_by_template(p, router), ring_rates(p, router)


def _assert_same(fast, loop):
    assert fast[0].dtype == loop[0].dtype and fast[1].dtype == loop[1].dtype
    assert fast[0].tolist() == loop[0].tolist()
    assert fast[1].tolist() == loop[1].tolist()  # (floats compared exactly)


ODD = ALTERATIONS + ["pcie-bandwidth"]


def _odd(alter):
    if alter != "pcie-bandwidth":
        return _odd_system_cluster(alter)
    topo, odd = _odd_system_cluster("none")
    # the odd system's GPU-to-NIC legs cross a slower PCIe link: its legs are not its class's
    pcie = sorted((lk for lk in topo.links.values() if lk.type == "PCIe5" and topo.system_of(lk.a) == odd),
                  key=lambda lk: lk.id)
    for lk in pcie:
        lk.bandwidth_per_direction_Bps = 2e9
    return topo, odd


@pytest.mark.parametrize("alter", ODD)
def test_a_system_wired_differently_does_not_share_its_class(alter, monkeypatch):
    topo, odd = _odd(alter)
    fast, loop, fast_rate, loop_rate, vouched = _both(topo, monkeypatch)
    _assert_same(fast, loop)
    assert fast_rate == loop_rate
    router = Router(topo)
    gpus = [d.id for d in topo.gpus()]
    p = plan(topo, gpus, router.fabric, None, router.system_of, router)
    router.offsets_in_bulk(sorted({router.system_of[g] for g in gpus}))
    tables = ring_classes.ClassTables.of(p, router, ring_segments._Loads(router))
    number = router._bundle_ends()[4].index(odd)
    assert (tables.systems[number] is None) == (alter != "none")
    # 12 systems, 8 directions: a hop out of every system but the odd one's neighbours goes by class
    assert sum(vouched) >= 8 * 8


def test_hops_spread_over_spines_and_kept_routes_go_hop_by_hop(monkeypatch):
    topo = build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8)  # hops between leaves

    def keep_some(router, p):
        # routes the router keeps before the bound: a hop inside a system, a hop between systems,
        # one leg of another: each is then the router's kept route, as the loop reads it
        order, hops, via = ring_directions(p)[0]
        router.routes(order[1], order[2])
        k = next(i for i, w in enumerate(via) if w is not None)
        router.via(via[k])
        later = [i for i, w in enumerate(via) if w is not None][3]
        router.routes(via[later][0], via[later][1])

    fast, loop, fast_rate, loop_rate, vouched = _both(topo, monkeypatch, keep_some)
    _assert_same(fast, loop)
    assert fast_rate == loop_rate
    assert sum(vouched) >= 40 * 8 // 2


def test_routes_kept_while_the_loop_runs_are_read_by_the_later_hops(monkeypatch):
    """A hop the tables do not vouch for may make the router keep routes (its legs'); the hops after
    it read those, as the loop would."""
    topo, _ = _odd_system_cluster("missing-link")
    fast, loop, *_ = _both(topo, monkeypatch)
    _assert_same(fast, loop)


def test_uplinks_at_once_equal_the_routers_one_by_one():
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4)
    router, alone = Router(topo), Router(topo)
    devices, _, ends, _, _ = router._bundle_ends()
    up, up_out, up_in = ring_classes._uplinks(router, devices, ends)
    nics = [d for d in devices if router.fabric.kind[d] == "nic"]
    assert nics and all(router._uplinks[d] == alone._uplink(d) for d in nics)
    for i, d in enumerate(devices):
        want = alone._uplink(d)
        assert (devices[up[i]] if up[i] >= 0 else None) == want
        if want is not None:
            assert up_out[i] == alone.channel_index[(d, want)] and up_in[i] == alone.channel_index[(want, d)]
