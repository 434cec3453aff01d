"""NCCL topology XML as NCCL itself reads it (src/graph/topo.cc, xml.cc): what a review of the export found."""

import xml.etree.ElementTree as ET

from dgxstudio.model.presets import load_preset
from dgxstudio.report.nccl_xml import from_nccl_xml, to_nccl_xml


def test_every_port_of_a_dual_port_nic_is_a_net_of_its_own():
    """NCCL makes one NET node per <net>, keyed by its dev (ncclTopoAddNet): the DGX H100's two dual-port
    storage NICs wrote dev 8 twice and dev 9 twice, so NCCL would see two nets under one id. Ports of one card
    keep its guid (NCCL's asic), which tells NCCL they share a NIC."""
    root = ET.fromstring(to_nccl_xml(load_preset("dgx-h100")))
    nets = list(root.iter("net"))
    assert len(nets) == 12  # 8 compute ports and 2 x 2 storage ports
    devs = [int(n.get("dev")) for n in nets]
    assert sorted(devs) == list(range(12))
    for nic in root.iter("nic"):
        ports = nic.findall("net")
        assert len({n.get("guid") for n in ports}) == 1
        assert [n.get("port") for n in ports] == [str(i + 1) for i in range(len(ports))]
    guids = [nic.find("net").get("guid") for nic in root.iter("nic")]
    assert len(set(guids)) == len(guids) == 10


def test_the_dual_port_cards_come_back_as_dual_port_cards():
    topo = load_preset("dgx-h100")
    back, warnings = from_nccl_xml(to_nccl_xml(topo))
    assert warnings == []
    ports = sorted(sum(pg.count for pg in back.part_of(n.id).ports if pg.name != "pcie")
                   for n in back.devices_of_kind("nic"))
    assert ports == [1] * 8 + [2, 2]
