"""Parametric builders of whole systems: DGX-1, DGX A100, DGX/HGX H100 to B200, the GB200 NVL72 rack.

Each builder adds one system (a group with all its insides) to a topology, under an id prefix and at
a canvas origin, so the same code builds a lone DGX H100 and the 1,024 of a cluster. Port counts,
bandwidths and latencies come from the catalog, published system facts (power) from
``resources/systems.json``; the builders only say what is wired to what.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import files

from .catalog import Catalog, default_catalog
from .topology import Device, Group, Link, Topology

# DGX-1 hybrid cube-mesh (shared/reference/hardware.md): two fully connected quads plus the cross edges.
DGX1_NVLINK_PAIRS = (
    (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3),
    (4, 5), (4, 6), (4, 7), (5, 6), (5, 7), (6, 7),
    (0, 4), (1, 5), (2, 6), (3, 7),
)
# The V100 generation adds a second NVLink on these pairs (24 links, 6 per GPU).
DGX1_V100_DOUBLED = frozenset({(0, 3), (0, 4), (1, 2), (1, 5), (2, 3), (4, 7), (5, 6), (6, 7)})

DGX1_PARTS = {
    "p100": {"gpu": "tesla-p100-sxm2", "nvlink": "NVLink1", "label": "DGX-1 (P100)"},
    "v100": {"gpu": "tesla-v100-sxm2", "nvlink": "NVLink2", "label": "DGX-1 (V100)"},
}


class _SystemBuilder:
    """Adds devices and links of one system under a prefix, placing them relative to an origin."""

    def __init__(self, topo: Topology, prefix: str, name_prefix: str, origin: tuple[float, float], group: Group):
        self.topo = topo
        self.prefix = prefix
        self.name_prefix = name_prefix
        self.ox, self.oy = origin
        self.group = group
        self._link_n = 0

    def dev(self, local_id: str, kind: str, part: str, name: str, xy: tuple[float, float], **props) -> str:
        did = self.prefix + local_id
        self.topo.add_device(Device(did, kind, part, self.name_prefix + name, dict(props)),
                             (self.ox + xy[0], self.oy + xy[1]), self.group.id)
        return did

    def link(self, a: str, b: str, link_type: str, count: int = 1, width: int | None = None) -> str:
        lid = f"{self.prefix}l{self._link_n}"
        self._link_n += 1
        lt = self.topo.catalog.link_type(link_type)
        if width is None and lt is not None and lt.per_lane:
            width = lt.default_width
        self.topo.add_link(Link(lid, a, b, link_type, count, width=width))
        return lid


def _start_system(topo: Topology, prefix: str, name: str, origin, parent: str | None, kind_label: str,
                  builder: str) -> _SystemBuilder:
    gid = prefix + "system" if prefix else "system"
    group = topo.add_group(Group(gid, name, "system", parent, [], {"builder": builder, "model": kind_label}))
    name_prefix = f"{name} " if prefix else ""
    return _SystemBuilder(topo, prefix, name_prefix, origin, group)


def add_dgx1(topo: Topology, gpu: str = "v100", prefix: str = "", name: str | None = None,
             origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None) -> str:
    """A DGX-1: 8 GPUs in the hybrid cube-mesh, a PCIe tree of 4 switches, 2 Xeons, 4 EDR NICs, 2x10 GbE."""
    spec = DGX1_PARTS[gpu]
    sb = _start_system(topo, prefix, name or spec["label"], origin, parent, spec["label"], f"dgx1-{gpu}")
    # The cube: front face 0-3, back face 4-7 drawn offset up and right, as the white papers draw it.
    front = [(0, 0), (260, 0), (260, 260), (0, 260)]
    gpus = []
    for i in range(8):
        x, y = front[i % 4]
        if i >= 4:
            x, y = x + 150, y - 130
        gpus.append(sb.dev(f"gpu{i}", "gpu", spec["gpu"], f"GPU{i}", (x, y)))
    for a, b in DGX1_NVLINK_PAIRS:
        count = 2 if gpu == "v100" and (a, b) in DGX1_V100_DOUBLED else 1
        sb.link(gpus[a], gpus[b], spec["nvlink"], count)
    cpus = [sb.dev(f"cpu{c}", "cpu", "xeon-e5-2698-v4", f"CPU{c}", (60 + 300 * c, 620)) for c in range(2)]
    sb.link(cpus[0], cpus[1], "QPI", 2)
    for s in range(4):
        sw = sb.dev(f"pcie{s}", "pcie_switch", "pcie-switch-gen3", f"PCIe sw {s}", (-60 + 160 * s, 480))
        nic = sb.dev(f"ib{s}", "nic", "connectx-4-edr", f"IB{s}", (-60 + 160 * s, 400), role="compute")
        sb.link(gpus[2 * s], sw, "PCIe3")
        sb.link(gpus[2 * s + 1], sw, "PCIe3")
        sb.link(nic, sw, "PCIe3")
        sb.link(sw, cpus[s // 2], "PCIe3")
    eth = sb.dev("eth0", "nic", "nic-10gbe-dual", "10GbE", (210, 720), role="management")
    sb.link(eth, cpus[0], "PCIe3", width=8)
    return sb.group.id


def add_dgx_a100(topo: Topology, prefix: str = "", name: str | None = None,
                 origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None) -> str:
    """A DGX A100: 8 A100 on 6 NVSwitches (2 NVLinks each), 4 PCIe Gen4 switches, 8+1 HDR NICs, 2 EPYCs."""
    sb = _start_system(topo, prefix, name or "DGX A100", origin, parent, "DGX A100", "dgx-a100")
    gpus = [sb.dev(f"gpu{i}", "gpu", "a100-sxm4-40gb", f"GPU{i}", (130 * i, 260)) for i in range(8)]
    switches = [sb.dev(f"nvswitch{j}", "nvswitch", "nvswitch-gen2", f"NVSwitch{j}", (65 + 160 * j, 0)) for j in range(6)]
    for g in gpus:
        for s in switches:
            sb.link(g, s, "NVLink3", 2)
    _a100_host(sb, gpus)
    return sb.group.id


def _a100_host(sb: _SystemBuilder, gpus: list[str]) -> None:
    """The DGX A100 host: 2 EPYC 7742, 4 PCIe Gen4 switches with 2 GPUs and 2 HDR NICs each, a storage NIC."""
    cpus = [sb.dev(f"cpu{c}", "cpu", "epyc-7742", f"CPU{c}", (195 + 520 * c, 640)) for c in range(2)]
    sb.link(cpus[0], cpus[1], "xGMI2", 4)
    for s in range(4):
        sw = sb.dev(f"pcie{s}", "pcie_switch", "pcie-switch-gen4", f"PCIe sw {s}", (65 + 260 * s, 480))
        for k in (2 * s, 2 * s + 1):
            nic = sb.dev(f"ib{k}", "nic", "connectx-6-hdr", f"IB{k}", (130 * k, 380), role="compute")
            sb.link(gpus[k], sw, "PCIe4")
            sb.link(nic, sw, "PCIe4")
        sb.link(sw, cpus[s // 2], "PCIe4")
    storage = sb.dev("ib_storage", "nic", "connectx-6-hdr-dual", "Storage", (455, 760), role="storage")
    sb.link(storage, cpus[0], "PCIe4")


PCIE_SERVER_PARTS = {
    "v100": {"gpu": "tesla-v100-pcie", "label": "PCIe server (8x V100 PCIe)", "builder": "pcie-server"},
    # Seed 003's off-the-shelf baseline for the ResNet-50 scaling figures: 8 P100 PCIe, same host.
    "p100": {"gpu": "tesla-p100-pcie", "label": "PCIe server (8x P100 PCIe)", "builder": "pcie-server-p100"},
}


def add_pcie_server(topo: Topology, prefix: str = "", name: str | None = None,
                    origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None, gpu: str = "v100") -> str:
    """An off-the-shelf 8-GPU PCIe server: 8 PCIe GPUs (V100 or P100) on 2 PCIe Gen3 switches, one per Xeon."""
    spec = PCIE_SERVER_PARTS[gpu]
    sb = _start_system(topo, prefix, name or spec["label"], origin, parent, "PCIe server", spec["builder"])
    gpus = [sb.dev(f"gpu{i}", "gpu", spec["gpu"], f"GPU{i}", (125 * i + (50 if i >= 4 else 0), 0))
            for i in range(8)]
    cpus = [sb.dev(f"cpu{c}", "cpu", "xeon-e5-2698-v4", f"CPU{c}", (190 + 550 * c, 340)) for c in range(2)]
    sb.link(cpus[0], cpus[1], "QPI", 2)
    for s in range(2):
        sw = sb.dev(f"pcie{s}", "pcie_switch", "pcie-switch-gen3", f"PCIe sw {s}", (190 + 550 * s, 180))
        for k in range(4 * s, 4 * s + 4):
            sb.link(gpus[k], sw, "PCIe3")
        sb.link(sw, cpus[s], "PCIe3")
        nic = sb.dev(f"ib{s}", "nic", "connectx-4-edr", f"IB{s}", (360 + 550 * s, 260), role="compute")
        sb.link(nic, sw, "PCIe3")
    eth = sb.dev("eth0", "nic", "nic-10gbe-dual", "10GbE", (465, 440), role="management")
    sb.link(eth, cpus[0], "PCIe3", width=8)
    return sb.group.id


def _hopper_host(sb: _SystemBuilder, gpus: list[str], compute_nic: str, cpu_part: str, cpu_link: str,
                 storage_nic: str, width: float) -> None:
    """The DGX H100-style host: 4 PCIe Gen5 switches, each with 2 GPUs and their 2 compute NICs, 2 CPUs.

    Compute NIC k sits beside GPU k (the DGX H100 user guide's Network Modules table pairs each
    ConnectX-7 with one GPU), so NIC order is rail order.
    """
    cpus = [sb.dev(f"cpu{c}", "cpu", cpu_part, f"CPU{c}", (width * (0.25 + 0.5 * c) - 55, 660)) for c in range(2)]
    sb.link(cpus[0], cpus[1], cpu_link, 4)
    step = width / 8
    for s in range(4):
        sw = sb.dev(f"pcie{s}", "pcie_switch", "pcie-switch-gen5", f"PCIe sw {s}", (step * (2 * s + 0.5), 520))
        for k in (2 * s, 2 * s + 1):
            nic = sb.dev(f"ib{k}", "nic", compute_nic, f"IB{k}", (step * k, 400), role="compute")
            sb.link(gpus[k], sw, "PCIe5")
            sb.link(nic, sw, "PCIe5")
        sb.link(sw, cpus[s // 2], "PCIe5")
    for c in range(2):
        st = sb.dev(f"storage{c}", "nic", storage_nic, f"Storage{c}", (width * (0.25 + 0.5 * c) + 75, 780),
                    role="storage")
        sb.link(st, cpus[c], "PCIe5")


def _nvswitch_system(sb: _SystemBuilder, gpu_part: str, switch_part: str, nvlink: str,
                     links_per_switch: tuple[int, ...]) -> list[str]:
    """8 GPUs in a row under a row of NVSwitches; GPU i has links_per_switch[j] NVLinks to switch j."""
    gpus = [sb.dev(f"gpu{i}", "gpu", gpu_part, f"GPU{i}", (130 * i, 260)) for i in range(8)]
    n = len(links_per_switch)
    span = 130 * 8 / n
    switches = [sb.dev(f"nvswitch{j}", "nvswitch", switch_part, f"NVSwitch{j}", (span * j + span / 2 - 65, 0))
                for j in range(n)]
    for g in gpus:
        for s, count in zip(switches, links_per_switch):
            sb.link(g, s, nvlink, count)
    return gpus


def add_dgx_h100(topo: Topology, prefix: str = "", name: str | None = None,
                 origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None, *, gpu: str = "h100") -> str:
    """A DGX H100 (or H200): 8 GPUs on 4 NVSwitch gen3 (5/4/4/5 NVLinks), 8+2 ConnectX-7, 2 Xeon 8480C."""
    spec = HOPPER_SYSTEMS[gpu]
    sb = _start_system(topo, prefix, name or spec["label"], origin, parent, spec["label"], spec["builder"])
    gpus = _nvswitch_system(sb, spec["gpu"], "nvswitch-gen3", "NVLink4", spec["links_per_switch"])
    _hopper_host(sb, gpus, "connectx-7-ndr", "xeon-platinum-8480c", "UPI-16GT", "connectx-7-ndr-dual", 130 * 8)
    return sb.group.id


# DGX H100/H200 (DGX H100 user guide: 4 NVSwitches, 5/4/4/5 NVLinks per GPU); HGX H800: 8 NVLinks per GPU
# spread 2/2/2/2 over the same four switches (the board's NVSwitch count is that of HGX H100).
HOPPER_SYSTEMS = {
    "h100": {"gpu": "h100-sxm5-80gb", "label": "DGX H100", "builder": "dgx-h100", "links_per_switch": (5, 4, 4, 5)},
    "h200": {"gpu": "h200-sxm-141gb", "label": "DGX H200", "builder": "dgx-h200", "links_per_switch": (5, 4, 4, 5)},
    "h800": {"gpu": "h800-sxm5-80gb", "label": "HGX H800", "builder": "hgx-h800", "links_per_switch": (2, 2, 2, 2)},
}


def add_hgx_a800(topo: Topology, prefix: str = "", name: str | None = None,
                 origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None) -> str:
    """An HGX A800: the DGX A100 design with A800s, whose 8 NVLinks (400 GB/s) spread over the 6 NVSwitches."""
    sb = _start_system(topo, prefix, name or "HGX A800", origin, parent, "HGX A800", "hgx-a800")
    gpus = _nvswitch_system(sb, "a800-sxm4-80gb", "nvswitch-gen2", "NVLink3", (2, 2, 1, 1, 1, 1))
    _a100_host(sb, gpus)
    return sb.group.id


def add_dgx_b200(topo: Topology, prefix: str = "", name: str | None = None,
                 origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None) -> str:
    """A DGX B200: 8 B200 on 2 NVSwitch gen4 chips (9 NVLink5 each), 8 ConnectX-7, 2 BlueField-3, 2 Xeons."""
    sb = _start_system(topo, prefix, name or "DGX B200", origin, parent, "DGX B200", "dgx-b200")
    gpus = _nvswitch_system(sb, "b200-sxm-180gb", "nvswitch-gen4", "NVLink5", (9, 9))
    _hopper_host(sb, gpus, "connectx-7-ndr", "xeon-platinum-8570", "UPI-20GT", "bluefield-3-dpu", 130 * 8)
    return sb.group.id


NVL72_COMPUTE_TRAYS, NVL72_SWITCH_TRAYS = 18, 9
# Collapsed trays in rack order, five a row: compute trays 1-10 above the switch trays, 11-18 below (the
# rack's own order), close enough that the whole rack fits the window at a zoom where tray names read.
TRAY_ROW, TRAY_COLUMN, TRAYS_PER_ROW, NVL72_TOP_COMPUTE = 92.0, 204.0, 5, 10


def add_gb200_nvl72(topo: Topology, prefix: str = "", name: str | None = None,
                    origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None) -> str:
    """A GB200 NVL72 rack: 18 compute trays (2 Grace + 4 B200 + 4 ConnectX-7 + 1 BlueField-3 each) and
    9 NVLink switch trays of 2 NVSwitch gen4 chips; every B200 has one NVLink5 to each of the 18 chips.

    Trays are sub-groups, collapsed, laid out as the rack stacks them: compute trays 1-10, the 9 switch
    trays, compute trays 11-18, five to a row. Expanded, a tray's devices spread out from its place.
    """
    sb = _start_system(topo, prefix, name or "GB200 NVL72", origin, parent, "GB200 NVL72", "gb200-nvl72")
    rack = sb.group

    def tray(local: str, label: str, slot: int) -> tuple[float, float]:
        """Tray in rack slot ``slot`` (0 = top); its devices, when expanded, spread 4x wider and taller."""
        sb.group = topo.add_group(Group(prefix + local, sb.name_prefix + label, "tray", rack.id, [], {}))
        row, column = divmod(slot, TRAYS_PER_ROW)
        x, y = column * TRAY_COLUMN, row * TRAY_ROW
        topo.layout.positions[sb.group.id] = (sb.ox + x, sb.oy + y)
        topo.layout.collapsed.add(sb.group.id)
        return 4 * x, 4 * y

    def rows(count: int) -> int:
        return -(-count // TRAYS_PER_ROW) * TRAYS_PER_ROW

    switch_slot = rows(NVL72_TOP_COMPUTE)
    below_slot = switch_slot + rows(NVL72_SWITCH_TRAYS)

    switches = []
    for t in range(NVL72_SWITCH_TRAYS):
        x, y = tray(f"switchtray{t + 1}", f"Switch tray {t + 1}", switch_slot + t)
        for c in range(2):
            switches.append(sb.dev(f"nvswitch{2 * t + c}", "nvswitch", "nvswitch-gen4", f"NVSwitch{2 * t + c}",
                                   (x + 300 * c, y)))
    for t in range(NVL72_COMPUTE_TRAYS):
        slot = t if t < NVL72_TOP_COMPUTE else below_slot + t - NVL72_TOP_COMPUTE
        x, y = tray(f"tray{t + 1}", f"Compute tray {t + 1}", slot)
        graces = [sb.dev(f"grace{2 * t + c}", "cpu", "grace-cpu", f"Grace{2 * t + c}", (x + 300 * c + 75, y + 40))
                  for c in range(2)]
        for k in range(4):
            i = 4 * t + k
            gpu = sb.dev(f"gpu{i}", "gpu", "b200-gb200", f"GPU{i}", (x + 150 * k, y))
            nic = sb.dev(f"ib{i}", "nic", "connectx-7-ndr", f"IB{i}", (x + 150 * k, y + 80), role="compute")
            for s in switches:
                sb.link(gpu, s, "NVLink5")
            sb.link(gpu, graces[k // 2], "NVLink-C2C")
            sb.link(nic, graces[k // 2], "PCIe5")
        dpu = sb.dev(f"dpu{t}", "nic", "bluefield-3-dpu", f"DPU{t}", (x + 600, y + 40), role="storage")
        sb.link(dpu, graces[0], "PCIe5")
    sb.group = rack
    return rack.id


SYSTEM_BUILDERS = {
    "dgx1-p100": lambda topo, **kw: add_dgx1(topo, "p100", **kw),
    "dgx1-v100": lambda topo, **kw: add_dgx1(topo, "v100", **kw),
    "dgx-a100": add_dgx_a100,
    "pcie-server": add_pcie_server,
    "pcie-server-p100": lambda topo, **kw: add_pcie_server(topo, **kw, gpu="p100"),
    "dgx-h100": lambda topo, **kw: add_dgx_h100(topo, **kw, gpu="h100"),
    "dgx-h200": lambda topo, **kw: add_dgx_h100(topo, **kw, gpu="h200"),
    "hgx-h800": lambda topo, **kw: add_dgx_h100(topo, **kw, gpu="h800"),
    "hgx-a800": add_hgx_a800,
    "dgx-b200": add_dgx_b200,
    "gb200-nvl72": add_gb200_nvl72,
}
SYSTEM_LABELS = {"dgx1-p100": "DGX-1 (P100)", "dgx1-v100": "DGX-1 (V100)", "dgx-a100": "DGX A100",
                 "pcie-server": "PCIe server (8x V100 PCIe)",
                 "pcie-server-p100": "PCIe server (8x P100 PCIe)", "dgx-h100": "DGX H100", "dgx-h200": "DGX H200",
                 "hgx-h800": "HGX H800", "hgx-a800": "HGX A800", "dgx-b200": "DGX B200",
                 "gb200-nvl72": "GB200 NVL72"}


@lru_cache(maxsize=1)
def system_facts() -> dict:
    """Published per-system facts (power, with sources) from resources/systems.json, by builder id."""
    raw = json.loads(files("dgxstudio.resources").joinpath("systems.json").read_text(encoding="utf-8"))
    return raw["systems"]


def system_power_W(builder: str) -> float | None:
    """A system's published maximum power in watts, or None when not published."""
    fact = system_facts().get(builder, {})
    return fact.get("power_W")


