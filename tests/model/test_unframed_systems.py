"""GPUs drawn outside every system frame: the system (NCCL's node, one host) is what their in-node
links make (model/nodes.py). Before, each unframed GPU was a system of its own, so two H100 on one
NVSwitch were "two systems": nvls refused, LL128 left out for want of a NIC, nvls-tree "across systems"."""

from dgxstudio.analysis.channels import group_by_system
from dgxstudio.analysis.fabric import system_devices, system_map
from dgxstudio.model import Device, Group, Link, Topology


def two_on_a_switch(direct: bool = False) -> Topology:
    """Two H100 and an NVSwitch (gen3) dropped from the palette, each GPU wired to the switch (and,
    ``direct``, to each other): no system frame."""
    t = Topology()
    t.add_device(Device("g0", "gpu", "h100-sxm5-80gb", "GPU0"), (0, 0))
    t.add_device(Device("g1", "gpu", "h100-sxm5-80gb", "GPU1"), (200, 0))
    t.add_device(Device("sw", "nvswitch", "nvswitch-gen3", "NVSwitch"), (100, 100))
    t.add_link(Link("l0", "g0", "sw", "NVLink4"))
    t.add_link(Link("l1", "g1", "sw", "NVLink4"))
    if direct:
        t.add_link(Link("l2", "g0", "g1", "NVLink4"))
    return t


def test_gpus_on_one_nvswitch_outside_frames_are_one_system():
    t = two_on_a_switch()
    assert t.frame_of("g0") is None and t.frame_of("g1") is None
    assert t.system_of("g0") == t.system_of("g1") == t.system_of("sw") == "g0"
    assert group_by_system(t, ["g0", "g1"]) == [["g0", "g1"]]
    assert system_map(t) == {"g0": "g0", "g1": "g0", "sw": "g0"}
    assert system_devices(t) == {"g0": ["g0", "g1", "sw"]}


def test_the_network_does_not_join_unframed_gpus_and_frames_decide_alone():
    t = two_on_a_switch()
    # a third GPU with its own NIC on PCIe, reaching the others only over InfiniBand
    t.add_device(Device("g2", "gpu", "h100-sxm5-80gb", "GPU2"), (400, 0))
    t.add_device(Device("n2", "nic", "connectx-7-ndr", "NIC2"), (400, 100))
    t.add_device(Device("n0", "nic", "connectx-7-ndr", "NIC0"), (0, 100))
    t.add_device(Device("ib", "ib_switch", "ib-switch-ndr-64", "Leaf"), (200, 300))
    t.add_link(Link("p2", "g2", "n2", "PCIe5"))
    t.add_link(Link("p0", "g0", "n0", "PCIe5"))
    t.add_link(Link("i0", "n0", "ib", "IB-NDR"))
    t.add_link(Link("i2", "n2", "ib", "IB-NDR"))
    assert t.system_of("g2") == t.system_of("n2") == "g2"
    assert t.system_of("n0") == "g0" and t.system_of("ib") is None
    assert group_by_system(t, ["g0", "g1", "g2"]) == [["g0", "g1"], ["g2"]]
    assert system_map(t)["ib"] is None and system_map(t)["n2"] == "g2"
    # a frame around GPU1 alone: it is its own system, the switch stays with GPU0
    t.add_group(Group("sys", "Box", "system", devices=["g1"]))
    assert t.system_of("g1") == "sys" and t.system_of("g0") == t.system_of("sw") == "g0"
    assert group_by_system(t, ["g0", "g1"]) == [["g0"], ["g1"]]
    assert system_map(t)["g1"] == "sys" and system_map(t)["sw"] == "g0"
