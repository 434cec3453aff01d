"""NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE, version 1), one system at a time.

Export nests ``system > cpu > pci (switches) > pci > gpu|nic``; GPUs list their NVLinks with the
peer's bus id (GPU, class 0x030200) or an NVSwitch's (class 0x068000). Import reads the same shape
back, so a dump from a real machine opens as a topology; an unknown GPU maps to the nearest catalog
part by SM version, with a warning. Bus ids are synthetic but stable.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.dom import minidom

from ..model.catalog import Catalog, default_catalog
from ..model.fileio import SURROGATE as _SURROGATE
from ..model.topology import Device, Group, Link, Topology
from .formats import ExportError

GPU_CLASS, NVS_CLASS, BRIDGE_CLASS, NIC_CLASS = "0x030200", "0x068000", "0x060400", "0x020700"
SPEEDS = {"2.5 GT/s": None, "5 GT/s": None, "8 GT/s": "PCIe3", "16 GT/s": "PCIe4", "32 GT/s": "PCIe5"}
# NCCL's kvDictPciGen (src/graph/topo.cc) reads both spellings of a PCIe link speed: "16 GT/s" as kernels up to
# 5.6 give it in sysfs, and "16.0 GT/s PCIe" as later kernels do (so dumps from today's machines hold these);
# anything else counts as Gen3 (its fallback, 60); a speed past the catalog's links (Gen6) is the catalog's to
# say, in the link type that stands in for it (``_stand_ins``). NCCL (src/graph/topo.cc, ncclTopoAddNet): a NIC
# speed of 0 or less ("some NICs define speed = -1") counts as 10,000 Mb/s.
SPEEDS.update({"2.5 GT/s PCIe": None, "5.0 GT/s PCIe": None, "8.0 GT/s PCIe": "PCIe3", "16.0 GT/s PCIe": "PCIe4",
               "32.0 GT/s PCIe": "PCIe5"})
NCCL_UNKNOWN_NIC_SPEED_MBPS = 10_000
# NCCL's dumps on GB200/GB300 trays list the NVLink fabric's switches, which are in other trays, as one NVSwitch
# at this bus id: <nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/> (NVIDIA/nccl MNNVL dumps)
FABRIC_NVSWITCH_BUSID = "fffffff:ff:ff.0"
NVLINK_BY_SM = {60: "NVLink1", 70: "NVLink2", 80: "NVLink3", 90: "NVLink4", 100: "NVLink5"}
NVSWITCH_BY_SM = {70: "nvswitch-gen1", 80: "nvswitch-gen2", 90: "nvswitch-gen3", 100: "nvswitch-gen4"}


class NcclXmlError(ValueError):
    """A file that is not an NCCL topology this reader understands; the message names the element."""


def _stand_ins(catalog: Catalog) -> dict[str, tuple[str, str]]:
    """NCCL link speeds faster than any catalog link (PCIe Gen6), each with the link type read in its place
    and the words that say so: a link type's ``nccl_stands_in_for`` (catalog.json, with its source)."""
    out: dict[str, tuple[str, str]] = {}
    for tid, lt in catalog.link_types.items():
        s = lt.extra.get("nccl_stands_in_for")
        if not isinstance(s, dict) or not isinstance(s.get("link_speed"), str):
            continue   # (a user catalog's: untrusted)
        rate = s.get("rate_bps_per_direction")
        rate = f" ({lt.rate_bps_per_direction / 1e9:g} of its {rate / 1e9:g} GT/s per lane)" if (
            isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0) else ""
        out[s["link_speed"]] = (tid, f"{s.get('label', s['link_speed'])}, which the catalog has no link for; "
                                     f"read as {lt.label}{rate}")
    return out


def _nic_family(topo: Topology, dev_id: str, part) -> str | None:
    """The fabric a NIC is on: its network link's, else its first network port's first speed's. A VPI
    NIC (ConnectX-7 takes NDR and 400 GbE) on InfiniBand was written as an Ethernet 'eth' device."""
    for lk in topo.links_of(dev_id):
        lt = topo.link_type_of(lk)
        if lt is not None and lt.family in ("infiniband", "ethernet"):
            return lt.family
    for group in (part.ports if part else []):
        for t in group.accepts:
            lt = topo.catalog.link_type(t)
            if lt is not None and lt.family in ("infiniband", "ethernet"):
                return lt.family
    return None


