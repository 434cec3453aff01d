"""An expanded group's frame as the region its members hold, so a device that is not a member never
looks like one.

A frame was the rectangle around its members: a group of GPU0 and GPU2 of the DGX-1's cube mesh (two
corners of a square) covered GPU1, GPU3, GPU7 and part of GPU6, which then looked like members; a drag
of GPU7 by a few pixels made it one (a drag ends in the innermost frame around where it was let go, as
in draw.io's containers). Container tools keep such devices out by moving them (yEd's and Graphviz's
group layouts, WebCola's constraints): here the drawing's places mean something (the cube mesh), so
the frame leaves them out instead, as Bubble Sets draw a set over a layout they must not disturb
(Collins, Penn and Carpendale, IEEE TVCG 15(6), 2009): the rectangle less a gap around every device
or collapsed box inside it that is not a member, with each member's own rectangle kept, lightly
filled so that a gap reads as outside. Drops and drags judge "inside" by this region too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath

if TYPE_CHECKING:
    from .canvas import TopologyScene

GAP = 10.0      # around a device that is not a member, inside a frame's rectangle
KEEP = 8.0      # around a member: never cut by a neighbour's gap
RADIUS = 8.0


def rounded(rect: QRectF, radius: float = RADIUS) -> QPainterPath:
    path = QPainterPath()
    path.addRoundedRect(rect, radius, radius)
    return path


class DrawnBoxes:
    """Every drawn device and collapsed box once per update of the frames: its scene rectangle (as
    arrays, so each frame finds what it covers without asking the scene, which sorted every link and
    label under it: 16 ms a drag step on 16 expanded DGX H100) and the groups it is in (kept on the
    scene while the document does not change)."""

    def __init__(self, scene: "TopologyScene") -> None:
        topo = scene.topology
        boxes = [g for g in scene.group_items.values() if g.collapsed]
        self.rects = [it.sceneBoundingRect() for it in (*scene.device_items.values(), *boxes)]
        self.box = np.array([(r.left(), r.top(), r.right(), r.bottom()) for r in self.rects],
                            dtype=float).reshape(-1, 4)
        key = topo.state_key()   # (a drag moves items, not the document, until it ends)
        if scene.groups_around is None or scene.groups_around[0] != key:
            scene.groups_around = (key, {})
        known = scene.groups_around[1]
        self.around: list[set[str]] = []
        for d in scene.device_items:
            around = known.get(d)
            if around is None:
                grp = topo.group_of(d)
                around = known[d] = {g.id for g in topo.group_chain(grp.id)} if grp is not None else set()
            self.around.append(around)
        for box in boxes:   # (a box is not in its own group: its frame is not drawn)
            self.around.append({g.id for g in topo.group_chain(box.group_id)[1:]})
        self.drawn: dict[str, int] = {}   # group -> how many of these are in it
        for around in self.around:
            for gid in around:
                self.drawn[gid] = self.drawn.get(gid, 0) + 1

    def split(self, gid: str, frame: QRectF) -> tuple[list[QRectF], list[QRectF]]:
        """The rectangles over ``frame`` of what is not in group ``gid`` (at any depth), and of what is."""
        b = self.box
        over = np.flatnonzero((b[:, 0] < frame.right()) & (b[:, 2] > frame.left())
                              & (b[:, 1] < frame.bottom()) & (b[:, 3] > frame.top()))
        out, keep = [], []
        if len(over) <= self.drawn.get(gid, 0):   # the frame is their union: only its members are over it
            return out, keep
        for i in over.tolist():
            (keep if gid in self.around[i] else out).append(self.rects[i])
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


def frame_region(drawn: DrawnBoxes, gid: str, frame: QRectF) -> QPainterPath:
    return region(frame, *drawn.split(gid, frame))
