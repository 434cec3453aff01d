"""A compact graph of a topology for path searches: parallel links merged into bundles.

A bundle between two devices has ``units`` physical links of ``unit_bw`` bytes/s per direction each.
Routes run through switches, NICs and CPUs but never through a GPU: GPUs are only ends of routes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from ..cancel import check_cancelled
from ..model.catalog import LinkFamilies
from ..model.nodes import loose_systems
from ..model.topology import Topology


@dataclass(slots=True)
class Bundle:
    a: str
    b: str
    units: int
    unit_bw: float
    latency_s: float
    family: str | None
    links: list[str] = field(default_factory=list)
    # The links' per-direction figures summed in link order (``units x unit_bw`` may differ from it in
    # the last bit): what the bisection's capacity graph adds up, read from here instead of again.
    total_bw: float = 0.0

    @property
    def bandwidth(self) -> float:
        return self.units * self.unit_bw


def bundle_key(u: str, v: str) -> tuple[str, str]:
    return (u, v) if u <= v else (v, u)


# Inside ``sharing_system_map(topo)``: that topology's system map, worked out once for every step, and
# what is read from it (``system_devices``), once asked for.
_shared_map: ContextVar[tuple[Topology, dict, dict] | None] = ContextVar("shared_system_map", default=None)


@contextmanager
def sharing_system_map(topo: Topology) -> Iterator[None]:
    """While the body runs (an analysis, which does not edit the topology), ``system_map(topo)`` is
    worked out once and shared by every step that asks for it."""
    token = _shared_map.set((topo, _system_map(topo), {}))
    try:
        yield
    finally:
        _shared_map.reset(token)


def system_map(topo: Topology) -> dict[str, str | None]:
    """``topo.system_of(d)`` for every device, in one pass over the groups instead of one chain walk
    per device: a device's innermost group is the first that lists it, its system the nearest
    enclosing group of kind ``system``; outside every frame, the system its in-node links make
    (model/nodes.py, the rule ``Topology.system_of`` follows). Callers must not change the map."""
    shared = _shared_map.get()
    if shared is not None and shared[0] is topo:
        return shared[1]
    return _system_map(topo)


def system_devices(topo: Topology, system_of: dict[str, str | None] | None = None) -> dict[str, list[str]]:
    """Each system's devices in document order: ``system_map`` (or ``system_of``, that map already made)
    read the other way, in one pass. The one way a system's devices are looked up: a system drawn as
    trays (GB200 NVL72) holds its devices in its trays and none itself, and its group's own list was
    special-cased wherever it was read. Callers must not change the lists."""
    shared = _shared_map.get()
    if shared is not None and shared[0] is topo:
        kept = shared[2]
        if "devices" not in kept:
            kept["devices"] = _devices_by_system(shared[1])
        return kept["devices"]
    return _devices_by_system(_system_map(topo) if system_of is None else system_of)


def _devices_by_system(system_of: dict[str, str | None]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d, sid in system_of.items():
        if sid is not None:
            out.setdefault(sid, []).append(d)
    return out


def _system_map(topo: Topology) -> dict[str, str | None]:
    system_of_group: dict[str, str | None] = {}
    for gid in topo.groups:
        system_of_group[gid] = next((g.id for g in topo.group_chain(gid) if g.kind == "system"), None)
    # Groups from last to first, each writing its devices' system: the first group to list a device
    # writes last. Writing to keys already there keeps the devices' order.
    out: dict[str, str | None] = dict.fromkeys(topo.devices)
    for g in reversed(topo.groups.values()):
        out.update(dict.fromkeys(g.devices, system_of_group[g.id]))
    if len(out) != len(topo.devices):  # a group lists a device the topology no longer has
        devices = topo.devices
        out = {d: sid for d, sid in out.items() if d in devices}
    out.update(loose_systems(topo, out))  # devices outside frames: the system their links make (model.nodes)
    return out


class Fabric:
    def __init__(self, topo: Topology, families: set[str] | None = None, achievable: bool = False,
                 _part: tuple[list[str], list] | None = None):
        """``_part`` (see ``around``): (device ids, links), both in document order, instead of all."""
        self.topo = topo
        devices = topo.devices.values() if _part is None else [topo.devices[d] for d in _part[0]]
        self.kind = {d.id: d.kind for d in devices}
        self.families = None if families is None else frozenset(families)
        self.achievable = achievable
        part_latency: dict[str, float] = {}  # one catalog look-up per part, not per device
        for d in devices:
            if d.part not in part_latency:
                part_latency[d.part] = topo.device_hop_latency_s(d.id)
        self.hop_latency = {d.id: part_latency[d.part] for d in devices}
        check_cancelled()
        self.bundles: dict[tuple[str, str], Bundle] = {}
        self.adj: dict[str, list[str]] = {d: [] for d in self.kind}
        self.dropped = 0  # device pairs left out for a bandwidth of zero (or less)
        self._build(families, topo.links.values() if _part is None else _part[1])

    @classmethod
    def around(cls, topo: Topology, families: set[str], starts: list[str], achievable: bool = False,
               limit: int = 4096) -> "Fabric | None":
        """``Fabric(topo, families)`` cut down to the devices a chain of links of those families joins
        to ``starts`` (through any device), or None past ``limit`` of them. Every such device has
        every link of those families it has in this part, so each of them has the neighbours, bundles
        (figures added up in the same order) and adjacency order the whole fabric gives it: a search
        from ``starts`` over it goes as over the whole (a system's NVLink, not a cluster's)."""
        family = LinkFamilies(topo.catalog)
        wanted: dict[str, object] = {}  # link id -> link
        seen = set(starts)
        stack = list(starts)
        links = topo.links
        while stack:
            u = stack.pop()
            for lk in topo.links_of(u):
                if family[lk.type] not in families or lk.id in wanted:
                    continue
                wanted[lk.id] = links[lk.id]
                for v in (lk.a, lk.b):
                    if v not in seen and v in topo.devices:
                        seen.add(v)
                        stack.append(v)
                if len(seen) > limit:
                    return None
        at = {lid: i for i, lid in enumerate(links)} if wanted else {}
        position = {d: i for i, d in enumerate(topo.devices)} if len(seen) > 1 else {}
        ordered = sorted(wanted.values(), key=lambda lk: at[lk.id])
        return cls(topo, families, achievable, _part=(sorted(seen, key=position.get) if position else list(seen), ordered))

    def _build(self, families: set[str] | None, links) -> None:
        """Parallel links merged per device pair, in exactly the order ``to_graph(...).edges()`` yields
        them (pairs by their first device in document order, then by their first link), without
        building a networkx graph: one pass over the links, one over the pairs (each kept under its
        end first in document order, where that order meets it). The order keeps routes identical; a
        pair of no bandwidth is left out (``dropped``)."""
        topo, achievable = self.topo, self.achievable
        at = dict(zip(self.kind, range(len(self.kind))))  # document order (None: not a device here)
        names = list(self.kind)
        merged: dict[tuple[str, str], Bundle] = {}
        # Each pair under its device first in document order, first link first: (other end, bundle, key).
        owned: list[list[tuple[str, Bundle, tuple[str, str]]]] = [[] for _ in names]
        # A link's figures depend only on its type, width, count and overrides: looked up once per
        # distinct combination (a cluster has a handful among 300,000 links), not once per link.
        figures: dict[tuple, tuple] = {}
        for k, lk in enumerate(links):
            if not k & 16383:
                check_cancelled()
            a, b = lk.a, lk.b
            ia, ib = at.get(a), at.get(b)
            if ia is None or ib is None or a == b:
                continue
            spec = (lk.type, lk.width, lk.count, lk.bandwidth_per_direction_Bps, lk.latency_s)
            fig = figures.get(spec)
            if fig is None:
                lt = topo.link_type_of(lk)
                fig = figures[spec] = (lt.family if lt else None, topo.link_bandwidth_per_direction_Bps(lk, achievable),
                                       topo.link_latency_s(lk))
            family, bw, lat = fig
            if families is not None and family not in families:
                continue
            key = (a, b) if a <= b else (b, a)
            e = merged.get(key)
            if e is None:
                # (unit_bw is set below, once the pair's sum is known)
                merged[key] = e = Bundle(key[0], key[1], lk.count, 0.0, lat, family, [lk.id], bw)
                if ia < ib:
                    owned[ia].append((b, e, key))
                else:
                    owned[ib].append((a, e, key))
            else:
                e.total_bw += bw
                e.units += lk.count
                e.links.append(lk.id)
                if lat < e.latency_s:
                    e.latency_s = lat
        bundles, adj = self.bundles, self.adj
        check_cancelled()
        dropped = 0
        for n, mine in zip(names, owned):
            for m, bnd, key in mine:
                bw = bnd.total_bw
                if bw <= 0:
                    dropped += 1
                    continue
                bnd.unit_bw = bw / bnd.units
                bundles[key] = bnd
                adj[n].append(m)
                adj[m].append(n)
        self.dropped = dropped

    def is_gpu(self, node: str) -> bool:
        return self.kind.get(node) == "gpu"

    def bundle(self, u: str, v: str) -> Bundle:
        return self.bundles[bundle_key(u, v)]

    def route(self, src: str, dst: str, residual: dict | None = None, need: int = 1,
              owner: dict[str, str] | None = None, allowed_owners: tuple = ()) -> list[str] | None:
        """Fewest-hop route from src to dst through non-GPU devices (BFS), or None.

        With ``residual`` (units left per bundle key) only bundles with at least ``need`` units are used;
        with ``owner`` (device -> system), devices of systems other than ``allowed_owners`` are not entered.
        """
        if src == dst:
            return [src]
        prev = {src: None}
        queue = deque([src])
        while queue:
            u = queue.popleft()
            for v in self.adj[u]:
                if v in prev or (owner is not None and v in owner and owner[v] not in allowed_owners):
                    continue
                if residual is not None and residual.get(bundle_key(u, v), 0) < need:
                    continue
                if v == dst:
                    path = [v, u]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1]
                prev[v] = u
                if not self.is_gpu(v):
                    queue.append(v)
        return None

    def route_meet(self, src: str, dst: str, residual: dict | None = None, need: int = 1,
                   owner: dict[str, str] | None = None, allowed_owners: tuple = ()) -> list[str] | None:
        """A fewest-hop route like ``route``, searched from both ends at once (bidirectional BFS).

        Same rules as ``route``; on a large fabric it visits the two ends' neighbourhoods instead of
        every switch within the route's length. Among equal-length routes it may pick another one.
        """
        if src == dst:
            return [src]

        owner_of = owner.get if owner is not None else (lambda _v: None)
        left = residual.get if residual is not None else None

        def usable(u: str, v: str) -> bool:
            o = owner_of(v)
            if o is not None and o not in allowed_owners:
                return False
            return left is None or left((u, v) if u <= v else (v, u), 0) >= need

        kind = self.kind
        adj = self.adj
        prev = {src: None}
        nxt = {dst: None}
        dist_a, dist_b = {src: 0}, {dst: 0}
        front_a, front_b = [src], [dst]
        while front_a and front_b:
            forward = len(front_a) <= len(front_b)
            front, seen, dist, other, other_dist = (
                (front_a, prev, dist_a, nxt, dist_b) if forward else (front_b, nxt, dist_b, prev, dist_a))
            best = None
            new_front = []
            for u in front:
                du = dist[u] + 1
                for v in adj[u]:
                    if v in seen:
                        continue
                    if v in other:
                        if usable(u, v):
                            length = du + other_dist[v]
                            if best is None or length < best[0]:
                                best = (length, u, v)
                        continue
                    if kind.get(v) == "gpu":
                        continue
                    o = owner_of(v)
                    if o is not None and o not in allowed_owners:
                        continue
                    if left is not None and left((u, v) if u <= v else (v, u), 0) < need:
                        continue
                    seen[v] = u
                    dist[v] = du
                    new_front.append(v)
            if best is not None:
                _, u, v = best
                a_end, b_end = (u, v) if forward else (v, u)
                path = [a_end]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                tail = [b_end]
                while nxt[tail[-1]] is not None:
                    tail.append(nxt[tail[-1]])
                return path + tail
            if forward:
                front_a = new_front
            else:
                front_b = new_front
        return None

    def reachable_gpus(self, src: str, residual: dict | None = None) -> list[str]:
        """GPUs reachable from src through non-GPU devices, nearest first (BFS order)."""
        seen = {src}
        out = []
        queue = deque([src])
        while queue:
            u = queue.popleft()
            for v in self.adj[u]:
                if v in seen:
                    continue
                if residual is not None and residual.get(bundle_key(u, v), 0) < 1:
                    continue
                seen.add(v)
                if self.is_gpu(v):
                    out.append(v)
                else:
                    queue.append(v)
        return out

    def path_bundles(self, path: list[str]) -> list[tuple[str, str]]:
        return [bundle_key(path[i], path[i + 1]) for i in range(len(path) - 1)]