def _catalog_nic(catalog: Catalog, speed_mbps: int, ethernet: bool, ports: int | None = None) -> str | None:
    """The first catalog NIC that runs at this NCCL speed on this fabric (the 400 GbE of a ConnectX-7),
    with ``ports`` network ports if given."""
    family = "ethernet" if ethernet else "infiniband"
    for part in catalog.parts_of_kind("nic"):
        if part.extra.get("nccl_speed_mbps") != speed_mbps:
            continue
        network = [g for g in part.ports if any((lt := catalog.link_type(t)) is not None and lt.family == family
                                                for t in g.accepts)]
        if network and (ports is None or sum(g.count for g in network) == ports):
            return part.id
    return None


def _catalog_cpu_arch(catalog: Catalog, arch: str) -> str | None:
    """The catalog CPU of a non-x86 architecture NCCL names (arm64: Grace)."""
    return next((p.id for p in catalog.parts_of_kind("cpu") if (p.extra.get("nccl_cpu") or {}).get("arch") == arch), None)


def _catalog_cpu(catalog: Catalog, vendor: str, modelid: int | None) -> str | None:
    """The catalog CPU whose NCCL identity (vendor, model id) the file names."""
    for part in catalog.parts_of_kind("cpu"):
        ident = part.extra.get("nccl_cpu") or {}
        if ident.get("vendor") == vendor and modelid is not None and ident.get("modelid") == modelid:
            return part.id
    return None


def _busids(topo: Topology, devices: list[str]) -> dict[str, str]:
    return {d: f"0000:{0x07 + i:02x}:00.0" for i, d in enumerate(devices)}


class SystemNeeded(ExportError):
    """A design of several systems (or a rack of trays) and no system chosen: the CLI says how to
    choose one (``--system``), the window says so (select it on the canvas)."""


def _named(topo: Topology, groups: list[str]) -> str:
    """The first five groups as the canvas names them, each with the id `--system` takes too, and " ..."
    when there are more."""
    return ", ".join(f"{topo.groups[g].name} ({g})" for g in groups[:5]) + (" ..." if len(groups) > 5 else "")


