"""Fair rates solved part by part, where only channels that can never bind tie the parts together.

The engine solves and caches each *component* of the network: channels some route ties together.
On a fat tree of DGX-1s every inter-system route crosses the spine planes, so the whole fabric is
one component of about 2,200 routes, and a tree all-reduce over 124 systems re-solves it on every
other event although an event changes the flows of one rail. The spine planes (and the PCIe links
behind each NIC) can never bind there (sim/dominated.py): without them the routes fall apart into
*parts* (on the 124-system DGX-1 tree: rail 1, rail 2, and rails 0 and 3, which a chain hop through
the CPUs ties), and max-min fair rates in one part do not depend on the flows of another: the
channels they share never freeze a route, and each part's filling is the joint filling's on its own
routes. So a solve is split into its parts, and each part's answer is kept (its last few, by its
active routes and their flow counts): the parts an event did not touch are looked up, not solved.

Both are worked out only for runs that solve large problems often (WORTH), and the split is dropped
when its parts are rarely looked up (TRIAL, HIT_SHARE). What can differ from the joint solve: the filling freezes, in one round, the routes of every channel
whose share is within 1e-12 of the round's level, so a part solved alone can take its own level
where the joint solve took another part's within that tolerance; and the loads of a channel that
several parts cross are added part by part. Both are last-bit effects (the tests bound them).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .dominated import never_binding
from .maxmin import maxmin
from .part_components import PartsFound
from .rates import RouteTable, _components

# a part of at least this many routes is solved and kept on its own; smaller ones are solved together
PART_ROUTES = 64
# answers kept per part (the states an event comes back to are recent ones)
KEPT = 32
# after this many solves, parts stop being solved apart unless at least this share of them was
# looked up (a tree whose every event moves every part, as a folded one of DGX A100s: each part
# solved alone then only adds the calls of several solves)
TRIAL, HIT_SHARE = 64, 0.25
# an engine that can take the parts as its components (sim/part_components.py) decides sooner, on the
# same share: its first attempt at the run is thrown away
RESTART_TRIAL = 16
# the parts are worked out once the run's solves of at least 2 PART_ROUTES routes have gathered this
# many times the table's routes: the work is a few sorts of every route's entries (41 ms for the
# 78,000 of the 992-GPU DGX-1 tree, seconds at 16,384 GPUs), which a run that rarely solves (a ring,
# whose steady state is skipped) should not pay
WORTH = 4.0


class Parts:
    """The engine's solver for one run's route table: the joint solve (``maxmin``) until large solves
    have been frequent enough to pay for the parts (see WORTH), then channels that cannot bind left
    out (``table.never_binds``, which ``maxmin`` reads) and the routes solved part by part."""

    def __init__(self, table: RouteTable, capacity: np.ndarray, channel_ends, restart: bool = False, numbered=None):
        self.table, self.capacity, self.channel_ends = table, capacity, channel_ends
        self.numbered = numbered  # the ends as numbers, asked when the parts are built (Router.channel_devices)
        # once the split has paid over its trial: have the engine's components follow the parts
        # (sim/part_components.py) instead of splitting its solves here
        self.restart = restart
        self.gathered = 0
        self.split: Split | None = None
        self.built = False

    def solve(self, route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
              route_cap: np.ndarray | None):
        if self.split is not None:
            split = self.split
            if split.solves == TRIAL and split.hits < HIT_SHARE * (split.hits + split.misses):
                self.split = None  # (the channels that cannot bind stay out of the filling)
            elif split.solves == RESTART_TRIAL and self.restart and split.hits >= HIT_SHARE * (split.hits + split.misses):
                raise PartsFound(self.table)
            else:
                return split.solve(route_ids, mult, table, capacity, route_cap)
        if not self.built and len(route_ids) >= 2 * PART_ROUTES:
            self.gathered += len(route_ids)
            if self.gathered >= WORTH * len(table.lens):
                self._build()
                if self.split is not None:
                    return self.split.solve(route_ids, mult, table, capacity, route_cap)
        return maxmin(route_ids, mult, table, capacity, route_cap)

    def _build(self) -> None:
        self.built = True
        t = self.table
        nb = never_binding(t.lens, t.ch, t.w, self.capacity, self.channel_ends,
                           self.numbered() if self.numbered is not None else None)
        if not nb.any():
            return
        t.never_binds = nb
        t.__dict__.pop("_channel_classes", None)  # (its classes read the mask when made)
        self.split = Split.of(t, nb, len(self.capacity))


class Split:
    """A route table's parts (see the module's note) and the last answers of each."""

    @classmethod
    def of(cls, table: RouteTable, never_binds: np.ndarray, n_channels: int) -> "Split | None":
        """The parts of ``table``'s routes over the channels that can bind, or None when fewer than
        two are large enough to be worth solving apart."""
        n_routes = len(table.lens)
        if not n_routes or not never_binds.any():
            return None
        keep = ~never_binds[table.ch]
        route_of = np.repeat(np.arange(n_routes, dtype=np.int64), table.lens)
        reduced = RouteTable.__new__(RouteTable)
        reduced.lens = np.bincount(route_of[keep], minlength=n_routes).astype(np.int64)
        reduced.offsets = np.concatenate([[0], np.cumsum(reduced.lens)[:-1]]).astype(np.int64)
        reduced.ch, reduced.w = table.ch[keep], table.w[keep]
        part, _, n_parts = _components(reduced, np.arange(n_routes, dtype=np.int64), n_channels)
        sizes = np.bincount(part, minlength=n_parts)
        if int((sizes >= PART_ROUTES).sum()) < 2:
            return None
        split = cls.__new__(cls)
        # parts too small to be kept on their own share the id -1
        big = sizes >= PART_ROUTES
        split.part = np.where(big[part], part, -1)
        split.n_channels = n_channels
        split.kept: dict[int, OrderedDict] = {}
        split.hits = split.misses = split.solves = 0
        return split

    def solve(self, route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
              route_cap: np.ndarray | None):
        """``maxmin(route_ids, mult, ...)``, part by part: (rates, channels ascending, loads)."""
        self.solves += 1
        if not len(route_ids):
            return maxmin(route_ids, mult, table, capacity, route_cap)
        parts = self.part[route_ids]
        # the routes of each part present, in their order (a stable sort by part)
        order = np.argsort(parts, kind="stable")
        by_part = parts[order]
        cuts = (np.flatnonzero(by_part[1:] != by_part[:-1]) + 1).tolist()
        if not cuts and by_part[0] < 0:
            return maxmin(route_ids, mult, table, capacity, route_cap)
        n = len(route_ids)
        rate = np.empty(n)
        chans, loads = [], []
        for lo, hi in zip([0, *cuts], [*cuts, n]):
            p = int(by_part[lo])
            at = order[lo:hi]
            ids, counts = route_ids[at], mult[at]
            if p < 0:
                got = maxmin(ids, counts, table, capacity, route_cap)
            else:
                kept = self.kept.setdefault(p, OrderedDict())
                key = (ids.tobytes(), np.asarray(counts).tobytes())
                got = kept.get(key)
                if got is None:
                    self.misses += 1
                    got = kept[key] = maxmin(ids, counts, table, capacity, route_cap)
                    if len(kept) > KEPT:
                        kept.popitem(last=False)
                else:
                    self.hits += 1
                    kept.move_to_end(key)
            rate[at] = got[0]
            chans.append(got[1])
            loads.append(got[2])
        ch, load = np.concatenate(chans), np.concatenate(loads)
        # a channel crossed by several parts (a spine plane) carries the sum of their loads, added
        # part after part: over every channel at once when they are few, else by a sort of those used
        if self.n_channels <= 8 * len(ch):
            total = np.bincount(ch, weights=load, minlength=self.n_channels)
            seen = np.zeros(self.n_channels, dtype=bool)
            seen[ch] = True
            uch = np.flatnonzero(seen)
            return rate, uch, total[uch]
        order = np.argsort(ch, kind="stable")
        ch_s = ch[order]
        first = np.concatenate([[True], ch_s[1:] != ch_s[:-1]])
        slot = np.empty(len(ch), dtype=np.int64)
        slot[order] = np.cumsum(first) - 1
        return rate, ch_s[first], np.bincount(slot, weights=load)  # (the same sums, in the same order)
