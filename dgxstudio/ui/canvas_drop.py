"""A drop from the palette on the canvas (or *Add at the centre*): a part, joining the innermost
frame it lands in (or the system opened in the overview under it), or a whole system with a name of
its own."""

from __future__ import annotations

from PySide6.QtCore import QPointF

from ..model.builders import SYSTEM_BUILDERS, SYSTEM_LABELS
from ..model.catalog import KIND_LABELS
from ..model.clipboard import copy_selection, paste_command
from ..model.commands import AddItems
from ..model.topology import Device, Topology
from .window_habits import unique_names


def drop(scene, payload: str, pos: QPointF) -> list[str]:
    """Add what the palette carries (a part or a whole system) at a scene position."""
    topo = scene.topology
    kind_of, _, what = payload.partition(":")
    if kind_of == "part":
        part = topo.catalog.part(what)
        if part is None:
            scene.statusMessage.emit(f"unknown part {what!r}")
            return []
        prefix = {"gpu": "gpu", "nvswitch": "nvswitch", "nic": "nic", "ib_switch": "ibsw", "eth_switch": "ethsw",
                  "pcie_switch": "pcie", "cpu": "cpu"}[part.kind]
        did = topo.new_id(prefix)
        n = sum(1 for d in topo.devices.values() if d.kind == part.kind)
        dev = Device(did, part.kind, part.id, f"{KIND_LABELS[part.kind]} {n}")
        at, memberships = (pos.x(), pos.y()), {}
        inside = scene.lod.open_system_at(pos) if scene.lod is not None else None
        if inside is not None:   # dropped into a system opened in the overview: it joins that system
            at, memberships = scene.lod.to_document(inside, pos), {did: inside}
        elif scene.lod is None:   # into a drawn group's frame: it joins the innermost, as in a container
            frames = [g for g in scene.group_items.values() if not g.collapsed and g.region.contains(g.mapFromScene(pos))]
            if frames:
                memberships = {did: min(frames, key=lambda g: g.frame.width() * g.frame.height()).group_id}
        scene.document.push(AddItems([dev], positions={did: at}, memberships=memberships, text=f"add {part.label}"))
        scene.overview_now()   # its system opens again, with it
        scene.select_ids([did])
        if scene.lod is not None and did not in scene.device_items:   # joined to nothing: in a closed block
            scene.statusMessage.emit(f"Added {dev.name} ({did}) in the overview's 'Not connected' row: "
                                    "Find opens it there")
        else:   # (the bar held whatever came before: another design's refusal, say)
            scene.statusMessage.emit(f"Added {dev.name} ({part.label}): drag from its round handle to another "
                                     "device to link them")
        return [did]
    if kind_of == "system":
        if what not in SYSTEM_BUILDERS:
            scene.statusMessage.emit(f"unknown system {what!r}")
            return []
        scratch = Topology("scratch", topo.catalog)
        SYSTEM_BUILDERS[what](scratch, origin=(0.0, 0.0))
        xs = [p[0] for p in scratch.layout.positions.values()]
        ys = [p[1] for p in scratch.layout.positions.values()]
        offset = (pos.x() - (min(xs) + max(xs)) / 2, pos.y() - (min(ys) + max(ys)) / 2)
        cmd, mapping = paste_command(topo, copy_selection(scratch, list(scratch.devices)), offset,
                                     text=f"add {SYSTEM_LABELS[what]}")
        taken = {g.name for g in topo.groups.values()}   # a second DGX H100 is "DGX H100 #2", not a twin
        for grp in cmd.groups:
            if grp.name in taken:
                (grp.name,) = unique_names(taken, [f"{grp.name} #2"])
        scene.document.push(cmd)
        new = [mapping[d] for d in scratch.devices]
        scene.select_ids([mapping["system"]])
        gpus = sum(1 for d in scratch.devices.values() if d.kind == "gpu")
        scene.statusMessage.emit(f"Added {topo.groups[mapping['system']].name} ({gpus} GPUs, {len(new)} devices)")
        return new
    scene.statusMessage.emit(f"cannot drop {payload!r}")
    return []
