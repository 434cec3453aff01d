"""NCCL topology XML as NCCL itself reads it (src/graph/topo.cc, xml.cc): what a review of the export found."""

import xml.etree.ElementTree as ET

import pytest

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


def _pcie_types(topo):
    return {lk.type for lk in topo.links.values() if lk.type.startswith("PCIe")}


def test_a_dump_from_a_kernel_after_5_6_keeps_its_pcie_generation():
    """Kernels after 5.6 give sysfs link speeds as "32.0 GT/s PCIe", and NCCL_TOPO_DUMP_FILE writes them so
    (NCCL's kvDictPciGen reads both spellings): such a DGX H100 dump came back with every PCIe link Gen3."""
    xml = to_nccl_xml(load_preset("dgx-h100"))
    assert 'link_speed="32 GT/s"' in xml
    back, warnings = from_nccl_xml(xml.replace('link_speed="32 GT/s"', 'link_speed="32.0 GT/s PCIe"'))
    assert warnings == [] and _pcie_types(back) == {"PCIe5"}
    a100 = to_nccl_xml(load_preset("dgx-a100")).replace('link_speed="16 GT/s"', 'link_speed="16.0 GT/s PCIe"')
    assert _pcie_types(from_nccl_xml(a100)[0]) == {"PCIe4"}


def test_an_unknown_link_speed_is_read_as_nccl_reads_it_and_said_once():
    xml = to_nccl_xml(load_preset("dgx-h100"))
    back, warnings = from_nccl_xml(xml.replace('link_speed="32 GT/s"', 'link_speed="fast"'))
    assert _pcie_types(back) == {"PCIe3"}
    assert len(warnings) == 1 and "'fast'" in warnings[0] and "Gen3, as NCCL does" in warnings[0]
    back, warnings = from_nccl_xml(xml.replace('link_speed="32 GT/s"', 'link_speed="64.0 GT/s PCIe"'))
    assert _pcie_types(back) == {"PCIe5"} and len(warnings) == 1 and "Gen6" in warnings[0]


def test_a_nic_without_a_speed_is_read_as_nccl_reads_it():
    """NCCL's ncclTopoAddNet: 'Some NICs define speed = -1', read as 10,000 Mb/s. The import refused the file."""
    xml = to_nccl_xml(load_preset("dgx-h100")).replace('speed="400000"', 'speed="-1"', 1)
    back, warnings = from_nccl_xml(xml)
    assert len(back.devices_of_kind("nic")) == 10
    assert any("gives no speed (-1)" in w and "10000 Mb/s" in w for w in warnings)


def test_a_bad_attribute_names_the_device_it_is_in():
    xml = to_nccl_xml(load_preset("dgx-h100")).replace('sm="90" rank="3"', 'sm="nine" rank="3"')
    with pytest.raises(ValueError, match=r"<gpu sm='nine'>: not a number \(in <pci busid='0000:0a:00.0'>\)"):
        from_nccl_xml(xml)


def test_a_gb200_compute_tray_exports_as_nccl_writes_it_and_comes_back():
    """GB200's GPUs hang on their Grace by NVLink-C2C, not PCIe, so the export refused every GB200 NVL72
    system. NCCL lists such a GPU under its CPU (arch arm64, no x86 vendor or model) with a <c2c bw (MB/s per
    link) count> (topo.cc ncclTopoAddC2c) and the fabric's switches, in other trays, as one NVSwitch."""
    topo = load_preset("gb200-nvl72")
    root = ET.fromstring(to_nccl_xml(topo, "tray1"))
    cpus = root.findall("cpu")
    assert len(cpus) == 2 and all(c.get("arch") == "arm64" and c.get("vendor") is None for c in cpus)
    gpus = list(root.iter("gpu"))
    assert len(gpus) == 4 and {g.get("sm") for g in gpus} == {"100"}
    for g in gpus:
        (nv,) = g.findall("nvlink")
        assert (nv.get("target"), nv.get("count"), nv.get("tclass")) == ("fffffff:ff:ff.0", "18", "0x068000")
        (c2c,) = g.findall("c2c")
        assert int(c2c.get("bw")) * int(c2c.get("count")) / 1e3 == 450  # GB/s per direction, as NCCL sums it
    for cpu in cpus:  # each Grace holds its own two GPUs
        assert len(list(cpu.iter("gpu"))) == 2
    back, warnings = from_nccl_xml(to_nccl_xml(topo, "tray1"))
    assert warnings == []
    assert {back.part_of(g.id).id for g in back.gpus()} == {"b200-gb200"}
    assert {back.part_of(c.id).id for c in back.devices_of_kind("cpu")} == {"grace-cpu"}
    c2c = [lk for lk in back.links.values() if lk.type == "NVLink-C2C"]
    assert len(c2c) == 4
    assert sorted(lk.count for g in back.gpus() for lk in back.links_of(g.id) if lk.type == "NVLink5") == [18] * 4


