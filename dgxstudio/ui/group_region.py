"""An expanded group's frame as the region its members hold, so a device that is not a member never
looks like one.

A frame was the rectangle around its members: a group of GPU0 and GPU2 of the DGX-1's cube mesh (two
corners of a square) covered GPU1, GPU3 and GPU7, which then looked like members, and a drag of GPU7
by a few pixels made it one (a drag ends in the innermost frame around where it was let go, as in
draw.io's containers). Container tools keep such devices out by moving them (yEd's and Graphviz's
group layouts, WebCola's constraints): here the drawing's places mean something (the cube mesh), so
the frame leaves them out instead, as Bubble Sets draw a set over a layout they must not disturb
(Collins, Penn and Carpendale, IEEE TVCG 15(6), 2009): the rectangle less a gap around every device
or collapsed box inside it that is not a member, with each member's own rectangle kept, lightly
filled so that a gap reads as outside. Drops and drags judge "inside" by this region too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath

if TYPE_CHECKING:
    from .canvas import TopologyScene
    from .canvas_items import GroupItem

GAP = 10.0      # around a device that is not a member, inside a frame's rectangle
KEEP = 8.0      # around a member: never cut by a neighbour's gap
RADIUS = 8.0


def rounded(rect: QRectF, radius: float = RADIUS) -> QPainterPath:
    path = QPainterPath()
    path.addRoundedRect(rect, radius, radius)
    return path


def outsiders_and_members(scene: "TopologyScene", item: "GroupItem", frame: QRectF) -> tuple[list[QRectF], list[QRectF]]:
    """The scene rectangles of the devices and collapsed boxes over ``frame`` that are not in the group
    (at any depth), and of those that are."""
    from .canvas_items import DeviceItem, GroupItem

    topo = scene.topology
    gid = item.group_id
    out, keep = [], []
    for other in scene.items(frame):
        if isinstance(other, DeviceItem):
            grp = topo.group_of(other.device_id)
            inside = grp is not None and any(g.id == gid for g in topo.group_chain(grp.id))
        elif isinstance(other, GroupItem) and other.collapsed and other.group_id != gid:
            inside = any(g.id == gid for g in topo.group_chain(other.group_id)[1:])
        else:
            continue
        (keep if inside else out).append(other.sceneBoundingRect())
    return out, keep


def region(frame: QRectF, outsiders: list[QRectF], members: list[QRectF]) -> QPainterPath:
    """``frame`` less a gap around each outsider, members' own rectangles kept."""
    path = rounded(frame)
    if not outsiders:
        return path
    cut, back = QPainterPath(), QPainterPath()
    cut.setFillRule(Qt.FillRule.WindingFill)
    back.setFillRule(Qt.FillRule.WindingFill)
    for r in outsiders:
        cut.addRoundedRect(r.adjusted(-GAP, -GAP, GAP, GAP), 6, 6)
    for r in members:
        back.addRoundedRect(r.adjusted(-KEEP, -KEEP, KEEP, KEEP), 6, 6)
    return path.subtracted(cut).united(back).simplified()


def frame_region(scene: "TopologyScene", item: "GroupItem", frame: QRectF) -> QPainterPath:
    return region(frame, *outsiders_and_members(scene, item, frame))
