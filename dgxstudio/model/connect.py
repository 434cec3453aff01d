"""What dragging a link from one device to another would do, and why it may be refused.

Used by the canvas while dragging (to colour the line and say why in the status bar) and on drop.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog import PCIE_HUB_KINDS
from .commands import AddItems, Command, SetAttribute
from .topology import Link, Topology


@dataclass
class Proposal:
    command: Command | None
    description: str
    reason: str = ""
    done: str = ""   # the description once connected: the ports' free counts one less each


    @property
    def ok(self) -> bool:
        return self.command is not None


def propose_link(topo: Topology, a: str, b: str) -> Proposal:
    """The fastest link type both devices accept with a free port on each; or why there is none.

    A second link of a type that already joins the pair raises that link's count instead.
    """
    options = link_options(topo, a, b)
    return options[0]


def link_options(topo: Topology, a: str, b: str) -> list[Proposal]:
    """Every way to link two devices (one per link type and port-group pair with a free port on each),
    fastest first; or a single refused proposal saying why there is none."""
    if a == b:
        return [Proposal(None, "", "a device cannot be linked to itself")]
    da, db = topo.devices.get(a), topo.devices.get(b)
    if da is None or db is None:
        return [Proposal(None, "", "no such device")]
    pa, pb = topo.part_of(a), topo.part_of(b)
    if pa is None or pb is None:
        unknown = da if pa is None else db
        return [Proposal(None, "", f"{unknown.name} has an unknown part {unknown.part!r}")]
    common, via_hub = [], []
    hub = bool({da.kind, db.kind} & PCIE_HUB_KINDS)
    for ga in pa.ports:
        for t in ga.accepts:
            gb = pb.port_group_for(t)
            lt = topo.catalog.link_type(t)
            if gb is None:
                continue
            if lt is not None and lt.family == "pcie" and not hub:
                via_hub.append(lt.label)
                continue
            if (t, ga.name, gb.name) not in [(c[0], c[1].name, c[2].name) for c in common]:
                common.append((t, ga, gb))
    if not common:
        if via_hub:
            return [Proposal(None, "", f"{da.name} and {db.name} both take {', '.join(dict.fromkeys(via_hub))}, but PCIe "
                                       "devices meet through a PCIe switch or a CPU: link each of them to one")]
        ta = ", ".join(sorted({t for g in pa.ports for t in g.accepts}))
        tb = ", ".join(sorted({t for g in pb.ports for t in g.accepts}))
        return [Proposal(None, "", f"no link type fits both: {da.name} ({pa.label}) takes {ta}; "
                                   f"{db.name} ({pb.label}) takes {tb}")]
    free_a, free_b = topo.free_ports(a), topo.free_ports(b)
    feasible, blocked = [], []
    for t, ga, gb in common:
        if free_a.get(ga.name, 0) < 1:
            blocked.append(f"{da.name} ({pa.label}) has no free {ga.name} port ({ga.count} of {ga.count} used)")
        elif free_b.get(gb.name, 0) < 1:
            blocked.append(f"{db.name} ({pb.label}) has no free {gb.name} port ({gb.count} of {gb.count} used)")
        else:
            feasible.append((t, ga, gb))
    if not feasible:
        return [Proposal(None, "", blocked[0])]
    feasible.sort(key=lambda c: -topo.catalog.link_type(c[0]).bandwidth_per_direction_Bps())
    out = []
    for t, ga, gb in feasible:
        lt = topo.catalog.link_type(t)
        fa, fb = free_a.get(ga.name, 0), free_b.get(gb.name, 0)
        ports = f" ({da.name} {ga.name}, {fa} free; {db.name} {gb.name}, {fb} free)"
        after = f" ({da.name} {ga.name}, {fa - 1} free; {db.name} {gb.name}, {fb - 1} free)"
        existing = next((lk for lk in topo.links.values() if lk.type == t and {lk.a, lk.b} == {a, b}
                         and lk.bandwidth_per_direction_Bps is None and {lk.a_port, lk.b_port} <= {ga.name, gb.name, None}),
                        None)
        if existing is not None:
            head = f"{lt.label} x{existing.count + 1} between {da.name} and {db.name}"
            out.append(Proposal(SetAttribute(existing.id, "count", existing.count + 1, f"add a {lt.label} to {existing.id}"),
                                head + ports, done=head + after))
            continue
        link = Link(topo.new_id("l"), a, b, t, 1, ga.name, gb.name, lt.default_width if lt.per_lane else None)
        head = f"{lt.label} between {da.name} and {db.name}"
        out.append(Proposal(AddItems(links=[link], text=f"connect {da.name} and {db.name}"), head + ports, done=head + after))
    return out