def to_nccl_xml(topo: Topology, system: str | None = None) -> str:
    """The XML of one system (the only one, or the group named)."""
    systems = [g.id for g in topo.groups.values() if g.kind == "system"]
    if system is None:
        if len(systems) > 1:
            raise SystemNeeded(f"NCCL XML describes one system; choose one of {_named(topo, systems)}")
        # a rack drawn as trays (GB200 NVL72): NCCL reads one file per host, and a host is a compute tray
        trays = [g.id for g in topo.groups.values() if g.kind == "tray" and systems and g.parent == systems[0]
                 and any(topo.devices[d].kind == "gpu" for d in g.devices if d in topo.devices)]
        if trays:
            raise SystemNeeded(f"NCCL XML describes one host, and a host of {topo.groups[systems[0]].name} is a "
                               f"compute tray; choose one of {_named(topo, trays)}")
        members = topo.devices_in_group(systems[0]) if systems else list(topo.devices)
    else:
        gid = system if system in topo.groups else next((g.id for g in topo.groups.values() if g.name == system), None)
        if gid is None:
            raise ExportError(f"no system {system!r}")
        members = topo.devices_in_group(gid)
    inside = set(members)
    bus = _busids(topo, members)
    root = ET.Element("system", version="1")
    cpus = [d for d in members if topo.devices[d].kind == "cpu"]
    if not cpus:
        raise ExportError("NCCL XML hangs every device under a CPU; this system has none")
    gpu_rank = {d: i for i, d in enumerate(x for x in members if topo.devices[x].kind == "gpu")}
    nic_rank = {d: i for i, d in enumerate(x for x in members if topo.devices[x].kind == "nic")}
    placed: set[str] = set()
    # NCCL makes one NET node per <net>, keyed by its dev (topo.cc ncclTopoAddNet): every port of a card needs a
    # dev of its own, while the card's guid (its asic) stays shared so NCCL knows the ports share a NIC
    net_devs = iter(range(10**6))

    def pcie_link(a: str, b: str):
        for lk in topo.links_of(a):
            lt = topo.link_type_of(lk)
            if lk.other(a) == b and lt is not None and lt.family == "pcie":
                return lk, lt
        return None, None

    def c2c_links(dev_id: str, cpu: str | None = None):
        """A GPU's NVLink-C2C links to a CPU of this system (to ``cpu`` only, when given)."""
        for lk in topo.links_of(dev_id):
            lt = topo.link_type_of(lk)
            other = lk.other(dev_id)
            if lt is not None and lt.id == "NVLink-C2C" and other in inside and topo.devices[other].kind == "cpu" \
                    and (cpu is None or other == cpu):
                yield lk, lt

    def add_endpoint(parent: ET.Element, dev_id: str, up: str) -> None:
        lk, lt = pcie_link(dev_id, up)
        dev = topo.devices[dev_id]
        if lt is None and dev.kind == "gpu":
            # a GPU joined to its CPU by NVLink-C2C (GB200): NCCL still lists it as a PCI device under that CPU,
            # at its own PCIe host interface, with the C2C link as <c2c> (ncclTopoAddC2c links it to that CPU)
            port = topo.part_of(dev_id).port_group("pcie") if topo.part_of(dev_id) else None
            lt = topo.catalog.link_types.get(port.accepts[0]) if port else None
        attrs = {"busid": bus[dev_id], "class": GPU_CLASS if dev.kind == "gpu" else NIC_CLASS if dev.kind == "nic"
                 else BRIDGE_CLASS,
                 "link_speed": lt.extra.get("nccl_link_speed", "") if lt else "",
                 "link_width": str((lk.width if lk else None) or lt.default_width or 16) if lt else "16"}
        pci = ET.SubElement(parent, "pci", attrs)
        placed.add(dev_id)
        part = topo.part_of(dev_id)
        if dev.kind == "gpu":
            sm = part.extra.get("nccl_sm", 0) if part else 0
            gpu = ET.SubElement(pci, "gpu", dev=str(gpu_rank[dev_id]), sm=str(sm), rank=str(gpu_rank[dev_id]), gdr="1")
            fabric = 0  # NVLinks to NVSwitches outside this system (an NVL72's switch trays)
            for lk2 in topo.links_of(dev_id):
                lt2 = topo.link_type_of(lk2)
                if lt2 is None or lt2.family != "nvlink":
                    continue
                other = lk2.other(dev_id)
                kind = topo.devices[other].kind
                if kind == "nvswitch" and other not in inside:
                    fabric += lk2.count
                    continue
                target = bus.get(other) or f"0000:{0xc0 + len(bus):02x}:00.0"
                ET.SubElement(gpu, "nvlink", target=target, count=str(lk2.count),
                              tclass=NVS_CLASS if kind == "nvswitch" else GPU_CLASS)
            if fabric:  # as NCCL writes a multi-node NVLink fabric: one NVSwitch entry with every link to it
                ET.SubElement(gpu, "nvlink", target=FABRIC_NVSWITCH_BUSID, count=str(fabric), tclass=NVS_CLASS)
            for lk2, lt2 in c2c_links(dev_id):  # NVLink-C2C to its CPU: bw per link in MB/s (topo.cc ncclTopoAddC2c)
                per_link_MBps = lt2.bandwidth_per_direction_Bps(lk2.width) / 1e6
                ET.SubElement(gpu, "c2c", bw=str(round(per_link_MBps)), count=str(lk2.count))
        elif dev.kind == "nic":
            nic = ET.SubElement(pci, "nic")
            speed = part.extra.get("nccl_speed_mbps", 0) if part else 0
            ports = sum(pg.count for pg in part.ports if pg.name != "pcie") if part else 1
            ethernet = _nic_family(topo, dev_id, part) == "ethernet"
            for port in range(ports):
                ET.SubElement(nic, "net", name=f"{'eth' if ethernet else 'mlx5_'}{nic_rank[dev_id]}", dev=str(next(net_devs)), speed=str(speed),
                              port=str(port + 1), latency="0", guid=f"0x{0x1000 + nic_rank[dev_id]:x}",
                              maxconn="262144", gdr="1")
        else:  # a PCIe switch: its other PCIe neighbours hang below it
            for lk2 in topo.links_of(dev_id):
                other = lk2.other(dev_id)
                lt2 = topo.link_type_of(lk2)
                if other in inside and other not in placed and other != up and lt2 is not None and lt2.family == "pcie" \
                        and topo.devices[other].kind in ("gpu", "nic", "pcie_switch"):
                    add_endpoint(pci, other, dev_id)

    for numa, cpu_id in enumerate(cpus):
        part = topo.part_of(cpu_id)
        info = part.extra.get("nccl_cpu", {}) if part else {}
        arch = info.get("arch", "x86_64")
        x86 = {"vendor": info.get("vendor", "GenuineIntel"), "familyid": str(info.get("familyid", 6)),
               "modelid": str(info.get("modelid", 79))} if arch == "x86_64" else {}  # NCCL reads them on x86 only
        cpu = ET.SubElement(root, "cpu", numaid=str(numa), affinity="0" * 8, arch=arch, **x86)
        placed.add(cpu_id)
        for gpu_id in [x for x in members if topo.devices[x].kind == "gpu" and x not in placed]:
            if next(c2c_links(gpu_id, cpu_id), None) is not None:
                add_endpoint(cpu, gpu_id, cpu_id)
        for lk in topo.links_of(cpu_id):
            other = lk.other(cpu_id)
            lt = topo.link_type_of(lk)
            if other in inside and other not in placed and lt is not None and lt.family == "pcie":
                add_endpoint(cpu, other, cpu_id)
    if root.find(".//gpu") is None:  # NCCL (and our import) cannot use a file without GPUs
        raise ExportError("no GPU of this system hangs under a CPU through PCIe or NVLink-C2C, and NCCL XML lists GPUs there")
    pretty = minidom.parseString(ET.tostring(root, encoding="unicode")).toprettyxml(indent="  ")
    return "\n".join(line for line in pretty.splitlines()[1:] if line.strip()) + "\n"


