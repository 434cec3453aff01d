"""Checks a topology against the catalog and returns findings; a user's mistake never raises.

Each finding names the devices and links at fault so the UI can select them and the CLI can print
them. Errors make a topology unusable for simulation; warnings are worth a look.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..heap import paused_gc
from .catalog import NETWORK_FAMILIES, PCIE_HUB_KINDS
from .topology import Topology

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    severity: str
    code: str
    message: str
    devices: tuple[str, ...] = ()
    links: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message,
                "devices": list(self.devices), "links": list(self.links)}


def _check_ids(topo: Topology) -> list[Finding]:
    tables = (topo.devices, topo.links, topo.groups)
    if all(k == obj.id for table in tables for k, obj in table.items()) and \
            not (topo.devices.keys() & topo.links.keys() or topo.devices.keys() & topo.groups.keys()
                 or topo.links.keys() & topo.groups.keys()):
        return []  # every object filed under its own id, no id in two tables: nothing to report
    return _id_findings(topo)


def _id_findings(topo: Topology) -> list[Finding]:
    out = []
    owners = Counter()
    for table in (topo.devices, topo.links, topo.groups):
        for key, obj in table.items():
            owners[obj.id] += 1
            if key != obj.id:
                out.append(Finding(ERROR, "duplicate-id", f"{obj.id!r} is filed under a different id {key!r}"))
    for oid, n in owners.items():
        if n > 1:
            kinds = [name for name, table in (("device", topo.devices), ("link", topo.links), ("group", topo.groups))
                     if oid in table]
            out.append(Finding(ERROR, "duplicate-id", f"id {oid!r} is used {n} times ({', '.join(kinds)})",
                               (oid,) if oid in topo.devices else (), (oid,) if oid in topo.links else ()))
    return out


def _check_devices(topo: Topology) -> list[Finding]:
    out = []
    for dev in topo.devices.values():
        part = topo.catalog.part(dev.part)
        if part is None:
            out.append(Finding(ERROR, "unknown-part", f"{dev.name} ({dev.id}): unknown part {dev.part!r}", (dev.id,)))
        elif part.kind != dev.kind:
            out.append(Finding(ERROR, "kind-mismatch",
                               f"{dev.name} ({dev.id}): part {part.label} is a {part.kind}, the device says {dev.kind}",
                               (dev.id,)))
    return out


def _check_links(topo: Topology) -> list[Finding]:
    """Every link by the rules below; a link whose shape (its ends' parts and kinds, ports, type and
    width) was already found correct is not checked again, since those rules read nothing else."""
    out = []
    devices = topo.devices
    correct: set[tuple] = set()
    for lk in topo.links.values():
        da, db = devices.get(lk.a), devices.get(lk.b)
        if da is not None and db is not None and lk.a != lk.b:
            shape = (da.part, da.kind, db.part, db.kind, lk.a_port, lk.b_port, lk.type, lk.width)
            if shape in correct:
                continue
            before = len(out)
            _check_link(topo, lk, out)
            if len(out) == before:
                correct.add(shape)
        else:
            _check_link(topo, lk, out)
    return out


def _check_link(topo: Topology, lk, out: list[Finding]) -> None:
    missing = [e for e in (lk.a, lk.b) if e not in topo.devices]
    if missing:
        out.append(Finding(ERROR, "missing-device", f"link {lk.id}: no device {', '.join(map(repr, missing))}",
                           tuple(e for e in (lk.a, lk.b) if e in topo.devices), (lk.id,)))
        return
    if lk.a == lk.b:
        out.append(Finding(ERROR, "self-link", f"link {lk.id} joins {topo.devices[lk.a].name} to itself",
                           (lk.a,), (lk.id,)))
        return
    lt = topo.catalog.link_type(lk.type)
    if lt is None:
        out.append(Finding(ERROR, "unknown-link-type", f"link {lk.id}: unknown link type {lk.type!r}",
                           (lk.a, lk.b), (lk.id,)))
        return
    for end, port_name in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
        dev = topo.devices[end]
        part = topo.catalog.part(dev.part)
        if part is None:
            continue
        group = part.port_group(port_name) if port_name else part.port_group_for(lk.type)
        if group is None or lk.type not in group.accepts:
            accepted = sorted({t for g in part.ports for t in g.accepts})
            where = f"port {port_name!r}" if port_name and part.port_group(port_name) else "any port"
            out.append(Finding(ERROR, "incompatible-link",
                               f"link {lk.id}: {lt.label} cannot attach to {where} of {dev.name} ({part.label} "
                               f"takes {', '.join(accepted)})", (end,), (lk.id,)))
        elif lk.width is not None and group.max_width is not None and lk.width > group.max_width:
            out.append(Finding(ERROR, "width-over-port",
                               f"link {lk.id}: x{lk.width} is wider than {dev.name}'s x{group.max_width} "
                               f"{group.name} port", (end,), (lk.id,)))
    if lt.family == "pcie" and not ({topo.devices[lk.a].kind, topo.devices[lk.b].kind} & PCIE_HUB_KINDS):
        out.append(Finding(ERROR, "pcie-endpoints",
                           f"link {lk.id}: PCIe between {topo.devices[lk.a].name} and {topo.devices[lk.b].name} "
                           "needs a PCIe switch or CPU at one end", (lk.a, lk.b), (lk.id,)))
    if lk.width is not None and not lt.per_lane:
        out.append(Finding(WARNING, "width-ignored", f"link {lk.id}: a lane width means nothing for {lt.label}",
                           (lk.a, lk.b), (lk.id,)))


def _check_ports(topo: Topology) -> list[Finding]:
    out = []
    used_by: dict[tuple[str, str], int] = {}  # (device, port group) -> ports in use, as Topology.used_ports counts
    for lk in topo.links.values():
        key = (lk.a, lk.a_port or "?")
        used_by[key] = used_by.get(key, 0) + lk.count
        key = (lk.b, lk.b_port or "?")  # both ends, a link from a device to itself too
        used_by[key] = used_by.get(key, 0) + lk.count
    parts = topo.catalog.parts
    for dev in topo.devices.values():
        part = parts.get(dev.part)
        if part is not None:
            _ports_over_budget(topo, dev, part, lambda port: used_by.get((dev.id, port), 0), out)
    return out


def _ports_over_budget(topo: Topology, dev, part, used, out: list[Finding]) -> None:
    """A device's port groups holding more links than the part has ports; ``used(port)`` counts them."""
    for group in part.ports:
        n = used(group.name)
        if n > group.count:
            links = tuple(lk.id for lk in topo.links_of(dev.id)
                          if (lk.a == dev.id and lk.a_port == group.name) or (lk.b == dev.id and lk.b_port == group.name))
            out.append(Finding(ERROR, "ports-over-budget",
                               f"{dev.name} ({dev.id}) uses {n} {group.name} ports; {part.label} has {group.count}",
                               (dev.id,), links))


