"""A drop from the palette on the canvas (or *Add at the centre*): a part, joining the innermost
frame it lands in (or the system opened in the overview under it), or a whole system with a name of
its own, at the free spot nearest the drop point, as diagram tools place a dropped container: centred
on the point it covered loose devices or another system's frame (new-user review, session 37)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF

from ..model.builders import SYSTEM_BUILDERS, SYSTEM_LABELS
from ..model.catalog import KIND_LABELS
from ..model.clipboard import copy_selection, paste_command
from ..model.commands import AddItems
from ..model.topology import Device, Topology
from .canvas_items import DeviceItem, GroupItem
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
        centre = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
        offset = (pos.x() - centre[0], pos.y() - centre[1])
        moved_to = None
        if scene.lod is None:   # (the overview draws positions of its own: a new system is in its own row)
            foot = footprint(scratch).translated(offset[0], offset[1])
            dx, dy = free_spot(foot, taken_rects(scene))
            offset = (offset[0] + dx, offset[1] + dy)
            moved_to = foot.translated(dx, dy) if (dx, dy) != (0.0, 0.0) else None
        cmd, mapping = paste_command(topo, copy_selection(scratch, list(scratch.devices)), offset,
                                     text=f"add {SYSTEM_LABELS[what]}")
        taken = {g.name for g in topo.groups.values()}   # a second DGX H100 is "DGX H100 #2", not a twin
        for grp in cmd.groups:
            if grp.name in taken:
                (grp.name,) = unique_names(taken, [f"{grp.name} #2"])
        scene.document.push(cmd)
        new = [mapping[d] for d in scratch.devices]
        scene.select_ids([mapping["system"]])
        for view in scene.views() if moved_to is not None else ():   # beside what it was dropped on: in sight
            view.ensureVisible(moved_to, 20, 20)
        gpus = sum(1 for d in scratch.devices.values() if d.kind == "gpu")
        scene.statusMessage.emit(f"Added {topo.groups[mapping['system']].name} ({gpus} GPUs, {len(new)} devices)")
        return new
    scene.statusMessage.emit(f"cannot drop {payload!r}")
    return []


GAP = 30.0   # between a placed system's frame and what stands around it (scene units)


def footprint(topo: Topology) -> QRectF:
    """What a topology's drawing covers at its positions: its devices, and its groups' frames with their
    title bars around them (as TopologyScene._update_frames draws them), a collapsed group as its box."""
    dev = DeviceItem.drawn_rect()
    rects: dict[str, QRectF] = {}

    def of_group(gid: str) -> QRectF:
        if gid in rects:
            return rects[gid]
        if gid in topo.layout.collapsed and gid in topo.layout.positions:
            x, y = topo.layout.positions[gid]
            w, h = GroupItem.BOX_W + 4, GroupItem.BOX_H + 4
            rects[gid] = QRectF(x - w / 2, y - h / 2, w, h)
            return rects[gid]
        rect = QRectF()
        for child in (g.id for g in topo.groups.values() if g.parent == gid):
            rect = rect.united(of_group(child))
        for d in topo.groups[gid].devices:
            if d in topo.layout.positions:
                x, y = topo.layout.positions[d]
                rect = rect.united(dev.translated(x, y))
        rects[gid] = GroupItem.drawn_around(GroupItem.frame_around(rect))
        return rects[gid]

    out = QRectF()
    for g in topo.groups.values():
        if g.parent is None:
            out = out.united(of_group(g.id))
    for d in topo.devices:
        if topo.group_of(d) is None and d in topo.layout.positions:
            x, y = topo.layout.positions[d]
            out = out.united(dev.translated(x, y))
    return out


def taken_rects(scene) -> np.ndarray:
    """(left, top, right, bottom) of every frame, collapsed box and device drawn on the canvas."""
    if scene._frames_pending:   # an edit moved something this turn: its frames follow first
        scene._update_frames()
    items = [*scene.group_items.values(), *scene.device_items.values()]
    rects = [r for r in (i.sceneBoundingRect() for i in items) if not r.isNull()]
    return np.array([(r.left(), r.top(), r.right(), r.bottom()) for r in rects], float).reshape(-1, 4)


def free_spot(foot: QRectF, taken: np.ndarray) -> tuple[float, float]:
    """The shortest move (dx, dy) that leaves ``foot``, GAP around it, clear of every ``taken`` rectangle.
    The candidates are the moves that put it just beside a taken rectangle on each axis (the nearest
    free spot always has both coordinates among them, or unmoved), tried nearest first."""
    l, t, r, b = foot.left() - GAP, foot.top() - GAP, foot.right() + GAP, foot.bottom() + GAP

    def clear(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        return ~((l + dx[:, None] < taken[:, 2]) & (r + dx[:, None] > taken[:, 0])
                 & (t + dy[:, None] < taken[:, 3]) & (b + dy[:, None] > taken[:, 1])).any(axis=1)

    if not len(taken) or clear(np.zeros(1), np.zeros(1))[0]:
        return 0.0, 0.0
    xs = np.unique(np.concatenate(([0.0], taken[:, 2] - l, taken[:, 0] - r)))
    ys = np.unique(np.concatenate(([0.0], taken[:, 3] - t, taken[:, 1] - b)))
    dx, dy = (a.ravel() for a in np.meshgrid(xs, ys))
    order = np.argsort(np.hypot(dx, dy), kind="stable")
    dx, dy = dx[order], dy[order]
    for at in range(0, len(dx), 2048):
        ok = np.flatnonzero(clear(dx[at:at + 2048], dy[at:at + 2048]))
        if len(ok):
            return float(dx[at + ok[0]]), float(dy[at + ok[0]])
    return 0.0, float(taken[:, 3].max() - t)   # (not reached: below everything is always free)
