"""The other trees' hops inside systems and between systems under one leaf, as parts, not routed.

``TreeParts.of`` gives every slot of every tree as parts, so that tree_orbits can check the maps
between trees; only tree 0's routes are read by the folded run. A hop that is not spread over the
spines was, in every tree, asked of the engine's template: a ``LazyRoute`` made, an engine route
numbered and kept, its pair remembered by ``HopRoutes``, for 87,500 slots of trees 1-15 on 2,048
DGX H100 systems (about 1.2 s), where the check needs only the route's channels and weights.

Past tree 0, such a hop is the part ``HopRoutes.route`` would have made the route of, taken in the
same order of checks:

- GPUs of one system: ``Router.template_leg`` (the route another system's search found, moved by
  the channel offset): the template's channels plus the offset, its weights, its latency;
- GPUs of two systems, asked without waypoints (``_between_systems``): the via hop through each GPU's
  own NIC (``Router._rail_waypoints``); when its legs are one path each and the NICs share their leaf
  (``_Loads.via_legs``), the legs' channels and the two through the leaf, each of weight 1, its latency
  ``ViaLatency``'s;
- a GPU of a system and a device outside every system (CollNet's heads and their leaves, 28,700
  pairs of rails 1-7 on 2,048 DGX H100): ``ExitRoutes.route``, which ``Router.routes`` answers them
  with, not kept by the router.

A pair ``HopRoutes`` or the router already answered (kept), or one they would answer any other way,
is left to the engine's template, as before. Its part is equal, entry by entry, to the route the
template would give (tests/sim/test_unrouted_hops.py): the maps' check reads the same numbers.
"""

from __future__ import annotations

import math
from itertools import islice

import numpy as np

from ..analysis.exit_routes import ExitRoutes


