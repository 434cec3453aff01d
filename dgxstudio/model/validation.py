"""Checks a topology against the catalog and returns findings; a user's mistake never raises.

Each finding names the devices and links at fault so the UI can select them and the CLI can print
them. Errors make a topology unusable for simulation; warnings are worth a look.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..cancel import check_cancelled
from ..heap import paused_gc
from .catalog import NETWORK_FAMILIES, PCIE_HUB_KINDS
from .names import device_words, several_systems
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
    if (len(set(topo.devices).union(topo.links, topo.groups)) == sum(map(len, tables))
            and all(key == obj.id for table in tables for key, obj in table.items())):
        return []  # every id filed under itself and used once: nothing to name
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


def _namer(topo: Topology):
    """A device's words as the canvas names it (``names.device_words``): in a design of several systems,
    after its system's name ("GPU3" alone did not say which of 64 systems), the systems counted once. A
    device filed under another id than its own (``_check_ids`` names it) by its name alone."""
    several = None

    def name(dev) -> str:
        nonlocal several
        if topo.devices.get(dev.id) is not dev:
            return dev.name
        if several is None:
            several = several_systems(topo)
        return device_words(topo, dev.id, several)
    return name


def _check_devices(topo: Topology) -> list[Finding]:
    out = []
    name = _namer(topo)
    for dev in topo.devices.values():
        part = topo.catalog.part(dev.part)
        if part is None:
            out.append(Finding(ERROR, "unknown-part", f"{name(dev)} ({dev.id}): unknown part {dev.part!r}", (dev.id,)))
        elif part.kind != dev.kind:
            out.append(Finding(ERROR, "kind-mismatch",
                               f"{name(dev)} ({dev.id}): part {part.label} is a {part.kind}, the device says {dev.kind}",
                               (dev.id,)))
    return out


def _port_fit(part, port_name: str | None, link_type: str):
    """How a link of ``link_type`` meets a part at ``port_name``: (group or None, accepted)."""
    group = part.port_group(port_name) if port_name else part.port_group_for(link_type)
    return group, group is not None and link_type in group.accepts


def _check_links(topo: Topology) -> list[Finding]:
    out = []
    devices, catalog = topo.devices, topo.catalog
    name = _namer(topo)
    # What depends only on (part, port, link type) is worked out once per combination: a cluster
    # has a handful of them among 150,000 links.
    fits: dict[tuple, tuple] = {}
    # A link whose shape (its ends' parts and kinds, ports, type, width) was found correct needs no
    # second look: the rules below read nothing else. 300,000 links, a few dozen shapes.
    correct: set[tuple] = set()
    for lk in topo.links.values():
        a, b = lk.a, lk.b
        da, db = devices.get(a), devices.get(b)
        if da is not None and db is not None and a != b:
            shape = (da.part, da.kind, db.part, db.kind, lk.a_port, lk.b_port, lk.type, lk.width)
            if shape in correct:
                continue
            found = len(out)
        else:
            shape = None
        if a not in devices or b not in devices:
            missing = [e for e in (a, b) if e not in devices]
            out.append(Finding(ERROR, "missing-device", f"link {lk.id}: no device {', '.join(map(repr, missing))}",
                               tuple(e for e in (a, b) if e in devices), (lk.id,)))
            continue
        if a == b:
            out.append(Finding(ERROR, "self-link", f"link {lk.id} joins {name(devices[a])} to itself",
                               (a,), (lk.id,)))
            continue
        lt = catalog.link_type(lk.type)
        if lt is None:
            out.append(Finding(ERROR, "unknown-link-type", f"link {lk.id}: unknown link type {lk.type!r}",
                               (a, b), (lk.id,)))
            continue
        for end, port_name in ((a, lk.a_port), (b, lk.b_port)):
            dev = devices[end]
            key = (dev.part, port_name, lk.type)
            fit = fits.get(key)
            if fit is None:
                part = catalog.part(dev.part)
                fit = fits[key] = (part, *_port_fit(part, port_name, lk.type)) if part is not None else (None, None, True)
            part, group, accepted = fit
            if part is None:
                continue
            if not accepted:
                accepts = sorted({t for g in part.ports for t in g.accepts})
                where = f"port {port_name!r}" if port_name and part.port_group(port_name) else "any port"
                out.append(Finding(ERROR, "incompatible-link",
                                   f"link {lk.id}: {lt.label} cannot attach to {where} of {name(dev)} ({part.label} "
                                   f"takes {', '.join(accepts)})", (end,), (lk.id,)))
            elif lk.width is not None and group.max_width is not None and lk.width > group.max_width:
                out.append(Finding(ERROR, "width-over-port",
                                   f"link {lk.id}: x{lk.width} is wider than {name(dev)}'s x{group.max_width} "
                                   f"{group.name} port", (end,), (lk.id,)))
        if lt.family == "pcie" and not ({devices[a].kind, devices[b].kind} & PCIE_HUB_KINDS):
            out.append(Finding(ERROR, "pcie-endpoints",
                               f"link {lk.id}: PCIe between {name(devices[a])} and {name(devices[b])} "
                               "needs a PCIe switch or CPU at one end", (a, b), (lk.id,)))
        if lk.width is not None and not lt.per_lane:
            out.append(Finding(WARNING, "width-ignored", f"link {lk.id}: a lane width means nothing for {lt.label}",
                               (a, b), (lk.id,)))
        if shape is not None and len(out) == found:
            correct.add(shape)
    return out


def _check_ports(topo: Topology) -> list[Finding]:
    """Ports in use per device and port group, counted in one pass over the links (what
    ``topo.used_ports`` gives device by device). Only the (device, port) pairs in use are looked at,
    each against its part's groups of that name; what is over budget is reported in device order,
    then in the part's port order, as checking device by device does."""
    links = topo.links.values()
    single = [lk for lk in links if lk.count == 1]
    ends: Counter = Counter(zip([lk.a for lk in single], [lk.a_port or "?" for lk in single]))
    ends.update(zip([lk.b for lk in single], [lk.b_port or "?" for lk in single]))
    for lk in links:
        if lk.count != 1:
            ends[(lk.a, lk.a_port or "?")] += lk.count
            ends[(lk.b, lk.b_port or "?")] += lk.count
    devices, catalog = topo.devices, topo.catalog
    if not all(key == dev.id for key, dev in devices.items()):
        return _ports_device_by_device(topo, ends)  # (a device filed under another id: _check_ids names it)
    named: dict[str, dict[str, list]] = {}  # part id -> port group name -> [(its place, the group)]
    over = []
    for (dev_id, port), n in ends.items():
        dev = devices.get(dev_id)
        if dev is None:
            continue
        groups = named.get(dev.part)
        if groups is None:
            groups = named[dev.part] = {}
            part = catalog.part(dev.part)
            for i, group in enumerate(part.ports if part is not None else ()):
                groups.setdefault(group.name, []).append((i, group))
        for i, group in groups.get(port, ()):
            if n > group.count:
                over.append((dev_id, i, group, n))
    if not over:
        return []
    place = {d: k for k, d in enumerate(devices)}
    over.sort(key=lambda item: (place[item[0]], item[1]))
    name = _namer(topo)
    return [_over_budget(topo, devices[dev_id], group, n, name) for dev_id, _, group, n in over]


