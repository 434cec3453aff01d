"""Routes for transfers: channels (one per link direction) and equal-cost paths between devices.

Every link bundle (parallel links between two devices) is full duplex: two channels, each with the
bundle's per-direction capacity. A route minimises the sum over its hops of 1 / (bundle bandwidth),
so NVLink beats a PCIe detour of the same length; it never passes through a GPU, nor through the
insides of a system other than the two it joins. Where several
routes tie (16 spines) a transfer is spread evenly over them, or pinned to one by a hash.

Two GPUs joined by NVLink (directly or through NVSwitches) talk over NVLink only, never over PCIe or
a CPU, and their traffic spreads over every NVSwitch plane in proportion to what each plane offers
the pair (the DGX H100's 5/4/4/5 NVLinks per GPU to its four switches give shares 5:4:4:5), as the
hardware sprays a peer's traffic over all its NVLink ports.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from .fabric import Fabric, bundle_key
from ..model.topology import Topology

MAX_PATHS = 64
_ENUMERATION_LIMIT = 4096


class RoutingError(ValueError):
    """Two devices with no route between them; the message names both."""


@dataclass(frozen=True)
class Route:
    """How one transfer travels: one or more tied paths, carried at one rate, split evenly.

    ``weights[i]`` is the fraction of the transfer's rate that loads ``channels[i]``; the last byte
    arrives after the slowest path's latency.
    """

    paths: tuple[tuple[str, ...], ...]
    channels: np.ndarray
    weights: np.ndarray
    latency_s: float
    cap_Bps: float = math.inf

    def capped(self, cap_Bps: float) -> "Route":
        """The same route with its rate limited to ``cap_Bps`` (a protocol's per-channel ceiling)."""
        return self if cap_Bps >= self.cap_Bps else replace(self, cap_Bps=cap_Bps)

    @property
    def devices(self) -> tuple[str, ...]:
        return self.paths[0]


class Router:
    def __init__(self, topo: Topology, achievable: bool = False, spread: str = "even", max_paths: int = MAX_PATHS):
        if spread not in ("even", "hash"):
            raise ValueError(f"unknown route spreading {spread!r} (even or hash)")
        self.topo = topo
        self.spread = spread
        self.max_paths = max_paths
        self.fabric = Fabric(topo, achievable=achievable)
        self.channel_index: dict[tuple[str, str], int] = {}
        caps, ends, links = [], [], []
        for key, b in self.fabric.bundles.items():
            for u, v in (key, key[::-1]):
                self.channel_index[(u, v)] = len(caps)
                caps.append(b.bandwidth)
                ends.append((u, v))
                links.append(tuple(b.links))
        self.capacity = np.asarray(caps, dtype=float)
        self.channel_ends = ends
        self.channel_links = links
        cost = {key: 1e9 / b.bandwidth for key, b in self.fabric.bundles.items()}
        self._adj_cost = {u: [(v, cost[bundle_key(u, v)]) for v in vs] for u, vs in self.fabric.adj.items()}
        self._gpus = {d for d, k in self.fabric.kind.items() if k == "gpu"}
        # The NVLink world: bundles of the nvlink family, entered through NVSwitches only.
        self._nvl_adj: dict[str, list[str]] = {}
        for key, b in self.fabric.bundles.items():
            if b.family == "nvlink":
                self._nvl_adj.setdefault(key[0], []).append(key[1])
                self._nvl_adj.setdefault(key[1], []).append(key[0])
        # A route between two systems never detours through a third system's insides.
        self._system = {d: topo.system_of(d) for d in topo.devices}
        self._cache: dict[tuple[str, str], Route] = {}

    @property
    def n_channels(self) -> int:
        return len(self.capacity)

    def _dag(self, src: str, dst: str) -> dict[str, list[str]] | None:
        """Least-cost paths from src to dst as a predecessor map, or None if unreachable.

        A bidirectional Dijkstra keeping ties: one search from each end, so a route across a fat tree
        settles the two ends' leaves and the spines between them, not the whole fabric. Every
        least-cost path is kept: each one crosses a *meeting edge* (its last node settled from src,
        the next settled from dst), and the paths are the forward ties to the edge joined to the
        backward ties from it. Paths through a GPU or a third system's insides are never formed.
        """
        gpus = self._gpus
        system = self._system
        ends = (system[src], system[dst])
        adj = self._adj_cost
        dist = ({src: 0.0}, {dst: 0.0})
        preds: tuple[dict[str, list[str]], dict[str, list[str]]] = ({src: []}, {dst: []})
        heaps = ([(0.0, src)], [(0.0, dst)])
        done: tuple[set, set] = (set(), set())
        origin = (src, dst)
        best = float("inf")
        tol = 1e-9

        def top(side: int) -> float:
            h = heaps[side]
            while h and h[0][1] in done[side]:
                heapq.heappop(h)
            return h[0][0] if h else float("inf")

        while True:
            tf, tb = top(0), top(1)
            if tf + tb > best * (1 + tol) + 1e-12 or (tf == float("inf") and tb == float("inf")):
                break
            side = 0 if tf <= tb else 1
            d, u = heapq.heappop(heaps[side])
            done[side].add(u)
            if u in gpus and u != origin[side]:
                continue
            other = 1 - side
            du = dist[side]
            pu = preds[side]
            for v, cost in adj[u]:
                sv = system[v]
                if sv is not None and sv not in ends:
                    continue
                nd = d + cost
                if v in done[other] and (v == origin[other] or v not in gpus):
                    total = nd + dist[other][v]
                    if total < best:
                        best = total
                if v in done[side]:
                    continue
                old = du.get(v)
                if old is None or nd < old * (1 - 1e-12) - 1e-12:
                    du[v] = nd
                    pu[v] = [u]
                    heapq.heappush(heaps[side], (nd, v))
                elif abs(nd - old) <= 1e-9 * max(1.0, old):
                    pu[v].append(u)
        if best == float("inf"):
            return None
        # Meeting edges on a least-cost path: u settled from src (and passable), v settled from dst.
        fwd_done, bwd_done = done
        df, db = dist
        meet: dict[str, list[str]] = {}
        for u in fwd_done:
            if u in gpus and u != src:
                continue
            for v, cost in adj[u]:
                if v not in bwd_done or (v in gpus and v != dst) or v in meet.get(u, ()):
                    continue
                sv = system[v]
                if sv is not None and sv not in ends:
                    continue
                if abs(df[u] + cost + db[v] - best) <= 1e-9 * max(1.0, best):
                    meet.setdefault(v, []).append(u)
        # Forward ties reaching the meeting edges' tails, backward ties from their heads to dst.
        out: dict[str, list[str]] = {}
        stack = [u for us in meet.values() for u in us]
        seen = set(stack)
        while stack:
            x = stack.pop()
            out[x] = list(preds[0][x])
            for p in out[x]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        # Walk from the meeting heads toward dst; each backward tie (x closer to dst than w) makes w a
        # predecessor of x. A head's predecessors include its meeting tails.
        stack = list(meet)
        heads_seen = set(stack)
        for v, us in meet.items():
            lst = out.setdefault(v, [])
            for u in us:
                if u not in lst:
                    lst.append(u)
        while stack:
            w = stack.pop()
            for x in preds[1][w]:
                lst = out.setdefault(x, [])
                if w not in lst:
                    lst.append(w)
                if x not in heads_seen:
                    heads_seen.add(x)
                    stack.append(x)
        return out

    def _enumerate(self, preds: dict[str, list[str]], src: str, dst: str) -> list[list[str]]:
        out: list[list[str]] = []
        stack = [(dst, [dst])]
        while stack and len(out) < _ENUMERATION_LIMIT:
            node, tail = stack.pop()
            if node == src:
                out.append(tail[::-1])
                continue
            for p in reversed(preds[node]):
                stack.append((p, tail + [p]))
        out.sort()
        if len(out) > self.max_paths:
            step = len(out) / self.max_paths
            out = [out[int(i * step)] for i in range(self.max_paths)]
        return out

    def _path_channels(self, devices) -> list[int]:
        return [self.channel_index[(devices[i], devices[i + 1])] for i in range(len(devices) - 1)]

    def _latency(self, devices) -> float:
        fab = self.fabric
        return sum(fab.hop_latency[d] for d in devices) + sum(
            fab.bundle(devices[i], devices[i + 1]).latency_s for i in range(len(devices) - 1))

    def _nvlink_paths(self, src: str, dst: str) -> tuple[list[list[str]], list[float]] | None:
        """Fewest-hop NVLink paths between two GPUs (through NVSwitches, never a third GPU), each
        weighted by the bandwidth it offers the pair (its narrowest bundle); None without NVLink."""
        adj = self._nvl_adj
        if src not in adj or dst not in adj or src not in self._gpus or dst not in self._gpus:
            return None
        level = {src: 0}
        preds: dict[str, list[str]] = {src: []}
        queue = deque([src])
        while queue:
            u = queue.popleft()
            if u == dst:
                continue
            if u in self._gpus and u != src:
                continue
            for v in adj[u]:
                if v not in level:
                    level[v] = level[u] + 1
                    preds[v] = [u]
                    queue.append(v)
                elif level[v] == level[u] + 1:
                    preds[v].append(u)
        if dst not in level:
            return None
        paths = self._enumerate(preds, src, dst)
        fab = self.fabric
        weights = [min(fab.bundle(p[i], p[i + 1]).bandwidth for i in range(len(p) - 1)) for p in paths]
        return paths, weights

    def _route(self, paths: list[list[str]], weights: list[float] | None = None) -> Route:
        total = float(sum(weights)) if weights else float(len(paths))
        shares = [w / total for w in weights] if weights else [1.0 / len(paths)] * len(paths)
        load: dict[int, float] = {}
        for p, share in zip(paths, shares):
            for c in self._path_channels(p):
                load[c] = load.get(c, 0.0) + share
        chans = np.fromiter(load, dtype=np.int64, count=len(load))
        weights = np.fromiter(load.values(), dtype=float, count=len(load))
        return Route(tuple(tuple(p) for p in paths), chans, weights, max(self._latency(p) for p in paths))

    def routes(self, src: str, dst: str) -> Route:
        """The route of a transfer from src to dst: its tied least-cost paths, or one of them by hash."""
        key = (src, dst)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if src == dst:
            raise RoutingError(f"a transfer from {src} to itself")
        for end in (src, dst):
            if end not in self.topo.devices:
                raise RoutingError(f"no device {end!r}")
        nvl = self._nvlink_paths(src, dst)
        if nvl is not None:
            paths, weights = nvl
            if self.spread == "hash" and len(paths) > 1:
                digest = hashlib.blake2b(f"{src}>{dst}".encode(), digest_size=8).digest()
                k = int.from_bytes(digest, "little") % len(paths)
                paths, weights = [paths[k]], None
            route = self._route(paths, weights)
            self._cache[key] = route
            return route
        preds = self._dag(src, dst)
        if preds is None:
            raise RoutingError(f"no route from {self.topo.devices[src].name} ({src}) to "
                               f"{self.topo.devices[dst].name} ({dst}): they are not connected except through GPUs")
        paths = self._enumerate(preds, src, dst)
        if self.spread == "hash" and len(paths) > 1:
            digest = hashlib.blake2b(f"{src}>{dst}".encode(), digest_size=8).digest()
            paths = [paths[int.from_bytes(digest, "little") % len(paths)]]
        route = self._route(paths)
        self._cache[key] = route
        return route

    def via(self, waypoints: list[str]) -> Route:
        """A route forced through waypoints (a GPU, its rail's NIC, the next system's NIC, its GPU),
        each leg on its own least-cost routes, so a ring hop keeps to its rails while the fabric
        between the NICs still spreads it over every spine."""
        key = ("via", *waypoints)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        paths: list[list[str]] = [[waypoints[0]]]
        for a, b in zip(waypoints, waypoints[1:]):
            leg = self.routes(a, b).paths
            paths = [p + list(q[1:]) for p in paths for q in leg]
            if len(paths) > self.max_paths:
                step = len(paths) / self.max_paths
                paths = [paths[int(i * step)] for i in range(self.max_paths)]
        route = self._route(paths)
        self._cache[key] = route
        return route

    def direct(self, devices: list[str]) -> Route:
        """A route the caller chose (e.g. a ring hop through a GPU), checked hop by hop."""
        for i in range(len(devices) - 1):
            if (devices[i], devices[i + 1]) not in self.channel_index:
                raise RoutingError(f"no link between {devices[i]} and {devices[i + 1]}")
        return self._route([list(devices)])
