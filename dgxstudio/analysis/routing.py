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

from .fabric import Fabric, bundle_key, system_map
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
    def __init__(self, topo: Topology, achievable: bool = False, spread: str = "even", max_paths: int = MAX_PATHS,
                 pxn: bool = False, fabric: Fabric | None = None):
        """``fabric``: a ``Fabric`` of this topology the caller already built (every family, the same
        ``achievable``), used instead of building another; any other is ignored."""
        if spread not in ("even", "hash"):
            raise ValueError(f"unknown route spreading {spread!r} (even or hash)")
        self.topo = topo
        self.spread = spread
        self.pxn = pxn
        self._rail: dict[str, tuple[str, frozenset]] | None = None
        self._signatures: dict[str, tuple] = {}
        self._shapes: dict[tuple, tuple] = {}
        self._offsets: dict[str, int | None] = {}      # system -> channel offset from its reference
        self._reference: dict[tuple, str] = {}         # builder signature -> the first system seen
        self._internal: dict[str, list[int]] | None = None  # each system's channels inside it
        self._figures: np.ndarray | None = None
        self._uniform: bool | None = None                 # see _uniform_outside
        self._complete: dict[tuple[str, str], list[list[str]]] = {}  # every path of a route, kept for its reverse
        self._middle: dict[tuple[str, str], list[list[int]]] = {}   # switch-to-switch routes' channels per path
        self._uplinks: dict[str, str | None] = {}
        self._runs: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # see run_loads
        self._relative_ends: dict[str, list[tuple[str, str]]] = {}   # see _renamed_ends
        self._unit: dict[int, tuple[np.ndarray, bool]] = {}          # see _unit_weights
        self._twin_keys: dict[str, tuple] = {}                        # see _twin_class
        self._spreads: dict[tuple[str, str], tuple] = {}              # see _spread_via
        self._twin_routes: dict[tuple, tuple[str, str, list[list[str]]]] = {}  # see _twin_paths
        self._lcm = 0                                      # set by _uniform_outside
        self._cheapest: int | None = None                  # cheapest bundle between switches, in units
        self.max_paths = max_paths
        usable = (fabric is not None and fabric.topo is topo and fabric.families is None
                  and fabric.achievable == achievable)
        self.fabric = fabric if usable else Fabric(topo, achievable=achievable)
        # Channels 2i and 2i + 1: the i-th bundle's two directions (its key's order, then reversed).
        bundles = list(self.fabric.bundles.values())
        ends = []
        for key in self.fabric.bundles:
            ends.append(key)
            ends.append(key[::-1])
        self.channel_index: dict[tuple[str, str], int] = {e: i for i, e in enumerate(ends)}
        self.capacity = np.repeat(np.array([b.bandwidth for b in bundles], dtype=float), 2)
        self._channel_latency = [b.latency_s for b in bundles for _ in (0, 1)]
        self.channel_ends = ends
        self.channel_links = [tuple(b.links) for b in bundles for _ in (0, 1)]
        # Each device's neighbours with the cost of the bundle to them, in the Fabric's adjacency
        # order (bundle by bundle, each end appended the other, as Fabric builds ``adj``).
        self._adj_cost: dict[str, list[tuple[str, float]]] = {u: [] for u in self.fabric.adj}
        for (u, v), b in self.fabric.bundles.items():
            cost = 1e9 / b.bandwidth
            self._adj_cost[u].append((v, cost))
            self._adj_cost[v].append((u, cost))
        self._gpus = {d for d, k in self.fabric.kind.items() if k == "gpu"}
        # The NVLink world: bundles of the nvlink family, entered through NVSwitches only.
        self._nvl_adj: dict[str, list[str]] = {}
        for key, b in self.fabric.bundles.items():
            if b.family == "nvlink":
                self._nvl_adj.setdefault(key[0], []).append(key[1])
                self._nvl_adj.setdefault(key[1], []).append(key[0])
        # A route between two systems never detours through a third system's insides.
        self._system = system_map(topo)
        self.system_of = self._system  # device -> its system's id (None outside systems); do not change it
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
        return self._subsample(sorted(self._collect(preds, src, dst)))

    @staticmethod
    def _collect(preds: dict[str, list[str]], src: str, dst: str) -> list[list[str]]:
        """The paths of a predecessor map from src to dst (at most ``_ENUMERATION_LIMIT``), unsorted."""
        out: list[list[str]] = []
        stack = [(dst, [dst])]
        while stack and len(out) < _ENUMERATION_LIMIT:
            node, tail = stack.pop()
            if node == src:
                out.append(tail[::-1])
                continue
            for p in reversed(preds[node]):
                stack.append((p, tail + [p]))
        return out

    def _subsample(self, out: list[list[str]]) -> list[list[str]]:
        """At most ``max_paths`` of the sorted paths, evenly spaced."""
        if len(out) > self.max_paths:
            step = len(out) / self.max_paths
            out = [out[int(i * step)] for i in range(self.max_paths)]
        return out

    def _uniform_outside(self) -> bool:
        """Routes between two devices outside systems (switch to switch) are the other way's reversed.

        Such a route crosses only bundles between devices outside systems. When their bandwidths are
        whole numbers, every cost 1e9 / bandwidth is a whole multiple of one unit 1e9 / lcm, so two
        path costs are equal or differ by at least that unit, which is far above the search's tie
        tolerance (1e-9 of the cost) and float rounding when the longest conceivable path costs under
        a million units: the search from either end then keeps exactly the least-cost paths, the same
        set, reversed."""
        if self._uniform is None:
            system = self._system
            bandwidths = {b.bandwidth for (u, v), b in self.fabric.bundles.items()
                          if system.get(u) is None and system.get(v) is None}
            ok = all(bw == bw // 1 and 0 < bw < 2.0 ** 53 for bw in bandwidths)
            if ok and bandwidths:
                lcm = self._lcm = math.lcm(*(int(bw) for bw in bandwidths))
                outside = sum(1 for d in self.fabric.adj if system.get(d) is None)
                # the costliest path visits every outside device once, each step at the highest cost
                ok = outside * (lcm / min(bandwidths)) < 1e6
            self._uniform = ok
        return self._uniform

    def _twin_class(self, node: str) -> tuple:
        """A switch's neighbours a route may enter (outside systems, not GPUs) with their costs in
        whole units (``_uniform_outside``): switches of one class are twins (leaves of one pod under
        the same spines)."""
        key = self._twin_keys.get(node)
        if key is None:
            lcm, bundles, system, gpus = self._lcm, self.fabric.bundles, self._system, self._gpus
            key = self._twin_keys[node] = tuple(sorted(
                (v, lcm // int(bundles[(node, v) if node <= v else (v, node)].bandwidth))
                for v, _ in self._adj_cost[node] if system.get(v) is None and v not in gpus))
        return key

    def _twin_paths(self, src: str, dst: str) -> list[list[str]] | None:
        """Every least-cost path between two switches from those of a pair of their twins, without a
        search, or None. Exchanging a switch with its twin (same neighbours, same costs) maps the
        routes' graph onto itself, so the twins' least-cost paths with their ends renamed are these
        (a least-cost path never passes through a twin of its own end: going to the common
        neighbour directly costs less)."""
        rep = self._twin_routes.get((self._twin_class(src), self._twin_class(dst)))
        if rep is None:
            return None
        s0, d0, every = rep
        if s0 == dst or d0 == src:
            return None
        inner = {src, dst}
        if any(not inner.isdisjoint(p[1:-1]) for p in every):
            return None
        return [[src, *p[1:-1], dst] for p in every]

    def _two_hop(self, src: str, dst: str) -> list[list[str]] | None:
        """Two switches one switch apart (leaves of one pod under their spines): the least-cost paths,
        sorted, without a search, or None when that cannot be shown.

        Only when ``_uniform_outside`` holds, so costs are whole numbers of one unit and compare
        exactly: with no link between the two, the cheapest paths through a common neighbour (outside
        systems, not a GPU) are all the least-cost paths when they cost less than any longer path can:
        the cheapest link out of src, plus the cheapest link anywhere, plus the cheapest link into dst.
        """
        adj, system, gpus, lcm = self._adj_cost, self._system, self._gpus, self._lcm
        bundles = self.fabric.bundles

        def units(u: str, v: str) -> int:
            return lcm // int(bundles[(u, v) if u <= v else (v, u)].bandwidth)

        if self._cheapest is None:
            self._cheapest = min(lcm // int(b.bandwidth) for (u, v), b in bundles.items()
                                 if system.get(u) is None and system.get(v) is None)
        out_of: dict[str, int] = {}
        for v, _ in adj[src]:
            if v == dst:
                return None
            if system.get(v) is None and v not in gpus:
                out_of[v] = units(src, v)
        if not out_of:
            return None
        best, via, into = None, [], []
        for w, _ in adj[dst]:
            if system.get(w) is not None or w in gpus:
                continue
            cost_in = units(w, dst)
            into.append(cost_in)
            if w in out_of:
                cost = out_of[w] + cost_in
                if best is None or cost < best:
                    best, via = cost, [w]
                elif cost == best:
                    via.append(w)
        if best is None or best >= min(out_of.values()) + self._cheapest + min(into):
            return None
        return [[src, w, dst] for w in sorted(via)]

    def _path_channels(self, devices) -> list[int]:
        return [self.channel_index[(devices[i], devices[i + 1])] for i in range(len(devices) - 1)]

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
        hop, chan_lat = self.fabric.hop_latency, self._channel_latency
        latency = -math.inf
        for p, share in zip(paths, shares):
            cs = self._path_channels(p)
            for c in cs:
                load[c] = load.get(c, 0.0) + share
            # devices' hop latencies plus the links', from the channels already looked up
            latency = max(latency, sum(hop[d] for d in p) + sum(chan_lat[c] for c in cs))
        chans = np.fromiter(load, dtype=np.int64, count=len(load))
        weights = np.fromiter(load.values(), dtype=float, count=len(load))
        return Route(tuple(tuple(p) for p in paths), chans, weights, latency)

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
        edge = self._edge_route(src, dst)
        if edge is not None:
            self._cache[key] = edge
            return edge
        waypoints = self._rail_waypoints(src, dst)
        if waypoints is not None:
            route = self.via(waypoints)
            self._cache[key] = route
            return route
        shape, prefix = self._shape_key(src, dst)
        template = self._shapes.get(shape) if shape is not None else None
        if template is not None:
            rel, weights, first, first_sid = template
            delta = self._channel_offset(first_sid, self._system[src])
            if delta is None:
                route = self._route([[prefix + d for d in p] for p in rel], weights)
            else:
                # The same route as the first system's, on this system's channels: same shares and
                # latency (checked link by link in _channel_offset), channel numbers shifted.
                route = Route(tuple(tuple(prefix + d for d in p) for p in rel), first.channels + delta,
                              first.weights, first.latency_s)
        else:
            paths, weights = self._search(src, dst)
            route = self._route(paths, weights)
            if shape is not None and all(d.startswith(prefix) for p in paths for d in p):
                n = len(prefix)
                self._shapes[shape] = ([[d[n:] for d in p] for p in paths], weights, route, self._system[src])
        self._cache[key] = route
        return route

    def channel_loads(self, src: str, dst: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """The channels and weights of ``routes(src, dst)`` and its number of paths, without building
        its device paths, when that route is a shape another system's search already found, moved to
        this system's channels (what ``routes`` returns for it, minus the renamed paths); None when
        ``routes`` would do anything else (then call it)."""
        if src == dst or (src, dst) in self._cache or self.spread != "even":
            return None
        system = self._system
        sid = system.get(src)
        if sid is None or sid != system.get(dst):
            return None
        sig = self._signatures.get(sid)
        if sig is None:
            self._shape_key(src, dst)  # works the system's signature out once
            sig = self._signatures[sid]
        if not sig:
            return None
        prefix = sig[2]
        if not (src.startswith(prefix) and dst.startswith(prefix)):
            return None
        n = len(prefix)
        template = self._shapes.get(((sig[0], sig[1]), src[n:], dst[n:]))  # the key _shape_key gives
        if template is None:
            return None
        first, first_sid = template[2], template[3]
        if first_sid == sid:
            delta = 0
        else:  # _channel_offset, with its look-ups inlined (it runs once per ring hop)
            offsets = self._offsets
            a = offsets[first_sid] if first_sid in offsets else self._offset_from_reference(first_sid)
            b = offsets[sid] if sid in offsets else self._offset_from_reference(sid)
            if a is None or b is None:
                return None
            delta = b - a
        return first.channels + delta, first.weights, len(first.paths)

    def run_loads(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray] | None:
        """``channel_loads`` of consecutive transfers inside one system (a ring's hops through it),
        concatenated, or None (then ask pair by pair). Systems wired alike share the concatenation:
        kept once with the system's channel offset taken out (exact integers), it is each hop's
        template moved to this system, the arrays ``channel_loads`` gives hop by hop."""
        if self.spread != "even" or not pairs:
            return None
        system, cache = self._system, self._cache
        sid = system.get(pairs[0][0])
        if sid is None:
            return None
        sig = self._signatures.get(sid)
        if sig is None:
            self._shape_key(*pairs[0])
            sig = self._signatures.get(sid)
        if not sig:
            return None
        prefix = sig[2]
        n = len(prefix)
        rel = []
        for a, b in pairs:
            if (a == b or system.get(a) != sid or system.get(b) != sid or (a, b) in cache
                    or not a.startswith(prefix) or not b.startswith(prefix)):
                return None
            rel.append((a[n:], b[n:]))
        offset = self._offsets[sid] if sid in self._offsets else self._offset_from_reference(sid)
        if offset is None:
            return None
        key = (sig[0], sig[1], tuple(rel))
        hit = self._runs.get(key)
        if hit is not None:
            return hit[0] + offset, hit[1]
        parts = [self.channel_loads(a, b) for a, b in pairs]
        if any(part is None for part in parts):
            return None
        chans = np.concatenate([part[0] for part in parts])
        weights = np.concatenate([part[1] for part in parts])
        self._runs[key] = (chans - offset, weights)
        return chans, weights

    def _single_path_via(self, waypoints: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """``via_loads`` when every leg is one path (a GPU to its NIC, one leaf between two NICs,
        the NIC to its GPU): the legs' channels one after the other, each carrying the whole
        transfer (a share of 1.0 added once), provided no channel comes twice; else None."""
        legs = []
        index = self.channel_index
        for a, b in zip(waypoints, waypoints[1:]):
            fast = self.channel_loads(a, b)
            if fast is not None:
                if fast[2] != 1 or not self._unit_weights(fast[1]):
                    return None
                legs.append(fast[0])
                continue
            if ((a, b) in self._cache or a == b or self._system.get(a) == self._system.get(b)):
                return None
            up = self._uplink(a)
            if up is None or up != self._uplink(b):
                return None
            legs.append(np.array([index[(a, up)], index[(up, b)]], dtype=np.int64))  # _edge_route's one path
        chans = np.concatenate(legs)
        if len(set(chans.tolist())) != len(chans):
            return None
        return chans, np.ones(len(chans))

    def _spread_via(self, waypoints: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """``via_loads`` of a GPU, its NIC, another leaf's NIC and its GPU, when the two GPU legs are
        one path each: the N paths share the legs and the NICs' links, so the loads the even split adds
        up are known per leaf pair. In first-seen order: the first leg, the first NIC link, the first
        path's middle, the last NIC link, the last leg, then the other paths' new middle channels;
        a channel on m of the N paths carries 1/N added m times, the sums ``via_loads`` makes."""
        if len(waypoints) != 4:
            return None
        g0, n0, n1, g1 = waypoints
        legs = []
        for a, b in ((g0, n0), (n1, g1)):
            fast = self.channel_loads(a, b)
            if fast is None or fast[2] != 1 or not self._unit_weights(fast[1]):
                return None
            legs.append(fast[0])
        if (n0, n1) in self._cache or self._system.get(n0) == self._system.get(n1):
            return None
        a, b = self._uplink(n0), self._uplink(n1)
        if a is None or b is None or a == b:
            return None
        spread = self._spreads.get((a, b))
        if spread is None:
            middle = self._middle.get((a, b))
            if middle is None:
                middle = self._middle[(a, b)] = [self._path_channels(p) for p in self.routes(a, b).paths]
            n = len(middle)
            sums = [0.0]
            for _ in range(n):
                sums.append(sums[-1] + 1.0 / n)
            count: dict[int, int] = {}
            for m in middle:
                for c in m:
                    count[c] = count.get(c, 0) + 1
            first = list(middle[0])
            seen_first = set(first)
            later = [c for c in count if c not in seen_first]  # dict order: first seen, path by path
            spread = self._spreads[(a, b)] = (
                sums[n], np.asarray(first, dtype=np.int64), np.asarray([sums[count[c]] for c in first]),
                np.asarray(later, dtype=np.int64), np.asarray([sums[count[c]] for c in later]), set(count))
        whole, first, first_w, later, later_w, inner = spread
        index = self.channel_index
        out_link, in_link = index[(n0, a)], index[(b, n1)]
        ends = legs[0].tolist() + [out_link, in_link] + legs[1].tolist()
        if len(set(ends)) != len(ends) or not inner.isdisjoint(ends):
            return None
        chans = np.concatenate([legs[0], [out_link], first, [in_link], legs[1], later])
        k0, k1 = len(legs[0]) + 1, len(legs[1]) + 1
        weights = np.concatenate([np.full(k0, whole), first_w, np.full(k1, whole), later_w])
        return chans, weights

    def _unit_weights(self, weights: np.ndarray) -> bool:
        """Every weight 1.0 (one path, each channel crossed once); remembered per template array."""
        key = id(weights)
        known = self._unit.get(key)
        if known is None or known[0] is not weights:
            known = self._unit[key] = (weights, bool((weights == 1.0).all()))
        return known[1]

    def _leg_channels(self, src: str, dst: str) -> list[list[int]]:
        """The channels of each path of ``routes(src, dst)``, in its path order, reading them from a
        shape already found (one path) or from the switches' route between two NICs where it can."""
        fast = self.channel_loads(src, dst)
        if fast is not None and fast[2] == 1 and (fast[1] == 1.0).all():
            return [fast[0].tolist()]  # one path crossing each channel once: its channels in order
        if (src, dst) not in self._cache and src != dst and self._system.get(src) != self._system.get(dst):
            a, b = self._uplink(src), self._uplink(dst)
            if a is not None and b is not None:  # what _edge_route builds, channel by channel
                index = self.channel_index
                if a == b:
                    return [[index[(src, a)], index[(a, dst)]]]
                middle = self._middle.get((a, b))
                if middle is None:
                    middle = self._middle[(a, b)] = [self._path_channels(p) for p in self.routes(a, b).paths]
                first, last = index[(src, a)], index[(b, dst)]
                return [[first, *m, last] for m in middle]
        return [self._path_channels(p) for p in self.routes(src, dst).paths]

    def via_loads(self, waypoints: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``via(waypoints).channels`` and ``.weights`` without building its device paths: the same
        legs joined path by path, the same thinning past ``max_paths`` and the same even split,
        added up channel by channel in the same order."""
        hit = self._cache.get(("via", *waypoints))
        if hit is not None:
            return hit.channels, hit.weights
        single = self._single_path_via(waypoints)
        if single is not None:
            return single
        spread = self._spread_via(waypoints)
        if spread is not None:
            return spread
        paths: list[list[int]] = [[]]
        for a, b in zip(waypoints, waypoints[1:]):
            leg = self._leg_channels(a, b)
            paths = [p + q for p in paths for q in leg]
            if len(paths) > self.max_paths:
                step = len(paths) / self.max_paths
                paths = [paths[int(i * step)] for i in range(self.max_paths)]
        share = 1.0 / len(paths)
        load: dict[int, float] = {}
        for p in paths:
            for c in p:
                load[c] = load.get(c, 0.0) + share
        return (np.fromiter(load, dtype=np.int64, count=len(load)),
                np.fromiter(load.values(), dtype=float, count=len(load)))

    def _channel_offset(self, first: str, sid: str) -> int | None:
        """How far system ``sid``'s channel numbers sit from system ``first``'s when the two are wired
        alike (see ``_offset_from_reference``), or None (routes are then built path by path)."""
        if first == sid:
            return 0
        a, b = self._offset_from_reference(first), self._offset_from_reference(sid)
        return None if a is None or b is None else b - a

    def _offset_from_reference(self, sid: str) -> int | None:
        """Every channel inside the first system of ``sid``'s builder signature has its counterpart (same
        ids after the prefix) inside ``sid`` at one fixed distance, with the same capacity and latency,
        between devices of the same hop latency: that distance, else None. One check per system."""
        if sid in self._offsets:
            return self._offsets[sid]
        if self._internal is None:  # each system's inside channels, ascending: bundle i gives 2i, 2i + 1
            self._internal = {}
            system = self._system
            for i, (u, v) in enumerate(self.fabric.bundles):
                su = system.get(u)
                if su is not None and su == system.get(v):
                    inside = self._internal.setdefault(su, [])
                    inside.append(2 * i)
                    inside.append(2 * i + 1)
        sig = self._signatures[sid]
        ref = self._reference.setdefault(sig[:2], sid)
        mine, theirs = self._internal.get(ref, []), self._internal.get(sid, [])
        delta = None
        if len(mine) == len(theirs):
            pf, ps = self._signatures[ref][2], sig[2]
            n = len(pf)
            ends = self.channel_ends
            delta = theirs[0] - mine[0] if mine else 0
            if mine:
                # Channel c + delta joins the devices that c joins, renamed (so it is the channel the
                # index gives for them), with the same capacity and latency and devices of the same
                # hop latency: checked for all of them at once.
                c = np.asarray(mine, dtype=np.int64)
                d = c + delta
                if d[0] < 0 or d[-1] >= len(ends):
                    delta = None
                else:
                    figures = self._channel_figures()
                    if not (figures[d] == figures[c]).all() or not self._renamed_ends(ref, n, d.tolist(), ps):
                        delta = None
        self._offsets[sid] = delta
        return delta

    def _renamed_ends(self, ref: str, n: int, theirs: list[int], prefix: str) -> bool:
        """Channels ``theirs`` join, in order, the devices the reference system's inside channels join
        with its ``n``-character prefix replaced by ``prefix``."""
        rel = self._relative_ends.get(ref)
        if rel is None:
            rel = self._relative_ends[ref] = [(u[n:], v[n:]) for u, v in
                                              (self.channel_ends[c] for c in self._internal[ref])]
        m = len(prefix)
        ends = [self.channel_ends[j] for j in theirs]
        return (all(u.startswith(prefix) and v.startswith(prefix) for u, v in ends)
                and [(u[m:], v[m:]) for u, v in ends] == rel)

    def _channel_figures(self) -> np.ndarray:
        """Per channel: capacity, latency and its two devices' hop latencies (one row each)."""
        if self._figures is None:
            hop = self.fabric.hop_latency
            self._figures = np.column_stack([
                self.capacity, np.asarray(self._channel_latency, dtype=float),
                np.fromiter((hop[u] for u, _ in self.channel_ends), dtype=float, count=len(self.channel_ends)),
                np.fromiter((hop[v] for _, v in self.channel_ends), dtype=float, count=len(self.channel_ends))])
        return self._figures

    def _search(self, src: str, dst: str) -> tuple[list[list[str]], list[float] | None]:
        """The paths of a route and their weights (None: an equal split)."""
        nvl = self._nvlink_paths(src, dst)
        if nvl is not None:
            paths, weights = nvl
            if self.spread == "hash" and len(paths) > 1:
                digest = hashlib.blake2b(f"{src}>{dst}".encode(), digest_size=8).digest()
                k = int.from_bytes(digest, "little") % len(paths)
                paths, weights = [paths[k]], None
            return paths, weights
        outside = self._system.get(src) is None and self._system.get(dst) is None and self._uniform_outside()
        back = self._complete.pop((dst, src), None) if outside else None
        near = self._two_hop(src, dst) if outside and back is None else None
        if back is not None:  # the other way's every path, reversed (see _uniform_outside)
            paths = self._subsample(sorted(p[::-1] for p in back))
        elif near is not None:
            paths = self._subsample(near)
        elif outside and (twin := self._twin_paths(src, dst)) is not None:
            self._complete[(src, dst)] = twin
            paths = self._subsample(sorted(twin))
        else:
            preds = self._dag(src, dst)
            if preds is None:
                raise RoutingError(f"no route from {self.topo.devices[src].name} ({src}) to "
                                   f"{self.topo.devices[dst].name} ({dst}): they are not connected except through GPUs")
            every = self._collect(preds, src, dst)
            if outside and len(every) < _ENUMERATION_LIMIT:
                self._complete[(src, dst)] = every
                self._twin_routes.setdefault((self._twin_class(src), self._twin_class(dst)), (src, dst, every))
            paths = self._subsample(sorted(every))
        if self.spread == "hash" and len(paths) > 1:
            digest = hashlib.blake2b(f"{src}>{dst}".encode(), digest_size=8).digest()
            paths = [paths[int.from_bytes(digest, "little") % len(paths)]]
        return paths, None

    def _shape_key(self, src: str, dst: str):
        """Routes inside one system are the same shape in every system its builder wired alike: the key
        (builder and size, ids without their prefix) under which one search serves them all, and the
        prefix; (None, "") otherwise."""
        if self.spread != "even":
            return None, ""
        sid = self._system.get(src)
        if sid is None or sid != self._system.get(dst):
            return None, ""
        sig = self._signatures.get(sid)
        if sig is None:
            group = self.topo.groups.get(sid)
            builder = group.properties.get("builder") if group is not None else None
            prefix = sid[:-len("system")] if sid.endswith("system") else None
            if not builder or not prefix or not all(d.startswith(prefix) for d in group.devices):
                sig = ()
            else:
                sig = (builder, len(group.devices), prefix)
            self._signatures[sid] = sig
        if not sig or not (src.startswith(sig[2]) and dst.startswith(sig[2])):
            return None, ""
        n = len(sig[2])
        return ((sig[0], sig[1]), src[n:], dst[n:]), sig[2]

    def _uplink(self, device: str) -> str | None:
        """The one network switch a single-port NIC plugs into (None for anything else)."""
        if device in self._uplinks:
            return self._uplinks[device]
        up = None
        if self.fabric.kind.get(device) == "nic":
            ups = [v for v in self.fabric.adj[device]
                   if self.fabric.bundle(device, v).family in ("infiniband", "ethernet")]
            up = ups[0] if len(ups) == 1 else None
        self._uplinks[device] = up
        return up

    def _edge_route(self, src: str, dst: str) -> Route | None:
        """NIC to NIC of two systems: every route goes through each NIC's one switch, so it is the
        switches' route with the two NICs at its ends; searched once per pair of switches, which
        thousands of NIC pairs share (a rail ring across 1,024 systems asks for 16,384 of them)."""
        if self._system.get(src) == self._system.get(dst):
            return None
        a, b = self._uplink(src), self._uplink(dst)
        if a is None or b is None:
            return None
        if a == b:
            return self._route([[src, a, dst]])
        middle = self.routes(a, b)
        shares = [float(w) for w in self._path_shares(middle)]
        return self._route([[src, *p, dst] for p in middle.paths], shares)

    def _path_shares(self, route: Route) -> list[float]:
        """Each path's share of a route (equal unless the route was weighted by its planes)."""
        n = len(route.paths)
        first = [self.channel_index[(p[0], p[1])] for p in route.paths]
        if len(set(first)) == n:
            lookup = dict(zip(route.channels.tolist(), route.weights.tolist()))
            return [lookup[c] for c in first]
        return [1.0 / n] * n

    def _rail_waypoints(self, src: str, dst: str) -> list[str] | None:
        """Between GPUs of two systems, traffic leaves through the sender's own NIC (the one nearest to
        it, as NCCL pairs GPUs and NICs) and arrives through the receiver's. With PXN (NCCL 2.12+) the
        sender hands the data over NVLink to the peer whose NIC sits on the receiver NIC's rail (the
        same leaf), so nothing crosses rails in the fabric. None for GPUs without their own NIC."""
        if src not in self._gpus or dst not in self._gpus:
            return None
        sa, sb = self._system[src], self._system[dst]
        if sa is None or sb is None or sa == sb:
            return None
        rail = self._rails()
        if src not in rail or dst not in rail:
            return None
        (src_nic, src_leaves), (dst_nic, dst_leaves) = rail[src], rail[dst]
        if self.pxn and not (src_leaves & dst_leaves):
            for g, (nic, leaves) in rail.items():
                if self._system[g] == sa and leaves & dst_leaves and self._nvlink_paths(src, g) is not None:
                    return [src, g, nic, dst_nic, dst]
        return [src, src_nic, dst_nic, dst]

    def _rails(self) -> dict[str, tuple[str, frozenset]]:
        """Each GPU's own NIC (the compute NIC nearest to it) and the switches that NIC plugs into."""
        if self._rail is None:
            from .channels import _nic_gpus

            self._rail = {}
            topo = self.topo
            for gid, group in topo.groups.items():
                if group.kind != "system":
                    continue
                members = [d for d in group.devices if d in self._gpus]
                for nic, gpu in _nic_gpus(topo, self.fabric, members):
                    leaves = frozenset(v for v in self.fabric.adj[nic]
                                       if self.fabric.bundle(nic, v).family in ("infiniband", "ethernet"))
                    self._rail.setdefault(gpu, (nic, leaves))
        return self._rail

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
