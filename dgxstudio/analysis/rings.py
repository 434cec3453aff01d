"""Rings through a GPU set: the largest set of link-disjoint Hamiltonian rings and their bandwidth.

A link of count k can carry k rings. Each ring is driven in both directions as NCCL does, so on a
ring whose hops use distinct links both directions of every link carry traffic; the ring's share is
``2 x min(allocated bandwidth / traversals)`` over the links it uses. The ring all-reduce bus
bandwidth bound is the sum over the rings.

Three strategies, chosen from the shape of the GPU set:
- direct meshes of up to ``exact_limit`` GPUs (DGX-1): every Hamiltonian cycle is enumerated and the
  largest packing found by branch and bound (exact unless a search budget runs out);
- GPUs joined through switches (NVSwitch, PCIe): rings built greedily hop by hop over shortest routes
  with capacity left, consuming one unit of every link they cross;
- GPUs in several systems: NCCL's rail rings (``channels.py``): each ring enters a system at one
  rail's GPU and leaves from its partner rail's, so every NIC carries one ring each way, at the rate
  the routes leave each ring when all run at once.
If no link-disjoint ring exists (a PCIe tree, where a GPU has one link), one ring sharing links is
reported with its fair share.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from ..cancel import check_cancelled
from ..model.topology import Topology
from .fabric import Fabric, bundle_key, system_map

# Above this many devices the routes that chain systems into rings are searched from both ends
# (same hop count, found without touching every switch); below it the one-ended search, as before.
BIG_FABRIC_DEVICES = 5000


@dataclass
class Ring:
    gpus: list[str]
    hops: list[list[str]]
    bidir_Bps: float
    links: list[str] = field(default_factory=list)

    @property
    def bottleneck_per_direction_Bps(self) -> float:
        return self.bidir_Bps / 2


@dataclass
class RingResult:
    rings: list[Ring]
    fabric: str
    method: str
    exact: bool
    link_disjoint: bool

    @property
    def count(self) -> int:
        return len(self.rings)

    @property
    def allreduce_busbw_bound_Bps(self) -> float:
        return sum(r.bidir_Bps for r in self.rings)


def _ring_rate(fab: Fabric, hops: list[list[str]], alloc: dict | None) -> float:
    """Bus bandwidth of one ring driven both ways: 2 x min over bundles of allocated bw / traversals."""
    traversals = Counter(k for path in hops for k in fab.path_bundles(path))
    if not traversals:
        return 0.0
    rate = min(((alloc[k] if alloc else fab.bundles[k].units) * fab.bundles[k].unit_bw) / t
               for k, t in traversals.items())
    return 2 * rate


def _links_of(fab: Fabric, hops: list[list[str]]) -> list[str]:
    seen, out = set(), []
    for path in hops:
        for k in fab.path_bundles(path):
            for lid in fab.bundles[k].links:
                if lid not in seen:
                    seen.add(lid)
                    out.append(lid)
    return out


def _make_ring(fab: Fabric, order: list[str], hops: list[list[str]], shared: bool) -> Ring:
    alloc = None if shared else Counter(k for path in hops for k in fab.path_bundles(path))
    return Ring(list(order), hops, _ring_rate(fab, hops, alloc), _links_of(fab, hops))


# ---- exact search on direct meshes -----------------------------------------------------------

def _hamiltonian_cycles(gpus: list[str], direct: dict[str, list[str]], limit: int, deadline: float):
    """Every Hamiltonian cycle once (fixed start, one direction), or None past ``limit``/deadline."""
    index = {g: i for i, g in enumerate(gpus)}
    start = gpus[0]
    n = len(gpus)
    cycles = []
    path = [start]
    on_path = {start}

    def extend() -> bool:
        if len(cycles) > limit or time.perf_counter() > deadline:
            return False
        u = path[-1]
        if len(path) == n:
            if start in direct[u] and index[path[1]] < index[path[-1]]:
                cycles.append(list(path))
            return True
        for v in direct[u]:
            if v not in on_path:
                path.append(v)
                on_path.add(v)
                ok = extend()
                path.pop()
                on_path.discard(v)
                if not ok:
                    return False
        return True

    return cycles if extend() else None


def _pack_cycles(cycles: list[list[str]], units: dict, gpus: list[str], node_budget: int, deadline: float):
    """The largest multiset of cycles whose edge use fits the units; (packing, proven_optimal)."""
    edge_sets = [[bundle_key(c[i], c[(i + 1) % len(c)]) for i in range(len(c))] for c in cycles]
    residual = dict(units)
    degree = {g: 0 for g in gpus}
    for (a, b), u in units.items():
        if a in degree:
            degree[a] += u
        if b in degree:
            degree[b] += u
    best: list[int] = []
    chosen: list[int] = []
    nodes = 0
    complete = True

    def upper_bound() -> int:
        return len(chosen) + min(d // 2 for d in degree.values())

    def dfs(first: int) -> bool:
        nonlocal best, nodes, complete
        nodes += 1
        if nodes > node_budget or (nodes % 1024 == 0 and time.perf_counter() > deadline):
            complete = False
            return False
        if len(chosen) > len(best):
            best = list(chosen)
        if upper_bound() <= len(best):
            return True
        for i in range(first, len(edge_sets)):
            es = edge_sets[i]
            if all(residual[e] >= 1 for e in es):
                for a, b in es:
                    residual[(a, b)] -= 1
                    degree[a] -= 1
                    degree[b] -= 1
                chosen.append(i)
                ok = dfs(i)
                chosen.pop()
                for a, b in es:
                    residual[(a, b)] += 1
                    degree[a] += 1
                    degree[b] += 1
                if not ok:
                    return False
                if upper_bound() <= len(best):
                    return True
        return True

    dfs(0)
    return [cycles[i] for i in best], complete


def _exact_direct(fab: Fabric, gpus: list[str], deadline: float):
    members = set(gpus)
    direct = {g: [v for v in fab.adj[g] if v in members] for g in gpus}
    cycles = _hamiltonian_cycles(gpus, direct, 500_000, deadline)
    if cycles is None:
        return None
    units = {k: b.units for k, b in fab.bundles.items() if k[0] in members and k[1] in members}
    packing, complete = _pack_cycles(cycles, units, gpus, 2_000_000, deadline)
    rings = [_make_ring(fab, c, [[c[i], c[(i + 1) % len(c)]] for i in range(len(c))], False) for c in packing]
    return rings, complete


# ---- greedy construction through switches ----------------------------------------------------

def _consume(residual: dict, fab: Fabric, path: list[str], sign: int = -1) -> None:
    for k in fab.path_bundles(path):
        residual[k] += sign


def _greedy_ring(fab: Fabric, gpus: list[str], residual: dict, budget: int):
    """One ring hop by hop over routes with units left: a depth-first search with an explicit stack
    (rings can be thousands of GPUs long) and a bounded number of steps."""
    if len(gpus) < 2:
        return None
    members = set(gpus)
    start = gpus[0]
    order = [start]
    hops: list[list[str]] = []
    visited = {start}
    steps = 0

    def candidates(u: str):
        return iter([v for v in fab.reachable_gpus(u, residual) if v in members and v not in visited])

    stack = [candidates(start)]
    while stack:
        steps += 1
        if steps > budget:
            break
        u = order[-1]
        if len(order) == len(gpus):
            back = fab.route(u, start, residual)
            if back is not None:
                _consume(residual, fab, back)
                hops.append(back)
                return order, hops
        else:
            advanced = False
            for v in stack[-1]:
                if v in visited:
                    continue
                path = fab.route(u, v, residual)
                if path is None:
                    continue
                _consume(residual, fab, path)
                order.append(v)
                visited.add(v)
                hops.append(path)
                stack.append(candidates(v))
                advanced = True
                break
            if advanced:
                continue
        # dead end: step back
        stack.pop()
        if len(order) > 1:
            _consume(residual, fab, hops.pop(), +1)
            visited.discard(order.pop())
    # give back whatever the failed search still holds
    for path in hops:
        _consume(residual, fab, path, +1)
    return None


def _greedy_rings(fab: Fabric, gpus: list[str], residual: dict | None = None, limit: int = 64) -> list[Ring]:
    residual = residual if residual is not None else {k: b.units for k, b in fab.bundles.items()}
    rings = []
    while len(rings) < limit:
        found = _greedy_ring(fab, gpus, residual, budget=20 * len(gpus) + 50)
        if found is None:
            break
        rings.append(_make_ring(fab, found[0], found[1], False))
    return rings


def _shared_ring(fab: Fabric, gpus: list[str]) -> Ring | None:
    """A ring in document order over shortest routes, links shared: the fallback for trees."""
    if len(gpus) < 2:
        return None
    hops = []
    for i, u in enumerate(gpus):
        path = fab.route(u, gpus[(i + 1) % len(gpus)])
        if path is None:
            return None
        hops.append(path)
    return _make_ring(fab, gpus, hops, True)


# ---- strategy --------------------------------------------------------------------------------

def _may_join_over_nvlink(topo: Topology, gpus: list[str]) -> bool:
    """False when no chain of NVLink-family links, through any device, joins all the GPUs (so the
    NVLink fabric cannot join them and need not be built); True when it may (then ``_connected``
    decides, with its rules on passing through GPUs)."""
    family: dict[str, str | None] = {}
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    for k, lk in enumerate(topo.links.values()):
        if not k & 16383:
            check_cancelled()
        if lk.type not in family:
            lt = topo.link_type_of(lk)
            family[lk.type] = lt.family if lt else None
        if family[lk.type] == "nvlink":
            a, b = root(lk.a), root(lk.b)
            if a != b:
                parent[a] = b
    first = root(gpus[0])
    return all(root(g) == first for g in gpus[1:])


def _connected(fab: Fabric, gpus: list[str]) -> bool:
    """All GPUs of the set reach each other through non-GPU devices or direct links."""
    if len(gpus) < 2:
        return True
    members = set(gpus)
    seen = {gpus[0]}
    stack = [gpus[0]]
    while stack:
        u = stack.pop()
        for v in fab.adj[u]:
            if v in seen:
                continue
            if fab.is_gpu(v) and v not in members:
                continue
            seen.add(v)
            stack.append(v)
    return members <= seen


def _single_fabric(topo: Topology, fab: Fabric, name: str, gpus: list[str], exact_limit: int,
                   deadline: float) -> RingResult:
    members = set(gpus)
    direct_only = all(all(fab.is_gpu(v) for v in fab.adj[g]) for g in gpus) and \
        all(v in members for g in gpus for v in fab.adj[g])
    if direct_only and 3 <= len(gpus) <= exact_limit:
        found = _exact_direct(fab, gpus, deadline)
        if found is not None and found[0]:
            return RingResult(found[0], name, "exact", found[1], True)
    rings = _greedy_rings(fab, gpus)
    if rings:
        return RingResult(rings, name, "greedy", False, True)
    shared = _shared_ring(fab, gpus)
    return RingResult([shared] if shared else [], name, "shared", False, False)


def _signature(topo: Topology, gpus: list[str], prefix: str) -> tuple:
    """Structure of a system's NVLink wiring with its id prefix removed (equal systems share rings)."""
    edges = set()
    for gpu in gpus:
        for lk in topo.links_of(gpu):
            edges.add((lk.a.removeprefix(prefix), lk.b.removeprefix(prefix), lk.type, lk.count))
    return tuple(sorted(gpu.removeprefix(prefix) for gpu in gpus)), tuple(sorted(edges))


