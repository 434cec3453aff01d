"""Today's systems: each one's wiring gives the published figures when the analysis reads it."""

import networkx as nx
import pytest

from dgxstudio.analysis.summary import analyze
from dgxstudio.model.builders import SYSTEM_BUILDERS, build_fat_tree, build_system, system_power_W
from dgxstudio.model.graph import to_graph
from dgxstudio.model.presets import load_preset
from dgxstudio.model.validation import ERROR, validate

GB = 1e9


def gpus(topo):
    return [d.id for d in topo.gpus()]


@pytest.mark.parametrize("system", list(SYSTEM_BUILDERS))
def test_every_system_builds_and_validates_clean(system):
    topo = build_system(system)
    assert [f.message for f in validate(topo) if f.severity == ERROR] == []


@pytest.mark.parametrize("system, per_gpu, aggregate", [
    ("dgx-h100", 900 * GB, 7.2e12),
    ("dgx-h200", 900 * GB, 7.2e12),
    ("hgx-h800", 400 * GB, 3.2e12),
    ("hgx-a800", 400 * GB, 3.2e12),
    ("dgx-b200", 1800 * GB, 14.4e12),
])
def test_nvlink_figures_come_from_the_wiring(system, per_gpu, aggregate):
    topo = load_preset(system)
    result = analyze(topo, gpus(topo))
    assert result["nvlink_bw_per_gpu_bidir_Bps"] == pytest.approx(per_gpu)
    assert result["nvlink_bw_per_gpu_min_bidir_Bps"] == pytest.approx(per_gpu)
    assert result["aggregate_nvlink_bw_bidir_Bps"] == pytest.approx(aggregate)


def test_dgx_h100_wiring_as_the_user_guide_draws_it():
    topo = build_system("dgx-h100")
    for i in range(8):
        counts = {lk.other(f"gpu{i}"): lk.count for lk in topo.links_of(f"gpu{i}") if lk.type == "NVLink4"}
        assert [counts[f"nvswitch{j}"] for j in range(4)] == [5, 4, 4, 5]
    kinds = [topo.devices[d].part for d in topo.devices]
    assert kinds.count("connectx-7-ndr") == 8 and kinds.count("connectx-7-ndr-dual") == 2
    assert kinds.count("xeon-platinum-8480c") == 2 and kinds.count("pcie-switch-gen5") == 4
    # compute NIC k shares a PCIe switch with GPU k (rail k is GPU k)
    for k in range(8):
        sw = next(lk.other(f"ib{k}") for lk in topo.links_of(f"ib{k}"))
        assert any(lk.other(sw) == f"gpu{k}" for lk in topo.links_of(sw))


def test_gb200_nvl72_one_nvlink_domain_of_72():
    topo = load_preset("gb200-nvl72")
    kinds = [d.kind for d in topo.devices.values()]
    assert kinds.count("gpu") == 72 and kinds.count("nvswitch") == 18
    assert sum(d.part == "grace-cpu" for d in topo.devices.values()) == 36
    trays = [g for g in topo.groups.values() if g.kind == "tray"]
    assert len(trays) == 27 and all(g.id in topo.layout.collapsed for g in trays)
    assert sum(1 for g in trays if g.name.startswith("Switch tray")) == 9
    nv = to_graph(topo, families={"nvlink"})
    nv.remove_nodes_from([n for n in list(nv) if nv.degree(n) == 0])
    assert nx.is_connected(nv) and nx.diameter(nv) == 2  # GPU -> switch chip -> GPU, every pair
    result = analyze(topo, gpus(topo))
    assert result["nvlink_bw_per_gpu_bidir_Bps"] == pytest.approx(1800 * GB)
    assert result["aggregate_nvlink_bw_bidir_Bps"] == pytest.approx(130e12, rel=0.01)
    # each B200 reaches its Grace over NVLink-C2C
    assert all(any(lk.type == "NVLink-C2C" for lk in topo.links_of(g)) for g in gpus(topo))
    # one system holds all 72 GPUs, so the bisection cuts through the rack: 36 GPUs' NVLink, both ways
    # (it read 0 with every GPU in one half while the rack moved as one unit)
    bis = result["bisection"]
    assert bis["bidir_Bps"] == pytest.approx(36 * 1800 * GB)
    assert len(bis["half_a"]) == len(bis["half_b"]) == 36 and not bis["exact"]


