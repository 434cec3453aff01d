"""Replaying a simulated run on the canvas: chunks move along the links they travel (one colour per
ring or tree), link colour shows utilization, GPUs show whether they send, reduce, compute or idle.

The run's record is indexed once (segment start times, group times, channel -> canvas item), so a
frame costs a few look-ups plus the items that actually change; collapsed systems are coloured as a
whole and their bundles show the busiest link inside. On a cluster's overview, what a transfer's ends
are drawn as follows what the overview has open (replay_detail): blocks at fit, the GPUs and inside
links of a system the user zoomed into, chunks among those on screen.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsEllipseItem, QGraphicsPathItem, QGraphicsSimpleTextItem

from ..sim.engine import SimResult
from .canvas import DeviceItem, GroupItem, TopologyScene
from .replay_detail import DOTS_PER_GROUP, DrawnEnds, Ends, InsideLinks
from .replay_facts import ReplayFacts, Timeline
from .replay_structure import Structure
from .style import IDLE_LINK, RING_COLORS, utilization_color

STATE_COLORS = {"sending": QColor("#d5f0b0"), "reducing": QColor("#ffe0a0"), "computing": QColor("#bcd7f5"),
                "idle": None}
MAX_DOTS = 160


def stages_text(ks: list[int]) -> str:
    """A badge's words for the pipeline stages on one item: "stage 3", "stages 0-7", "stages 0, 2, 5"."""
    if len(ks) == 1:
        return f"stage {ks[0]}"
    if ks == list(range(ks[0], ks[-1] + 1)):
        return f"stages {ks[0]}-{ks[-1]}"
    return "stages " + ", ".join(str(k) for k in ks)