# ---- import ----------------------------------------------------------------------------------------

def _nearest_gpu(catalog: Catalog, sm: int, warnings: list[str], c2c: bool = False) -> str:
    """The catalog GPU of this SM version (one with an NVLink-C2C port when the file gives the GPU a <c2c>)."""
    gpus = [p for p in catalog.parts_of_kind("gpu") if "nccl_sm" in p.extra and any(
        g.name == "nvlink" for g in p.ports)]
    exact = [p for p in gpus if p.extra["nccl_sm"] == sm]
    exact = [p for p in exact if (p.port_group("c2c") is not None) == c2c] or exact
    if exact:
        return exact[0].id
    best = min(gpus, key=lambda p: abs(p.extra["nccl_sm"] - sm))
    warnings.append(f"GPU with SM {sm} is not in the catalog; using {best.label} (SM {best.extra['nccl_sm']})")
    return best.id


# What each numeric attribute may hold; the limits match the native file's, so an import saves and reopens.
INT_RANGES = {"link_width": (0, 32), "count": (1, 1024), "sm": (0, 10_000), "speed": (-1, 10**8)}
MAX_DEPTH = 64
MAX_ELEMENTS = 200_000


def _int(el: ET.Element, name: str, default: int | None = None) -> int:
    raw = el.get(name)
    if raw is None:
        if default is not None:
            return default
        raise NcclXmlError(f"<{el.tag}> has no {name}")
    try:
        if len(raw) > 30:
            raise ValueError
        value = int(raw, 0)
    except ValueError:
        raise NcclXmlError(f"<{el.tag} {name}={raw[:40]!r}>: not a number") from None
    lo, hi = INT_RANGES.get(name, (0, 10**9))
    if not lo <= value <= hi:
        raise NcclXmlError(f"<{el.tag} {name}={raw!r}>: out of range {lo}..{hi}")
    return value


