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
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..cancel import check_cancelled
from .exit_routes import ExitRoutes
from .fabric import Fabric, system_devices, system_map
from .routing_loads import TemplateLoads
from .routing_search import _ENUMERATION_LIMIT, SwitchRoutes
from ..model.topology import Topology

MAX_PATHS = 64


class RoutingError(ValueError):
    """Two devices with no route between them; the message names both."""


@dataclass(frozen=True)
class Route:
    """How one transfer travels: one or more tied paths, carried at one rate, split evenly.

    ``weights[i]`` is the fraction of the transfer's rate that loads ``channels[i]``; the last byte
    arrives after the slowest path's latency.

    ``thinned``: more paths tie than ``max_paths``; ``paths`` (and the latency) are an even sample of
    them, while ``channels`` and ``weights`` still split the rate over every tied path (see
    ``Router._route``).
    """

    paths: tuple[tuple[str, ...], ...]
    channels: np.ndarray
    weights: np.ndarray
    latency_s: float
    cap_Bps: float = math.inf
    thinned: bool = False

    @property
    def devices(self) -> tuple[str, ...]:
        return self.paths[0]


class LazyRoute(Route):
    """A ``Route`` whose channels and weights are known (read from a template of a system wired alike)
    and whose device paths are asked of the router only when someone reads them: ``ask()`` returns the
    route the router gives for the same request (``routes(a, b)`` or ``via(waypoints)``), so the paths
    are those, and ``ends`` are their first and last devices. The latency is given, or (None) that
    route's too, from ``ask_latency()`` when given (the same number without the paths). A ring over 16,384 GPUs has 75,000 hops whose paths nobody reads (the engine needs
    channels; a report asks for a few transfers)."""

    def __init__(self, channels: np.ndarray, weights: np.ndarray, latency_s: float | None, ends: tuple[str, str],
                 ask, ask_latency=None):
        # (a frozen dataclass: its fields are written past its __setattr__)
        self.__dict__.update(channels=channels, weights=weights, _latency=latency_s, cap_Bps=math.inf, ends=ends,
                             _ask=ask, _ask_latency=ask_latency, _paths=None)

    @property
    def paths(self) -> tuple[tuple[str, ...], ...]:
        if self._paths is None:
            self.__dict__["_paths"] = self._ask().paths
        return self._paths

    @property
    def latency_s(self) -> float:
        if self._latency is None:
            self.__dict__["_latency"] = self._ask().latency_s if self._ask_latency is None else self._ask_latency()
        return self._latency


class ChannelLinks(Sequence):
    """``Router.channel_links``: each channel's links (its bundle's, channels 2i and 2i + 1 of bundle
    i). A run's result keeps them all and its bottlenecks read ten (a list of 300,000 tuples on
    2,048 DGX H100 systems took 0.07 s), so a channel read alone is made when read; the whole list
    is made once, the first time something walks them all (the replay indexes every channel).
    Equal to the list of them; a copy of it is that list."""

    __slots__ = ("_bundles", "_list")

    def __init__(self, bundles: list):
        self._bundles = bundles
        self._list: list[tuple[str, ...]] | None = None

    def whole(self) -> list[tuple[str, ...]]:
        """Every channel's links, as one list (made once)."""
        if self._list is None:
            self._list = [tuple(b.links) for b in self._bundles for _ in (0, 1)]
        return self._list

    def __len__(self) -> int:
        return 2 * len(self._bundles)

    def __getitem__(self, c):
        if self._list is not None or isinstance(c, slice):
            return self.whole()[c]
        return tuple(self._bundles[c >> 1].links)  # (c >> 1 of a negative c is its bundle from the end too)

    def __iter__(self):
        return iter(self.whole())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and self.whole() == list(other)

    __hash__ = None

    def __reduce__(self):
        return list, (list(self.whole()),)  # (copied or pickled: a plain list)