def test_dgx_h100_network_per_system_is_8_x_400_gbps():
    topo = build_fat_tree(2, "dgx-h100")
    result = analyze(topo, gpus(topo))
    assert result["network_bw_per_gpu_bidir_Bps"] * 8 == pytest.approx(8 * 2 * 400e9 / 8)
    assert result["aggregate_network_bw_bidir_Bps"] == pytest.approx(2 * 8 * 2 * 400e9 / 8)


def test_published_power():
    assert system_power_W("dgx-h100") == 10_200
    assert system_power_W("dgx-b200") == 14_300
    assert system_power_W("hgx-h800") is None


def test_published_power_sums_a_cluster_and_names_what_it_left_out():
    from dgxstudio.model.systems import published_power
    watts, missing = published_power(load_preset("dgx-h100-superpod"))
    assert watts == pytest.approx(127 * 10_200 + (32 + 16) * 747)
    assert missing == []
    watts, missing = published_power(build_fat_tree(4, "dgx-a100"))
    assert watts == pytest.approx(4 * 6_500)
    assert missing == ["InfiniBand HDR switch (40 ports)"]  # no published QM8700 figure found
    watts, missing = published_power(build_system("hgx-h800"))
    assert watts == 0 and missing == ["HGX H800"]


def test_power_reads_no_published_figure_rather_than_zero_kw():
    """An HGX H800 has no published power: the CLI, the report and New cluster said '0.0 kW' for it."""
    from dgxstudio.model.systems import power_text, published_power
    assert power_text(*published_power(build_system("hgx-h800"))) == "no published figure (HGX H800)"
    assert power_text(*published_power(build_fat_tree(4, "dgx-a100"))) == (
        "26.0 kW (no published figure: InfiniBand HDR switch (40 ports))")
    assert power_text(*published_power(build_system("dgx-h100"))) == "10.2 kW"


def test_the_32_system_ndr_fabric_power_sum_includes_its_switches():
    """32 DGX H100 on a rail-optimized NDR fabric: 8 leaves + 4 spines of QM9700 at 747 W each."""
    from dgxstudio.model.builders import plan_fat_tree
    from dgxstudio.model.catalog import default_catalog
    systems_W, switch_W = 32 * 10_200, 747
    plan = plan_fat_tree(build_system("dgx-h100"), "system", 32, None, None, system="dgx-h100", rail_optimized=True)
    switches = sum(plan.switch_count.values())
    assert plan.switch_count == {"leaf": 8, "spine": 4}
    summary = plan.summary(default_catalog())
    assert summary["power_W"] == pytest.approx(systems_W + switches * switch_W)
    assert summary["power_unknown"] == [] and "747 W each" in summary["power_basis"][0]
    topo = build_fat_tree(32, "dgx-h100", rail_optimized=True)
    result = analyze(topo, [d.id for d in topo.gpus()])
    assert result["power"]["published_W"] == pytest.approx(systems_W + 12 * switch_W)
    assert result["power"]["without_published_figure"] == []
    assert any("QM9700" in note for note in result["power"]["basis"])


def test_power_summary_with_a_system_map_gives_the_same_answers():
    """analyze passes its shared system map (one pass over the groups) instead of a chain walk per device."""
    from dgxstudio.analysis.fabric import system_map
    from dgxstudio.model.systems import power_summary, published_power
    for topo in (build_fat_tree(40, "dgx-h100", rail_optimized=True, tiers=3), load_preset("dgx-a100-superpod"),
                 load_preset("gb200-nvl72"), build_system("hgx-h800")):
        total, missing, notes = power_summary(topo, system_map(topo))
        assert (total, missing) == published_power(topo)
        assert notes == power_summary(topo)[2]


def test_a_lone_dgx_h100_offers_8_ports_of_400_gbps_to_the_network():
    """The single-system preset has no network links (network per GPU 0); the analysis still says what
    its compute NICs offer, from their parts: 8 x 400 Gb/s, none cabled (storage NICs left out)."""
    topo = load_preset("dgx-h100")
    result = analyze(topo, gpus(topo))
    assert result["network_bw_per_gpu_bidir_Bps"] == 0
    assert result["compute_nic_ports_first_system"] == [{"count": 8, "cabled": 0, "rate_bps_per_direction": 400e9}]
    topo = build_fat_tree(2, "dgx-a100", nics_per_system=4)
    assert analyze(topo, gpus(topo))["compute_nic_ports_first_system"] == [
        {"count": 8, "cabled": 4, "rate_bps_per_direction": 200e9}]