def _as_a_cloud_vm_dumps_it(xml: str) -> str:
    """The DGX H100 export with what NCCL writes on a cloud VM (IBM Cloud publishes such a file for its H100
    instances, cloud.ibm.com/media/docs/downloads/vpc/topo.xml): link_width 0 where sysfs gives none, the
    kernel's '32.0 GT/s PCIe', virtual bridges at 2.5 GT/s x1, Ethernet-class NICs, a host_hash."""
    import re

    xml = xml.replace("<cpu ", '<cpu host_hash="0xa5f31daa95182da8" ')
    xml = re.sub(r'class="0x030200" link_speed="32 GT/s" link_width="16"',
                 'class="0x030200" link_speed="32.0 GT/s PCIe" link_width="0"', xml)
    xml = re.sub(r'class="0x020700" link_speed="32 GT/s" link_width="16"',
                 'class="0x020000" link_speed="32.0 GT/s PCIe" link_width="0"', xml)
    return re.sub(r'class="0x060400" link_speed="32 GT/s" link_width="16"',
                  'class="0x060400" link_speed="2.5 GT/s PCIe" link_width="1"', xml)


def test_a_cloud_vm_dump_imports_as_nccl_reads_it():
    """It was refused (link_width 0 out of range 1..32); NCCL reads 0 as x16 (ncclTopoAddPci: 'Manage cases
    where speed was not indicated in /sys'), and a bridge reading slower than its devices is a switch of
    their generation, so the GPUs and NICs keep their Gen5 x16."""
    from dgxstudio.model.validation import validate

    back, warnings = from_nccl_xml(_as_a_cloud_vm_dumps_it(to_nccl_xml(load_preset("dgx-h100"))))
    assert warnings == []
    assert [f.message for f in validate(back) if f.severity == "error"] == []
    ends = {lk.type: lk.width for g in back.gpus() for lk in back.links_of(g.id) if lk.type.startswith("PCIe")}
    assert ends == {"PCIe5": 16}
    assert {back.part_of(d.id).id for d in back.devices_of_kind("pcie_switch")} == {"pcie-switch-gen5"}


def test_a_nic_without_a_pci_device_is_said_to_be_left_out():
    xml = to_nccl_xml(load_preset("dgx-h100")).replace(
        "</cpu>", '<nic><net name="eth0" dev="12" speed="100000" port="0" gdr="0"/></nic></cpu>', 1)
    back, warnings = from_nccl_xml(xml)
    assert len(back.devices_of_kind("nic")) == 10
    assert warnings == ["<nic> (eth0) hangs directly under <cpu numaid='0'> with no PCI device; left out"]


def test_a_rack_drawn_as_trays_asks_for_a_tray():
    """NCCL reads one topology file per host; an NVL72's host is a compute tray, not the 72-GPU rack."""
    topo = load_preset("gb200-nvl72")
    with pytest.raises(ValueError, match=r"a host of GB200 NVL72 is a compute tray; choose one of Compute tray 1 \(tray1\), Compute tray 2 \(tray2\)"):
        to_nccl_xml(topo)
    assert len(list(ET.fromstring(to_nccl_xml(topo, "system")).iter("gpu"))) == 72  # asked for by name: written


def test_a_cpu_without_a_vendor_is_refused_by_name_as_nccl_would(tmp_path, capsys):
    """NCCL fills a missing x86 vendor from the CPUID of the machine it runs on (ncclTopoGetXmlFromCpu,
    src/graph/xml.cc) and fails on a <cpu> still without one (ncclTopoAddCpu: 'Attribute vendor of node
    cpu not found'). The import took a Broadwell Xeon for it, whose Gen3 ports then refused the DGX H100's
    Gen5 NICs (exit 1 with link errors). Now the <cpu> at fault is named and nothing is written (Grace,
    arm64, has no vendor and still imports: test_a_gb200_compute_tray_exports_as_nccl_writes_it_and_comes_back)."""
    import re

    from dgxstudio.cli import main
    from dgxstudio.report.nccl_xml import NcclXmlError

    xml = to_nccl_xml(load_preset("dgx-h100"))
    second = xml.index('<cpu numaid="1"')
    no_vendor = xml[:second] + re.sub(r' vendor="GenuineIntel"', "", xml[second:], count=1)
    with pytest.raises(NcclXmlError, match=r"<cpu numaid='1'> has no vendor: NCCL takes it from the CPU of the machine"):
        from_nccl_xml(no_vendor)
    src, out = tmp_path / "topo.xml", tmp_path / "out.dgxs"
    src.write_text(no_vendor)
    assert main(["import", str(src), "--format", "nccl-xml", "-o", str(out)]) == 2
    assert "<cpu numaid='1'> has no vendor" in capsys.readouterr().err and not out.exists()
