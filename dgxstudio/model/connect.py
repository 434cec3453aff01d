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

    @property
    def ok(self) -> bool:
        return self.command is not None


def propose_link(topo: Topology, a: str, b: str) -> Proposal:
    """The fastest link type both devices accept with a free port on each; or why there is none.

    A second link of a type that already joins the pair raises that link's count instead.
    """
    if a == b:
        return Proposal(None, "", "a device cannot be linked to itself")
    da, db = topo.devices.get(a), topo.devices.get(b)
    if da is None or db is None:
        return Proposal(None, "", "no such device")
    pa, pb = topo.part_of(a), topo.part_of(b)
    if pa is None or pb is None:
        unknown = da if pa is None else db
        return Proposal(None, "", f"{unknown.name} has an unknown part {unknown.part!r}")
    common = []
    hub = bool({da.kind, db.kind} & PCIE_HUB_KINDS)
    for ga in pa.ports:
        for t in ga.accepts:
            gb = pb.port_group_for(t)
            lt = topo.catalog.link_type(t)
            if lt is not None and lt.family == "pcie" and not hub:
                continue
            if gb is not None and t not in [c[0] for c in common]:
                common.append((t, ga, gb))
    if not common:
        ta = ", ".join(sorted({t for g in pa.ports for t in g.accepts}))
        tb = ", ".join(sorted({t for g in pb.ports for t in g.accepts}))
        return Proposal(None, "", f"no link type fits both: {da.name} ({pa.label}) takes {ta}; "
                                  f"{db.name} ({pb.label}) takes {tb}")
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
        return Proposal(None, "", blocked[0])
    best = max(feasible, key=lambda c: topo.catalog.link_type(c[0]).bandwidth_per_direction_Bps())
    t, ga, gb = best
    lt = topo.catalog.link_type(t)
    for lk in topo.links.values():
        if lk.type == t and {lk.a, lk.b} == {a, b} and lk.bandwidth_per_direction_Bps is None:
            return Proposal(SetAttribute(lk.id, "count", lk.count + 1, f"add a {lt.label} to {lk.id}"),
                            f"{lt.label} x{lk.count + 1} between {da.name} and {db.name}")
    link = Link(topo.new_id("l"), a, b, t, 1, ga.name, gb.name, lt.default_width if lt.per_lane else None)
    return Proposal(AddItems(links=[link], text=f"connect {da.name} and {db.name}"),
                    f"{lt.label} between {da.name} and {db.name}")