def system_rings(topo: Topology, systems: dict[str, list[str]], exact_limit: int = 16,
                 deadline: float | None = None, nv: Fabric | None = None) -> dict[str, RingResult] | None:
    """Each system's own NVLink rings; systems wired alike share one search. None if a system's GPUs
    are not joined by NVLink. ``nv``: a ``Fabric(topo, {"nvlink"})`` the caller already has."""
    deadline = deadline if deadline is not None else time.perf_counter() + 3.0
    local: dict[str, RingResult] = {}
    cache: dict[tuple, tuple[RingResult, str]] = {}
    for sid, members in systems.items():
        check_cancelled()
        prefix = members[0][: len(members[0]) - len(members[0].split(".")[-1])] if "." in members[0] else ""
        sig = _signature(topo, members, prefix)
        if sig in cache:
            res, pfx = cache[sig]
            mapped = [Ring([prefix + g.removeprefix(pfx) for g in r.gpus],
                           [[prefix + d.removeprefix(pfx) for d in h] for h in r.hops], r.bidir_Bps)
                      for r in res.rings]
            local[sid] = RingResult(mapped, res.fabric, res.method, res.exact, True)
        else:
            # the searches below go from these GPUs over NVLink only: the NVLink fabric around them
            # serves as the whole cluster's would (a system's, not 2,048 systems'), else the whole;
            # past a few classes (each cut costs a pass over the links) the whole, built once
            fab = nv or (Fabric.around(topo, {"nvlink"}, members) if len(cache) < 4 else None)
            if fab is None:
                fab = nv = Fabric(topo, {"nvlink"})
            if len(members) > 1 and not _connected(fab, members):
                return None
            local[sid] = _single_fabric(topo, fab, "nvlink", members, exact_limit, deadline)
            cache[sig] = (local[sid], prefix)
    return local


