"""What a drag of items on the canvas ends as, one undo step each, as in draw.io's containers:

- a move;
- a move that takes devices (or a collapsed system's box) out of the system or group whose frame
  they were dragged out of, and into the frame they were dropped in (a part dropped from the palette
  into a frame already joined it; dragged out, a device stayed in its system, its frame stretched
  after it);
- with Ctrl held (draw.io, Visio, Inkscape, yEd: Ctrl+drag duplicates), copies where the mouse let
  go, the originals left in place; a Ctrl+click without a drag still adds to or takes from the
  selection, as Qt does.

A frame is judged as it was drawn when the drag began: the frames the drag could take devices out
of stay still while it goes on (``DragStart.fixed``), so the edge the user drags across is the one
on the screen; a frame whose members all move with the drag follows them.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainterPath

from ..model.clipboard import filled_groups, copy_selection, paste_command
from ..model.commands import Command, Macro, Move, SetAttribute
from ..model.topology import Topology
from .window_habits import copy_words, name_copies


class DragStart:
    """What a press on the canvas may drag: each expanded group's frame at the press (the scene region
    it holds: its rectangle less the gaps around devices that are not members, ui/group_region.py),
    whether Ctrl was held, and the frames to keep still."""

    def __init__(self, scene, keys: list[str], modifiers) -> None:
        self.copying = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        self.frames: dict[str, QPainterPath] = {}
        self.fixed: set[str] = set()
        if scene.lod is not None or not keys:
            return
        topo = scene.topology
        self.frames = {gid: item.region for gid, item in scene.group_items.items() if not item.collapsed}
        dragged = set(keys)
        whole = _moved_whole(topo, dragged, self.frames)
        inner = {grp.id for k in keys if k in topo.devices and (grp := topo.group_of(k)) is not None}
        inner |= {topo.groups[k].parent for k in keys if k in topo.groups and topo.groups[k].parent in self.frames}
        self.fixed = {g.id for gid in inner for g in topo.group_chain(gid) if g.id not in whole}

    def frame_at(self, topo: Topology, point: QPointF, outside: set[str] = frozenset()) -> str | None:
        """The innermost frame (at the press) around a scene point, as a palette drop picks it."""
        around = [(_area(r.boundingRect()), len(topo.group_chain(g)), g) for g, r in self.frames.items()
                  if g not in outside and r.contains(point)]
        return min(around, key=lambda t: (t[0], -t[1]))[2] if around else None


def _area(rect: QRectF) -> float:
    return rect.width() * rect.height()


def _moved_whole(topo: Topology, dragged: set[str], frames: dict[str, QPainterPath]) -> set[str]:
    """The drawn groups every device of which is dragged: they move as a whole, members kept (one
    pass over the group tree, as a copy finds the groups it fills; not a walk per frame at each press)."""
    filled = filled_groups(topo, dragged) if frames else {}
    return {g for g in frames if filled.get(g)}


def membership_moves(topo: Topology, start: DragStart, ends: dict[str, QPointF]) -> tuple[list[Command], list[tuple]]:
    """The edits for dragged devices and collapsed system boxes (``ends``: id -> scene point let go
    at) that left the frame of the group they were in, or came into another: each goes to the
    innermost frame around where it was let go (none: no group); a device as a member, a box as a
    child group. A device of a group moved whole stays. Also returns the changes, (id, was, now)."""
    whole = _moved_whole(topo, {k for k in ends if k in topo.devices}, start.frames)
    lists: dict[str, list[str]] = {}
    parents: list[Command] = []
    changes: list[tuple] = []
    for key, point in ends.items():
        if key in topo.devices:
            was = getattr(topo.group_of(key), "id", None)
        elif key in topo.groups:
            was = topo.groups[key].parent
        else:
            continue
        if was in whole or (was is not None and was not in start.frames):
            continue
        now = start.frame_at(topo, point, outside=whole)
        if now == was:
            continue
        changes.append((key, was, now))
        if key in topo.groups:
            parents.append(SetAttribute(key, "parent", now, f"parent of {key}"))
            continue
        if was is not None:
            lists.setdefault(was, list(topo.groups[was].devices)).remove(key)
        if now is not None:
            lists.setdefault(now, list(topo.groups[now].devices)).append(key)
    return [*(SetAttribute(gid, "devices", members, f"members of {gid}") for gid, members in lists.items()),
            *parents], changes


def finish(scene, start: DragStart | None, moved: dict, old: dict, items: dict) -> tuple[Command, list[str] | None] | None:
    """The one command a drag ends as (``moved``/``old``: key -> the document's new and old places;
    ``items``: key -> its item, at the place it was let go) and what to select after it (None: the
    selection as it is), or None when it moved nothing. A copy puts the dragged items back where the
    press found them first."""
    if not moved:
        return None
    topo = scene.topology
    if start is not None and start.copying:
        return _copy(scene, start, moved, old, items)
    n = len(moved)
    move = Move(moved, old, f"move {n} item{'s' if n > 1 else ''}")
    if start is None or not start.frames:
        return move, None
    edits, changes = membership_moves(topo, start, {k: items[k].scenePos() for k in moved})
    if not edits:
        return move, None
    _key, was, now = changes[0]
    where = f"into {topo.groups[now].name}" if now else f"out of {topo.groups[was].name}"
    return Macro([move, *edits], f"move {n} item{'s' if n > 1 else ''} {where}"), None


def _copy(scene, start: DragStart, moved: dict, old: dict, items: dict) -> tuple[Command, list[str]]:
    """Ctrl+drag: copies of what was dragged (devices, and the devices of a collapsed system box, with
    the links among them) at the places let go, the originals back where they were. A copied device
    whose whole group is not copied with it joins the frame it was let go in, as a moved one does, and
    a copied system box the frame it was let go in."""
    topo = scene.topology
    ends = {k: items[k].scenePos() for k in moved}
    for key, item in items.items():
        item.setPos(*scene.press_position(key))
    key = next(iter(moved))
    before = old.get(key) or topo.layout.positions.get(key, (0.0, 0.0))
    offset = (moved[key][0] - before[0], moved[key][1] - before[1])
    devices = [d for k in moved for d in ([k] if k in topo.devices else topo.devices_in_group(k))]
    boxes = [k for k in moved if k in topo.groups]   # a copied system box goes in the frame it was let go in
    into = start.frame_at(topo, ends[boxes[0]]) if boxes else None
    cmd, mapping = paste_command(topo, copy_selection(topo, devices), offset, into_group=into)
    cmd.text = f"copy {copy_words(cmd)} by Ctrl+drag"   # named as a paste or duplicate is
    copied_groups = {g.id for g in cmd.groups}
    lod = scene.lod
    for d in (k for k in moved if k in topo.devices):   # a device copied without its group: as a move
        if cmd.memberships.get(mapping[d]) in copied_groups:
            continue
        # in a cluster's overview, the system opened under the spot (as a part dropped there; without
        # it the copy went to the 'Not connected' row, out of sight)
        frame = start.frame_at(topo, ends[d]) if lod is None else lod.open_system_at(ends[d])
        if frame is None:
            cmd.memberships.pop(mapping[d], None)
        else:
            cmd.memberships[mapping[d]] = frame
            if lod is not None:
                cmd.positions[mapping[d]] = lod.to_document(frame, ends[d])
    name_copies(topo, cmd)
    cmd.positions = {k: scene.snapped(*xy) if lod is None else xy for k, xy in cmd.positions.items()}   # as a move rounds (and snaps) them
    return cmd, [mapping[k] for k in moved if k in mapping] or list(mapping.values())
