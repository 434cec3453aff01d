from dgxstudio.model import Device, Group, Link, Topology, validate
from dgxstudio.model.presets import build_preset, preset_names


def codes(t):
    return {f.code for f in validate(t)}


def base(catalog):
    t = Topology("t", catalog)
    for i in range(3):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-sxm2", f"GPU{i}"))
    t.add_device(Device("nic", "nic", "connectx-4-edr", "NIC"))
    return t


def test_presets_are_clean():
    for name in preset_names():
        findings = validate(build_preset(name))
        assert [f for f in findings if f.severity == "error"] == [], name


def test_seventh_nvlink_on_a_v100_is_over_budget(catalog):
    t = base(catalog)
    t.add_link(Link("a", "g0", "g1", "NVLink2", 4))
    t.add_link(Link("b", "g0", "g2", "NVLink2", 2))
    assert "ports-over-budget" not in codes(t)
    t.add_link(Link("c", "g0", "g2", "NVLink2", 1))
    found = [f for f in validate(t) if f.code == "ports-over-budget"]
    assert len(found) == 1 and found[0].devices == ("g0",) and "7 nvlink ports" in found[0].message
    assert set(found[0].links) == {"a", "b", "c"}


def test_nvlink_into_a_nic_is_incompatible(catalog):
    t = base(catalog)
    t.add_link(Link("x", "g0", "nic", "NVLink2"))
    found = [f for f in validate(t) if f.code == "incompatible-link"]
    assert found and found[0].devices == ("nic",) and found[0].links == ("x",)


def test_unknown_part_and_kind_mismatch(catalog):
    t = base(catalog)
    t.add_device(Device("u", "gpu", "flux-capacitor", "U"))
    t.add_device(Device("k", "cpu", "tesla-v100-sxm2", "K"))
    assert {"unknown-part", "kind-mismatch"} <= codes(t)


def test_links_to_missing_devices_and_self_links(catalog):
    t = base(catalog)
    t.links["m"] = Link("m", "g0", "gone", "NVLink2")
    t.links["s"] = Link("s", "g1", "g1", "NVLink2")
    c = codes(t)
    assert "missing-device" in c and "self-link" in c


def test_duplicate_ids_across_kinds(catalog):
    t = base(catalog)
    t.groups["g0"] = Group("g0", "clash")
    found = [f for f in validate(t) if f.code == "duplicate-id"]
    assert found and "'g0'" in found[0].message


def test_device_in_two_groups_and_unknown_link_type(catalog):
    t = base(catalog)
    t.groups["a"] = Group("a", "A", devices=["g0"])
    t.groups["b"] = Group("b", "B", devices=["g0"])
    t.links["q"] = Link("q", "g1", "g2", "Warp9")
    c = codes(t)
    assert "multiple-groups" in c and "unknown-link-type" in c


def test_pcie_width_over_the_port(catalog):
    t = base(catalog)
    t.add_device(Device("sw", "pcie_switch", "pcie-switch-gen3", "SW"))
    t.add_link(Link("p", "g0", "sw", "PCIe3", width=32))
    assert "width-over-port" in codes(t)


def test_validation_never_raises_on_garbage(catalog):
    t = base(catalog)
    t.links["z"] = Link("z", "g0", "g1", "NVLink2", a_port="nonsense", b_port=None)
    t.groups["loop1"] = Group("loop1", "L1", parent="loop2")
    t.groups["loop2"] = Group("loop2", "L2", parent="loop1")
    c = codes(t)
    assert "incompatible-link" in c and "group-cycle" in c


def test_pcie_needs_a_hub_at_one_end(catalog):
    t = base(catalog)
    t.add_link(Link("p", "g0", "g1", "PCIe3"))
    assert "pcie-endpoints" in codes(t)


def test_propose_link_prefers_nvlink_and_explains_refusals(catalog):
    from dgxstudio.model.connect import propose_link
    t = base(catalog)
    first = propose_link(t, "g0", "g1")
    assert first.ok and "NVLink" in first.description
    first.command.do(t)
    again = propose_link(t, "g0", "g1")
    assert again.ok and "x2" in again.description  # a second NVLink raises the count
    t.links[next(iter(t.links))].count = 6
    refused = propose_link(t, "g0", "g1")
    assert not refused.ok and "no free nvlink port (6 of 6 used)" in refused.reason
    nic = propose_link(t, "g2", "nic")
    assert not nic.ok and "through a PCIe switch or a CPU" in nic.reason  # consistent with what both ports take


def test_port_counts_in_one_pass_equal_the_per_device_counts():
    """_check_ports counts every device's ports in one pass over the links; the counts (and so the
    findings) are those of ``topo.used_ports`` device by device, links of count k and self-links too."""
    from dgxstudio.model import Link
    from dgxstudio.model.presets import load_preset
    from dgxstudio.model.validation import _check_ports

    topo = load_preset("dgx-a100")
    gpu = topo.gpus()[0].id
    other = topo.gpus()[1].id
    topo.add_link(Link("extra", gpu, other, "NVLink3", count=20))
    found = {f.devices[0]: f for f in _check_ports(topo)}
    for dev in topo.devices.values():
        part = topo.catalog.part(dev.part)
        used = topo.used_ports(dev.id)
        over = [g for g in part.ports if used.get(g.name, 0) > g.count]
        assert (dev.id in found) == bool(over), dev.id
        if over:
            assert f"uses {used[over[0].name]} " in found[dev.id].message
    assert gpu in found and other in found