def find_rings(topo: Topology, gpus: list[str], *, exact_limit: int = 16, time_budget_s: float = 3.0,
               achievable: bool = False, fabric: Fabric | None = None, router=None, plan_rates=None) -> RingResult:
    """Rings over the fastest fabric that joins the set: NVLink alone if it does, else every link.

    With ``achievable`` the ring rates use the catalog's achievable efficiencies. ``fabric``, a
    ``Fabric(topo)`` the caller already has (peak figures, every family), saves building it again.
    ``router``: a ``Router`` of this topology the caller already has; the rail rings use it when it
    is the one they would build (achievable figures, even spreading, no PXN); then ``plan_rates``,
    if given, returns the channel plan and ring rates they would work out with it (the caller's own).
    """
    over = _over_rails(topo, gpus) if len(gpus) >= 2 else ...
    if achievable and over is True:
        # Rail rings with achievable figures: the plan and whether every hop routes are the same
        # with peak figures (NICs and chains are chosen by hops and link families, routes exist by
        # the same links), so the peak rings, worked out only to be replaced, are not.
        result = _rail_rings(topo, gpus, achievable=True, router=router, plan_rates=plan_rates)
        if result is not None:
            return result
    result = _find_rings(topo, gpus, exact_limit, time_budget_s, fabric, over)
    if achievable and result.rings and result.method == RAIL_RINGS:
        return _rail_rings(topo, gpus, achievable=True)
    if achievable and result.rings:
        fab = Fabric(topo, achievable=True)
        for ring in result.rings:
            ring.bidir_Bps = _ring_rate(fab, ring.hops, _allocation(fab, ring, result.link_disjoint))
    return result