def _check_shape(root: ET.Element) -> None:
    """Depth and size limits, checked without recursion before the topology is built."""
    stack, count = [(root, 1)], 0
    while stack:
        el, depth = stack.pop()
        count += 1
        if count > MAX_ELEMENTS:
            raise NcclXmlError(f"more than {MAX_ELEMENTS} elements")
        if depth > MAX_DEPTH:
            raise NcclXmlError(f"<{el.tag}> is nested deeper than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in el)


def from_nccl_xml(text: str, catalog: Catalog | None = None, name: str = "imported NCCL topology") -> tuple[Topology, list[str]]:
    """A topology and the warnings met while mapping the file onto the catalog."""
    catalog = catalog or default_catalog()
    if _SURROGATE.search(text):
        raise NcclXmlError("not UTF-8 text (holds a lone surrogate)")
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise NcclXmlError("document type declarations and entities are not accepted")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise NcclXmlError(f"not XML: {exc}") from None
    if root.tag != "system":
        raise NcclXmlError(f"the root element is <{root.tag}>, not <system>")
    _check_shape(root)
    warnings: list[str] = []
    faster = _stand_ins(catalog)
    speeds = {**SPEEDS, **{speed: tid for speed, (tid, _) in faster.items()}}
    topo = Topology(name, catalog)
    group = Group("system", name, "system", None, [])
    topo.groups["system"] = group
    by_bus: dict[str, str] = {}
    nvlinks: list[tuple[str, str, int, str, int]] = []
    pending_pcie: list[tuple[str, str, str | None, int]] = []
    c2c_links: list[tuple[str, str, int]] = []  # GPU, its CPU, the file's C2C MB/s
    counter = {"gpu": 0, "nic": 0, "pcie": 0, "cpu": 0}

    def add(kind: str, part: str, label: str, busid: str | None = None) -> str:
        prefix = {"gpu": "gpu", "nic": "nic", "pcie_switch": "pcie", "cpu": "cpu", "nvswitch": "nvswitch"}[kind]
        key = {"gpu": "gpu", "nic": "nic", "pcie_switch": "pcie", "cpu": "cpu", "nvswitch": "nvs"}[kind]
        counter.setdefault(key, 0)
        did = f"{prefix}{counter[key]}"
        counter[key] += 1
        topo.devices[did] = Device(did, kind, part, f"{label}{counter[key] - 1}")
        group.devices.append(did)
        if busid:
            by_bus[busid.lower()] = did
        return did

    odd_speeds: dict[str, list[str]] = {}  # an unusual link_speed: the bus ids that give it, warned about once

    def link_type(busid: str, speed: str) -> str:
        """The catalog's PCIe link for an NCCL link_speed: NCCL's own fallback (Gen3) for one it does not know,
        the catalog's stand-in for one past its links (Gen5 for Gen6), each with a warning."""
        known = speeds.get(speed)
        if known and speed not in faster:
            return known
        if speed not in ("", "2.5 GT/s", "5 GT/s", "2.5 GT/s PCIe", "5.0 GT/s PCIe"):
            odd_speeds.setdefault(speed[:40], []).append(busid[:40])
        return known or "PCIe3"

    def walk(el: ET.Element, parent: str) -> None:
        for pci in el.findall("pci"):
            busid = pci.get("busid", "")
            try:
                walk_pci(pci, busid, parent)
            except NcclXmlError as exc:
                if "(in <pci" in str(exc):
                    raise
                raise NcclXmlError(f"{exc} (in <pci busid={busid[:40]!r}>)") from None

    def walk_pci(pci: ET.Element, busid: str, parent: str) -> None:
        # NCCL writes 0 where sysfs gave no width (cloud VMs) and reads it as x16 (topo.cc ncclTopoAddPci)
        width = _int(pci, "link_width", 16) or 16
        ltype = link_type(busid, pci.get("link_speed", ""))
        gpu, nic = pci.find("gpu"), pci.find("nic")
        if gpu is not None:
            sm = _int(gpu, "sm", 0)
            c2c = gpu.find("c2c")
            did = add("gpu", _nearest_gpu(catalog, sm, warnings, c2c is not None), "GPU", busid)
            topo.devices[did].properties["nccl_sm"] = sm
            for nv in gpu.findall("nvlink"):
                nvlinks.append((did, nv.get("target", "").lower(), _int(nv, "count", 1), nv.get("tclass", GPU_CLASS), sm))
            if c2c is not None and catalog.part(topo.devices[did].part).port_group("c2c") is not None:
                # joined to its CPU by NVLink-C2C (ncclTopoAddC2c), which the catalog part carries
                c2c_links.append((did, parent, _int(c2c, "bw", 0) * _int(c2c, "count", 1)))
                walk(pci, did)
                return
        elif nic is not None:
            nets = nic.findall("net")
            speed_mbps = max((_int(n, "speed", 0) for n in nets), default=0)
            if nets and speed_mbps <= 0:
                speed_mbps = NCCL_UNKNOWN_NIC_SPEED_MBPS
                warnings.append(f"NIC at {busid} gives no speed ({nets[0].get('speed')}); "
                                f"read as {speed_mbps} Mb/s, as NCCL does")
            ethernet = all(not n.get("name", "mlx5").startswith("mlx5") for n in nets) and nets
            table = ({10000: "nic-10gbe-dual", 25000: "nic-25gbe-dual", 100000: "nic-100gbe"} if ethernet else
                     {100000: "connectx-4-edr", 200000: "connectx-6-hdr", 400000: "connectx-7-ndr"})
            part = table.get(speed_mbps) or _catalog_nic(catalog, speed_mbps, bool(ethernet))
            if part is None:
                part = "nic-100gbe" if ethernet else "connectx-6-hdr"
                warnings.append(f"NIC at {busid} runs at {speed_mbps} Mb/s; using {catalog.part(part).label}")
            if len(nets) > 1:  # a dual-port card (each port is a <net>): the part with that many ports
                part = _catalog_nic(catalog, speed_mbps, bool(ethernet), len(nets)) or part
            did = add("nic", part, "ETH" if ethernet else "IB", busid)
        else:
            # a switch runs its ports at its devices' speed even when its own link reads slower (a cloud VM's
            # bridges give 2.5 GT/s x1 above Gen5 GPUs): the fastest of its own link and its children's
            order = ("PCIe3", "PCIe4", "PCIe5")
            fastest = max([ltype] + [speeds.get(c.get("link_speed", "")) or "PCIe3" for c in pci.findall("pci")],
                          key=lambda t: order.index(t) if t in order else 0)
            gen = {"PCIe3": "pcie-switch-gen3", "PCIe5": "pcie-switch-gen5"}.get(fastest, "pcie-switch-gen4")
            did = add("pcie_switch", gen, "PCIe sw ", busid)
        pending_pcie.append((parent, did, ltype, width))
        walk(pci, did)

    for cpu_el in root.findall("cpu"):
        vendor = cpu_el.get("vendor", "")
        if cpu_el.get("arch", "x86_64") == "x86_64" and cpu_el.get("vendor") is None:
            # NCCL never guesses it: ncclTopoGetXmlFromCpu (src/graph/xml.cc) fills a missing vendor from
            # the CPUID of the machine NCCL runs on, and ncclTopoAddCpu (src/graph/topo.cc) fails on a
            # <cpu> still without one. A file read here has no such machine; a stand-in CPU (a Gen3
            # Xeon) refused the Gen5 links beneath it.
            raise NcclXmlError(f"<cpu numaid={cpu_el.get('numaid', '?')[:8]!r}> has no vendor: NCCL takes it "
                               "from the CPU of the machine it runs on, which a file alone does not say; "
                               "add vendor=\"GenuineIntel\" or \"AuthenticAMD\" (NCCL_TOPO_DUMP_FILE writes it)")
        raw_model = cpu_el.get("modelid", "")
        modelid = int(raw_model) if raw_model.isdigit() and len(raw_model) < 10 else None  # only to name the part
        arch = cpu_el.get("arch", "x86_64")
        part = _catalog_cpu(catalog, vendor, modelid) if arch == "x86_64" else _catalog_cpu_arch(catalog, arch)
        part = part or ("epyc-7742" if vendor == "AuthenticAMD" else "xeon-e5-2698-v4")
        if arch != "x86_64" and _catalog_cpu_arch(catalog, arch) is None:
            warnings.append(f"CPU arch {arch[:20]!r} has no CPU in the catalog; using {catalog.part(part).label}")
        elif arch == "x86_64" and vendor not in ("AuthenticAMD", "GenuineIntel"):
            warnings.append(f"CPU vendor {vendor!r} unknown; using {catalog.part(part).label}")
        cpu = add("cpu", part, "CPU")
        walk(cpu_el, cpu)
        for nic_el in cpu_el.findall("nic"):  # a NIC NCCL found no PCI device for (a virtual one): not drawn
            names = ", ".join(n.get("name", "?")[:20] for n in nic_el.findall("net"))
            warnings.append(f"<nic> ({names or 'no <net>'}) hangs directly under <cpu numaid="
                            f"{cpu_el.get('numaid', '?')[:8]!r}> with no PCI device; left out")
    for speed, where in odd_speeds.items():
        warnings.append(f"link_speed {speed!r} at {where[0]}" + (f" and {len(where) - 1} more" if len(where) > 1 else "")
                        + (f": {faster[speed][1]}" if speed in faster else ": not a speed NCCL knows; read as Gen3, as NCCL does"))
    if not topo.gpus():
        raise NcclXmlError("the file describes no GPUs")
    n = 0
    for parent, child, ltype, width in pending_pcie:
        pgroup = catalog.part(topo.devices[parent].part).port_group_for(ltype)
        if pgroup is None:  # an older hub: train down to what it takes
            ltype = catalog.part(topo.devices[parent].part).port_group("pcie").accepts[0]
        topo.add_link(Link(f"l{n}", child, parent, ltype, 1, width=width))
        n += 1
    for gpu_id, cpu_id, mbps in c2c_links:
        topo.add_link(Link(f"l{n}", gpu_id, cpu_id, "NVLink-C2C", 1))
        n += 1
        have = catalog.link_type("NVLink-C2C").bandwidth_per_direction_Bps() / 1e6
        if mbps and abs(mbps / have - 1) > 0.1:
            warnings.append(f"{gpu_id}: the file's C2C link gives {mbps / 1e3:g} GB/s per direction; "
                            f"the catalog's NVLink-C2C has {have / 1e3:g}")
    cpus = [d for d in topo.devices if topo.devices[d].kind == "cpu"]
    for a, b in zip(cpus, cpus[1:]):
        part = catalog.part(topo.devices[a].part)
        if part.port_group("cpu") is None and part.port_group("c2c") is not None:
            continue  # Grace: no socket link of its own (a tray's two join through their GPUs' fabric)
        cpu_link = part.port_group("cpu").accepts[0] if part.port_group("cpu") else "QPI"
        topo.add_link(Link(f"l{n}", a, b, cpu_link, 2 if cpu_link == "QPI" else 4))
        n += 1
    switches: dict[str, str] = {}
    seen_pairs = set()
    for gpu, target, count, tclass, sm in nvlinks:
        ltype = NVLINK_BY_SM.get(sm) or NVLINK_BY_SM[min(NVLINK_BY_SM, key=lambda k: abs(k - sm))]
        if tclass.lower() == NVS_CLASS:
            if target not in switches:
                part = NVSWITCH_BY_SM.get(sm, "nvswitch-gen2")
                switches[target] = add("nvswitch", part, "NVSwitch", None)
            other = switches[target]
        else:
            other = by_bus.get(target)
            if other is None:
                warnings.append(f"{gpu}: NVLink to {target}, which is not in the file; left out")
                continue
            pair = tuple(sorted((gpu, other)))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)
        topo.add_link(Link(f"l{n}", gpu, other, ltype, count))
        n += 1
    from ..model.fileio import validated

    return validated(topo), warnings
