"""PCIe Gen6 in an NCCL topology ('64.0 GT/s PCIe', which NCCL reads: kvDictPciGen's 480) is read as the
catalog's stand-in for it, from one place: the PCIe5 link type's ``nccl_stands_in_for`` (catalog.json,
with its PCI-SIG source). The import held three copies of the speed, and the one that sized a switch
from its devices' links did not know it: a Gen6 GPU below a bridge reading 2.5 GT/s x1 (a cloud VM's)
got a Gen3 switch, and its link was trained down to Gen3."""

from dgxstudio.model.catalog import default_catalog
from dgxstudio.model.presets import load_preset
from dgxstudio.report.nccl_xml import from_nccl_xml, to_nccl_xml

from .test_nccl_xml_review import _as_a_cloud_vm_dumps_it


def test_the_gen6_speed_and_its_stand_in_are_the_catalogs():
    gen5 = default_catalog().link_type("PCIe5")
    said = gen5.extra["nccl_stands_in_for"]
    assert said["link_speed"] == "64.0 GT/s PCIe" and said["rate_bps_per_direction"] == 2 * gen5.rate_bps_per_direction
    assert "PCI-SIG" in said["source"] and "64 GT/s" in said["source"]


def test_gen6_devices_below_a_slow_bridge_keep_a_gen5_switch_and_links():
    xml = _as_a_cloud_vm_dumps_it(to_nccl_xml(load_preset("dgx-h100"))).replace("32.0 GT/s PCIe", "64.0 GT/s PCIe")
    back, warnings = from_nccl_xml(xml)
    assert {back.part_of(d.id).id for d in back.devices_of_kind("pcie_switch")} == {"pcie-switch-gen5"}
    ends = {lk.type: lk.width for g in back.gpus() for lk in back.links_of(g.id) if lk.type.startswith("PCIe")}
    assert ends == {"PCIe5": 16}
    assert len(warnings) == 1
    assert warnings[0].startswith("link_speed '64.0 GT/s PCIe' at ")
    assert warnings[0].endswith(": PCIe Gen6, which the catalog has no link for; read as PCIe Gen5 (32 of its 64 GT/s per lane)")
