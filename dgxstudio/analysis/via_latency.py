"""The latency of a hop forced through two NICs of two systems, without building its paths.

``Router.via([g0, n0, n1, g1])`` joins three legs path by path: the GPU to its NIC (one path), the
NIC to the other NIC (through the NIC's leaf, every least-cost path between the two leaves, the
other leaf, the NIC; or the one leaf both NICs plug into) and that NIC to its GPU (one path). ``Router._route`` then takes, over the
joined paths, the largest sum of the devices' hop latencies plus the sum of the channels'
latencies, each added left to right. An all-to-all over 127 systems asks for 128,016 such hops,
each building 16 or more device paths; only the latency is still needed there (the channels and
weights come from ``via_loads``).

A left-to-right sum over a joined path is the sum over its first leg continued over the rest, so
the same number comes from: the first leg's two sums (one per template route of systems wired
alike, the premise of ``HopRoutes``), continued over each middle path between the two leaves
(worked out once per pair of leaves) and over the last leg. The answer is kept per (first leg's
sums, the two NIC links' latencies, leaf pair, last leg's latencies), which thousands of hops share.
Anything else (a leg of several paths, a route the router already keeps, more paths than
``max_paths``) is asked of the router, so every value is the router's own, bit for bit.
"""

from __future__ import annotations


class ViaLatency:
    """``Router.via(way).latency_s`` for the router it is made for (``HopRoutes`` keeps one per
    router, so its tables serve every run on that router)."""

    def __init__(self, router):
        self.router = router
        self._legs: dict[int, tuple] = {}      # id(template route) -> (route, hop values, channel latencies)
        self._middles: dict[tuple[str, str], list | None] = {}
        self._known: dict[tuple, float] = {}

    def __call__(self, way: list[str]) -> float:
        value = self._spread(way) if len(way) == 4 else None
        return self.router.via(way).latency_s if value is None else value

    def _leg(self, a: str, b: str) -> tuple | None:
        """The hop and channel latencies along ``routes(a, b)``'s one path, read from its template
        (a system wired alike) or from the route itself (which ``via`` would ask for too)."""
        leg = self.router.template_leg(a, b)
        route = self.router.routes(a, b) if leg is None else leg[0]
        known = self._legs.get(id(route))
        if known is None or known[0] is not route:
            if len(route.paths) != 1:
                known = (route, None, None)
            else:
                router = self.router
                hop, lat = router.fabric.hop_latency, router._channel_latency
                known = (route, tuple(hop[d] for d in route.paths[0]),
                         tuple(lat[c] for c in route.channels.tolist()))
            self._legs[id(route)] = known
        return None if known[1] is None else known[1:]

    def _middle(self, a: str, b: str) -> list | None:
        """Each least-cost path between leaves ``a`` and ``b`` as (hop values, channel latencies);
        the leaf alone when the two NICs share it."""
        if (a, b) not in self._middles:
            router = self.router
            hop, lat = router.fabric.hop_latency, router._channel_latency
            if a == b:
                self._middles[(a, b)] = [((hop[a],), ())]
                return self._middles[(a, b)]
            paths = router.routes(a, b).paths
            self._middles[(a, b)] = None if len(paths) > router.max_paths else [
                (tuple(hop[d] for d in p), tuple(lat[c] for c in router._path_channels(p))) for p in paths]
        return self._middles[(a, b)]

    def _spread(self, way: list[str]) -> float | None:
        router = self.router
        g0, n0, n1, g1 = way
        if ("via", *way) in router._cache or (n0, n1) in router._cache:
            return None
        system = router._system
        if system.get(n0) is None or system.get(n0) == system.get(n1):
            return None
        a, b = router._uplink(n0), router._uplink(n1)
        if a is None or b is None:
            return None
        first, last = self._leg(g0, n0), self._leg(n1, g1)
        if first is None or last is None:
            return None
        lat = router._channel_latency
        index = router.channel_index
        out_lat, in_lat = lat[index[(n0, a)]], lat[index[(b, n1)]]
        # the first leg's two sums, as sum() makes them (from 0, left to right)
        hop0, lat0 = sum(first[0]), sum(first[1])
        key = (hop0, lat0, out_lat, a, b, in_lat, last)
        value = self._known.get(key)
        if value is None:
            middle = self._middle(a, b)
            if middle is None:
                return None
            # the joined path: the first leg's devices, the middle's (leaf to leaf), the last leg's
            # (from the NIC on); channels: the first leg's, the NIC's link, the middle's, the other
            # NIC's link, the last leg's
            value = float("-inf")
            for hops, lats in middle:
                h = hop0
                for x in hops:
                    h += x
                for x in last[0]:
                    h += x
                c = lat0 + out_lat
                for x in lats:
                    c += x
                c += in_lat
                for x in last[1]:
                    c += x
                value = max(value, h + c)
            self._known[key] = value
        return value
