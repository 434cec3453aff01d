"""What a replay draws of a transfer pattern at the canvas's current level of detail, and the replay's
colours on the links inside the systems the cluster overview has opened.

A pattern's pairs are mapped to the items drawn now (a GPU, the box of its closed system, the block
of its closed unit) and reduced to the distinct items that send and receive and the distinct item
pairs a chunk can move between: at fit, a 1,024-GPU ring is a handful of block pairs; a system the
user opens adds its GPUs. This is redone when the overview opens or closes something (its
``version``), only for the patterns in flight, so a frame costs what is drawn, not the cluster.

Chunks are chosen among the pairs whose chunk lies in the visible area (at most DOTS_PER_GROUP of a
group, spread over them), so the system the user zoomed into shows its own chunks.

An open system draws its inside links as one path (canvas_lod); during a replay that path turns grey
and each utilization colour in use is one more path over it, a child of it (closed with the system).
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

import numpy as np
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from .style import IDLE_LINK, utilization_color

DOTS_PER_GROUP = 24     # chunks drawn for one group in flight, among those on screen
SAMPLED_PAIRS = 24      # pairs of a pattern drawn on a design drawn device by device (see DrawnEnds.ends)
INSIDE_WIDTH_PX = 3.0   # a busy link inside an open system, on screen (the idle path is 1 px)
_MISSING = object()


class Ends:
    """A pattern's ends as drawn now: ``senders``/``receivers`` (distinct items), and the distinct
    (sender, receiver) item pairs that are two items, as positions (a chunk is at a + d * fraction)."""

    __slots__ = ("senders", "receivers", "ax", "ay", "dx", "dy")

    def chunks(self, frac: float, seen, most: int) -> tuple[np.ndarray, np.ndarray]:
        """Where the chunks are at ``frac`` of the transfer: at most ``most`` of those inside ``seen``
        (left, top, right, bottom, or None for all), spread evenly over them."""
        x = self.ax + self.dx * frac
        y = self.ay + self.dy * frac
        if seen is not None:
            left, top, right, bottom = seen
            keep = np.flatnonzero((x >= left) & (x <= right) & (y >= top) & (y <= bottom))
        else:
            keep = np.arange(len(x))
        if len(keep) > most:
            keep = keep[np.linspace(0, len(keep) - 1, most).astype(np.int64)] if most > 0 else keep[:0]
        return x[keep], y[keep]


class DrawnEnds:
    """Each transfer pattern's Ends at the canvas's current state. A pattern's pairs become arrays of
    device numbers once per run; what each device is drawn as is looked up once per state (``key``:
    the overview's version) for the devices of the patterns in flight, so opening a system costs one
    look-up per device of those patterns and a few array operations per pattern, not one per pair."""

    def __init__(self, item_for):
        self.item_for = item_for
        self._number: dict[str, int] = {}      # device id -> its number
        self._devices: list[str] = []
        self._pairs: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}   # (id(pattern), sampled) -> source, destination numbers
        self._key = _MISSING
        self._ends: dict[int, Ends] = {}
        self._code = np.zeros(0, dtype=np.int64)   # device number -> item number (-1: not drawn, -2: not looked up)
        self._items: list = []                     # item number -> item
        self._item_number: dict = {}
        self._x = self._y = np.zeros(0)            # item number -> its position

    def forget(self) -> None:
        """The items were replaced or moved: everything is looked up again."""
        self._key = _MISSING

    def ends(self, pattern, key, sample: bool = False) -> Ends:
        """``sample``: about SAMPLED_PAIRS of the pattern's pairs, evenly spread, as the replay always
        drew a design drawn device by device (its frames stay as they were; every GPU of the 992 on
        the DGX-1 fat tree changing colour each step cost 5-10% more CPU a frame). The overview's
        items are few whatever the pairs, so there every pair counts."""
        if key != self._key:
            self._follow(key)
        out = self._ends.get(id(pattern))
        if out is None:
            out = self._ends[id(pattern)] = self._resolve(pattern, sample)   # (the run keeps its patterns alive while loaded)
        return out

    def _follow(self, key) -> None:
        """A new state: devices drawn by an item that closed (left the scene) or opened (a block or
        system now drawn as its members) are looked up again; the others keep their item (zooming
        into one system of 4,096 GPUs looks up its devices, not all 4,096). Positions are read again
        (a device may have been dragged)."""
        same_scene = self._key is not _MISSING and key is not None and self._key is not None \
            and self._key[0] == key[0]
        self._key = key
        self._ends.clear()
        if same_scene and len(self._items) > 2 * len(self._item_number) + 1024:
            same_scene = False   # mostly closed items by now (a long pan): start afresh rather than skip them
        if not same_scene:
            self._code = np.full(len(self._devices), -2, dtype=np.int64)
            self._items, self._item_number = [], {}
            self._x = self._y = np.zeros(0)
            return
        stale = []
        for k, item in enumerate(self._items):
            if item is None:
                continue
            try:
                gone = item.scene() is None or getattr(item, "open", False)
                if not gone:
                    p = item.scenePos()
                    self._x[k], self._y[k] = p.x(), p.y()
            except RuntimeError:   # deleted with its scene
                gone = True
            if gone:
                stale.append(k)
                self._item_number.pop(item, None)
                self._items[k] = None
        if stale:
            self._code[np.isin(self._code, stale)] = -2

    def _numbers(self, pattern, sample: bool) -> tuple[np.ndarray, np.ndarray]:
        pairs = self._pairs.get((id(pattern), sample))
        if pairs is None:   # C-level passes over the pairs (16,384 in a ring of 2,048 DGX H100)
            number, devices = self._number, self._devices
            chosen = pattern.pairs[::max(1, len(pattern.pairs) // SAMPLED_PAIRS)] if sample else pattern.pairs
            flat = list(chain.from_iterable(chosen))
            for d in dict.fromkeys(flat).keys() - number.keys():
                number[d] = len(devices)
                devices.append(d)
            both = np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
            pairs = self._pairs[(id(pattern), sample)] = (both[0::2], both[1::2])
            if len(self._code) < len(devices):
                self._code = np.concatenate([self._code, np.full(len(devices) - len(self._code), -2, dtype=np.int64)])
        return pairs

    def _resolve(self, pattern, sample: bool) -> Ends:
        src, dst = self._numbers(pattern, sample)
        code = self._code
        used = np.concatenate([src, dst])
        todo = np.unique(used[code[used] == -2])
        if len(todo):
            xs, ys = [], []
            for n in todo.tolist():
                item = self.item_for(self._devices[n])
                if item is None:
                    code[n] = -1
                    continue
                k = self._item_number.get(item)
                if k is None:
                    k = self._item_number[item] = len(self._items)
                    self._items.append(item)
                    p = item.scenePos()
                    xs.append(p.x())
                    ys.append(p.y())
                code[n] = k
            self._x = np.concatenate([self._x, xs])
            self._y = np.concatenate([self._y, ys])
        a, b = code[src], code[dst]
        drawn = (a >= 0) & (b >= 0)
        a, b = a[drawn], b[drawn]
        items = self._items
        out = Ends()
        out.senders = [items[k] for k in np.unique(a).tolist()]
        out.receivers = [items[k] for k in np.unique(b).tolist()]
        apart = a != b
        both = np.unique(a[apart] * max(len(items), 1) + b[apart])
        ia, ib = np.divmod(both, max(len(items), 1))
        out.ax, out.ay = self._x[ia], self._y[ia]
        out.dx, out.dy = self._x[ib] - out.ax, self._y[ib] - out.ay
        return out


class InsideLinks:
    """The replay's utilization colours on the links inside the overview's open systems."""

    def __init__(self, sim):
        self.sim = sim
        self._channels_of: tuple[dict, dict] | None = None   # see channels_of, made on first need
        self._paths: dict = {}     # open system's links item -> (its own pen, overlay items)
        self._key = None           # (the overview's version, rate pattern) coloured now
        self._state = None         # the overview's version the runs below were made for
        self._runs: dict = {}      # rate pattern -> each open system's links item and its (colour, path) runs

    def channels_of(self, lid: str) -> tuple[int, ...]:
        """The channels over a link (one per direction, as a rule). Indexed on first need with C-level
        passes: a link's first and last channel, and a count that shows no link has a third (else by
        a loop): 20 ms for 73,216 channels at 512 DGX H100, where a loop over every channel took
        135-195 ms in the frame that opened the first system."""
        if self._channels_of is None:
            cl = self.sim.channel_links
            keys = list(chain.from_iterable(cl))
            chans = list(range(len(cl))) if len(keys) == len(cl) else \
                list(chain.from_iterable([c] * len(links) for c, links in enumerate(cl)))
            if not keys or max(Counter(keys).values()) <= 2:
                last = dict(zip(keys, chans))
                first = dict(zip(reversed(keys), reversed(chans)))
                self._channels_of = (first, last)
            else:   # a link in more than two channels
                out: dict[str, list[int]] = {}
                for c, links in enumerate(cl):
                    for link in links:
                        out.setdefault(link, []).append(c)
                self._channels_of = ({}, {k: tuple(v) for k, v in out.items()})
        first, last = self._channels_of
        c = last.get(lid, ())
        if not first:
            return c
        return () if c == () else (first[lid], c)

    def show(self, lod, pid: int | None) -> None:
        """Colour the inside links of every open system for rate pattern ``pid`` (None: all idle)."""
        systems = lod.system_links if lod is not None else {}
        if not systems and not self._paths:
            return
        key = (id(lod), lod.version if lod is not None else None, pid)
        if key == self._key:
            return
        self._key = key
        if key[:2] != self._state:   # systems opened or closed: colours made again, as they are needed
            self._state = key[:2]
            self._runs.clear()
            for path_item, _pen, _overlays in list(self._paths.values()):
                try:
                    gone = path_item.scene() is None   # its system closed: its overlays went with it
                except RuntimeError:                   # deleted with a rebuilt scene
                    gone = True
                if gone:
                    self._paths.pop(id(path_item), None)
        runs = self._runs.get(pid)
        if runs is None:
            runs = self._runs[pid] = self._colours(lod, pid)
        for path_item, run in runs:
            self._paint(path_item, run)

    def _colours(self, lod, pid: int | None) -> list:
        sim = self.sim
        if pid is None:
            util = None
        else:
            rp = sim.rate_patterns[pid]
            util = np.zeros(len(sim.capacity))
            np.maximum.at(util, rp.channels, rp.load_Bps / sim.capacity[rp.channels])
            util = util.tolist()
        channels_of = self.channels_of
        items = lod.scene.device_items
        out = []
        colours: dict[float, QColor] = {}   # links of a pattern share a few loads
        for path_item, ends in lod.system_links.values():
            by_colour: dict[int, tuple] = {}
            if util is not None:
                for lid, (a, b) in ends.items():
                    chans = channels_of(lid)
                    ia, ib = items.get(a), items.get(b)
                    if not chans or ia is None or ib is None:
                        continue
                    u = max(util[c] for c in chans)
                    if u <= 0:
                        continue
                    color = colours.get(u)
                    if color is None:
                        color = colours[u] = utilization_color(float(u))
                    entry = by_colour.setdefault(color.rgba(), (color, QPainterPath()))
                    entry[1].moveTo(ia.pos())
                    entry[1].lineTo(ib.pos())
            out.append((path_item, [(_pen(color), path) for color, path in by_colour.values()]))
        return out

    def _paint(self, path_item: QGraphicsPathItem, runs: list) -> None:
        entry = self._paths.get(id(path_item))
        if entry is None:
            entry = self._paths[id(path_item)] = (path_item, QPen(path_item.pen()), [])
            idle = QPen(path_item.pen())
            idle.setColor(IDLE_LINK)
            path_item.setPen(idle)
        overlays = entry[2]
        while len(overlays) < len(runs):
            over = QGraphicsPathItem(path_item)   # a child: removed with the system's links when it closes
            over.setZValue(0.1)
            overlays.append(over)
        for over, (pen, path) in zip(overlays, runs):
            if over.pen() != pen:
                over.setPen(pen)
            over.setPath(path)
            over.setVisible(True)
        for over in overlays[len(runs):]:
            over.setVisible(False)

    def clear(self) -> None:
        """The replay ends: open systems' links as they were, overlays gone."""
        for path_item, pen, overlays in self._paths.values():
            try:
                path_item.setPen(pen)
                for over in overlays:
                    over.setParentItem(None)
                    if over.scene() is not None:
                        over.scene().removeItem(over)
            except RuntimeError:
                pass
        self._paths.clear()
        self._key = self._state = None
        self._runs.clear()


def _pen(color: QColor) -> QPen:
    pen = QPen(color, INSIDE_WIDTH_PX)
    pen.setCosmetic(True)   # as wide on screen at any zoom, over the 1 px idle path
    return pen