class Unrouted:
    """The hops of some pairs taken as parts (``take``), made for one ``TreeParts.of``: what it
    remembers of the router stays true while the run routes other pairs (a leg's template, once
    found, is kept by the router, its NICs' uplinks and rails do not change; whether a pair has
    been routed since is checked pair by pair, as ``HopRoutes`` checks it). ``hops``: the router's
    ``HopRoutes``, on an engine whose template reads it."""

    def __init__(self, hops):
        self.hops = hops
        self.router = router = hops.router
        self._outs: dict[str, list] = {}  # a GPU's side of a via hop out of it (see _side)
        self._ins: dict[str, list] = {}   # and into it
        self._cache_seen: tuple[int, set] = (0, set())  # see _touched
        self._ones: dict[int, np.ndarray] = {}
        self._between = not router.pxn  # (_between_systems leaves every hop between systems to the router under PXN)
        self._exits = ExitRoutes.of(router)

    def _side(self, g: str, out: bool) -> list:
        """GPU ``g``'s side of a via hop through its own NIC: [the NIC, its uplink, the NIC's system,
        the channel between NIC and uplink (out of the NIC, or into it), the leg's channels as
        ``_Loads.via_legs`` lists them (None: no template leg yet, asked again next time; False: not
        one path of weights 1)]."""
        sides = self._outs if out else self._ins
        got = sides.get(g)
        router = self.router
        if got is None:
            nic = router._rails()[g][0]
            up = router._uplinks[nic] if nic in router._uplinks else router._uplink(nic)
            link = -1 if up is None else router.channel_index[(nic, up) if out else (up, nic)]
            got = sides[g] = [nic, up, router._system.get(nic), link, None]
        if got[4] is None:
            leg = router.template_leg(g, got[0]) if out else router.template_leg(got[0], g)
            if leg is not None:
                units = self.hops.loads.unit_list(leg[0])
                got[4] = False if units is None else [c + leg[1] for c in units]
        return got

    def take(self, pairs: list[tuple[str, str]], at: list[int], latency_s: float | None):
        """The pairs of ``pairs`` at ``at`` taken as parts: (their places, each one's channels, weights
        and latency; ``latency_s`` where given, as the template takes it). Called for a pattern
        without waypoints or paths."""
        hops, router = self.hops, self.router
        known, cache, system, gpus = hops._known, router._cache, router._system, router._gpus
        rail = router._rails() if self._between else {}
        side, template_leg = self._side, router.template_leg
        outs, ins = self._outs, self._ins
        touched = self._touched(cache)
        ones = self._ones
        places: list[int] = []
        chans: list[np.ndarray] = []
        weights: list[np.ndarray] = []
        lat: list[float] = []
        for k in at:
            s, d = pairs[k]
            if (s, d) in known:
                continue
            sa, sb = system.get(s), system.get(d)
            if sa is not None and sa == sb:
                # (HopRoutes._route: a leg inside a system read from a template; template_leg is
                # None for GPUs of no system or of two)
                leg = template_leg(s, d)
                if leg is not None:
                    first, delta = leg
                    places.append(k)
                    chans.append(first.channels + delta)
                    weights.append(first.weights)
                    lat.append(first.latency_s if latency_s is None else latency_s)
                continue
            if (sa is None) != (sb is None):
                got = self._exit(s, d, sa, cache)
                if got is not None:
                    places.append(k)
                    chans.append(got.channels)
                    weights.append(got.weights)
                    lat.append(got.latency_s if latency_s is None else latency_s)
                continue
            # HopRoutes._between_systems: the via hop Router._rail_waypoints gives (without PXN)
            if (not self._between or sa is None or sb is None or s not in gpus
                    or d not in gpus or s not in rail or d not in rail):
                continue
            # then its HopRoutes.route and _route: _Loads.via_legs' checks (any order: each one fails
            # alike), its channels one path per leg
            a = outs.get(s) or side(s, True)
            b = ins.get(d) or side(d, False)
            n0, n1 = a[0], b[0]
            if (a[1] is None or a[1] != b[1] or a[2] is None or b[2] is None or a[2] == b[2]
                    or ("via", s, n0, n1, d) in known):
                continue
            # (the router's routes name these devices, if any: nothing kept, nothing to look up)
            if (s in touched or d in touched or n0 in touched or n1 in touched) and (
                    (s, d) in cache or ("via", s, n0, n1, d) in cache or (n0, n1) in cache
                    or (s, n0) in cache or (n1, d) in cache):
                continue
            l0 = a[4] if a[4] is not None else side(s, True)[4]
            l1 = b[4] if b[4] is not None else side(d, False)[4]
            if not l0 or not l1:
                continue
            every = [*l0, a[3], b[3], *l1]
            if len(set(every)) != len(every):
                continue
            n = len(every)
            w = ones.get(n)
            if w is None:
                w = ones[n] = np.ones(n)
            places.append(k)
            chans.append(np.array(every, dtype=np.int64))
            weights.append(w)
            lat.append(hops.via_latency([s, n0, n1, d]) if latency_s is None else latency_s)
        return places, chans, weights, lat

    def _exit(self, s: str, d: str, sa: str | None, cache: dict):
        """The route ``Router.routes`` gives a GPU of a system and a device outside every system (a
        CollNet head and its leaf, either way) that ``ExitRoutes`` answers, or None. HopRoutes
        answers such a pair with None (no template leg across systems, no rail waypoints to a
        device not a GPU), and so do ``Router._edge_route`` (a GPU has no uplink) and
        ``_rail_waypoints``: the router's answer is ``ExitRoutes.route``'s, which is not kept."""
        if (s, d) in cache or (s if sa is not None else d) not in self.router._gpus:
            return None
        got = self._exits.route(s, d)
        return got if got is not None and got.cap_Bps == math.inf else None

    def _touched(self, cache: dict) -> set:
        """Every device some route the router keeps names in its key (a pair, or a via hop's
        waypoints): a look-up of a key with none of them cannot hit. The router only adds routes
        (a dict: new keys come last), so the keys added since the last call are read, not all
        (CollNet's router keeps 30,000 routes by then, and a take follows each of rail 0's patterns)."""
        seen, names = self._cache_seen
        if len(cache) < seen:  # (emptied: read again from the start)
            seen, names = 0, set()
        if len(cache) != seen:
            names.update(x for key in islice(cache, seen, None) for x in key)
            self._cache_seen = (len(cache), names)
        return names
