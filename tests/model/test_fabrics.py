"""Fat trees of today's systems: NIC choice, cabled NIC count, rails, oversubscription, tiers, refusals."""

import pytest

from dgxstudio.analysis.bisection import bisection_bandwidth
from dgxstudio.model.builders import build_fat_tree, build_system, plan_fat_tree
from dgxstudio.model.validation import ERROR, WARNING, validate

TB = 1e12


def gpus(topo):
    return [d.id for d in topo.gpus()]


def leaves(topo):
    return [d for d in topo.devices if d.startswith("leaf")]


def test_rail_optimized_ndr_fabric_of_32_dgx_h100():
    topo = build_fat_tree(32, "dgx-h100", rail_optimized=True)
    assert len(leaves(topo)) == 8  # one leaf per rail in the one scalable unit
    for k in range(8):  # NIC k of every system is on leaf k+1
        assert {lk.other(f"s{i:02d}.ib{k}") for i in range(1, 33) for lk in topo.links_of(f"s{i:02d}.ib{k}")
                if lk.type == "IB-NDR"} == {f"leaf{k + 1}"}
    assert not [f for f in validate(topo) if f.severity == ERROR]
    bis = bisection_bandwidth(topo, gpus(topo))
    # 32 systems x 8 ports x 400 Gb/s, both directions, halved
    assert bis.bidir_Bps == pytest.approx(32 * 8 * 2 * 400e9 / 8 / 2)


def test_oversubscription_2_to_1_halves_the_bisection():
    full = build_fat_tree(32, "dgx-h100", per_leaf=16, rail_optimized=True)
    half = build_fat_tree(32, "dgx-h100", per_leaf=16, rail_optimized=True, oversubscription=2)
    assert len(leaves(full)) == len(leaves(half)) == 16
    bf = bisection_bandwidth(full, gpus(full)).bidir_Bps
    bh = bisection_bandwidth(half, gpus(half)).bidir_Bps
    assert bf == pytest.approx(12.8 * TB)
    assert bh == pytest.approx(bf / 2)


def test_superpod_counts_match_the_reference_architecture_table():
    # DGX SuperPOD B200 RA, "larger SuperPOD" table: 4 SU = 32 leaf + 16 spine; 16 SU = 128/128/64; 32 SU = 256/256/128
    probe = build_system("dgx-h100")
    for systems, switches, cables in [(128, {"leaf": 32, "spine": 16}, 1024),
                                      (512, {"leaf": 128, "spine": 128, "core": 64}, 4096),
                                      (1024, {"leaf": 256, "spine": 256, "core": 128}, 8192)]:
        plan = plan_fat_tree(probe, "system", systems, 32, None, system="dgx-h100", rail_optimized=True)
        assert plan.switch_count == switches
        assert set(plan.cable_count.values()) == {cables}


def test_built_counts_equal_the_plan():
    topo = build_fat_tree(96, "dgx-h100", rail_optimized=True, tiers=3)
    plan = plan_fat_tree(build_system("dgx-h100"), "system", 96, None, None, system="dgx-h100",
                         rail_optimized=True, tiers=3)
    switches = [d for d in topo.devices.values() if d.kind == "ib_switch"]
    assert len(switches) == sum(plan.switch_count.values())
    cables = sum(lk.count for lk in topo.links.values() if lk.type.startswith("IB-"))
    assert cables == sum(plan.cable_count.values())
    assert not [f for f in validate(topo) if f.severity == ERROR]


@pytest.mark.parametrize("kwargs, systems", [
    ({"system": "dgx-h100", "nic": "connectx-6-hdr"}, 2),
    ({"system": "dgx-a100", "nics_per_system": 4}, 3),
    ({"system": "dgx-a100", "nic": "nic-100gbe"}, 3),
])
def test_issue_combinations_build_and_validate_clean(kwargs, systems):
    topo = build_fat_tree(systems, **kwargs)
    assert [f.message for f in validate(topo) if f.severity == ERROR] == []


def test_nics_per_system_cables_only_the_first_k():
    topo = build_fat_tree(3, "dgx-a100", nics_per_system=4)
    cabled = {lk.a for lk in topo.links.values() if lk.type == "IB-HDR" and topo.devices[lk.a].kind == "nic"}
    assert cabled == {f"s{i}.ib{k}" for i in (1, 2, 3) for k in range(4)}


def test_nic_swap_retypes_the_pcie_link():
    topo = build_fat_tree(2, "dgx-h100", nic="connectx-6-hdr")
    assert topo.devices["s1.ib0"].part == "connectx-6-hdr"
    assert {lk.type for lk in topo.links_of("s1.ib0")} == {"PCIe4", "IB-HDR"}
    assert topo.devices["leaf1"].part == "ib-switch-hdr-40"


def test_ndr_nic_on_hdr_switch_links_at_hdr_with_a_finding():
    topo = build_fat_tree(2, "dgx-h100", switch="ib-switch-hdr-40")
    link = next(lk for lk in topo.links_of("s1.ib0") if lk.type.startswith("IB"))
    assert link.type == "IB-HDR"
    assert topo.link_bandwidth_per_direction_Bps(link) == pytest.approx(25e9)
    found = [f for f in validate(topo) if f.code == "speed-negotiated"]
    assert found and found[0].severity == WARNING and "ConnectX-7" in found[0].message
    assert not [f for f in validate(topo) if f.severity == ERROR]


@pytest.mark.parametrize("kwargs, needle", [
    ({"nic": "ib-switch-ndr-64"}, "not a NIC"),
    ({"nic": "no-such-part"}, "no such catalog part"),
    ({"nics_per_system": 9}, "has 8 compute NICs"),
    ({"nics_per_system": 0}, r"must be 1 to 8 \(a DGX H100 has 8 compute NICs\)"),
    ({"rail_optimized": True, "rails": 3}, "does not divide"),
    ({"oversubscription": 3, "per_leaf": 4}, "does not divide"),
    ({"oversubscription": 0.5}, "1 or more"),
    ({"tiers": 2, "per_leaf": 1}, "three tiers"),
    ({"switch": "connectx-7-ndr"}, "not an InfiniBand or Ethernet switch"),
    ({"nic": "nic-100gbe", "switch": "ib-switch-ndr-64"}, "no common speed"),
])
def test_bad_combinations_are_refused(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        build_fat_tree(80, "dgx-h100", **kwargs)