def _check_groups(topo: Topology) -> list[Finding]:
    out = []
    where: dict[str, list[str]] = {}
    for g in topo.groups.values():
        for d in g.devices:
            where.setdefault(d, []).append(g.id)
            if d not in topo.devices:
                out.append(Finding(ERROR, "missing-device", f"group {g.name} ({g.id}): no device {d!r}"))
        if g.parent is not None and g.parent not in topo.groups:
            out.append(Finding(ERROR, "missing-group", f"group {g.name} ({g.id}): no parent group {g.parent!r}"))
        chain = topo.group_chain(g.id)
        last = chain[-1]
        if last.parent is not None and last.parent in topo.groups:
            out.append(Finding(ERROR, "group-cycle", f"group {g.name} ({g.id}) is inside itself"))
    for d, gids in where.items():
        if len(gids) > 1:
            out.append(Finding(ERROR, "multiple-groups",
                               f"{topo.devices[d].name if d in topo.devices else d} is listed in groups {', '.join(gids)}",
                               (d,) if d in topo.devices else ()))
    return out


def _check_connectivity(topo: Topology) -> list[Finding]:
    out = []
    linked = set()
    for lk in topo.links.values():
        linked.add(lk.a)
        linked.add(lk.b)
    for dev in topo.gpus():
        if dev.id not in linked:
            out.append(Finding(WARNING, "isolated-gpu", f"{dev.name} ({dev.id}) has no links", (dev.id,)))
    return out


def _check_negotiated_speed(topo: Topology) -> list[Finding]:
    """A network link slower than what one of its ends is made for: the ports trained down (NDR NIC on HDR)."""
    out = []
    cat = topo.catalog
    best: dict[tuple, float] = {}

    def best_rate(part_id: str, port: str | None, family: str) -> float:
        key = (part_id, port, family)
        if key not in best:
            part = cat.part(part_id)
            group = part.port_group(port) if (part and port) else None
            rates = [cat.link_type(t).rate_bps_per_direction for t in (group.accepts if group else ())
                     if cat.link_type(t) is not None and cat.link_type(t).family == family]
            best[key] = max(rates, default=0.0)
        return best[key]

    devices = topo.devices
    fine: set[tuple] = set()  # link shapes already found at their ends' best speed
    for lk in topo.links.values():
        da, db = devices.get(lk.a), devices.get(lk.b)
        if da is None or db is None:
            continue
        shape = (lk.type, da.part, lk.a_port, db.part, lk.b_port)
        if shape in fine:
            continue
        lt = cat.link_type(lk.type)
        if lt is None or lt.family not in NETWORK_FAMILIES:
            fine.add(shape)
            continue
        ra, rb = best_rate(da.part, lk.a_port, lt.family), best_rate(db.part, lk.b_port, lt.family)
        if lt.rate_bps_per_direction >= max(ra, rb):
            fine.add(shape)
        else:
            fast, slow = (da, db) if ra >= rb else (db, da)
            out.append(Finding(WARNING, "speed-negotiated",
                               f"link {lk.id}: {fast.name} ({cat.part(fast.part).label}) links at {lt.label} "
                               f"({lt.rate_bps_per_direction / 1e9:g} Gb/s) with {slow.name} "
                               f"({cat.part(slow.part).label}), below its {max(ra, rb) / 1e9:g} Gb/s",
                               (fast.id, slow.id), (lk.id,)))
    return out


CHECKS = (_check_ids, _check_devices, _check_links, _check_ports, _check_groups, _check_connectivity,
          _check_negotiated_speed)


def validate(topo: Topology) -> list[Finding]:
    findings: list[Finding] = []
    with paused_gc():
        for check in CHECKS:
            findings.extend(check(topo))
    return findings
