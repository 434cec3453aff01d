import networkx as nx
import pytest

from dgxstudio.model import Device, Group, Link, ModelError, Topology
from dgxstudio.model.graph import to_graph, to_multigraph


def two_v100(catalog) -> Topology:
    t = Topology("pair", catalog)
    t.add_device(Device("g0", "gpu", "tesla-v100-sxm2", "GPU0"), (0, 0))
    t.add_device(Device("g1", "gpu", "tesla-v100-sxm2", "GPU1"), (100, 0))
    return t


def test_link_resolves_ports_and_capacity(catalog):
    t = two_v100(catalog)
    lk = t.add_link(Link("l0", "g0", "g1", "NVLink2", count=2))
    assert (lk.a_port, lk.b_port) == ("nvlink", "nvlink")
    assert t.link_bandwidth_per_direction_Bps(lk) == pytest.approx(50e9)
    assert t.used_ports("g0") == {"nvlink": 2}
    assert t.free_ports("g0") == {"nvlink": 4, "pcie": 1}
    lk.bandwidth_per_direction_Bps = 10e9
    assert t.link_bandwidth_per_direction_Bps(lk) == pytest.approx(20e9)
    assert t.link_bandwidth_per_direction_Bps(lk, achievable=True) < 20e9


def test_model_refuses_impossible_edits(catalog):
    t = two_v100(catalog)
    with pytest.raises(ModelError, match="already in use"):
        t.add_device(Device("g0", "gpu", "tesla-v100-sxm2", "dup"))
    with pytest.raises(ModelError, match="no device 'nope'"):
        t.add_link(Link("l0", "g0", "nope", "NVLink2"))
    with pytest.raises(ModelError):
        t.add_group(Group("s", "S", devices=["ghost"]))


def test_remove_device_takes_its_links_and_membership(catalog):
    t = two_v100(catalog)
    t.add_group(Group("sys", "System", devices=["g0", "g1"]))
    t.add_link(Link("l0", "g0", "g1", "NVLink2"))
    dev, links, group = t.remove_device("g0")
    assert [lk.id for lk in links] == ["l0"] and group == "sys"
    assert t.links == {} and t.groups["sys"].devices == ["g1"]
    assert "g0" not in t.layout.positions


def test_nested_groups(catalog):
    t = two_v100(catalog)
    t.add_group(Group("rack", "Rack", "rack"))
    t.add_group(Group("sys", "System", "system", "rack", ["g0"]))
    t.add_group(Group("sys2", "System 2", "system", "rack", ["g1"]))
    assert t.devices_in_group("rack") == ["g0", "g1"]
    assert [g.id for g in t.group_chain("sys")] == ["sys", "rack"]
    assert t.system_of("g1") == "sys2"
    t.remove_group("sys")
    assert t.groups["rack"].devices == ["g0"]


def test_events_are_emitted_and_batched(catalog):
    t = two_v100(catalog)
    seen = []
    t.events.connect(seen.append)
    t.add_link(Link("l0", "g0", "g1", "NVLink2"))
    assert seen[-1].kind == "link_added" and seen[-1].ids == ("l0",)
    with t.events.batch():
        t.set_attribute("g0", "name", "A")
        t.move({"g0": (5, 5)})
    assert seen[-1].kind == "batch" and len(seen[-1].detail["events"]) == 2


def test_networkx_views(catalog):
    t = two_v100(catalog)
    t.add_link(Link("l0", "g0", "g1", "NVLink2", count=2))
    t.add_link(Link("l1", "g0", "g1", "NVLink2"))
    mg = to_multigraph(t)
    assert mg.number_of_edges() == 2 and isinstance(mg, nx.MultiGraph)
    g = to_graph(t)
    assert g.edges["g0", "g1"]["bandwidth_per_direction_Bps"] == pytest.approx(75e9)
    assert g.edges["g0", "g1"]["links"] == ["l0", "l1"]
    assert to_graph(t, families={"pcie"}).number_of_edges() == 0


def test_copy_is_independent(catalog):
    t = two_v100(catalog)
    c = t.copy()
    c.set_attribute("g0", "name", "changed")
    assert t.devices["g0"].name == "GPU0"
