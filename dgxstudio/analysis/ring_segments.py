"""Ring loads assembled from templates: ``channels.ring_loads`` on clusters of thousands of systems.

A rail ring crosses every system the same way: a run of hops through the system (entry GPU to exit
GPU over NVLink), then a hop through the exit GPU's NIC to the next system's. Systems wired alike
(``Router``'s channel offset) give the same run and the same GPU-to-NIC legs, their channel numbers
shifted by the system's offset. So each run and each leg is worked out once per class of systems
and kept as a template; a hop of another system of the class is that template and an offset. The
whole array is assembled at the end by one gather: the template's channels plus the segment's
offset, the template's weights.

Every segment is the array ``ring_loads`` builds for it hop by hop, element by element, under the
same conditions (the checks of ``Router.run_loads`` and ``Router.via_loads``' single-path case, made
here without building the arrays); anything else (a system wired differently, a route already
cached, a hop spread over spines) is asked of the router as before and kept as it comes. The loads
``ring_rates`` adds up are therefore the same numbers in the same order, bit for bit.

The simulator needs each hop's route, not only the loads: ``HopRoutes`` reads them from the same
templates (a hop inside a system, a GPU-NIC-NIC-GPU hop) as ``LazyRoute`` objects with the route's
channels, weights and latency, whose device paths are asked of the router only if read. The ring
bound and the engine's ring over the same hops share them (one object per hop for the router's life).
A transfer between GPUs of two systems asked without waypoints (hierarchical's ring across systems)
is the via hop through the two GPUs' own NICs, which is what the router answers it with.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from ..cancel import check_cancelled
from .routing import LazyRoute
from .via_latency import ViaLatency


class _Segments:
    """Templates (channels, weights) and the segments that use them: (template, offset), plus the
    two channels through a leaf of each hop between systems, kept in one list of their own."""

    def __init__(self):
        self.chans: list[np.ndarray] = []
        self.weights: list[np.ndarray] = []
        self.index: dict[int, int] = {}     # id of a template array -> its number
        self.keep: list[np.ndarray] = []     # the template arrays, alive while their ids are keys
        self.seg_t: list[int] = []
        self.seg_o: list[int] = []           # offset added to the channels, or (pairs) where they start
        self.pairs: list[int] = []           # two channels (weight 1.0 each) per pair segment

    def template(self, chans: np.ndarray, weights: np.ndarray) -> int:
        t = self.index.get(id(chans))
        if t is None or self.weights[t] is not weights:
            t = len(self.chans)
            self.chans.append(chans)
            self.weights.append(weights)
            self.index[id(chans)] = t
            self.keep.append(chans)
        return t

    def add(self, t: int, offset: int) -> None:
        self.seg_t.append(t)
        self.seg_o.append(offset)

    def pair(self, a: int, b: int) -> None:
        self.seg_t.append(-1)
        self.seg_o.append(len(self.pairs))
        self.pairs.append(a)
        self.pairs.append(b)

    def literal(self, chans: np.ndarray, weights: np.ndarray) -> None:
        self.chans.append(np.asarray(chans))
        self.weights.append(np.asarray(weights))
        self.add(len(self.chans) - 1, 0)

    def assemble(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.seg_t:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        # the pairs are one more template, read two at a time from where each starts
        self.chans.append(np.asarray(self.pairs, dtype=np.int64))
        self.weights.append(np.ones(len(self.pairs)))
        flat_c = np.concatenate(self.chans).astype(np.int64)
        flat_w = np.concatenate(self.weights).astype(float)
        tlen = np.fromiter((len(c) for c in self.chans), dtype=np.int64, count=len(self.chans))
        tstart = np.cumsum(tlen) - tlen
        seg_t = np.asarray(self.seg_t, dtype=np.int64)
        seg_o = np.asarray(self.seg_o, dtype=np.int64)
        is_pair = seg_t < 0
        seg_t[is_pair] = len(self.chans) - 1
        lens = np.where(is_pair, 2, tlen[seg_t])
        first = tstart[seg_t] + np.where(is_pair, seg_o, 0)
        offset = np.where(is_pair, 0, seg_o)
        total = int(lens.sum())
        out_start = np.cumsum(lens) - lens
        # element j of segment s reads template element first[s] + (j - out_start[s])
        positions = np.arange(total, dtype=np.int64) + np.repeat(first - out_start, lens)
        chans = flat_c[positions] + np.repeat(offset, lens)
        return chans, flat_w[positions]


class _Loads:
    """The router's shapes read as templates, with the checks its own methods make."""

    def __init__(self, router):
        self.router = router
        self.system = router._system
        self.cache = router._cache
        self.offsets = router._offsets
        self.index = router.channel_index
        self.even = router.spread == "even"
        self.units: dict[int, tuple] = {}  # see unit_list

    def offset(self, sid: str) -> int | None:
        offsets = self.offsets
        return offsets[sid] if sid in offsets else self.router._offset_from_reference(sid)

    def signature(self, sid: str, a: str, b: str) -> tuple:
        sig = self.router._signatures.get(sid)
        if sig is None:
            self.router._shape_key(a, b)  # works the system's signature out once
            sig = self.router._signatures[sid]
        return sig

    def leg(self, a: str, b: str):
        """``Router.channel_loads(a, b)`` as (the template route, its offset), or None where it
        returns None."""
        return self.router.template_leg(a, b)

    def run(self, order: list[str], k: int, end: int, sid: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """``Router.run_loads`` of hops k..end-1 (all inside system ``sid``) as (template channels,
        weights, offset), or None where it returns None or has no template yet."""
        if not self.even:
            return None
        router = self.router
        sig = self.signature(sid, order[k], order[k + 1])
        if not sig:
            return None
        prefix = sig[2]
        m = len(prefix)
        n = len(order)
        cache = self.cache
        a = order[k]
        if not a.startswith(prefix):
            return None
        rel = []
        for i in range(k, end):
            b = order[(i + 1) % n]
            if a == b or (a, b) in cache or not b.startswith(prefix):
                return None
            rel.append((a[m:], b[m:]))
            a = b
        offset = self.offset(sid)
        if offset is None:
            return None
        key = (sig[0], sig[1], tuple(rel))
        hit = router._runs.get(key)
        if hit is None:
            if router.run_loads([(order[i], order[(i + 1) % n]) for i in range(k, end)]) is None:
                return None
            hit = router._runs[key]
        return hit[0], hit[1], offset

    def via_legs(self, way: list[str]):
        """``Router.via_loads(way)`` of a GPU, its NIC, the next system's NIC and its GPU when the
        router would answer it with ``_single_path_via`` and its two legs are templates: (the first
        leg's template route, its offset, the channel out of the NIC to the leaf, the one into the
        next NIC, the last leg's template route, its offset, the route's channels in order as a
        list); else None."""
        if len(way) != 4 or ("via", *way) in self.cache:
            return None
        g0, n0, n1, g1 = way
        # the NICs' one switch first: most hops between leaves fail here (spread over the spines),
        # before their legs are looked up (every check below returns None alike, in any order)
        uplinks, uplink = self.router._uplinks, self.router._uplink
        up = uplinks[n0] if n0 in uplinks else uplink(n0)
        if up is None or up != (uplinks[n1] if n1 in uplinks else uplink(n1)):
            return None
        first, last = self.leg(g0, n0), self.leg(n1, g1)
        if first is None or last is None:
            return None
        l0, l1 = self.unit_list(first[0]), self.unit_list(last[0])
        if l0 is None or l1 is None:  # (a leg of several paths, or not crossing each channel once)
            return None
        system = self.system
        s0, s1 = system.get(n0), system.get(n1)
        if s0 is None or s1 is None or s0 == s1 or (n0, n1) in self.cache:
            return None  # (a middle leg ``channel_loads`` answers, or none: left to the router)
        out, into = self.index[(n0, up)], self.index[(up, n1)]
        o0, o1 = first[1], last[1]
        every = [c + o0 for c in l0] + [out, into] + [c + o1 for c in l1]
        if len(set(every)) != len(every):
            return None
        return first[0], o0, out, into, last[0], o1, every

    def unit_list(self, route) -> list[int] | None:
        """A one-path route's channels as a list when its weights are all 1.0 (each channel crossed
        once, ``Router._single_path_via``'s condition on a leg), else None; remembered per route."""
        key = id(route.channels)
        known = self.units.get(key)
        if known is None or known[0] is not route:
            ok = len(route.paths) == 1 and self.router._unit_weights(route.weights)
            known = self.units[key] = (route, route.channels.tolist() if ok else None)
        return known[1]

    def single_via(self, way: list[str], seg: _Segments) -> bool:
        """``via_legs`` added to ``seg`` (True), else nothing added (False)."""
        legs = self.via_legs(way)
        if legs is None:
            return False
        first, o0, out, into, last, o1, _ = legs
        seg.add(seg.template(first.channels, first.weights), o0)
        seg.pair(out, into)
        seg.add(seg.template(last.channels, last.weights), o1)
        return True


def ring_loads_by_template(plan, router) -> tuple[np.ndarray, np.ndarray]:
    """``channels.ring_loads(plan, router)`` (its fast path): the same arrays, element by element.
    A ring direction through systems wired alike goes system by system (``ring_classes``), each
    system's checks made on numbers and its templates looked up once per class; anything those
    checks do not vouch for goes hop by hop here, as it always did."""
    from .channels import ring_directions
    from .ring_classes import ClassTables

    seg = _Segments()
    loads = _Loads(router)
    system = router._system
    if router.spread == "even":  # every system's channel offset, checked together
        router.offsets_in_bulk([sid for members in plan.systems if (sid := system.get(members[0])) is not None])
    tables = ClassTables.of(plan, router, loads) if hasattr(router, "_bundle_ends") else None
    for order, hops, via in ring_directions(plan):
        check_cancelled()
        if tables is not None and hops is None and tables.direction(order, via, seg):
            continue
        n = len(order)
        sids = [system.get(g) for g in order]
        k = 0
        while k < n:
            if k % 64 == 63:
                check_cancelled()
            end = k
            sid = sids[k]
            # the hops that stay inside one system from here on: routed by the router, not pinned
            while (end < n and hops is None and (via is None or via[end] is None) and sid is not None
                   and sids[(end + 1) % n] == sid):
                end += 1
            if end - k > 1 and run_piece(loads, seg, order, k, end, sid):
                k = end
                continue
            hop_piece(loads, seg, order, hops, via, k)
            k += 1
    return seg.assemble()


def run_piece(loads: _Loads, seg: _Segments, order: list[str], k: int, end: int, sid: str) -> bool:
    """Hops k..end-1 (two or more, inside system ``sid``, routed by the router) added to ``seg`` as
    one segment (True), or nothing added when the router cannot say them as a run (False: then hop
    by hop)."""
    run = loads.run(order, k, end, sid)
    if run is not None:
        seg.add(seg.template(run[0], run[1]), run[2])
        return True
    n = len(order)
    whole = loads.router.run_loads([(order[i], order[(i + 1) % n]) for i in range(k, end)])
    if whole is None:
        return False
    seg.literal(*whole)
    return True


def hop_piece(loads: _Loads, seg: _Segments, order: list[str], hops, via, k: int) -> None:
    """Hop k added to ``seg``: a GPU-NIC-NIC-GPU hop with one path per leg as its legs' templates
    and the two channels through the leaf, anything else as the router's arrays."""
    from .channels import hop_loads

    way = via[k] if via is not None and hops is None else None
    if way is None or not loads.single_via(way, seg):
        seg.literal(*hop_loads(loads.router, order, hops, via, k))


class SpreadHop(NamedTuple):
    """A hop spread over the spines as the router joins it (``Router._spread_parts``): its
    waypoints and (first leg, NIC link out, leaf pair, the pair's spread, NIC link in, last leg)."""

    way: list[str]
    parts: tuple


class HopRoutes:
    """The routes of ring hops for the engine, read from the same templates as the ring loads: a hop
    inside a system wired like another is that system's template route moved by the channel offset
    (what ``Router.routes`` returns for it), a GPU-NIC-NIC-GPU hop with one path per leg is its two
    legs' templates and the two channels through the leaf (what ``Router.via`` returns). Each comes
    as a ``LazyRoute`` with the same channels, weights and latency, whose device paths are asked of
    the router if someone reads them; None where the router must be asked (then ask it)."""

    def __init__(self, router):
        self.router = router
        self.loads = _Loads(router)
        self._known: dict[tuple, object] = {}  # request -> its LazyRoute, or None (ask the router)
        self.via_latency = ViaLatency(router)

    @staticmethod
    def of(router) -> "HopRoutes":
        """The router's one instance (its caches serve every run on that router)."""
        return router.companion(HopRoutes)

    def route(self, src: str, dst: str, way: list[str] | None, parts: bool = False):
        """The hop's ``LazyRoute`` (one object per request, for the router's life), or None. With
        ``parts``, a hop spread over the spines not asked before comes as ``SpreadHop`` instead:
        the parts the router would join into its route now (then kept by no one)."""
        key = (src, dst) if way is None else ("via", *way)
        known = self._known.get(key, self)
        if known is self:
            known = self._route(src, dst, way, True) if parts else self._route(src, dst, way)
            if not isinstance(known, SpreadHop):
                self._known[key] = known
        return known

    def _route(self, src: str, dst: str, way: list[str] | None, parts: bool = False):
        router = self.router
        if way is None:
            leg = self.loads.leg(src, dst)
            if leg is None:
                return self._between_systems(src, dst, parts)
            first, delta = leg
            return LazyRoute(first.channels + delta, first.weights, first.latency_s, (src, dst),
                             partial(router.routes, src, dst))
        legs = self.loads.via_legs(way)
        if legs is None and parts and ("via", *way) not in router._cache and router._single_path_via(way) is None:
            # (``via_loads``' own order: a route it keeps, one path per leg, then the spread)
            spread = router._spread_parts(way)
            if spread is not None:
                return SpreadHop(way, spread)
        if legs is None:
            # spread over the spines (or anything else): ``via_loads`` gives its arrays
            chans, weights = router.via_loads(way)
        else:  # one path per leg: the legs' templates and the two channels through the leaf
            chans = np.array(legs[-1], dtype=np.int64)
            weights = np.ones(len(chans))
        # the latency, if asked, is the router's without its paths (``ViaLatency``)
        return LazyRoute(chans, weights, None, (way[0], way[-1]), partial(router.via, way),
                         partial(self.via_latency, way))

    def _between_systems(self, src: str, dst: str, parts: bool = False):
        """GPUs of two systems asked for without waypoints (hierarchical's ring across systems):
        ``Router.routes`` answers them with ``via`` through each GPU's own NIC (``_rail_waypoints``),
        so they are that via hop's ``LazyRoute``, the same object a ring hop through those NICs
        gets. None where the router would do anything else: a route it already keeps for the pair
        (``routes`` returns that one), a NIC-to-NIC route (``_edge_route``), PXN's five waypoints."""
        router = self.router
        if router.pxn or (src, dst) in router._cache or src == dst:
            return None
        gpus = router._gpus
        if src not in gpus or dst not in gpus:  # (_edge_route answers NICs; a GPU has no uplink)
            return None
        way = router._rail_waypoints(src, dst)
        if way is None or len(way) != 4:
            return None
        return self.route(src, dst, way, parts)
