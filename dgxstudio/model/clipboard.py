"""Copy and paste of a selection: the devices, the links among them, and the groups they fill.

A clip is plain data (JSON-ready), so it can travel through the system clipboard between windows.
Pasting gives every object a fresh id and keeps the links among the copies.
"""

from __future__ import annotations

import re

from .commands import AddItems
from .fileio import topology_from_dict, topology_to_dict
from .topology import Device, Group, Link, Topology

CLIP_FORMAT = "dgxstudio-clip"


def copy_selection(topo: Topology, device_ids: list[str]) -> dict:
    """The clip of the chosen devices, the links among them and every group they fill (a group with a
    device at some depth, all of whose devices at every depth are chosen)."""
    keep = set(device_ids)
    chosen = [d for d in topo.devices if d in keep]
    keep = set(chosen)
    filled = filled_groups(topo, keep) if keep else {}
    groups = [gid for gid in topo.groups if filled.get(gid)]
    sub = Topology(topo.name, topo.catalog)
    kept_groups = set(groups)
    for gid in groups:
        g = topo.groups[gid]
        parent = g.parent if g.parent in kept_groups else None
        sub.groups[gid] = Group(g.id, g.name, g.kind, parent, [d for d in g.devices if d in keep], dict(g.properties))
    for d in chosen:
        sub.devices[d] = topo.devices[d]
        if d in topo.layout.positions:
            sub.layout.positions[d] = topo.layout.positions[d]
    for gid in groups:
        if gid in topo.layout.positions:
            sub.layout.positions[gid] = topo.layout.positions[gid]
        if gid in topo.layout.collapsed:
            sub.layout.collapsed.add(gid)
    for lk in topo.links.values():
        if lk.a in keep and lk.b in keep:
            sub.links[lk.id] = lk
    doc = topology_to_dict(sub)
    doc["format"] = CLIP_FORMAT
    return doc


def filled_groups(topo: Topology, keep: set[str]) -> dict[str, bool]:
    """Per group, whether it holds a device at some depth and every device at every depth is in
    ``keep``: one pass over the group tree, children before parents (a cluster's thousands of groups
    each asking ``devices_in_group`` froze the window for seconds)."""
    children: dict[str, list[str]] = {}
    for g in topo.groups.values():
        if g.parent in topo.groups:
            children.setdefault(g.parent, []).append(g.id)
    state: dict[str, tuple[bool, bool]] = {}   # group -> (holds a device, every device kept)
    entered: set[str] = set()                   # a parent cycle in a damaged file is cut where it closes
    for root in topo.groups:
        if root in state:
            continue
        stack = [(root, False)]
        while stack:
            gid, done = stack.pop()
            if done:
                devs = [d for d in topo.groups[gid].devices if d in topo.devices]
                holds = bool(devs)
                every = all(d in keep for d in devs)
                for c in children.get(gid, ()):
                    h, e = state.get(c, (False, True))
                    holds |= h
                    every &= e
                state[gid] = (holds, every)
            elif gid not in entered:
                entered.add(gid)
                stack.append((gid, True))
                stack.extend((c, False) for c in children.get(gid, ()) if c not in entered)
    return {gid: h and e for gid, (h, e) in state.items()}


def _fresh(topo: Topology, taken: set[str], old: str) -> str:
    stem = re.sub(r"\d+$", "", old.split(".")[-1]) or "item"
    n = 0
    while True:
        candidate = f"{stem}{n}"
        if candidate not in taken and candidate not in topo.devices and candidate not in topo.links \
                and candidate not in topo.groups:
            taken.add(candidate)
            return candidate
        n += 1


def paste_command(topo: Topology, clip: dict, offset: tuple[float, float] = (40.0, 40.0),
                  into_group: str | None = None, text: str = "paste") -> tuple[AddItems, dict[str, str]]:
    """An AddItems that pastes the clip with new ids; also returns old id -> new id."""
    doc = dict(clip)
    doc["format"] = "dgxstudio-topology"
    sub = topology_from_dict(doc, topo.catalog)
    taken: set[str] = set()
    new = {old: _fresh(topo, taken, old) for old in [*sub.groups, *sub.devices, *sub.links]}
    dx, dy = offset
    groups = [Group(new[g.id], g.name, g.kind, new[g.parent] if g.parent else into_group, [], dict(g.properties))
              for g in sub.groups.values()]
    memberships = {}
    for g in sub.groups.values():
        for d in g.devices:
            memberships[new[d]] = new[g.id]
    devices = []
    for d in sub.devices.values():
        devices.append(Device(new[d.id], d.kind, d.part, d.name, dict(d.properties)))
        if new[d.id] not in memberships and into_group is not None:
            memberships[new[d.id]] = into_group
    links = [Link(new[lk.id], new[lk.a], new[lk.b], lk.type, lk.count, lk.a_port, lk.b_port, lk.width,
                  lk.bandwidth_per_direction_Bps, lk.latency_s) for lk in sub.links.values()]
    positions = {new[k]: (x + dx, y + dy) for k, (x, y) in sub.layout.positions.items()}
    collapsed = {new[g] for g in sub.layout.collapsed}
    return AddItems(devices, links, groups, positions, memberships, collapsed, text), new
