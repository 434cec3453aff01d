"""Max-min fairness on random small graphs: every flow is limited by a saturated channel on which
no other flow gets more."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.model import Device, Link, Topology
from dgxstudio.model.catalog import load_catalog
from dgxstudio.sim.engine import _maxmin
from dgxstudio.analysis.routing import Router, RoutingError

CATALOG = load_catalog(include_user=False)


@st.composite
def random_network(draw):
    n_gpu = draw(st.integers(2, 6))
    n_sw = draw(st.integers(1, 4))
    t = Topology("random", CATALOG)
    for i in range(n_gpu):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-pcie", f"G{i}"))
    for j in range(n_sw):
        t.add_device(Device(f"s{j}", "pcie_switch", "pcie-switch-gen3", f"S{j}"))
    k = 0
    for i in range(n_gpu):
        sw = draw(st.integers(0, n_sw - 1))
        t.add_link(Link(f"l{k}", f"g{i}", f"s{sw}", "PCIe3", bandwidth_per_direction_Bps=draw(st.sampled_from([1e9, 2e9, 5e9]))))
        k += 1
    for j in range(1, n_sw):
        other = draw(st.integers(0, j - 1))
        t.add_link(Link(f"l{k}", f"s{j}", f"s{other}", "PCIe3", count=draw(st.integers(1, 3)),
                        bandwidth_per_direction_Bps=draw(st.sampled_from([1e9, 3e9]))))
        k += 1
    # Extra switch-to-switch links make cycles, hence tied routes that share a transfer's load.
    for a, b in draw(st.lists(st.tuples(st.integers(0, n_sw - 1), st.integers(0, n_sw - 1)), max_size=3)):
        if a != b:
            t.add_link(Link(f"l{k}", f"s{a}", f"s{b}", "PCIe3", bandwidth_per_direction_Bps=3e9))
            k += 1
    pairs = draw(st.lists(st.tuples(st.integers(0, n_gpu - 1), st.integers(0, n_gpu - 1)).filter(lambda p: p[0] != p[1]),
                          min_size=1, max_size=12))
    return t, [(f"g{a}", f"g{b}") for a, b in pairs]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_network())
def test_max_min_fairness(net):
    topo, pairs = net
    router = Router(topo)
    route_ch, route_w = [], []
    for src, dst in pairs:
        try:
            route = router.routes(src, dst)
        except RoutingError:
            continue
        route_ch.append(route.channels)
        route_w.append(route.weights)
    if not route_ch:
        return
    ids = np.arange(len(route_ch))
    rates, uch, load = _maxmin(ids, np.ones(len(ids), dtype=np.int64), route_ch, route_w, router.capacity)
    cap = router.capacity
    total = np.zeros(len(cap))
    for r, chans in enumerate(route_ch):
        total[chans] += rates[r] * route_w[r]
    assert (total <= cap * (1 + 1e-9)).all(), "a channel carries more than its capacity"
    assert np.allclose(total[uch], load)
    for r, chans in enumerate(route_ch):
        assert rates[r] > 0
        limited = False
        for c in chans:
            saturated = total[c] >= cap[c] * (1 - 1e-9)
            biggest = all(rates[o] <= rates[r] * (1 + 1e-9) for o, oc in enumerate(route_ch) if c in oc)
            if saturated and biggest:
                limited = True
                break
        assert limited, f"flow {r} is not limited by any saturated channel where it is largest"
