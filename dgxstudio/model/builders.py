"""Parametric builders for the systems of the white papers and for fat-tree clusters of them.

Each builder adds one system (a group with all its insides) to a topology, under an id prefix and at
a canvas origin, so the same code builds a lone DGX-1 and the 124 DGX-1 of a cluster. Port counts,
bandwidths and latencies come from the catalog; the builders only say what is wired to what.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
    return sb.group.id


def add_pcie_server(topo: Topology, prefix: str = "", name: str | None = None,
                    origin: tuple[float, float] = (0.0, 0.0), parent: str | None = None) -> str:
    """An off-the-shelf 8-GPU PCIe server: 8 V100 PCIe on 2 PCIe Gen3 switches, one per Xeon."""
    sb = _start_system(topo, prefix, name or "PCIe server (8x V100 PCIe)", origin, parent,
                       "PCIe server", "pcie-server")
    gpus = [sb.dev(f"gpu{i}", "gpu", "tesla-v100-pcie", f"GPU{i}", (125 * i + (50 if i >= 4 else 0), 0))
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


SYSTEM_BUILDERS = {
    "dgx1-p100": lambda topo, **kw: add_dgx1(topo, "p100", **kw),
    "dgx1-v100": lambda topo, **kw: add_dgx1(topo, "v100", **kw),
    "dgx-a100": add_dgx_a100,
    "pcie-server": add_pcie_server,
}
SYSTEM_LABELS = {"dgx1-p100": "DGX-1 (P100)", "dgx1-v100": "DGX-1 (V100)", "dgx-a100": "DGX A100",
                 "pcie-server": "PCIe server (8x V100 PCIe)"}


def build_system(system: str, catalog: Catalog | None = None) -> Topology:
    if system not in SYSTEM_BUILDERS:
        raise ValueError(f"unknown system {system!r} (one of {', '.join(SYSTEM_BUILDERS)})")
    topo = Topology(SYSTEM_LABELS[system], catalog or default_catalog())
    SYSTEM_BUILDERS[system](topo)
    return topo


# ---- fat trees -----------------------------------------------------------------------------------

# Canvas layout of a fat tree: switch layers on top, each leaf's systems in a column under it.
COLUMN, ROW = 170.0, 90.0
CORE_Y, SPINE_Y, LEAF_Y, SYSTEM_Y = -400.0, 0.0, 500.0, 650.0

@dataclass(frozen=True)
class FatTreePlan:
    systems: int
    per_leaf: int
    spines: int
    leaves: int
    levels: int
    leaves_per_pod: int
    pods: int
    link_type: str
    switch_part: str
    nics_per_system: int


def _fabric_nics(topo: Topology, group_id: str) -> list[str]:
    """The compute NICs of a system: those with an InfiniBand or Ethernet port, not storage or management."""
    out = []
    for did in topo.groups[group_id].devices:
        dev = topo.devices[did]
        if dev.kind != "nic" or dev.properties.get("role", "compute") != "compute":
            continue
        out.append(did)
    return out


def _network_port(topo: Topology, nic_id: str):
    part = topo.part_of(nic_id)
    for pg in part.ports:
        lt = topo.catalog.link_type(pg.accepts[0])
        if lt is not None and lt.family in ("infiniband", "ethernet"):
            return pg
    raise ValueError(f"{nic_id}: NIC part {part.id} has no network port")


def _switch_for(catalog: Catalog, link_type: str) -> str:
    kinds = {"infiniband": "ib_switch", "ethernet": "eth_switch"}
    family = catalog.link_type(link_type).family
    for part in catalog.parts.values():
        if part.kind == kinds[family] and any(pg.accepts[0] == link_type for pg in part.ports):
            return part.id
    for part in catalog.parts.values():
        if part.kind == kinds[family] and any(link_type in pg.accepts for pg in part.ports):
            return part.id
    raise ValueError(f"the catalog has no switch for {link_type}")


def plan_fat_tree(topo_probe: Topology, system_group: str, systems: int, per_leaf: int | None,
                  spines: int | None) -> FatTreePlan:
    nics = _fabric_nics(topo_probe, system_group)
    if not nics:
        raise ValueError("the system has no compute NICs to attach to a fabric")
    pg = _network_port(topo_probe, nics[0])
    link_type = pg.accepts[0]
    switch_part = _switch_for(topo_probe.catalog, link_type)
    radix = sum(p.count for p in topo_probe.catalog.part(switch_part).ports)
    ports_per_system = len(nics) * pg.count
    if per_leaf is None:
        per_leaf = max(1, (radix // 2) // ports_per_system)
    if per_leaf < 1:
        raise ValueError("systems per leaf must be at least 1")
    down = per_leaf * ports_per_system
    if spines is None:
        spines = down
    if spines < 1:
        raise ValueError("spines must be at least 1")
    if down + spines > radix:
        raise ValueError(f"a leaf needs {down} ports down and {spines} up, but a {switch_part} has {radix}")
    leaves = math.ceil(systems / per_leaf)
    if leaves <= radix:
        return FatTreePlan(systems, per_leaf, spines, leaves, 2, leaves, 1, link_type, switch_part, ports_per_system)
    # Three levels: pods of leaves under their own spines (aggregation), each spine half down, half up.
    leaves_per_pod = radix // 2
    pods = math.ceil(leaves / leaves_per_pod)
    if pods > radix:
        raise ValueError(f"{systems} systems need more than three levels of {radix}-port switches")
    return FatTreePlan(systems, per_leaf, spines, leaves, 3, leaves_per_pod, pods, link_type, switch_part,
                       ports_per_system)


def build_fat_tree(systems: int, system: str = "dgx1-v100", per_leaf: int | None = None, spines: int | None = None,
                   catalog: Catalog | None = None) -> Topology:
    """N systems on a two-level (or, when N outgrows the switch radix, three-level) fat tree.

    Every system's compute NIC ports go to its leaf (``per_leaf`` systems a leaf); every leaf has one
    uplink to every spine. Defaults keep a leaf non-blocking: half its ports down, half up.
    """
    if system not in SYSTEM_BUILDERS:
        raise ValueError(f"unknown system {system!r} (one of {', '.join(SYSTEM_BUILDERS)})")
    if not isinstance(systems, int) or systems < 1 or systems > 100_000:
        raise ValueError("systems must be a whole number from 1 to 100000")
    catalog = catalog or default_catalog()
    probe = build_system(system, catalog)
    plan = plan_fat_tree(probe, "system", systems, per_leaf, spines)
    topo = Topology(f"{systems} x {SYSTEM_LABELS[system]} fat tree", catalog)
    topo.description = (f"{plan.levels}-level {plan.link_type} fat tree: {plan.leaves} leaves, "
                        f"{plan.spines} spines{' per pod' if plan.levels == 3 else ''}, {plan.per_leaf} systems per leaf")
    system_span = 1100.0
    cluster = topo.add_group(Group("cluster", topo.name, "cluster", None, [], {"builder": "fat-tree"}))
    fabric = topo.add_group(Group("fabric", "Fabric", "fabric", cluster.id, []))
    sys_groups = []
    digits = len(str(systems))
    for i in range(systems):
        prefix = f"s{i + 1:0{digits}d}."
        gid = SYSTEM_BUILDERS[system](topo, prefix=prefix, name=f"{SYSTEM_LABELS[system].split(' (')[0]} #{i + 1}",
                                      origin=(i * system_span, 3000.0), parent=cluster.id)
        sys_groups.append(gid)
        # each leaf's systems stacked in a column under it, so the drawing is not one endless row
        leaf_index, row = divmod(i, plan.per_leaf)
        topo.layout.positions[gid] = (leaf_index * COLUMN, SYSTEM_Y + row * ROW)
        topo.layout.collapsed.add(gid)
    nlink = 0

    def connect(a: str, b: str) -> None:
        nonlocal nlink
        topo.add_link(Link(f"f{nlink}", a, b, plan.link_type))
        nlink += 1

    def switch(sid: str, name: str, xy) -> str:
        topo.add_device(Device(sid, topo.catalog.part(plan.switch_part).kind, plan.switch_part, name), xy, fabric.id)
        return sid

    width = plan.leaves * COLUMN
    leaves = [switch(f"leaf{k + 1}", f"Leaf {k + 1}", (k * COLUMN, LEAF_Y)) for k in range(plan.leaves)]
    for i, gid in enumerate(sys_groups):
        leaf = leaves[i // plan.per_leaf]
        for nic in _fabric_nics(topo, gid):
            for _ in range(_network_port(topo, nic).count):
                connect(nic, leaf)
    if plan.levels == 2:
        span = width / plan.spines
        spines = [switch(f"spine{j + 1}", f"Spine {j + 1}", (j * span + span / 2 - COLUMN / 2, SPINE_Y))
                  for j in range(plan.spines)]
        for leaf in leaves:
            for sp in spines:
                connect(leaf, sp)
        return topo
    planes = plan.spines
    core_per_plane = plan.leaves_per_pod
    span = width / (plan.pods * planes)
    aggs: list[list[str]] = []
    for p in range(plan.pods):
        pod_aggs = [switch(f"pod{p + 1}.spine{j + 1}", f"Pod {p + 1} spine {j + 1}",
                           ((p * planes + j) * span, SPINE_Y)) for j in range(planes)]
        aggs.append(pod_aggs)
        for leaf in leaves[p * plan.leaves_per_pod:(p + 1) * plan.leaves_per_pod]:
            for a in pod_aggs:
                connect(leaf, a)
    cspan = width / (planes * core_per_plane)
    for j in range(planes):
        for c in range(core_per_plane):
            core = switch(f"core{j + 1}.{c + 1}", f"Core {j + 1}.{c + 1}", ((j * core_per_plane + c) * cspan, CORE_Y))
            for p in range(plan.pods):
                connect(aggs[p][j], core)
    return topo
