"""Automatic canvas layout: a cube or circle for small NVLink meshes, layers for trees and fat trees.

Returns positions only; the caller applies them through a Move command so the layout can be undone.
"""

from __future__ import annotations

import math
from collections import deque

from .topology import Topology

KIND_ROW = {"nvswitch": 0, "gpu": 1, "nic": 2, "pcie_switch": 3, "cpu": 4}


def _nvlink_neighbours(topo: Topology, gpus: list[str]) -> dict[str, set[str]]:
    members = set(gpus)
    out = {g: set() for g in gpus}
    for g in gpus:
        for lk in topo.links_of(g):
            lt = topo.link_type_of(lk)
            other = lk.other(g)
            if lt is not None and lt.family == "nvlink" and other in members:
                out[g].add(other)
    return out


def _cube(gpus: list[str], nb: dict[str, set[str]]) -> dict[str, tuple[float, float]] | None:
    """Eight GPUs whose NVLink graph contains a cube: two faces drawn offset, as the white papers do."""
    if len(gpus) != 8:
        return None
    front = gpus[:4]
    back = gpus[4:]
    if not all(back[i] in nb[front[i]] for i in range(4)):
        return None
    face = [(0, 0), (260, 0), (260, 260), (0, 260)]
    pos = {}
    for i, g in enumerate(front):
        pos[g] = face[i]
    for i, g in enumerate(back):
        pos[g] = (face[i][0] + 150, face[i][1] - 130)
    return pos


def _circle(items: list[str], cx: float, cy: float, radius: float) -> dict[str, tuple[float, float]]:
    n = len(items)
    return {d: (cx + radius * math.cos(2 * math.pi * i / n - math.pi / 2),
                cy + radius * math.sin(2 * math.pi * i / n - math.pi / 2)) for i, d in enumerate(items)}


def _system_layout(topo: Topology, devices: list[str], origin: tuple[float, float]) -> dict[str, tuple[float, float]]:
    """One system: GPUs as a cube or circle, NVSwitches above, NICs, PCIe switches and CPUs in rows below."""
    ox, oy = origin
    gpus = [d for d in devices if topo.devices[d].kind == "gpu"]
    nb = _nvlink_neighbours(topo, gpus)
    has_switches = any(topo.devices[d].kind == "nvswitch" for d in devices)
    pos: dict[str, tuple[float, float]] = {}
    mesh = None if has_switches else _cube(gpus, nb)
    if mesh is None and gpus:
        if has_switches or not any(nb.values()):
            mesh = {g: (110.0 * i, 260.0) for i, g in enumerate(gpus)}
        else:
            mesh = _circle(gpus, 130.0, 130.0, 40.0 * max(len(gpus), 4))
    for g, (x, y) in (mesh or {}).items():
        pos[g] = (ox + x, oy + y)
    rows: dict[int, list[str]] = {}
    for d in devices:
        kind = topo.devices[d].kind
        if kind != "gpu":
            rows.setdefault(KIND_ROW.get(kind, 5), []).append(d)
    width = max(110.0 * max(len(gpus), 1), 400.0)
    y_of = {0: -40.0, 2: 400.0, 3: 500.0, 4: 620.0, 5: 720.0}
    for row, items in rows.items():
        step = width / max(len(items), 1)
        for i, d in enumerate(items):
            pos[d] = (ox + step * i + step / 2 - 55, oy + y_of[row])
    return pos


def auto_layout(topo: Topology) -> dict[str, tuple[float, float]]:
    """Positions for every device and system group."""
    pos: dict[str, tuple[float, float]] = {}
    systems = [g for g in topo.groups.values() if g.kind == "system"]
    in_system = set()
    for i, g in enumerate(systems):
        members = topo.devices_in_group(g.id)
        in_system.update(members)
        pos.update(_system_layout(topo, members, (i * 1100.0, 2000.0 if len(systems) > 1 else 0.0)))
    rest = [d for d in topo.devices if d not in in_system]
    if not systems:
        return _system_layout(topo, rest, (0.0, 0.0))
    if len(systems) == 1 and not rest:
        return pos
    # Layers of the fabric by distance from the systems: leaves just above them, spines above those.
    level: dict[str, int] = {}
    queue = deque()
    for d in in_system:
        level[d] = 0
        queue.append(d)
    while queue:
        u = queue.popleft()
        for lk in topo.links_of(u):
            v = lk.other(u)
            if v not in level:
                level[v] = level[u] + 1
                queue.append(v)
    layers: dict[int, list[str]] = {}
    for d in rest:
        layers.setdefault(level.get(d, 99), []).append(d)
    span = max(len(systems) * 120.0, 600.0)
    for k, (lvl, items) in enumerate(sorted(layers.items())):
        step = span / len(items)
        for i, d in enumerate(items):
            pos[d] = (step * i + step / 2 - 60, 1000.0 - 350.0 * (k + 1))
    for i, g in enumerate(systems):
        pos[g.id] = (i * 150.0, 1200.0)
    return pos


# ---- what a drawing shows ------------------------------------------------------------------------
# The canvas and the report's picture draw the same thing: collapsed groups as boxes standing for
# their insides, and the links from a collapsed group to the outside merged into one bundle.

def hidden_by_collapsed(topo: Topology) -> dict[str, str]:
    """Device id -> the outermost collapsed group that hides it."""
    if not topo.layout.collapsed:
        return {}
    out: dict[str, str] = {}
    for d in topo.devices:
        g = topo.group_of(d)
        if g is None:
            continue
        hider = None
        for grp in topo.group_chain(g.id):
            if grp.id in topo.layout.collapsed:
                hider = grp.id
        if hider is not None:
            out[d] = hider
    return out


def default_position(index: int) -> tuple[float, float]:
    """Where a device without a stored position is drawn: a grid by document order."""
    return (140.0 * (index % 10), 100.0 * (index // 10))


def group_position(topo: Topology, group_id: str) -> tuple[float, float]:
    """A collapsed group's box: its stored position, else the centre of its devices."""
    if group_id in topo.layout.positions:
        return topo.layout.positions[group_id]
    pts = [topo.layout.positions[d] for d in topo.devices_in_group(group_id) if d in topo.layout.positions]
    if not pts:
        return (0.0, 0.0)
    return (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))


def drawn_links(topo: Topology, hidden: dict[str, str]) -> list[tuple[str, str, list, bool]]:
    """(end a, end b, links, is_bundle) for everything a drawing shows: each link between two visible
    devices on its own; links reaching into collapsed groups merged per pair of visible ends; links
    inside one collapsed group left out."""
    direct, bundles = [], {}
    for lk in topo.links.values():
        if lk.a not in topo.devices or lk.b not in topo.devices:
            continue
        ea, eb = hidden.get(lk.a, lk.a), hidden.get(lk.b, lk.b)
        if ea == eb:
            continue
        if ea == lk.a and eb == lk.b:
            direct.append((lk.a, lk.b, [lk], False))
        else:
            bundles.setdefault((ea, eb) if ea <= eb else (eb, ea), []).append(lk)
    return direct + [(a, b, links, True) for (a, b), links in bundles.items()]