RAIL_RINGS = "rail rings (NCCL: one ring per pair of NIC rails)"


def _rail_rings(topo: Topology, gpus: list[str], achievable: bool, fabric: Fabric | None = None,
                router=None, plan_rates=None) -> RingResult | None:
    """NCCL's rings across systems (analysis/channels.py): each ring enters a system at one rail's
    GPU and leaves from its partner rail's, so every NIC carries one ring each way; the rate is what
    the routes leave each ring when all run at once. ``router``: used if it is the one built here,
    with ``plan_rates`` (see ``find_rings``)."""
    from .channels import hop_route, plan, ring_directions, ring_rates
    from .routing import MAX_PATHS, Router, RoutingError

    if not (router is not None and router.topo is topo and router.spread == "even" and not router.pxn
            and router.max_paths == MAX_PATHS and router.fabric.families is None
            and router.fabric.achievable == achievable):
        router, plan_rates = Router(topo, achievable=achievable, fabric=fabric), None
    p = plan(topo, gpus, router.fabric, None, router=router) if plan_rates is None else plan_rates()[0]
    if not p.rings:
        return None
    try:
        # routes every hop: the device paths below cannot fail after it
        rates = ring_rates(p, router) if plan_rates is None else plan_rates()[1]
    except RoutingError:
        return None
    rings = []
    for i, (order, hops, via) in enumerate(ring_directions(p)[::2]):
        def trace(order=order, hops=hops, via=via):
            paths = [list(hop_route(router, order, hops, via, k).paths[0]) for k in range(len(order))]
            links = sorted({lk for path in paths for key in router.fabric.path_bundles(path)
                            for lk in router.fabric.bundles[key].links})
            return paths, links
        rings.append(_RailRing(list(order), rates[2 * i] + rates[2 * i + 1], trace))
    return RingResult(rings, "all", RAIL_RINGS, False, False)


