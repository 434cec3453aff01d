import json

import pytest

from dgxstudio.model.catalog import DEVICE_KINDS, load_catalog


def test_builtin_catalog_has_the_parts_the_issue_names(catalog):
    for pid in ["tesla-p100-sxm2", "tesla-v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "a800-sxm4-80gb",
                "h100-sxm5-80gb", "nvswitch-gen1", "nvswitch-gen2", "nvswitch-gen3", "connectx-4-edr",
                "connectx-6-hdr", "connectx-6-hdr-dual", "connectx-7-ndr", "ib-switch-edr-36", "ib-switch-hdr-40",
                "nic-10gbe-dual", "nic-25gbe-dual", "nic-100gbe", "eth-switch-100g-32", "pcie-switch-gen3",
                "pcie-switch-gen4", "xeon-e5-2698-v4", "epyc-7742"]:
        assert pid in catalog.parts, pid
    assert {p.kind for p in catalog.parts.values()} == set(DEVICE_KINDS)
    for part in catalog.parts.values():
        assert part.source, f"{part.id} has no source"
    for lt in catalog.link_types.values():
        assert lt.source, f"{lt.id} has no source"


def test_figures_match_the_reference(catalog):
    bw = lambda t, w=None: catalog.link_type(t).bandwidth_per_direction_Bps(w)  # noqa: E731
    assert bw("NVLink1") == pytest.approx(20e9)
    assert bw("NVLink2") == pytest.approx(25e9)
    assert bw("NVLink3") == pytest.approx(25e9)
    assert bw("PCIe3", 16) == pytest.approx(15.75e9, rel=1e-3)
    assert bw("PCIe4", 16) == pytest.approx(31.5e9, rel=1e-3)
    assert bw("PCIe3", 8) == pytest.approx(bw("PCIe3", 16) / 2)
    assert bw("IB-EDR") == pytest.approx(12.5e9 * 64 / 66)
    assert bw("IB-HDR") == pytest.approx(25e9)
    v100 = catalog.part("tesla-v100-sxm2")
    assert v100.port_group("nvlink").count == 6 and v100.port_group("pcie").count == 1
    assert catalog.part("a100-sxm4-40gb").port_group("nvlink").count == 12
    assert catalog.part("ib-switch-edr-36").port_group("ib").count == 36
    cx6 = catalog.part("connectx-6-hdr")
    assert cx6.port_group("ib").count == 1 and "PCIe4" in cx6.port_group("pcie").accepts
    assert catalog.part("ib-switch-edr-36").hop_latency_s == pytest.approx(0.09e-6)


def test_user_catalog_adds_and_overrides(tmp_path):
    user = tmp_path / "catalog.json"
    user.write_text(json.dumps({
        "format": "dgxstudio-catalog", "catalog_version": "mine",
        "link_types": {"NVLink2": {"family": "nvlink", "rate_bps_per_direction": 240e9, "source": "lab"}},
        "parts": {"my-gpu": {"kind": "gpu", "label": "My GPU", "source": "lab",
                             "ports": [{"name": "nvlink", "count": 2, "accepts": ["NVLink2"]}]}},
    }))
    cat = load_catalog(user)
    assert "my-gpu" in cat.parts and "tesla-v100-sxm2" in cat.parts
    assert cat.link_type("NVLink2").bandwidth_per_direction_Bps() == pytest.approx(30e9)
    assert cat.messages == []
    assert "user:mine" in cat.version


@pytest.mark.parametrize("content, needle", [
    ("{not json", "user catalog ignored"),
    (json.dumps({"format": "something-else"}), "not a DGX Studio catalog"),
    (json.dumps({"format": "dgxstudio-catalog", "parts": {"x": {"kind": "toaster", "ports": []}}}), "unknown kind"),
    (json.dumps({"format": "dgxstudio-catalog", "parts": {"x": {"kind": "gpu", "ports": [
        {"name": "n", "count": 1, "accepts": ["Warp9"]}]}}}), "unknown link type 'Warp9'"),
    (json.dumps({"format": "dgxstudio-catalog", "link_types": {"L": {"family": "nvlink", "rate_bps_per_direction": -1}}}),
     "out of range"),
])
def test_broken_user_catalog_is_reported_and_builtin_still_loads(tmp_path, content, needle):
    user = tmp_path / "catalog.json"
    user.write_text(content)
    cat = load_catalog(user)
    assert "tesla-v100-sxm2" in cat.parts
    assert len(cat.messages) == 1 and needle in cat.messages[0]
    assert str(user) in cat.messages[0] or "user catalog ignored" in cat.messages[0]


def test_todays_parts_and_links(catalog):
    for pid in ["h100-sxm5-80gb", "h200-sxm-141gb", "h800-sxm5-80gb", "b200-sxm-180gb", "b200-gb200", "tesla-p100-pcie",
                "nvswitch-gen3", "nvswitch-gen4", "connectx-7-ndr", "connectx-7-ndr200", "connectx-8-xdr",
                "bluefield-3-dpu", "ib-switch-ndr-64", "ib-switch-xdr-144", "eth-switch-800g-64", "eth-switch-400g-128",
                "pcie-switch-gen5", "xeon-platinum-8480c", "grace-cpu"]:
        assert pid in catalog.parts, pid
    bw = lambda t: catalog.link_type(t).bandwidth_per_direction_Bps()  # noqa: E731
    assert bw("NVLink4") == pytest.approx(25e9) and bw("NVLink5") == pytest.approx(50e9)
    assert bw("IB-NDR") == pytest.approx(50e9) and bw("IB-XDR") == pytest.approx(100e9)
    assert bw("Eth-400G") == pytest.approx(50e9) and bw("Eth-800G") == pytest.approx(100e9)
    assert 18 * 2 * bw("NVLink5") == pytest.approx(1.8e12)
    assert catalog.part("b200-sxm-180gb").port_group("nvlink").count == 18
    assert catalog.part("h800-sxm5-80gb").port_group("nvlink").count == 8
    assert catalog.part("nvswitch-gen3").port_group("nvlink").count == 64
    assert catalog.part("ib-switch-ndr-64").port_group("ib").count == 64
    assert catalog.part("ib-switch-xdr-144").port_group("ib").count == 144
    # in-network reduction is a catalog property of switches
    assert catalog.part("ib-switch-ndr-64").specs["in_network_reduction"] == "SHARPv3"
    assert catalog.part("nvswitch-gen4").specs["in_network_reduction"] == "NVLink SHARP"
    assert catalog.part("eth-switch-800g-64").specs["in_network_reduction"] is None
    # the NCCL-faithful collectives read an achievable figure, with its source, for every link type added
    for t in ["NVLink4", "NVLink5", "NVLink-C2C", "IB-NDR", "IB-NDR200", "IB-XDR", "Eth-200G", "Eth-400G", "Eth-800G"]:
        lt = catalog.link_type(t)
        assert 0 < lt.achievable_efficiency <= 1 and lt.achievable_efficiency_source, t
    assert catalog.link_type("NVLink4").achievable_efficiency == pytest.approx(370 / 450, rel=1e-3)
