"""A bottleneck gives the capacity the run could use (the link's figure times the protocol's or
tree's efficiency) and, beside it, the link's own figure: the same NDR link read 44.1, 40.5 and
47.0 GB/s per direction in three runs with nothing saying why."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tuning as T
from dgxstudio.sim.results import SimOptions, capacity_words
from dgxstudio.sim.run import simulate

MiB = 2**20


def _link_figure(topo, b, achievable):
    return sum(topo.link_bandwidth_per_direction_Bps(topo.links[lid], achievable) for lid in b["links"])


def test_ll128_ring_bottleneck_gives_the_links_figure_beside_the_usable_one():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    r = simulate(topo, "all-reduce", "ring", 64 * MiB, options=SimOptions(protocol="ll128", achievable=True))
    eff = T.protocol_efficiency("ll128")
    assert eff < 1
    for b in r.sim.bottlenecks(5):
        link = _link_figure(topo, b, True)
        assert abs(b["link_capacity_per_direction_Bps"] - link) <= 1e-9 * link
        assert abs(b["capacity_per_direction_Bps"] - link * eff) <= 1e-9 * link   # the old key, unchanged
    b = r.sim.bottlenecks(1)[0]
    words = capacity_words(b, r)
    assert f"{b['capacity_per_direction_Bps'] / 1e9:.1f} of the link's " in words
    assert f"{b['link_capacity_per_direction_Bps'] / 1e9:.1f} GB/s per direction usable by ring with LL128" in words
    assert "link_capacity_per_direction_Bps" in r.as_dict()["bottlenecks"][0]


def test_unscaled_run_names_one_figure():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    r = simulate(topo, "all-reduce", "parameter-server", 16 * MiB)
    b = r.sim.bottlenecks(1)[0]
    assert b["link_capacity_per_direction_Bps"] == b["capacity_per_direction_Bps"] == _link_figure(topo, b, False)
    assert capacity_words(b, r) == f"{b['capacity_per_direction_Bps'] / 1e9:.1f} GB/s per direction"