class _RailRing(Ring):
    """A rail ring whose device paths and links are traced when first read: on a cluster of
    thousands of systems they are tens of thousands of routes that ``analyze`` never reports."""

    def __init__(self, gpus: list[str], bidir_Bps: float, trace):
        self.gpus, self.bidir_Bps, self._trace = gpus, bidir_Bps, trace

    def __getattr__(self, name: str):
        if name in ("hops", "links") and "_trace" in self.__dict__:
            self.hops, self.links = self.__dict__.pop("_trace")()
            return getattr(self, name)
        raise AttributeError(name)


def _allocation(fab: Fabric, ring: Ring, disjoint: bool) -> dict | None:
    return Counter(k for path in ring.hops for k in fab.path_bundles(path)) if disjoint else None


def _find_rings(topo: Topology, gpus: list[str], exact_limit: int, time_budget_s: float,
                fabric: Fabric | None = None, over=...) -> RingResult:
    """``over``: ``_over_rails(topo, gpus)`` if the caller has it (else ...)."""
    deadline = time.perf_counter() + time_budget_s
    if len(gpus) < 2:
        return RingResult([], "none", "trivial", True, True)
    nv = over if over is not ... else _over_rails(topo, gpus)
    if nv is not None and nv is not True:
        return _single_fabric(topo, nv, "nvlink", gpus, exact_limit, deadline)
    if nv is True:
        result = _rail_rings(topo, gpus, achievable=False, fabric=fabric)
        if result is not None:
            return result
    everything = fabric or Fabric(topo)
    if not _connected(everything, gpus):
        return RingResult([], "disconnected", "none", True, True)
    return _single_fabric(topo, everything, "all", gpus, exact_limit, deadline)


def _over_rails(topo: Topology, gpus: list[str]):
    """Which rings ``_find_rings`` tries first for 2 or more GPUs: the NVLink fabric that joins them
    all (a ``Fabric``), else True when they lie in several systems, all inside one (rail rings),
    else None (every link)."""
    if _may_join_over_nvlink(topo, gpus):
        nv = Fabric(topo, {"nvlink"})
        if _connected(nv, gpus):
            return nv
    systems: dict[str, list[str]] = {}
    system_of = system_map(topo) if len(gpus) > 64 else {g: topo.system_of(g) for g in gpus}
    for g in gpus:
        systems.setdefault(system_of.get(g) or "", []).append(g)
    return True if len(systems) > 1 and "" not in systems else None