def build_system(system: str, catalog: Catalog | None = None) -> Topology:
    if system not in SYSTEM_BUILDERS:
        raise ValueError(f"unknown system {system!r} (one of {', '.join(SYSTEM_BUILDERS)})")
    topo = Topology(SYSTEM_LABELS[system], catalog or default_catalog())
    SYSTEM_BUILDERS[system](topo)
    return topo


def published_power(topo: Topology, system_of: Mapping[str, str | None] | None = None) -> tuple[float, list[str]]:
    """Watts of what has a published figure (systems by builder, parts by ``specs.power_W`` outside
    systems), and the labels of what has none, so a report can sum a cluster and say what it left out."""
    total, missing, _ = power_summary(topo, system_of)
    return total, missing


def power_summary(topo: Topology, system_of: Mapping[str, str | None] | None = None
                  ) -> tuple[float, list[str], list[str]]:
    """``published_power`` and what the parts counted outside systems stand for (typical or maximum,
    ``power_note``), in one pass; systems count at their published maximum. ``system_of`` maps each
    device to its system (``Topology.system_of`` when not given)."""
    total, missing, notes = 0.0, [], set()
    systems = [g for g in topo.groups.values() if g.kind == "system"]
    for g in systems:
        w = system_power_W(g.properties.get("builder", ""))
        if w is None:
            missing.append(g.properties.get("model", g.name))
        else:
            total += w
    outside: dict[str, int] = {}
    groups = topo.groups
    for dev in topo.devices.values():  # (a system without a frame, model.nodes, has no published figure)
        if (system_of[dev.id] if system_of is not None else topo.frame_of(dev.id)) not in groups:
            outside[dev.part] = outside.get(dev.part, 0) + 1
    for part_id, n in outside.items():
        part = topo.catalog.part(part_id)
        w = part.specs.get("power_W") if part else None
        if w is None:
            missing.append(part.label if part else part_id)
        else:
            total += w * n
            notes.add(power_note(part))
    return total, sorted(set(missing)), sorted(n for n in notes if n)


def power_note(part) -> str | None:
    """'label: W each, basis' for a part whose published power says on what basis (typical or maximum)."""
    w, basis = part.specs.get("power_W"), part.specs.get("power_basis")
    return f"{part.label}: {w:,.0f} W each, {basis}" if w is not None and basis else None


def power_text(published_W: float, missing: list[str]) -> str:
    """The published power as a reader should see it: kW, naming what has no published figure, and never
    '0.0 kW' when nothing in the design has a figure (an HGX H800 on HDR switches)."""
    if missing and not published_W:
        return f"no published figure ({', '.join(missing)})"
    return f"{published_W / 1e3:,.1f} kW" + (f" (no published figure: {', '.join(missing)})" if missing else "")