class _CostAdjacency(dict):
    """``{device: [(neighbour, 1e9 / bundle bandwidth), ...]}`` in the Fabric's adjacency order,
    each device's list made when first read (a search reaches a small part of a large fabric)."""

    def __init__(self, fabric: Fabric, system: dict[str, str | None]):
        super().__init__()
        self.fabric = fabric
        self.system = system

    def __missing__(self, u: str) -> list[tuple[str, float]]:
        bundles = self.fabric.bundles
        out = self[u] = [(v, 1e9 / bundles[(u, v) if u <= v else (v, u)].bandwidth) for v in self.fabric.adj[u]]
        return out

    def complete(self) -> dict[str, list[tuple[str, float]]]:
        """Every device's list (for tests and tools that walk them all)."""
        return {u: self[u] for u in self.fabric.adj}


class _OutsideCost(dict):
    """``_CostAdjacency`` without the neighbours inside systems, each list made when first read."""

    def __init__(self, costs: _CostAdjacency):
        super().__init__()
        self.costs = costs

    def __missing__(self, u: str) -> list[tuple[str, float]]:
        system = self.costs.system
        out = self[u] = [(v, c) for v, c in self.costs[u] if system.get(v) is None]
        return out


class Router(SwitchRoutes, TemplateLoads):
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
        self._nic_gpus_known: tuple | None = None  # see channels.nic_gpus_per_system
        self._signatures: dict[str, tuple] = {}
        self._leg_rel: dict[str, tuple | bool] = {}  # device -> see TemplateLoads._leg_rel_of
        self._leg_shared: dict[tuple, tuple] = {}    # each of _leg_rel's answers, kept once
        self._shapes: dict[tuple, tuple] = {}
        self._offsets: dict[str, int | None] = {}      # system -> channel offset from its reference
        self._reference: dict[tuple, str] = {}         # builder signature -> the first system seen
        self._internal: dict[str, list[int]] | None = None  # each system's channels inside it
        self._figures: np.ndarray | None = None
        self._ends: tuple | None = None                   # see _bundle_ends
        self._renaming: tuple | None = None               # see _renaming_tables
        self._channel_devices: tuple | None = None        # see channel_devices
        self._uniform: bool | None = None                 # see _uniform_outside
        self._complete: dict[tuple[str, str], list[list[str]]] = {}  # every path of a route, kept for its reverse
        self._middle: dict[tuple[str, str], list[list[int]]] = {}   # switch-to-switch routes' channels per path
        self._uplinks: dict[str, str | None] = {}
        self._runs: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # see run_loads
        self._relative_ends: dict[str, list[tuple[str, str]]] = {}   # see _renamed_ends
        self._unit: dict[int, tuple[np.ndarray, bool]] = {}          # see _unit_weights
        self._twin_keys: dict[str, tuple] = {}                        # see _twin_class
        self._spreads: dict[tuple[str, str], tuple] = {}              # see _spread_via
        self._spread_weights: dict[tuple, np.ndarray] = {}            # see _spread_via
        self._twin_routes: dict[tuple, tuple[str, str, list[list[str]]]] = {}  # see _twin_paths
        self._route_inner: dict[tuple[str, str], set[str]] = {}  # switch pairs: every least-cost path's inner devices
        # leaf pairs' spreads read from their twins' (analysis/twin_spreads.py)
        self._spread_reps: dict[tuple[int, int], list[tuple[str, str]]] = {}  # see add_rep
        self._spread_patches: dict[tuple[str, str], tuple] = {}   # see twin_spreads.Patch
        self._twin_nums: dict[str, int] = {}                      # see twin_number
        self._twin_ids: dict[tuple, int] = {}
        self._spread_orders: dict[tuple, int] = {}                # see twin_spreads._patch
        self._spread_ends: dict[tuple, np.ndarray] = {}           # see twin_spreads._renamed
        self._local: tuple | None = None                          # see _local_tables
        self._local_lists: dict[str, tuple] = {}                  # see _local_list
        self._by_system: dict[str, list[str]] | None = None  # see system_devices
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
        check_cancelled()  # (between the steps of a large fabric's tables, each a fraction of a second)
        self.channel_index: dict[tuple[str, str], int] = dict(zip(ends, range(len(ends))))
        check_cancelled()
        self.capacity = np.repeat(np.array([b.bandwidth for b in bundles], dtype=float), 2)
        self._channel_latency = [b.latency_s for b in bundles for _ in (0, 1)]
        self.channel_ends = ends  # each channel's (tail, head) device ids; as numbers: channel_devices()
        self._channel_links = ChannelLinks(bundles)
        # A route between two systems never detours through a third system's insides.
        self._system = system_map(topo)
        self.system_of = self._system  # device -> its system's id (None outside systems); do not change it
        # Each device's neighbours with the cost of the bundle to them, in the Fabric's adjacency
        # order (and without those inside systems); worked out for a device when a search reaches it.
        self._adj_cost: dict[str, list[tuple[str, float]]] = _CostAdjacency(self.fabric, self._system)
        self._outside_cost: dict[str, list[tuple[str, float]]] = _OutsideCost(self._adj_cost)
        self._gpus = {d for d, k in self.fabric.kind.items() if k == "gpu"}
        # The NVLink world: bundles of the nvlink family, entered through NVSwitches only.
        self._nvl_adj: dict[str, list[str]] = {}
        check_cancelled()
        for key, b in self.fabric.bundles.items():
            if b.family == "nvlink":
                self._nvl_adj.setdefault(key[0], []).append(key[1])
                self._nvl_adj.setdefault(key[1], []).append(key[0])
        check_cancelled()
        self._cache: dict[tuple[str, str], Route] = {}

    @property
    def channel_links(self) -> "ChannelLinks":
        """Each channel's links (its bundle's), each made when read: the analysis never reads them."""
        return self._channel_links

    def channel_devices(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Per channel, its tail and head device numbers (``_bundle_ends``' numbering), and how many
        devices there are: worked out once (the renaming tables and the engine's channels that
        cannot bind read them)."""
        if self._channel_devices is None:
            devices, _, ends, _, _ = self._bundle_ends()
            tail_dev = np.empty(2 * len(ends), dtype=np.int64)
            head_dev = np.empty(2 * len(ends), dtype=np.int64)
            tail_dev[0::2], head_dev[0::2] = ends[:, 0], ends[:, 1]   # channel 2i runs the key's way
            tail_dev[1::2], head_dev[1::2] = ends[:, 1], ends[:, 0]   # channel 2i + 1 the other way
            tail_dev.flags.writeable = head_dev.flags.writeable = False  # (shared)
            self._channel_devices = (tail_dev, head_dev, len(devices))
        return self._channel_devices

    @property
    def n_channels(self) -> int:
        return len(self.capacity)

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
        """The route of tied ``paths`` (split evenly, or by ``weights``). Past ``max_paths`` equal
        paths the route keeps an even sample of them (its paths and latency, as before), but its
        channel loads split the rate over every one, as ``spread="even"`` promises: an InfiniBand fat
        tree spreads a flow over all its least-cost ports (adaptive routing: "TREE: All ports with
        minimal hops to destination are in the same AR group ... suitable for tree topologies such
        as fat-tree"; "AR is enabled by default in the opensm.conf file", NVIDIA's InfiniBand
        Cluster Bring-up Procedure,
        https://docs.nvidia.com/networking/display/ibclusterbringupprocedure/adaptive+routing;
        NCCL uses it on InfiniBand since 2.6.4, its release notes). Loads from the sample alone put
        every pair of leaves in two pods on the same 2 of a plane's 8 core switches on 2,048 DGX
        H100 (cores .1 and .5 at 89% while the other six idled: the NVLS tree ran at a quarter of
        its bandwidth over 512 systems, where 64 paths tie and none was dropped)."""
        thinned = weights is None and len(paths) > self.max_paths
        kept = self._subsample(paths) if thinned else paths
        timed = {id(p) for p in kept} if thinned else None  # (the sample's paths give the latency)
        total = float(sum(weights)) if weights else float(len(paths))
        shares = [w / total for w in weights] if weights else [1.0 / len(paths)] * len(paths)
        load: dict[int, float] = {}
        hop, chan_lat = self.fabric.hop_latency, self._channel_latency
        latency = -math.inf
        for p, share in zip(paths, shares):
            cs = self._path_channels(p)
            for c in cs:
                load[c] = load.get(c, 0.0) + share
            if timed is None or id(p) in timed:
                # devices' hop latencies plus the links', from the channels already looked up
                latency = max(latency, sum(hop[d] for d in p) + sum(chan_lat[c] for c in cs))
        chans = np.fromiter(load, dtype=np.int64, count=len(load))
        weights = np.fromiter(load.values(), dtype=float, count=len(load))
        return Route(tuple(tuple(p) for p in kept), chans, weights, latency, thinned=thinned)

    def companion(self, make):
        """The router's one ``make(router)`` (ring hops, exits from systems, the switch graph): made the
        first time it is asked for, its caches then serve every run on this router."""
        kept = self.__dict__.setdefault("_companions", {})
        got = kept.get(make)
        if got is None:
            got = kept[make] = make(self)
        return got

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
        route = ExitRoutes.of(self).route(src, dst)  # (a system's device and a switch: alike systems' renamed)
        if route is not None:
            self._cache[key] = route
            return route
        shape, prefix = self._shape_key(src, dst)
        template = self._shapes.get(shape) if shape is not None else None
        # A system not wired like the template's (a hand-edited one: a link missing, slower or added)
        # is searched on its own: its routes and their shares may differ, or not exist.
        delta = self._channel_offset(template[3], self._system[src]) if template is not None else None
        if delta is not None:
            rel, weights, first, first_sid = template
            # The same route as the first system's, on this system's channels: same shares and
            # latency (checked link by link in _channel_offset), channel numbers shifted.
            route = Route(tuple(tuple(prefix + d for d in p) for p in rel), first.channels + delta,
                          first.weights, first.latency_s, thinned=first.thinned)
        elif template is not None:
            paths, weights = self._search(src, dst)
            route = self._route(paths, weights)
        else:
            paths, weights = self._search(src, dst)
            route = self._route(paths, weights)
            if shape is not None and all(d.startswith(prefix) for p in paths for d in p):
                n = len(prefix)
                self._shapes[shape] = ([[d[n:] for d in p] for p in route.paths], weights, route, self._system[src])
        self._cache[key] = route
        return route

    def _search(self, src: str, dst: str) -> tuple[list[list[str]], list[float] | None]:
        """The paths of a route and their weights (None: an equal split)."""
        check_cancelled()  # a search of a large fabric takes a few milliseconds
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
        # Each way below gives every least-cost path (see each), so the first that answers gives
        # what the search would: a pair of twins' route first (leaves of two pods, the common case
        # across a large fabric, where two leaves are never one switch apart), then two leaves under
        # common spines.
        twin = self._twin_paths(src, dst) if outside and back is None else None
        near = self._two_hop(src, dst) if outside and back is None and twin is None else None
        # (every least-cost path, sorted: _route keeps a sample past max_paths, loads on them all)
        if back is not None:  # the other way's every path, reversed (see _uniform_outside)
            self._note_inner(src, dst, back)
            paths = sorted(p[::-1] for p in back)
        elif twin is not None:
            self._complete[(src, dst)] = twin
            self._note_inner(src, dst, twin)
            paths = sorted(twin)
        elif near is not None:
            # every least-cost path too: kept for twins of the two ends, as a search's are
            self._twin_routes.setdefault((self._twin_class(src), self._twin_class(dst)), (src, dst, near))
            self._note_inner(src, dst, near)
            paths = near
        else:
            preds = self._dag(src, dst)
            if preds is None:
                raise RoutingError(f"no route from {self.topo.devices[src].name} ({src}) to "
                                   f"{self.topo.devices[dst].name} ({dst}): they are not connected except through GPUs")
            every = self._collect(preds, src, dst)
            if outside and len(every) < _ENUMERATION_LIMIT:
                self._complete[(src, dst)] = every
                self._note_inner(src, dst, every)
                self._twin_routes.setdefault((self._twin_class(src), self._twin_class(dst)), (src, dst, every))
            paths = sorted(every)
        if self.spread == "hash" and len(paths) > 1:
            paths = self._subsample(paths)  # (the one picked from the sample, as before)
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
        sig = self._system_signature(sid)
        if not sig or not (src.startswith(sig[2]) and dst.startswith(sig[2])):
            return None, ""
        n = len(sig[2])
        return ((sig[0], sig[1]), src[n:], dst[n:]), sig[2]

    def _system_signature(self, sid: str) -> tuple:
        """(builder, device count, id prefix) of a system whose devices all carry its prefix, else ()."""
        sig = self._signatures.get(sid)
        if sig is None:
            group = self.topo.groups.get(sid)
            builder = group.properties.get("builder") if group is not None else None
            prefix = sid[:-len("system")] if sid.endswith("system") else None
            devices = self.system_devices(sid)
            if not builder or not prefix or not all(d.startswith(prefix) for d in devices):
                sig = ()
            else:
                sig = (builder, len(devices), prefix)
            self._signatures[sid] = sig
        return sig

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
        route = self._route([[src, *p, dst] for p in middle.paths], shares)
        if not middle.thinned:
            return route
        # the sample's paths and latency; the loads of every path between the leaves, and the NICs'
        index = self.channel_index
        return Route(route.paths, np.concatenate([[index[(src, a)]], middle.channels, [index[(b, dst)]]]),
                     np.concatenate([[1.0], middle.weights, [1.0]]), route.latency_s, thinned=True)

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

    def system_devices(self, sid: str) -> list[str]:
        """A system's devices, in document order, as the system map places them (``fabric.system_devices``,
        every system's in one pass): a GB200 NVL72 rack's are its trays'. [] for no system."""
        if self._by_system is None:
            self._by_system = system_devices(self.topo, self._system)
        return self._by_system.get(sid, [])

    def _rails(self) -> dict[str, tuple[str, frozenset]]:
        """Each GPU's own NIC (the compute NIC nearest to it) and the switches that NIC plugs into."""
        if self._rail is None:
            from .channels import nic_gpus_per_system

            self._rail = {}
            topo = self.topo
            systems = [[d for d in self.system_devices(group.id) if d in self._gpus]
                       for group in topo.groups.values() if group.kind == "system"]
            # (once per class of systems wired alike: the router's own tables say which)
            uplinks = self._uplinks
            for pairs in nic_gpus_per_system(topo, self.fabric, systems, self):
                for nic, gpu in pairs:
                    if uplinks.get(nic) is not None:  # (its one network switch, found already)
                        leaves = frozenset((uplinks[nic],))
                    else:
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
        legs, thinned = [], False
        for a, b in zip(waypoints, waypoints[1:]):
            leg = self.routes(a, b)
            legs.append(leg)
            thinned |= leg.thinned
            paths = [p + list(q[1:]) for p in paths for q in leg.paths]
            if len(paths) > self.max_paths:
                thinned = True
                paths = self._subsample(paths)
        route = self._route(paths)
        if thinned:
            # a sample of the joined paths (and their latency), but each leg loads its channels as
            # its own route does over every path (the legs' splits are independent)
            route = Route(route.paths, *_joined_loads(legs), route.latency_s, thinned=True)
        self._cache[key] = route
        return route

    def direct(self, devices: list[str]) -> Route:
        """A route the caller chose (e.g. a ring hop through a GPU), checked hop by hop."""
        for i in range(len(devices) - 1):
            if (devices[i], devices[i + 1]) not in self.channel_index:
                raise RoutingError(f"no link between {devices[i]} and {devices[i + 1]}")
        return self._route([list(devices)])


def _joined_loads(legs: list[Route]) -> tuple[np.ndarray, np.ndarray]:
    """The channels and weights of routes travelled one after the other: each leg's loads, added
    where two legs share a channel."""
    load: dict[int, float] = {}
    for leg in legs:
        for c, w in zip(leg.channels.tolist(), leg.weights.tolist()):
            load[c] = load.get(c, 0.0) + w
    return np.fromiter(load, dtype=np.int64, count=len(load)), np.fromiter(load.values(), dtype=float, count=len(load))