def _ports_device_by_device(topo: Topology, ends: Counter) -> list[Finding]:
    """``_check_ports`` device by device, by each device's own id (the general case)."""
    out = []
    used: dict[str, dict[str, int]] = {}
    for (dev_id, port), n in ends.items():
        used.setdefault(dev_id, {})[port] = n
    name = _namer(topo)
    for dev in topo.devices.values():
        part = topo.catalog.part(dev.part)
        if part is None:
            continue
        mine = used.get(dev.id, {})
        for group in part.ports:
            n = mine.get(group.name, 0)
            if n > group.count:
                out.append(_over_budget(topo, dev, group, n, name))
    return out


def _over_budget(topo: Topology, dev, group, n: int, name) -> Finding:
    """``name``: the check's one ``_namer(topo)`` (made per finding, it counted the systems again each time)."""
    part = topo.catalog.part(dev.part)
    links = tuple(lk.id for lk in topo.links_of(dev.id)
                  if (lk.a == dev.id and lk.a_port == group.name) or (lk.b == dev.id and lk.b_port == group.name))
    return Finding(ERROR, "ports-over-budget",
                   f"{name(dev)} ({dev.id}) uses {n} {group.name} ports; {part.label} has {group.count}",
                   (dev.id,), links)


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
    name = _namer(topo)
    for d, gids in where.items():
        if len(gids) > 1:
            out.append(Finding(ERROR, "multiple-groups",
                               f"{name(topo.devices[d]) if d in topo.devices else d} is listed in groups {', '.join(gids)}",
                               (d,) if d in topo.devices else ()))
    return out


