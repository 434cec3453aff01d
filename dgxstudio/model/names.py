"""Devices named in words as the user sees them on the canvas: by name, not by id.

Bottleneck lines (``simulate``'s text, the Results dock, the busiest links' plot, the report) named a
RoCE NIC ``s1.ib0`` where the canvas says "ETH0": ids are kept for what scripts read (JSON), names for
what people read.
"""

from __future__ import annotations

from .topology import Topology


def several_systems(topo: Topology) -> bool:
    """Whether the design holds more than one system (then a device's name alone may not say which)."""
    seen = 0
    for g in topo.groups.values():
        if g.kind == "system":
            seen += 1
            if seen > 1:
                return True
    return False


def device_words(topo: Topology, obj_id: str, with_system: bool | None = None) -> str:
    """A device's name; in a design of several systems, after its system's name unless the name starts
    with it already (a generated cluster's "DGX H100 #1 ETH0"; a pasted system keeps "ETH0", so it reads
    "DGX H100 ETH0"). A group's name for a group; anything else (a channel's end the topology no longer
    holds) by its id. ``with_system``: ``several_systems(topo)``, when the caller names many ends."""
    dev = topo.devices.get(obj_id)
    if dev is None:
        group = topo.groups.get(obj_id)
        return group.name if group is not None else obj_id
    name = dev.name or obj_id
    if with_system is None:
        with_system = several_systems(topo)
    if not with_system:
        return name
    system = topo.frame_of(obj_id)  # (a system without a frame has no name of its own)
    if system is None:
        return name
    sname = topo.groups[system].name
    return name if name == sname or name.startswith(sname + " ") else f"{sname} {name}"


def ends_words(topo: Topology, a: str, b: str, arrow: str = "→") -> str:
    """A link direction's two ends, as ``device_words`` names them: "Leaf 1 → DGX H100 #1 ETH0"."""
    several = several_systems(topo)
    return f"{device_words(topo, a, several)} {arrow} {device_words(topo, b, several)}"


def ring_words(topo: Topology, ring: list[str], arrow: str = "→", head: int = 8, more: str = "…",
               sep: str | None = None) -> str:
    """A ring's GPUs in order, as ``device_words`` names them, each system named once where the ring
    enters it ("DGX H100 #1 GPU0 → GPU2 → … → DGX H100 #2 GPU1"): all of a ring of up to 16, else the
    first ``head`` and the count of GPUs and systems. Only the GPUs shown are named (a ring of 16,384
    GPUs shows 8). ``sep``: what joins them instead of the arrow (", " for a list)."""
    sep = f" {arrow} " if sep is None else sep
    several = several_systems(topo)
    shown = ring if len(ring) <= 16 else ring[:head]
    words, last = [], None
    for g in shown:
        full = device_words(topo, g, several)
        system = topo.frame_of(g) if several else None
        prefix = topo.groups[system].name + " " if system is not None else ""
        words.append(full[len(prefix):] if system == last and prefix and full.startswith(prefix) else full)
        last = system
    if len(ring) <= 16:
        return sep.join(words)
    systems = len({topo.system_of(g) for g in ring} - {None}) if several else 0
    return sep.join(words) + f" {more} ({len(ring)} GPUs" + (f" in {systems} systems)" if systems > 1 else ")")


def name_taken(topo: Topology, device_id: str, name: str) -> str | None:
    """Another device of the same system frame (or, outside frames, another outside them) already
    called ``name``, or None. Names tell devices apart on the canvas, in Find and in every report
    ("DGX H100 #1 GPU0": the frame's name and the device's), so they are unique within a frame;
    every DGX holds a GPU0, so the same name in two frames is fine."""
    frame = topo.frame_of(device_id)
    for other, dev in topo.devices.items():
        if dev.name == name and other != device_id and topo.frame_of(other) == frame:
            return other
    return None
