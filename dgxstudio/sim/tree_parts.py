"""Every tree's transfers as parts of routes: tree_orbits' check without routing every tree.

A folded tree run needs only its representative's routes, but the maps between trees are checked on
every tree's (``tree_orbits.py``). On a rail-optimized cluster most of those routes are hops between
systems spread over the spines (on 2,048 DGX H100 systems 65,000 of them, some 200 entries each),
and each is, as the router joins it (``Router._spread_parts``), a handful of parts: the leg inside
the source system, the channel out of its NIC, the leaf pair's spread's first path, the channel into
the destination NIC, the leg inside the destination system, the spread's other paths' channels. The spreads are the router's own arrays, one per leaf pair, shared by every hop
between those leaves (3,440 leaf pairs on that cluster).

So each slot is given as a row of parts (``WIDTH`` of them; a route the engine looks up, as one part
and empty ones), its route being the parts joined in order, and tree_orbits' check compares parts
instead of routes: a map that carries each part of a slot onto the part in the same place of its
image's slot, entry by entry (same length, weights, channels paired one-to-one at equal capacity),
carries the joined routes onto each other entry by entry, which is what the check asks. A spread
shared by many hops is then compared once per pair of leaf pairs, not once per hop.

Nothing is assumed of the router: a hop is taken in parts only where the engine's own look-up
(``Engine.template``, through ``HopRoutes.route``) reaches the point where ``Router.via_loads``
would join those parts into its route; it answers the parts instead. Most such hops are put together
many at once (``spread_hops.py``: each GPU's side and each leaf pair's spread asked of the router
once, the router's checks made hop by hop), any other one is the template's as before. The
representative's routes, which the run reads, are checked against their parts entry by entry once
the engine has them (``matches``). A tree checked on its parts is routed only if something reads its
transfers.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

import numpy as np

from . import slot_rows
from .schedule import Pattern
from .spread_hops import SpreadHops
from .unrouted_hops import Unrouted

WIDTH = 6  # parts per slot: a spread hop's (first leg, NIC link, spread's first path, NIC link, last leg,
#             the spread's other paths)


@dataclass
class TreeParts:
    """``rows``: (slots, WIDTH) part ids, tree after tree; ``ch``, ``w``: each part's channels and
    weights (the engine's routes, then the spreads' parts: the first of them empty); ``lat``,
    ``cap``: each slot's latency and rate cap, as the engine's template and route give them;
    ``ends``: each slot's devices as numbers (``slot_rows.slot_ends``)."""

    rows: np.ndarray
    ch: list[np.ndarray]
    w: list[np.ndarray]
    lat: np.ndarray
    cap: np.ndarray
    n_routes: int
    ends: np.ndarray  # each slot's source and destination numbered (sim/slot_rows.py)

    @classmethod
    def of(cls, engine, patterns: list, routed: int | None = None) -> "TreeParts":
        """The parts of ``patterns``' slots, pattern after pattern: a pair not a spread hop is its
        route in the engine's template, the part numbered by its route id; the spreads' parts are
        numbered after the engine's routes. Past the first ``routed`` patterns (tree 0's, which the
        run reads; None: all), a hop inside a system or between systems under one leaf is the part
        that route would be, not routed (sim/unrouted_hops.py)."""
        ch: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]  # (part -1: empty; -2, -3, ... after it)
        w: list[np.ndarray] = [np.zeros(0)]
        known: dict[tuple, int] = {}  # a part of equal channels and weights met before

        def part(key: tuple, chans: np.ndarray, weights: np.ndarray) -> int:
            got = known[key] = -len(ch) - 1
            ch.append(chans)
            w.append(weights)
            return got

        # legs and links by their content (equal parts are one part), a spread's paths by its arrays
        def leg(chans: np.ndarray, whole: float) -> int:
            key = (chans.dtype.str, chans.tobytes(), whole)
            return known.get(key) or part(key, chans, np.full(len(chans), whole))

        def link(c: int, whole: float) -> int:
            return known.get((c, whole)) or part((c, whole), np.array([c]), np.array([whole]))

        def paths(spread: tuple) -> tuple[int, int]:
            _, first, first_w, later, later_w, _ = spread
            return (known.get((id(first), id(first_w))) or part((id(first), id(first_w)), first, first_w),
                    known.get((id(later), id(later_w))) or part((id(later), id(later_w)), later, later_w))

        def hop(leg0, out_link, spread, in_link, leg1) -> list[int]:
            """A spread hop's parts, in their order in the row."""
            whole = spread[0]
            a, b, first = leg(leg0, whole), link(out_link, whole), paths(spread)
            return [a, b, first[0], link(in_link, whole), leg(leg1, whole), first[1]]

        # a pair asked again (the trees' levels share most of their pairs: 98,000 of 524,000 slots
        # are new on 2,048 DGX H100 systems) is the row its first slot got, in any pattern alike in
        # what the engine's template reads besides the pair (no waypoints or paths, the same cap
        # and latency); new pairs are asked in the order they come, so routes are numbered as before
        # (the slots' pairs numbered once, ``numbered_ends``; their first slots found by a sort, sim/slot_rows.py)
        ends, names = numbered_ends(patterns)
        kinds: dict[tuple, int] = {}
        of_kind = [kinds.setdefault((p.cap_Bps, p.latency_s), len(kinds)) if p.via is None and p.paths is None
                   else -1 for p in patterns]
        sizes = [len(p.pairs) for p in patterns]
        first, take = slot_rows.first_slots(ends, np.repeat(np.asarray(of_kind, dtype=np.int64), sizes))
        asks = []  # (pattern, its pairs not asked before)
        slots = []  # (those pairs' first slots)
        at = 0
        for p, kind, size in zip(patterns, of_kind, sizes):
            pairs = p.pairs
            mine = np.flatnonzero(first[at:at + size]) if kind >= 0 else np.arange(size)
            asks.append((p, [pairs[i] for i in mine.tolist()] if kind >= 0 else pairs, kind >= 0))
            slots.append(mine + at)
            at += size
        # hops spread over the spines, many at once (sim/spread_hops.py): each one's row from its
        # ends' sides and its spread, their parts worked out once per side (and whole) and spread
        bulk = SpreadHops(engine, names)
        taken = _taken(bulk, asks, [ends[at] for at in slots])
        got = bulk.parts([h for ks in taken for h in ks])
        wholes, w_id = np.unique([sp[0] for sp in got.spreads], return_inverse=True)
        n_w = len(wholes)
        w_of = w_id.ravel()[got.spread]  # each hop's spread's whole, numbered
        cols = []  # (first leg, link out) and (link in, last leg) of each hop taken so
        for sides, at, fields in ((got.src, got.src_i, (3, 5)), (got.dst, got.dst_i, (6, 4))):
            keys, inv = np.unique((at * n_w + w_of)[got.ok], return_inverse=True)
            first_id = -len(ch) - 1
            side_parts(ch, w, sides, (keys // n_w).tolist(), wholes[keys % n_w].tolist(), fields)
            cols.append((first_id - np.arange(2 * len(keys), dtype=np.int64)).reshape(-1, 2)[inv.ravel()])
        spread_parts = np.array([paths(sp) for sp in got.spreads], dtype=np.int64).reshape(-1, 2)[got.spread[got.ok]]
        bulk_rows = np.column_stack([cols[0], spread_parts[:, 0], cols[1], spread_parts[:, 1]])
        good = np.cumsum(got.ok) - 1  # each hop's row in bulk_rows (where ok)
        rows: list[np.ndarray] = []
        lat: list[np.ndarray] = []
        caps: list[np.ndarray] = []
        at_hop = 0
        routed = len(patterns) if routed is None or bulk.hops is None else routed
        unrouted = Unrouted(bulk.hops, names) if routed < len(patterns) else None
        for i, ((p, new, alike), ks) in enumerate(zip(asks, taken)):
            block = np.full((len(new), WIDTH), -1, dtype=np.int64)
            latency = np.empty(len(new))
            ok = got.ok[at_hop:at_hop + len(ks)]
            mine = [h[0] for h, yes in zip(ks, ok.tolist()) if yes]
            if mine:
                block[mine] = bulk_rows[good[at_hop:at_hop + len(ks)][ok]]
                latency[mine] = ([bulk.hops.via_latency([new[k][0], a[0], b[0], new[k][1]])
                                  for (k, a, b, *_), yes in zip(ks, ok.tolist()) if yes]
                                 if p.latency_s is None else p.latency_s)
            at_hop += len(ks)
            rest = np.ones(len(new), dtype=bool)
            rest[mine] = False
            rest = np.flatnonzero(rest)
            if len(rest) and alike and i >= routed:
                places, chans, weights, lats = unrouted.take(new, rest.tolist(), p.latency_s, ends[slots[i][rest]])
                if places:  # (each a part of its own, numbered on from the last)
                    block[places, 0] = -len(ch) - 1 - np.arange(len(places))
                    ch.extend(chans)
                    w.extend(weights)
                    latency[places] = lats
                    rest = np.setdiff1d(rest, places)
            if len(rest):
                ask = p if len(rest) == len(p.pairs) else Pattern(
                    [new[k] for k in rest.tolist()], latency_s=p.latency_s, cap_Bps=p.cap_Bps)
                spreads: list = []
                tpl = engine.template(ask, spreads=spreads)
                block[rest, 0] = tpl["route"]  # (-1 where a spread hop's parts go)
                latency[rest] = tpl["latency"]
                if spreads:
                    block[rest[[k for k, _ in spreads]]] = [
                        hop(leg0, out_link, spread, in_link, leg1)
                        for _, (_, (leg0, out_link, _, spread, in_link, leg1)) in spreads]
            rows.append(block)
            lat.append(latency)
            # a spread hop's cap: the pattern's (a LazyRoute's is none)
            caps.append(np.full(len(new), min(p.cap_Bps, np.inf)))
        # the routes' caps; the parts after the routes (part -i is number n_routes + i - 1)
        # (on each distinct row, then taken for every slot)
        out = np.concatenate(rows)
        is_route = out[:, 0] >= 0
        cap = np.concatenate(caps)
        cap[is_route] = np.asarray(engine.route_cap, dtype=float)[out[is_route, 0]]
        n_routes = len(engine.route_ch)
        out = np.where(out < 0, n_routes - 1 - out, out)[take]
        cap = cap[take]
        return cls(out, [*engine.route_ch, *ch], [*engine.route_w, *w], np.concatenate(lat)[take], cap, n_routes, ends)

    def packed(self, n_trees: int) -> np.ndarray | None:
        """``rows`` without the empty parts, tree after tree, where every tree's slots have them
        in the same places as tree 0's (else None: slot j of some tree is not in the same parts as
        slot j of tree 0, so no map of the check could carry one onto the other part for part)."""
        rows = self.rows.reshape(n_trees, -1)
        empty = self.n_routes  # (the first part after the routes)
        used = rows != empty
        if not (used == used[0]).all():
            return None
        return rows[:, used[0]].ravel()

    def matches(self, s_route: np.ndarray, route_ch: list[np.ndarray], route_w: list[np.ndarray],
                s_lat: np.ndarray, s_cap: np.ndarray) -> bool:
        """Whether the first ``len(s_route)`` slots' parts, joined, are the routes ``s_route``
        (channels and weights entry by entry), with the same latencies and caps."""
        n = len(s_route)
        if not ((self.lat[:n] == s_lat).all() and (self.cap[:n] == s_cap).all()):
            return False
        rows = self.rows[:n].ravel()
        rows = rows[rows != self.n_routes].tolist()  # (the empty part adds nothing to a join)
        ch = np.concatenate([self.ch[i] for i in rows])
        mine = np.concatenate([route_ch[r] for r in s_route.tolist()])
        if len(ch) != len(mine) or not (ch == mine).all():
            return False
        return bool((np.concatenate([self.w[i] for i in rows]) == np.concatenate([route_w[r] for r in
                                                                                 s_route.tolist()])).all())


def _taken(bulk: SpreadHops, asks: list, nums: list[np.ndarray]) -> list[list]:
    """``bulk.taken`` of every alike pattern's new pairs (``asks``; ``nums``: their devices'
    numbers), asked at once (nothing is routed between them), given back pattern by pattern."""
    alike = [i for i, (_, _, yes) in enumerate(asks) if yes]
    out: list[list] = [[] for _ in asks]
    if not alike:
        return out
    got = bulk.taken([pair for i in alike for pair in asks[i][1]], np.concatenate([nums[i] for i in alike]))
    bounds = np.cumsum([0] + [len(asks[i][1]) for i in alike])
    which = np.searchsorted(bounds, [h[0] for h in got], side="right") - 1
    for (k, *rest), w in zip(got, which.tolist()):
        out[alike[w]].append((k - int(bounds[w]), *rest))
    return out


def numbered_ends(patterns: list) -> tuple[np.ndarray, list[str]]:
    """Each slot's source and destination (``patterns``' pairs, pattern after pattern) as device
    numbers, numbered in the order they first come, (slots, 2); and the devices by number
    (``slot_rows.slot_ends``' numbers, read through one flat list of names in C)."""
    flat = list(chain.from_iterable(chain.from_iterable([p.pairs for p in patterns])))
    names = list(dict.fromkeys(flat))
    ids = dict(zip(names, range(len(names))))
    got = itemgetter(*flat)(ids) if len(flat) > 1 else [ids[x] for x in flat]
    return np.asarray(got, dtype=np.int64).reshape(-1, 2), names


def side_parts(ch: list, w: list, sides: list, which: list[int], wholes: list[float], fields: tuple[int, int]) -> None:
    """The parts of GPUs' sides of hops (``SpreadHops._side``) carrying ``wholes``, appended to
    ``ch`` and ``w``: for each (side, whole) in turn, its two ``fields`` in that order (a leg: its
    channels, each carrying the whole; a NIC's link: its one channel). Every side's legs and links
    are its own GPU's and NIC's, so each is a part of its own (equal weights share one array)."""
    shared: dict[tuple[int, float], np.ndarray] = {}
    links: list[int] = []
    at_link: list[int] = []
    for i, whole in zip(which, wholes):
        x = sides[i]
        for f in fields:
            v = x[f]
            if f >= 5:  # (a link: its channel, made into arrays below)
                at_link.append(len(ch))
                links.append(v)
                ch.append(None)
                n = 1
            else:
                ch.append(v)
                n = len(v)
            got = shared.get((n, whole))
            if got is None:
                got = shared[(n, whole)] = np.full(n, whole)
            w.append(got)
    for at, row in zip(at_link, np.asarray(links, dtype=np.int64).reshape(-1, 1)):
        ch[at] = row
