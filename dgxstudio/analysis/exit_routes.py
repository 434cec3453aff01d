"""Routes between a device inside a system and a device outside every system (a CollNet head and
its NIC's leaf, both ways), read from a system wired alike instead of searched: over 2,048 DGX H100
CollNet asks 32,768 of them, each a search of the fabric.

The first such pair of a class (the system's builder, the inside end's id after the system's
prefix, which way, and which of the system's devices the outside end is joined to, at which
bandwidths) is searched; if every one of its least-cost paths stays inside the system up to the
outside end, and the router kept them all (fewer than ``max_paths``), another system wired alike
(``Router._channel_offset``) takes the same paths renamed, when no path through any other device
outside can tie: such a path leaves the system at some device e for a device o other than the
outside end and takes at least one more hop from o, so it costs at least the least cost from the
inside end to e inside the system (the same in systems wired alike), plus the bundle e-o, plus the
cheapest bundle at any device outside systems. The paths inside the system and the outside end are
the template's renamed (the same devices and bundles), so the router's search, which keeps every
least-cost path, would find those. Anything else is searched as before.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

_MARGIN = 1e-6  # (far above the search's tie tolerance, 1e-9 of the cost)


class ExitRoutes:
    def __init__(self, router):
        self.router = router
        self._kept: dict[tuple, tuple | None] = {}       # class -> (system, paths with None for the outside end, cost)
        self._inside: dict[tuple, dict[str, float]] = {}  # (system, device) -> least cost to each device inside
        self._exits: dict[str, list[tuple[str, float, str]]] = {}  # system -> (device, bundle cost, outside device)
        self._cheapest_out: float | None = None
        self._by_system: dict[str, dict[str, list[tuple[str, float]]]] = {}  # see _joined
        self._floors: dict[tuple, float] = {}  # see _floor
        self._rel_exits: dict[str, list[tuple[str, float, str]]] = {}  # system -> _exits_of's, by id after its prefix
        self._join_keys: dict[tuple[str, str], tuple | bool] = {}  # (outside end, system) -> the class key's joins
        self._caps: list[float] | None = None  # the router's capacities as floats (see _renamed)
        self._lazy = None  # routing.LazyRoute, imported when first needed (routing imports this module)

    @staticmethod
    def of(router) -> "ExitRoutes":
        """The router's one instance."""
        return router.companion(ExitRoutes)

    def route(self, src: str, dst: str):
        """The router's route for the pair (searched for the first of a class, else renamed), or None
        where this cannot say (then the router searches as before)."""
        r = self.router
        system = r._system
        sa, sb = system.get(src), system.get(dst)
        if r.spread != "even" or (sa is None) == (sb is None):
            return None
        inside, outside, forward = (src, dst, True) if sa is not None else (dst, src, False)
        sid = sa if forward else sb
        if outside in r._gpus:
            return None
        sig = r._system_signature(sid)
        if not sig or not inside.startswith(sig[2]):
            return None
        prefix, n = sig[2], len(sig[2])
        joined = self._join_keys.get((outside, sid))
        if joined is None:  # (what the outside end is joined to in this system, by id after its prefix)
            joins = self._joined(outside).get(sid, ())   # (False: one outside the system's prefix)
            joined = self._join_keys[(outside, sid)] = (
                tuple(sorted((v[n:], bandwidth) for v, bandwidth in joins)) if all(v.startswith(prefix) for v, _ in joins)
                else False)
        if joined is False:
            return None
        key = (sig[:2], inside[n:], forward, joined)
        if key not in self._kept:
            return self._template(key, src, dst, sid, prefix, outside)
        kept = self._kept[key]
        if kept is None:
            return None
        first, rel, cost = kept[:3]
        delta = r._channel_offset(first, sid)
        if delta is None or self._floor(first, inside[n:], sid, prefix, outside) <= cost * (1 + _MARGIN) + _MARGIN:
            return None

        def build():
            paths = [[outside if d is None else prefix + d for d in p] for p in rel]
            if not forward:
                paths = [p[::-1] for p in paths]
            return r._route(sorted(paths))

        return self._renamed(kept[3], delta, prefix, outside, (src, dst), build) or build()

    @staticmethod
    def _shape(r, route, prefix: str, outside: str) -> tuple:
        """What renaming a route needs: the route (its paths sorted, as ``route`` builds it), and per
        channel either its number (inside the system) or (the inside end after the prefix, whether
        the channel leaves the outside end) for the bundle to the outside end."""
        n, ends = len(prefix), r.channel_ends
        roles = []
        for c in route.channels.tolist():
            u, v = ends[c]
            roles.append((v[n:], True) if u == outside else (u[n:], False) if v == outside else c)
        return route, roles, outside

    def _renamed(self, shape, delta: int, prefix: str, outside: str, pair: tuple[str, str], build):
        """The renamed route without its paths (a ``LazyRoute``: ``build`` makes them if read): the
        template's channels, those inside the system ``delta`` on (``Router._channel_offset`` checked
        them: same capacities and latencies, devices of the same hop latency), the bundle to the
        outside end looked up, its capacity and latency and the outside end's hop latency checked;
        the same weights and latency, which ``Router._route`` then sums alike. None if a check fails."""
        r = self.router
        route, roles, first_outside = shape
        if self._caps is None:
            from .routing import LazyRoute

            self._caps, self._lazy = r.capacity.tolist(), LazyRoute
        index, cap, lat = r.channel_index, self._caps, r._channel_latency
        hop = r.fabric.hop_latency
        if hop[outside] != hop[first_outside]:
            return None
        chans = []
        for c, role in zip(route.channels.tolist(), roles):
            if type(role) is int:
                chans.append(role + delta)
                continue
            rel, leaves = role
            got = index.get((outside, prefix + rel) if leaves else (prefix + rel, outside))
            if got is None or cap[got] != cap[c] or lat[got] != lat[c]:
                return None
            chans.append(got)
        return self._lazy(np.array(chans, dtype=np.int64), route.weights, route.latency_s, pair, build)

    def _joined(self, outside: str) -> dict[str, list[tuple[str, float]]]:
        """The devices a device outside systems is joined to, by system, with their bundles' bandwidths
        (in the fabric's order): a leaf is asked once per system under it and rail."""
        got = self._by_system.get(outside)
        if got is None:
            r = self.router
            system, bundles = r._system, r.fabric.bundles
            got = self._by_system[outside] = {}
            for v in r.fabric.adj[outside]:
                sid = system.get(v)
                if sid is not None:
                    got.setdefault(sid, []).append((v, bundles[(v, outside) if v <= outside else (outside, v)].bandwidth))
        return got

    def _template(self, key, src, dst, sid, prefix, outside):
        r = self.router
        paths, weights = r._search(src, dst)
        route = r._route(paths, weights)
        n, system = len(prefix), r._system
        ok = (weights is None and len(paths) < r.max_paths
              and all(d == outside or (system.get(d) == sid and d.startswith(prefix)) for p in paths for d in p))
        if ok:
            ways = [p if p[0] != outside else p[::-1] for p in paths]
            self._kept[key] = (sid, [[None if d == outside else d[n:] for d in p] for p in ways],
                               self._cost(ways[0]), self._shape(r, r._route(sorted(paths)), prefix, outside))
        else:
            self._kept[key] = None
        return route

    def _cost(self, path) -> float:
        total = 0.0
        for u, v in zip(path, path[1:]):
            total += dict(self.router._adj_cost[u])[v]
        return total

    def _floor(self, first: str, rel: str, sid: str, prefix: str, outside: str) -> float:
        """The least any path from the inside end through a device outside other than ``outside``
        can cost (see the module's note). Kept: the pair is asked both ways (CollNet's SHARP)."""
        key = (first, rel, sid, outside)
        got = self._floors.get(key)
        if got is None:
            inside = self._inside_costs(first, rel)
            exits = self._rel_exits.get(sid)
            if exits is None:  # (by id after the system's prefix: once per system, not per pair)
                n = len(prefix)
                exits = self._rel_exits[sid] = [(e[n:], cost, o) for e, cost, o in self._exits_of(sid)]
            best = math.inf
            for e, cost, o in exits:
                if o != outside:
                    best = min(best, inside.get(e, math.inf) + cost)
            got = self._floors[key] = best + self._cheapest()
        return got

    def _inside_costs(self, first: str, rel: str) -> dict[str, float]:
        """Least cost from a device of system ``first`` to each of its devices, inside it (by id after
        the prefix), through any of them (a floor: a route passes no GPU)."""
        got = self._inside.get((first, rel))
        if got is None:
            r = self.router
            prefix = r._system_signature(first)[2]
            system, adj = r._system, r._adj_cost
            start = prefix + rel
            dist = {start: 0.0}
            heap = [(0.0, start)]
            while heap:
                d, u = heapq.heappop(heap)
                if d > dist[u]:
                    continue
                for v, c in adj[u]:
                    if system.get(v) == first and d + c < dist.get(v, math.inf):
                        dist[v] = d + c
                        heapq.heappush(heap, (d + c, v))
            got = self._inside[(first, rel)] = {u[len(prefix):]: d for u, d in dist.items()}
        return got

    def _exits_of(self, sid: str) -> list[tuple[str, float, str]]:
        got = self._exits.get(sid)
        if got is None:
            r = self.router
            system, adj, bundles = r._system, r.fabric.adj, r.fabric.bundles
            # (Router._adj_cost's costs, without making every inside device's list)
            # a system drawn as trays (GB200 NVL72) holds its devices in its trays, none itself: read
            # as having no exit, no other path could tie and every renamed route was taken unchecked
            devices = r.system_devices(sid)  # (every such rack's at once, not a walk of the groups each)
            got = self._exits[sid] = [(u, 1e9 / bundles[(u, v) if u <= v else (v, u)].bandwidth, v)
                                      for u in devices if u in adj
                                      for v in adj[u] if system.get(v) is None]
        return got

    def _cheapest(self) -> float:
        """The cheapest bundle at any device outside systems."""
        if self._cheapest_out is None:
            system = self.router._system
            self._cheapest_out = min((1e9 / b.bandwidth for (u, v), b in self.router.fabric.bundles.items()
                                      if system.get(u) is None or system.get(v) is None), default=math.inf)
        return self._cheapest_out