def _check_connectivity(topo: Topology) -> list[Finding]:
    out = []
    name = _namer(topo)
    linked = {lk.a for lk in topo.links.values()}
    linked.update(lk.b for lk in topo.links.values())
    for dev in topo.gpus():
        if dev.id not in linked:
            out.append(Finding(WARNING, "isolated-gpu", f"{name(dev)} ({dev.id}) has no links", (dev.id,)))
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
    name = _namer(topo)
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
                               f"link {lk.id}: {name(fast)} ({cat.part(fast.part).label}) links at {lt.label} "
                               f"({lt.rate_bps_per_direction / 1e9:g} Gb/s) with {name(slow)} "
                               f"({cat.part(slow.part).label}), below its {max(ra, rb) / 1e9:g} Gb/s",
                               (fast.id, slow.id), (lk.id,)))
    return out


def _check_nic_host_link(topo: Topology) -> list[Finding]:
    """A NIC whose cabled network ports carry more than its PCIe host link: an 800 Gb/s ConnectX-8 behind a
    PCIe Gen5 x16 (63 GB/s) moves at most what the host link does. One finding per kind of NIC so placed.
    Only NICs whose part could outrun its host port are looked at (a 400G ConnectX-7 on Gen5 x16 cannot)."""
    cat = topo.catalog
    could: dict[str, bool] = {}

    def outruns(part_id: str) -> bool:
        if part_id not in could:
            part = cat.part(part_id)
            most = {"net": 0.0, "pcie": 0.0}
            for group in (part.ports if part else ()):
                for t in group.accepts:
                    lt = cat.link_type(t)
                    kind = "net" if lt is not None and lt.family in NETWORK_FAMILIES else \
                        "pcie" if lt is not None and lt.family == "pcie" else None
                    if kind:
                        rate = lt.bandwidth_per_direction_Bps(group.max_width) * (group.count if kind == "net" else 1)
                        most[kind] = max(most[kind], rate)
            could[part_id] = most["net"] > most["pcie"] > 0
        return could[part_id]

    shapes: dict[tuple, list[str]] = {}
    for nic in topo.devices_of_kind("nic"):
        if not outruns(nic.part):
            continue
        net = host = 0.0
        host_types = set()
        for lk in topo.links_of(nic.id):
            lt = topo.link_type_of(lk)
            if lt is None:
                continue
            if lt.family in NETWORK_FAMILIES:
                net += topo.link_bandwidth_per_direction_Bps(lk)
            elif lt.family == "pcie":
                host += topo.link_bandwidth_per_direction_Bps(lk)
                host_types.add(f"{lt.label} x{lk.width or lt.default_width or 16}")
        if host > 0 and net > host * 1.001:
            shapes.setdefault((nic.part, round(net), round(host), tuple(sorted(host_types))), []).append(nic.id)
    out = []
    name = _namer(topo)
    for (part, carried, through, types), which in shapes.items():
        first = name(topo.devices[which[0]])
        who = first if len(which) == 1 else f"{len(which)} NICs such as {first}"
        out.append(Finding(WARNING, "nic-host-bound",
                           f"{who} ({cat.part(part).label}): the network links carry {carried / 1e9:g} GB/s "
                           f"per direction, the {', '.join(types)} host link {through / 1e9:.1f} GB/s; traffic "
                           "through the NIC runs at most at the host link's rate", tuple(which)))
    return out


CHECKS = (_check_ids, _check_devices, _check_links, _check_ports, _check_groups, _check_connectivity,
          _check_negotiated_speed, _check_nic_host_link)


# Checks that find nothing but warnings: a run, which refuses errors only, need not make them.
WARNING_ONLY = (_check_connectivity, _check_negotiated_speed, _check_nic_host_link)
# What the file reader itself refuses (an id used twice or filed under another, a group listing a
# device that is not there or one already in a group, a missing parent, a parent cycle): these find
# nothing in a topology as ``fileio.load`` returns it.
READER_REFUSES = (_check_ids, _check_groups)


def validate(topo: Topology) -> list[Finding]:
    return _run(topo, CHECKS)


def errors(topo: Topology, as_read: bool = False) -> list[Finding]:
    """``validate(topo)``'s errors, in its order, without the checks that only warn (0.1 s of a
    16,384-GPU design). ``as_read``: ``topo`` is as ``fileio.load`` returned it, not edited since,
    so the checks its reader already made are not made again (a further 0.06 s)."""
    skip = WARNING_ONLY + (READER_REFUSES if as_read else ())
    return [f for f in _run(topo, tuple(c for c in CHECKS if c not in skip)) if f.severity == ERROR]


def first_errors_words(errors: list[Finding]) -> str:
    """The first three findings' messages, and how many more there are: what a refusal quotes."""
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(f.message for f in errors[:3]) + more


def _run(topo: Topology, checks) -> list[Finding]:
    findings: list[Finding] = []
    with paused_gc():
        for check in checks:
            check_cancelled()  # between the checks: each takes up to a fraction of a second on a 59 MB design
            findings.extend(check(topo))
    return findings