class Replayer(QObject):
    timeChanged = Signal(float)
    playingChanged = Signal(bool)

    def __init__(self, scene: TopologyScene, parent: QObject | None = None):
        super().__init__(parent)
        self.scene = scene
        self.sim: SimResult | None = None
        self.facts: ReplayFacts | None = None   # the run's groups read per class (see load)
        self.timeline: Timeline | None = None   # its group times, events and groups in flight
        self.t = 0.0
        self.speed = 1.0  # simulated seconds per wall second, set from the run's length on load
        self.timer = QTimer(self)
        self.timer.setInterval(33)
        self.timer.timeout.connect(self._tick)
        self._dots: list[QGraphicsEllipseItem] = []
        self._dot_colors: list = []   # the colour each dot was last given
        self._dots_shown = 0          # dots 0 .. _dots_shown - 1 are visible
        self._drawn_ends = DrawnEnds(self._endpoint)
        self._inside: InsideLinks | None = None
        self._overlaid: set = set()
        self._stated: set = set()
        self._pattern_cache: dict[int, list] = {}
        scene.rebuilt.connect(self._scene_rebuilt)
        scene.updated.connect(self._scene_updated)
        scene.detailChanged.connect(self._detail_changed)
        scene.document.modelChanged.connect(self._model_changed)

    # ---- loading -----------------------------------------------------------------------------------
    def load(self, sim: SimResult, facts: ReplayFacts | None = None) -> None:
        """Show run ``sim``; ``facts``: its groups read per class (``replay_facts.prepare``), else read here."""
        self.clear()
        self.sim = sim
        self.duration = max(sim.time_s, 1e-12)
        self.speed = self.duration / 8.0  # the whole run in 8 s of wall time at 1x
        self.seg_start = np.array([s[0] for s in sim.segments]) if sim.segments else np.zeros(0)
        self.seg_pid = [s[2] for s in sim.segments]
        # what a frame reads of each group, read per class of groups (its pattern, colour, a compute
        # task's device): building a group from the schedule's columns (sim.groups[g]) for every group
        # in flight cost 3-4 ms of a GB200 frame, reading every group's meta 14 s of a big run's load
        self.facts = facts = facts or ReplayFacts(sim.groups)
        self.timeline = facts.timeline or Timeline(sim)   # (made with the facts in the worker, or here)
        self._post_delay: dict[int, bool] = {}          # group -> reduces after it lands (read once)
        self.labels = facts.labels  # colour key (ring, tree or phase) -> index into RING_COLORS
        self._inside = inside = InsideLinks(sim)
        if self.scene.lod is not None:   # indexed in the turn after the run arrives, not in a zoom frame
            QTimer.singleShot(0, lambda: self._inside is inside and inside.channels_of(""))
        self._index_scene()
        self.set_time(0.0)

    @property
    def events(self) -> np.ndarray:
        """Every moment a transfer or task starts, leaves or arrives, in order."""
        return self.timeline.events

    def _index_scene(self) -> None:
        """channel -> canvas item showing it (a link, or the bundle of a collapsed system)."""
        sim = self.sim
        self.channel_item = {}
        for c, links in enumerate(sim.channel_links):
            for lid in links:
                item = self.scene.items_by_link.get(lid)
                if item is not None:
                    self.channel_item[c] = item
                    break
        self._pattern_cache.clear()
        self._drawn_ends.forget()
        for item in self.scene.link_items:  # during a replay, a link not carrying anything is grey
            item.set_overlay(IDLE_LINK)

    def _scene_rebuilt(self) -> None:
        self._overlaid.clear()
        self._stated.clear()
        self._dots = []
        self._dot_colors = []
        self._dots_shown = 0
        if self.sim is not None:
            self._index_scene()
            self.set_time(self.t)

    def _scene_updated(self) -> None:
        """Some items changed (an edit): the run's channels are looked up again; the dots stay."""
        if self.sim is not None:
            self._overlaid = {i for i in self._overlaid if i.scene() is self.scene}
            self._stated = {i for i in self._stated if i.scene() is self.scene}
            self._index_scene()
            self.set_time(self.t)

    def _detail_changed(self) -> None:
        """The overview opened or closed something: what it opened shows this moment of the run."""
        if self.sim is not None:
            self.set_time(self.t)

    def _model_changed(self, event) -> None:
        if event.kind == "moved":   # chunks start and end where the devices are now
            self._drawn_ends.forget()

    def color_for(self, key: str) -> QColor:
        return QColor(RING_COLORS[self.labels.get(key, 0) % len(RING_COLORS)]) if self.sim is not None else QColor("#000")

    def clear(self) -> None:
        self.pause()
        for item in [*self._overlaid, *self.scene.link_items]:
            try:
                item.set_overlay(None)
            except RuntimeError:
                pass
        for item in list(self._stated):
            self._set_state(item, None)
        for dot in self._dots:
            dot.setVisible(False)
        self._dots_shown = 0
        self._overlaid.clear()
        self._stated.clear()
        if self._inside is not None:
            self._inside.clear()
            self._inside = None
        self._drawn_ends = DrawnEnds(self._endpoint)   # (its patterns go with the run)
        self.sim = None
        self.facts = self.timeline = None

    # ---- playing -----------------------------------------------------------------------------------
    def play(self) -> None:
        if self.sim is None:
            return
        if self.t >= self.duration:
            self.t = 0.0
        self.timer.start()
        self.playingChanged.emit(True)

    def pause(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
            self.playingChanged.emit(False)

    def _tick(self) -> None:
        t = self.t + self.speed * self.timer.interval() / 1000.0
        if t >= self.duration:
            t = self.duration
            self.pause()
        self.set_time(t)

    def step(self, direction: int) -> None:
        """Jump to the next (or previous) event: a transfer or task starting, leaving or arriving."""
        if self.sim is None:
            return
        self.pause()
        if direction > 0:
            k = np.searchsorted(self.events, self.t * (1 + 1e-12) + 1e-18, side="right")
            t = self.events[min(k, len(self.events) - 1)]
        else:
            k = np.searchsorted(self.events, self.t * (1 - 1e-12) - 1e-18, side="left") - 1
            t = self.events[max(k, 0)]
        self.set_time(float(t))

    # ---- one frame ---------------------------------------------------------------------------------
    def set_time(self, t: float) -> None:
        if self.sim is None:
            return
        self.t = min(max(t, 0.0), self.duration)
        self._links_at(self.t)
        self._transfers_at(self.t)
        self.timeChanged.emit(self.t)

    def _pattern_at(self, t: float) -> int | None:
        if not len(self.seg_start):
            return None
        k = int(np.searchsorted(self.seg_start, t, side="right")) - 1
        if k < 0:
            return None
        t0, t1, pid = self.sim.segments[k]
        return pid if t < t1 or t == self.duration else None

    def _links_at(self, t: float) -> None:
        pid = self._pattern_at(t)
        updates = self._pattern_cache.get(pid) if pid is not None else []
        if updates is None:
            rp = self.sim.rate_patterns[pid]
            util: dict = {}
            for c, load in zip(rp.channels.tolist(), rp.load_Bps.tolist()):
                item = self.channel_item.get(c)
                if item is not None:
                    util[item] = max(util.get(item, 0.0), load / self.sim.capacity[c])
            # colours and widths made once per pattern: a replay frame only hands them out
            updates = [(item, utilization_color(u), item.base_pen.widthF() + 2.0) for item, u in util.items()]
            self._pattern_cache[pid] = updates
        touched = set()
        for item, color, width in updates:
            item.set_overlay(color, width)
            touched.add(item)
        for item in self._overlaid - touched:
            item.set_overlay(IDLE_LINK)
        self._overlaid = touched
        self._inside.show(self.scene.lod, pid)

    def _endpoint(self, device: str):
        return self.scene.item_for(device)

    def _ends(self, pattern) -> Ends:
        """The canvas items at the ends of a group's ``pattern`` as drawn now, looked up once per
        transfer pattern (groups share a handful: 18 for 2,557 groups on GB200 NVL72), scene (see
        _index_scene) and state of the overview (its ``version``) rather than on every frame. On the
        overview every pair counts (its items are few: blocks, and what the user opened); on a design
        drawn device by device, about 24 pairs of each pattern, as before."""
        lod = self.scene.lod
        if lod is None:
            return self._drawn_ends.ends(pattern, None, sample=True)
        return self._drawn_ends.ends(pattern, (id(lod), lod.version))

    def _transfers_at(self, t: float) -> None:
        sim = self.sim
        times = self.timeline
        live, live_sending = times.live(t)
        states: dict = {}
        dots = 0
        seen = self._visible_area()
        if seen is not None:
            seen = (seen.left(), seen.top(), seen.right(), seen.bottom())
        post_delay, klass = self._post_delay, self.facts.klass
        patterns, metas, class_color = self.facts.patterns, self.facts.metas, self.facts.class_color
        for g, k, in_flight in zip(live.tolist(), klass[live].tolist(), live_sending.tolist()):
            pattern = patterns[k]
            if pattern is None:  # a compute task (pipeline stage)
                dev = metas[k].get("device")
                item = self._endpoint(dev) if dev else None
                if item is not None:
                    states[item] = "computing"
                continue
            if not in_flight:
                reduces = post_delay.get(g)
                if reduces is None:
                    reduces = post_delay[g] = sim.groups[g].post_delay_s > 0
                if reduces:
                    for b in self._ends(pattern).receivers:
                        states[b] = "reducing"
                continue
            span = max(times.sent[g] - times.start[g], 1e-30)
            frac = min(max((t - times.start[g]) / span, 0.0), 1.0)
            color = RING_COLORS[class_color[k] % len(RING_COLORS)]
            ends = self._ends(pattern)
            for a in ends.senders:
                states.setdefault(a, "sending")
            if dots < MAX_DOTS:   # the chunks go to what can be seen
                xs, ys = ends.chunks(frac, seen, min(DOTS_PER_GROUP, MAX_DOTS - dots))
                for x, y in zip(xs.tolist(), ys.tolist()):
                    self._dot(dots, x, y, color)
                    dots += 1
        for i in range(dots, self._dots_shown):
            self._dots[i].setVisible(False)
        self._dots_shown = dots
        for item, state in states.items():
            self._set_state(item, state)
        for item in self._stated - set(states):
            self._set_state(item, None)
        self._stated = set(states)

    def _visible_area(self):
        """What the canvas shows (with a margin), or None when no view shows the scene."""
        for view in self.scene.views()[:1]:
            r = view.mapToScene(view.viewport().rect()).boundingRect()
            return r.adjusted(-r.width() * 0.05, -r.height() * 0.05, r.width() * 0.05, r.height() * 0.05)
        return None

    def _dot(self, i: int, x: float, y: float, color) -> None:
        while len(self._dots) <= i:
            dot = QGraphicsEllipseItem(-6, -6, 12, 12)
            dot.setZValue(20)
            if self.scene.lod is not None:   # the overview is drawn small: chunks keep their size on screen
                dot.setFlag(QGraphicsEllipseItem.GraphicsItemFlag.ItemIgnoresTransformations)
            dot.setPen(QPen(QColor("#1b1b1b"), 1))
            dot.setVisible(False)
            self.scene.addItem(dot)
            self._dots.append(dot)
            self._dot_colors.append(None)
        dot = self._dots[i]
        if self._dot_colors[i] is not color:   # a chunk keeps its ring's colour from frame to frame
            dot.setBrush(QBrush(color))
            self._dot_colors[i] = color
        dot.setPos(x, y)
        if i >= self._dots_shown:
            dot.setVisible(True)

    @staticmethod
    def _set_state(item, state: str | None) -> None:
        color = STATE_COLORS.get(state) if state else None
        try:
            if isinstance(item, DeviceItem):
                if item.state_color != color:
                    item.state_color = color
                    item.update()
            elif isinstance(item, GroupItem) or hasattr(item, "fill"):   # a group box or an overview block
                if item.fill != color:
                    item.fill = color
                    item.update()
        except RuntimeError:
            pass


MAX_TREES_DRAWN = 2  # trees in a pair: one double binary tree is drawn at a time unless the user asks for all
OVERLAY_Z = 1.0   # above links, below devices: names stay readable over the overlay
BADGE_Z = 3.0     # roots and levels sit on the device boxes
BADGE_MARGIN = 8.0   # scene units a stage badge keeps from link lines (their counts sit on them)


def _crosses(line: QLineF, r: QRectF) -> bool:
    """Whether a line segment touches a rectangle: an end inside it, or a crossing of one of its sides."""
    if r.contains(line.p1()) or r.contains(line.p2()):
        return True
    corners = (r.topLeft(), r.topRight(), r.bottomRight(), r.bottomLeft())
    return any(line.intersects(QLineF(corners[i], corners[(i + 1) % 4]))[0] == QLineF.IntersectionType.BoundedIntersection
               for i in range(4))


class RingOverlay:
    """Rings, trees and fans of a run drawn over the canvas, one colour each: rings as closed loops,
    trees as parent-child edges with the root ringed and every node marked with its level, other
    patterns as a fan of edges. Drawn under the device boxes so their names stay readable."""

    def __init__(self, scene: TopologyScene):
        self.scene = scene
        self.items: list = []

    def _add(self, item, z: float = OVERLAY_Z):
        item.setZValue(z)
        self.scene.addItem(item)
        self.items.append(item)
        return item

    def _badge(self, text: str, anchor, color: QColor, dx: float, dy: float, tip: str = "") -> None:
        label = QGraphicsSimpleTextItem(text)
        label.setBrush(QBrush(color))
        label.setFont(QFont("Sans Serif", 9, QFont.Weight.Bold))
        label.setPos(anchor + QPointF(dx, dy))
        label.setToolTip(tip)
        self._add(label, BADGE_Z)

    def show_stages(self, stage_gpus: list[str]) -> None:
        """A pipeline's stage placement: the path from stage to stage, each GPU labelled."""
        self.show([stage_gpus], closed=False)
        # one badge per drawn item: the stages of a collapsed system share its box ("stages 0-7", not
        # eight "stage k" on top of each other)
        on: dict[int, tuple] = {}
        for k, gpu in enumerate(stage_gpus):
            item = self.scene.item_for(gpu)
            if item is not None:
                on.setdefault(id(item), (item, []))[1].append(k)
        taken: list[QRectF] = []
        for item, ks in on.values():
            names = [self.scene.topology.devices[stage_gpus[k]].name if stage_gpus[k] in self.scene.topology.devices
                     else stage_gpus[k] for k in ks]
            self._badge(stages_text(ks), item.scenePos(), QColor("#1e6fd9"), -30, -52,
                        "\n".join(f"stage {k}: {n}" for k, n in zip(ks, names)))
            self._clear_of_links(self.items[-1], item, taken)

    def _clear_of_links(self, badge, item, taken: list[QRectF]) -> None:
        """Move a stage badge off the lines: above its box it sat on the link from a leaf to a collapsed
        system, under the link's "x8" count. The first of above, right, left and below whose box (with a
        margin) crosses no drawn link, no other device or collapsed box and no badge placed before; above
        if none is free."""
        box, size = item.sceneBoundingRect(), badge.boundingRect().size()
        w, h = size.width(), size.height()
        first = badge.pos()
        spots = (first, QPointF(box.right() + 6, box.center().y() - h / 2),
                 QPointF(box.left() - 6 - w, box.center().y() - h / 2), QPointF(first.x(), box.bottom() + 4))
        lines = [QLineF(k.a.scenePos(), k.b.scenePos()) for k in self.scene.link_items if k.isVisible()]
        boxes = [o.sceneBoundingRect() for o in self.scene.device_items.values() if o is not item and o.isVisible()]
        boxes += [g.sceneBoundingRect() for g in self.scene.group_items.values()
                  if g is not item and g.collapsed and g.isVisible()]
        for spot in spots:
            r = QRectF(spot, size)
            near = r.adjusted(-BADGE_MARGIN, -BADGE_MARGIN, BADGE_MARGIN, BADGE_MARGIN)
            if (not any(_crosses(line, near) for line in lines) and not any(b.intersects(r) for b in boxes)
                    and not any(t.intersects(near) for t in taken)):
                badge.setPos(spot)
                taken.append(r)
                return
        taken.append(QRectF(first, size))

    def show(self, rings: list[list[str]], closed: bool = True, colors: list[QColor] | None = None) -> None:
        self.hide()
        for i, ring in enumerate(rings):
            self._ring(ring, colors[i] if colors else QColor(RING_COLORS[i % len(RING_COLORS)]), i, len(rings), closed,
                       f"ring {i}")

    def _ring(self, ring: list[str], color: QColor, i: int, n: int, closed: bool, label: str) -> None:
        color = QColor(color)
        color.setAlpha(200)
        offset = QPointF((i - n / 2) * 5.0, (i - n / 2) * 5.0)
        points = [self.scene.item_for(g) for g in ring]
        points = [p.scenePos() + offset for p in points if p is not None]
        if len(points) < 2:
            return
        path = QPainterPath()
        path.moveTo(points[0])
        for p in points[1:] + (points[:1] if closed else []):
            path.lineTo(p)
        item = QGraphicsPathItem(path)
        item.setPen(QPen(color, 3.0))
        names = [self.scene.topology.devices[g].name if g in self.scene.topology.devices else g for g in ring]
        item.setToolTip(f"{label}: " + " → ".join(names[:12]) + (" …" if len(names) > 12 else ""))
        self._add(item)

    def show_structures(self, structs: list[Structure], color_for, tree_pair: int | None = 0) -> None:
        """Each structure as what it is; ``color_for(label)`` gives the colour the replay uses for it.
        ``tree_pair``: which double binary tree of a run with several (one pair per rail or channel)
        to draw, None for all of them."""
        self.hide()
        rings = [s for s in structs if s.kind == "ring"]
        trees = [s for s in structs if s.kind == "tree"]
        if tree_pair is not None:
            trees = trees[MAX_TREES_DRAWN * tree_pair:MAX_TREES_DRAWN * (tree_pair + 1)]
        for i, s in enumerate(rings):
            self._ring(s.order, color_for(s.label), i, len(rings), True, s.label)
        for i, s in enumerate(trees):
            self._tree(s, color_for(s.label), i, len(trees))
        for s in structs:
            if s.kind == "fan":
                self._fan(s, color_for(s.label))

    def _tree(self, s: Structure, color: QColor, i: int, n: int) -> None:
        """Edges child -> parent bowed to one side per tree (so two trees over the same GPUs stay apart),
        an arrowhead at the parent, the root ringed, every node's level beside it."""
        bow = 40.0 * (1 if i % 2 == 0 else -1) * (1 + i // 2)
        pen = QPen(color, 2.5)
        for child, parent in s.edges:
            a, b = self.scene.item_for(child), self.scene.item_for(parent)
            if a is None or b is None or a is b:
                continue
            pa, pb = a.scenePos(), b.scenePos()
            d = pb - pa
            length = max((d.x() ** 2 + d.y() ** 2) ** 0.5, 1e-6)
            normal = QPointF(-d.y() / length, d.x() / length)
            ctrl = (pa + pb) / 2 + normal * bow
            path = QPainterPath(pa)
            path.quadTo(ctrl, pb)
            # arrowhead where the curve meets the parent's box edge (about 34 px from its centre)
            tail = path.pointAtPercent(max(0.0, 1 - 40.0 / length))
            head = path.pointAtPercent(max(0.0, 1 - 34.0 / length))
            v = head - tail
            vl = max((v.x() ** 2 + v.y() ** 2) ** 0.5, 1e-6)
            u, w = QPointF(v.x() / vl, v.y() / vl), QPointF(-v.y() / vl, v.x() / vl)
            path.moveTo(head)
            path.lineTo(head - u * 10 + w * 5)
            path.moveTo(head)
            path.lineTo(head - u * 10 - w * 5)
            item = QGraphicsPathItem(path)
            item.setPen(pen)
            names = self.scene.topology.devices
            item.setToolTip(f"{s.label}: {names[child].name if child in names else child} → parent "
                            f"{names[parent].name if parent in names else parent} (level {s.depth.get(child, '?')})")
            self._add(item)
        shown = set()
        for node, depth in s.depth.items():
            item = self.scene.item_for(node)
            if item is None or item in shown:
                continue
            shown.add(item)
            corner = item.scenePos()
            if node == s.root:
                ring = QGraphicsEllipseItem(-64, -40, 128, 80)
                ring.setPen(QPen(color, 3.0))
                ring.setPos(corner)
                ring.setToolTip(f"root of {s.label}")
                self._add(ring, BADGE_Z)
                self._badge(f"{s.label} root", corner, color, -40, -56 - 14 * i)
            else:
                self._badge(f"L{depth}", corner, color, 36 + 22 * i, -48, f"{s.label}: level {depth} below the root")

    def _fan(self, s: Structure, color: QColor) -> None:
        color = QColor(color)
        color.setAlpha(150)
        path = QPainterPath()
        for a_id, b_id in s.edges:
            a, b = self.scene.item_for(a_id), self.scene.item_for(b_id)
            if a is None or b is None or a is b:
                continue
            path.moveTo(a.scenePos())
            path.lineTo(b.scenePos())
        item = QGraphicsPathItem(path)
        item.setPen(QPen(color, 1.5))
        item.setToolTip(f"{s.label}: {len(s.edges)} transfers")
        self._add(item)
        marked = set()
        for hub in s.hubs:  # the reduction happens in the switches: mark each there
            at = self.scene.item_for(hub)
            if at is None or at in marked:
                continue
            marked.add(at)
            ring = QGraphicsEllipseItem(-64, -40, 128, 80)
            ring.setPen(QPen(color, 3.0, Qt.PenStyle.DashLine))
            ring.setPos(at.scenePos())
            ring.setToolTip(f"{s.label}: reduced inside this switch")
            self._add(ring, BADGE_Z)
            self._badge(s.label, at.scenePos(), color, -50, -58 - 14 * (s.label.endswith("multicast")))

    def hide(self) -> None:
        for item in self.items:
            try:
                self.scene.removeItem(item)
            except RuntimeError:
                pass
        self.items = []
