"""A system's devices are looked up one way, from the system map (``fabric.system_devices``): a GB200
NVL72 rack holds its devices in its trays and none itself, and its group's own list was special-cased
where it was read (the router, the NIC pairing, the bisection, the NIC ports). A system's group's own
list also missed what a user grouped inside it: four DGX H100 with one system's NICs put in a group
of their own ran NCCL's ring at 99.7 GB/s busbw on 2 channels instead of 338.7 on 16."""

from dgxstudio.analysis.fabric import sharing_system_map, system_devices, system_map
from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.grouping import GroupItems
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.results import SimOptions
from dgxstudio.sim.run import Simulator


def _nics_grouped(topo, prefix="s1."):
    nics = [d.id for d in topo.devices.values() if d.id.startswith(prefix) and d.kind == "nic"]
    GroupItems(nics, prefix + "nics", "NICs").do(topo)
    return nics


def test_every_system_s_devices_in_document_order_trays_and_subgroups_included():
    rack = load_preset("gb200-nvl72")
    assert rack.groups["system"].devices == []   # (its trays hold them)
    assert system_devices(rack)["system"] == list(rack.devices) == Router(rack).system_devices("system")
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    before = system_devices(topo)
    nics = _nics_grouped(topo)
    assert set(nics) - set(topo.groups["s1.system"].devices) == set(nics)
    after = system_devices(topo)
    assert after == before and after["s1.system"] == [d for d in topo.devices if d.startswith("s1.")]
    assert Router(topo).system_devices("s1.system") == after["s1.system"]
    assert Router(topo).system_devices("no such system") == []
    with sharing_system_map(topo):
        assert system_devices(topo) is system_devices(topo, system_map(topo))   # worked out once


def _ring(topo):
    r = Simulator(topo, [d.id for d in topo.gpus()], SimOptions()).run("all-reduce", "ring", 256 * 2**20)
    return r.busbw_Bps, r.channels


def test_a_systems_nics_grouped_inside_it_still_carry_its_rings():
    plain = _ring(build_fat_tree(4, "dgx-h100", rail_optimized=True))
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    _nics_grouped(topo)
    assert _ring(topo) == plain
