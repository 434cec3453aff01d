"""One flow per symmetry class: all-to-all (and any transfer pattern) over clusters of identical systems.

Flows that are images of each other under the fabric's symmetry (systems wired alike under
switches wired alike; GPU i of one system to GPU j of another) get the same max-min fair rate at
every instant, and the channels that are images of each other carry the same load. So the engine
can solve one representative flow per class of flows on one representative channel per class of
channels, and give the same answer as the pair-by-pair run:

- Devices are coloured by colour refinement (every device of a system starts from its id inside
  the system, every other device from its kind and part; a GPU also from whether it sends and
  receives; a pattern that is not every pair of its GPUs adds its transfers as links of their
  own), so devices of one colour are alike down to the bandwidth of every link around them.
- Two systems relate to each other by the matrix of (colours, hop distance, number of shortest
  paths) between the switches each of their network ports plugs into, and by how many of the
  pattern's transfers join them; a flow's class is its two GPUs' colours and that relation. The
  pattern must hold every flow of each class it touches (an all-to-all does; a subset of systems
  or GPUs is coloured apart), else nothing is reduced.
- Channels are classed by the colours of their two ends. A class's flow carries, on one channel of
  each channel class its route crosses, the route's weight there times the flows in the class over
  the channels in the channel class: exactly each channel's share of the class's load.
- Representative routes are checked against another member's (the same weight on every channel
  class and the same latency): every class of small systems, five GPU pairs of each relation
  between systems of eight; any difference and the pattern runs pair by pair.

Colour refinement stands for the fabric's automorphisms: on the fabrics the generators build
(fat trees of two and three tiers, even or uneven pods, rail-optimized, oversubscribed) the
classes are its orbits, and the tests hold the answer to the pair-by-pair run's to 1e-9. A
hand-wired fabric regular enough to fool refinement without being symmetric is not detected.
Where a route keeps only ``max_paths`` of more tied paths (the router picks them by name on
large three-tier trees), the pair-by-pair run is itself slightly uneven across spines; the
classes then spread each flow evenly over its class of channels.

The engine takes the class routes through ``ClassRouter`` (it asks its router for each pair's
route); a Pattern that carried its own routes would make that adapter unnecessary.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..analysis.routing import Route, Router
from ..cancel import check_cancelled
from .engine import Engine, RatePattern, RouteTable, Schedule, SimResult, _maxmin
from .relation_ids import DENSE, numbered, relations, row_ids

_rng = np.random.default_rng(0x17a2a)
_K1, _K2 = np.int64(0x1E3779B97F4A7C15), np.int64(0x232BE59BD9B4E019)
_MIX = _rng.integers(1, 2**62, size=(4, 1 << 16), dtype=np.int64) | 1


@dataclass
class Classes:
    """A pattern reduced to one flow per class. ``pairs`` are the representative GPU pairs,
    ``routes`` their class routes (on representative channels), ``count`` the flows of each class."""

    pairs: list[tuple[str, str]]
    routes: list[Route]
    count: np.ndarray
    block: np.ndarray            # channel -> its channel class (-1: no class route crosses it)
    rep: np.ndarray              # channel class -> its representative channel
    flows: int
    meta: dict = field(default_factory=dict)

    def router(self, router: Router) -> "ClassRouter":
        return ClassRouter(router, dict(zip(self.pairs, self.routes)))


class ClassRouter:
    """The real router, except that each representative pair travels on its class route.

    (The engine asks its router for each pair's route; the hook it lacks is a Pattern that carries
    its own routes, see ``Classes``.)"""

    def __init__(self, router: Router, routes: dict[tuple[str, str], Route]):
        self._router = router
        self._routes = routes

    def __getattr__(self, name):
        return getattr(self._router, name)

    def routes(self, src: str, dst: str) -> Route:
        r = self._routes.get((src, dst))
        return r if r is not None else self._router.routes(src, dst)


def _hash_rows(parts: list[np.ndarray]) -> np.ndarray:
    """A 64-bit hash of each row of several small-integer columns (wrapping sums of random words)."""
    h = np.zeros(len(parts[0]), dtype=np.int64)
    for i, col in enumerate(parts):
        col = np.asarray(col, dtype=np.int64)
        h = h * _K1 + _MIX[i % 4][col & 0xFFFF] + (col >> 16) * _K2
    return h


def _refine(n: int, initial: np.ndarray, eu: np.ndarray, ev: np.ndarray, elabel: np.ndarray) -> np.ndarray:
    """Colour refinement: a device's new colour is its colour and the multiset of (link label,
    neighbour colour) around it, until the number of colours stops growing."""
    _, color = np.unique(initial, return_inverse=True)
    order = np.argsort(eu, kind="stable")
    eu, ev, elabel = eu[order], ev[order], elabel[order]
    starts = np.flatnonzero(np.diff(eu, prepend=-1))
    owners = eu[starts]
    ncolors = color.max() + 1 if n else 0
    rng = np.random.default_rng(0x5eed)
    while True:
        r1 = rng.integers(1, 2**62, size=int(color.max()) + 1, dtype=np.int64)
        r2 = rng.integers(1, 2**62, size=int(color.max()) + 1, dtype=np.int64)
        terms = r1[color[ev]] + (elabel.astype(np.int64) + 1) * r2[color[ev]]
        sig = np.zeros(n, dtype=np.int64)
        if len(terms):
            sig[owners] = np.add.reduceat(terms, starts)
        new = row_ids(color, sig)
        k = new.max() + 1 if n else 0
        if k == ncolors:
            return new
        color, ncolors = new, k


def _distances(adj: np.ndarray, sources: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hop distance and number of shortest paths from each source to every node (dense BFS)."""
    k, n = len(sources), adj.shape[0]
    dist = np.full((k, n), -1, dtype=np.int64)
    count = np.zeros((k, n))
    front = np.zeros((k, n))
    front[np.arange(k), sources] = 1.0
    dist[np.arange(k), sources] = 0
    count[np.arange(k), sources] = 1.0
    level = 0
    while front.any():
        level += 1
        nxt = front @ adj
        nxt[dist >= 0] = 0.0
        new = nxt > 0
        dist[new] = level
        count[new] = nxt[new]
        front = np.where(new, nxt, 0.0)
    return dist, count


class _Structure:
    """Colours of every device, and the relation id of every ordered pair of the pattern's systems."""

    def __init__(self, router: Router, gpus: list[str], role: dict[str, int],
                 flows: tuple[np.ndarray, np.ndarray] | None = None):
        """``flows``: the pattern's transfers as indices into ``gpus`` when it is not every pair of
        them; they join the refinement as links of their own, and how many join two systems joins
        the systems' relation, so classes follow the pattern's symmetry as well as the fabric's."""
        self.ok = False
        if router.spread != "even":
            return      # a hash of the names pins each route: flows alike do not travel alike
        topo, fab = router.topo, router.fabric
        devices = list(fab.kind)
        index = {d: i for i, d in enumerate(devices)}
        n = len(devices)
        system = router._system
        # every GPU of the pattern sits in a system whose devices all carry its prefix
        prefix: dict[str, str] = {}
        for sid, group in topo.groups.items():
            if group.kind == "system" and sid.endswith("system"):
                p = sid[:-len("system")]
                # (a rack drawn as trays, GB200 NVL72: its trays' devices, not its group's own, none)
                if p and all(d.startswith(p) for d in router.system_devices(sid)):
                    prefix[sid] = p
        if any(g not in index or prefix.get(system.get(g)) is None for g in gpus):
            return
        # initial colours: a system's devices by their id inside it, others by kind and part
        init = []
        sys_of = np.full(n, -1, dtype=np.int64)
        sys_ids: dict[str, int] = {}
        labels: dict[tuple, int] = {}
        hop = fab.hop_latency
        for i, d in enumerate(devices):
            sid = system.get(d)
            p = prefix.get(sid)
            dev = topo.devices[d]
            if p is not None:
                sys_of[i] = sys_ids.setdefault(sid, len(sys_ids))
                key = ("in", d[len(p):], dev.kind, dev.part, hop.get(d), role.get(d, 0))
            elif sid is None:
                key = ("out", dev.kind, dev.part, hop.get(d))
            else:
                key = ("alone", d)
            init.append(labels.setdefault(key, len(labels)))
        eu, ev, el = [], [], []
        elabels: dict[tuple, int] = {}
        for (a, b), bd in fab.bundles.items():
            lab = elabels.setdefault((bd.bandwidth, bd.latency_s, bd.family), len(elabels))
            ia, ib = index[a], index[b]
            eu += [ia, ib]
            ev += [ib, ia]
            el += [lab, lab]
        eu, ev, el = (np.asarray(x, dtype=np.int64) for x in (eu, ev, el))
        gidx = np.asarray([index[g] for g in gpus], dtype=np.int64)
        if flows is not None:
            fa, fb = gidx[flows[0]], gidx[flows[1]]
            k = len(elabels)
            eu2 = np.concatenate([eu, fa, fb])
            ev2 = np.concatenate([ev, fb, fa])
            el2 = np.concatenate([el, np.full(len(fa), k), np.full(len(fa), k + 1)])
            color = _refine(n, np.asarray(init, dtype=np.int64), eu2, ev2, el2)
        else:
            color = _refine(n, np.asarray(init, dtype=np.int64), eu, ev, el)

        # systems of the pattern: alike in their network ports (one outside neighbour per port device)
        psys = np.unique(sys_of[gidx])
        members: dict[int, list[int]] = {}
        for i in np.flatnonzero(sys_of >= 0).tolist():
            members.setdefault(int(sys_of[i]), []).append(i)
        outside = sys_of < 0
        ports = None
        att = np.zeros((len(psys), 0), dtype=np.int64)
        for row, s in enumerate(psys.tolist()):
            mine = []
            for i in members[s]:
                ext = [index[v] for v in fab.adj[devices[i]] if sys_of[index[v]] != s]
                if not ext:
                    continue
                if len(ext) > 1 or not outside[ext[0]]:
                    return
                mine.append((devices[i][len(prefix[system[devices[i]]]):], ext[0]))
            mine.sort()
            local = [m[0] for m in mine]
            if ports is None:
                ports = local
                att = np.zeros((len(psys), len(local)), dtype=np.int64)
            elif local != ports:
                return
            att[row] = [m[1] for m in mine]
        # (colours, distance, shortest paths) between the switches the ports plug into
        out_nodes = np.flatnonzero(outside)
        if len(out_nodes) > 4000:
            return
        pos = np.full(n, -1, dtype=np.int64)
        pos[out_nodes] = np.arange(len(out_nodes))
        ends = np.unique(att)
        adj = np.zeros((len(out_nodes), len(out_nodes)))
        keep = outside[eu] & outside[ev]
        adj[pos[eu[keep]], pos[ev[keep]]] = 1.0
        dist, npaths = _distances(adj, pos[ends])
        sub = pos[ends]
        dq = dist[:, sub]
        cq = np.minimum(npaths[:, sub], 2.0**40).astype(np.int64)
        ce = color[ends]
        qkey = _hash_rows([np.repeat(ce, len(ends)), np.tile(ce, len(ends)), dq.ravel() + 1, cq.ravel()])
        _, qid = np.unique(qkey, return_inverse=True)
        qid = qid.reshape(len(ends), len(ends)).astype(np.int64)
        slot = np.searchsorted(ends, att)                       # systems x ports -> row of qid
        # each system's colour: its devices' colours in order (systems alike share it)
        skey = [tuple(color[members[s]].tolist()) for s in psys.tolist()]
        sc_ids: dict[tuple, int] = {}
        scolor = np.asarray([sc_ids.setdefault(k, len(sc_ids)) for k in skey], dtype=np.int64)
        m, mp = len(psys), att.shape[1]
        weights = np.random.default_rng(mp).integers(1, 2**62, size=(mp, mp), dtype=np.int64)
        between = np.zeros((m, m), dtype=np.int64)
        if flows is not None:
            srow = np.searchsorted(psys, sys_of[gidx])
            np.add.at(between, (srow[flows[0]], srow[flows[1]]), 1)
        # hashed and numbered once per pair of kinds of system (relation_ids.py)
        self.rid = relations(qid, slot, weights, scolor, between, _hash_rows)
        self.n_rel = np.bincount(self.rid.ravel())
        self.psys, self.sys_of, self.color, self.gidx = psys, sys_of, color, gidx
        self.index, self.devices, self.prefix, self.system = index, devices, prefix, system
        self.members = members
        cu = color[np.fromiter((index[u] for u, _ in router.channel_ends), dtype=np.int64,
                               count=router.n_channels)]
        cv = color[np.fromiter((index[v] for _, v in router.channel_ends), dtype=np.int64,
                               count=router.n_channels)]
        _, block, self.bsize = np.unique(_hash_rows([cu, cv]), return_inverse=True, return_counts=True)
        self.block = block.ravel()
        self.rep = np.full(len(self.bsize), len(self.block), dtype=np.int64)
        self.rep[self.block[::-1]] = np.arange(len(self.block))[::-1]
        self.ok = True

    def load(self, route: Route) -> np.ndarray:
        return np.bincount(self.block[route.channels], weights=route.weights, minlength=len(self.bsize))


def class_routes(lens, cls: np.ndarray, w: np.ndarray, flows: np.ndarray, n_cls: int, rep: np.ndarray,
                 size: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Routes as the routes of classes of flows, all at once: route i (``lens[i]`` entries, on
    channel classes ``cls`` with weights ``w``) standing for ``flows[i]`` flows loads one channel
    (``rep``) of each channel class it crosses with its weight there (summed in its own order) times
    its flows over the channel class's ``size``: exactly each channel's share of the class's load.
    Returns those channels and weights, route after route, and where each route's begin (its bounds).
    (symmetry's classes and tree_fold's.)"""
    key = np.repeat(np.arange(len(lens)), lens) * n_cls + cls
    uk, inv = numbered(key, DENSE)  # (np.unique's, by one sort)
    load = np.bincount(inv, weights=w, minlength=len(uk))  # (each sum in the route's order)
    owner, c = np.divmod(uk, n_cls)
    keep = load > 0
    owner, c, load = owner[keep], c[keep], load[keep]
    return rep[c], load * np.asarray(flows, dtype=np.int64)[owner] / size[c], np.searchsorted(
        owner, np.arange(len(lens) + 1)).tolist()


def _class_routes(st: _Structure, routes: list[Route], counts: list[int]) -> list[Route]:
    """The route of each class of ``counts[i]`` flows like ``routes[i]`` (``class_routes``)."""
    if not routes:
        return []
    chans, weights, bounds = class_routes(
        [len(r.channels) for r in routes], st.block[np.concatenate([r.channels for r in routes])],
        np.concatenate([r.weights for r in routes]), counts, len(st.bsize), st.rep, st.bsize)
    return [Route(r.paths, chans[bounds[i]:bounds[i + 1]], weights[bounds[i]:bounds[i + 1]], r.latency_s, r.cap_Bps)
            for i, r in enumerate(routes)]


def _alike(st: _Structure, router: Router, ref: Route, a: str, b: str) -> bool:
    o = router.routes(a, b)
    return bool(np.allclose(st.load(o), st.load(ref), rtol=1e-12, atol=1e-12)
                and math.isclose(o.latency_s, ref.latency_s, rel_tol=1e-12, abs_tol=1e-18))


def _finish(st: _Structure, pairs, routes, counts, flows: int) -> Classes:
    touched = np.zeros(len(st.bsize), dtype=bool)
    for r in routes:
        touched[st.block[r.channels]] = True
    block = np.where(touched[st.block], st.block, -1)
    counts = np.asarray(counts, dtype=np.int64)
    return Classes(pairs, routes, counts, block, st.rep, flows,
                   {"classes": len(pairs), "flows": flows, "channel_classes": int(touched.sum())})


def all_pairs(router: Router, gpus: list[str], min_gain: float = 2.0) -> Classes | None:
    """Every ordered pair of distinct GPUs of ``gpus`` (an all-to-all), by class; None without symmetry.

    The flows are never listed: each relation between two systems gives one class per pair of
    the GPUs' colours, with as many flows as system pairs in that relation."""
    if len(set(gpus)) != len(gpus) or len(gpus) < 2:
        return None
    # a sweep asks again for every size: the classes depend only on the router and the GPUs
    cache = _CACHE.setdefault(router, {})
    key = (tuple(gpus), min_gain)
    if key not in cache:
        cache.clear()
        cache[key] = _all_pairs(router, gpus, min_gain)
    return cache[key]


_CACHE: "weakref.WeakKeyDictionary[Router, dict]" = weakref.WeakKeyDictionary()


def _all_pairs(router: Router, gpus: list[str], min_gain: float) -> Classes | None:
    st = _Structure(router, gpus, {g: 3 for g in gpus})
    if not st.ok:
        return None
    by_sys: dict[int, list[str]] = {}
    for g in gpus:
        by_sys.setdefault(int(np.searchsorted(st.psys, st.sys_of[st.index[g]])), []).append(g)
    for row in by_sys:
        by_sys[row].sort(key=lambda g: g[len(st.prefix[st.system[g]]):])
    rid, m = st.rid, len(st.psys)
    # the first and the last system pair of each relation
    flat = np.arange(m * m)
    first = np.empty(len(st.n_rel), dtype=np.int64)
    last = np.empty(len(st.n_rel), dtype=np.int64)
    first[rid.ravel()[::-1]] = flat[::-1]
    last[rid.ravel()] = flat
    flows = len(gpus) * (len(gpus) - 1)
    pairs, routes, counts = [], [], []
    for r in range(len(st.n_rel)):
        (a0, b0), (a1, b1) = divmod(int(first[r]), m), divmod(int(last[r]), m)
        na, nb = len(by_sys[a0]), len(by_sys[b0])
        # checked: every GPU pair of small systems, else the corners and the middle of the matrix
        # (each check is one more route search, as costly as the representative's)
        probe = None if na * nb <= 16 else {(0, 0), (0, nb - 1), (na - 1, 0), (na // 2, nb // 2),
                                            (na // 2, (nb // 2 + 1) % nb)}
        for i, ga in enumerate(by_sys[a0]):
            for j, gb in enumerate(by_sys[b0]):
                if ga == gb:
                    continue
                if len(pairs) % 64 == 63:
                    check_cancelled()
                route = router.routes(ga, gb)
                # the same GPUs of another system pair in this relation must travel alike
                if ((a0, b0) != (a1, b1) and (probe is None or (i, j) in probe)
                        and not _alike(st, router, route, by_sys[a1][i], by_sys[b1][j])):
                    return None
                pairs.append((ga, gb))
                routes.append(route)
                counts.append(int(st.n_rel[r]))
                if len(pairs) * min_gain > flows:
                    return None
    return _finish(st, pairs, _class_routes(st, routes, counts), counts, flows)


def pattern_classes(router: Router, pairs: list[tuple[str, str]], min_gain: float = 2.0) -> Classes | None:
    """Any list of transfers (several all-to-alls at once), by class; None unless the list holds
    every flow of each class it touches (so that it is as symmetric as the fabric)."""
    if not pairs:
        return None
    gpus = sorted({g for pr in pairs for g in pr})
    role: dict[str, int] = {}
    for a, b in pairs:
        role[a] = role.get(a, 0) | 1
        role[b] = role.get(b, 0) | 2
    gi = {g: k for k, g in enumerate(gpus)}
    src = np.fromiter((gi[a] for a, _ in pairs), dtype=np.int64, count=len(pairs))
    dst = np.fromiter((gi[b] for _, b in pairs), dtype=np.int64, count=len(pairs))
    st = _Structure(router, gpus, role, (src, dst))
    if not st.ok:
        return None
    srow = np.searchsorted(st.psys, st.sys_of[st.gidx])
    r = st.rid[srow[src], srow[dst]]
    ca, cb = st.color[st.gidx[src]], st.color[st.gidx[dst]]
    _, cls, count = np.unique(_hash_rows([r, ca, cb]), return_inverse=True, return_counts=True)
    cls = cls.ravel()
    if len(count) * min_gain > len(pairs) or len(set(pairs)) != len(pairs):
        return None
    first = np.empty(len(count), dtype=np.int64)
    last = np.empty(len(count), dtype=np.int64)
    idx = np.arange(len(pairs))
    first[cls[::-1]] = idx[::-1]
    last[cls] = idx
    if not (count == st.n_rel[r[first]]).all():
        return None
    out_pairs, routes = [], []
    for c in range(len(count)):
        a, b = pairs[first[c]]
        route = router.routes(a, b)
        if last[c] != first[c] and not _alike(st, router, route, *pairs[last[c]]):
            return None
        out_pairs.append((a, b))
        routes.append(route)
    out = _finish(st, out_pairs, _class_routes(st, routes, count.tolist()), count, len(pairs))
    out.meta["class_of_pair"] = cls
    return out


# ---- running a schedule whose patterns stand for classes ----------------------------------------

def note(schedule: Schedule) -> str:
    """How a schedule's transfers were simulated, for a result's reason ('' when pair by pair)."""
    cl: Classes | None = schedule.meta.get("classes")
    if cl is None:
        return ""
    return (f"; simulated as {len(cl.pairs):,} symmetry classes of its {cl.flows:,} transfers "
            f"(systems wired alike: the same answer as pair by pair)")


def run(router: Router, schedule: Schedule, progress=None, cancel=None, capacity_scale: float = 1.0) -> SimResult:
    """Run a schedule on an engine; when its patterns are class representatives
    (``schedule.meta["classes"]``), on their class routes, and the result is given back per channel
    and per byte as the pair-by-pair run would give it (see ``expand``)."""
    cl: Classes | None = schedule.meta.get("classes")
    engine = Engine(cl.router(router) if cl is not None else router, capacity_scale)
    sim = engine.run(schedule, progress, cancel)
    return expand(sim, cl, engine) if cl is not None else sim


def expand(sim: SimResult, cl: Classes, engine: Engine) -> SimResult:
    """Every channel of a channel class carries what its representative carried; the bytes delivered
    over time count every flow of each class (the engine counted one per class)."""
    block, rep = cl.block, cl.rep
    valid = block >= 0
    channel_bytes = np.zeros_like(sim.channel_bytes)
    channel_bytes[valid] = sim.channel_bytes[rep[block[valid]]]
    order = np.flatnonzero(valid)[np.argsort(block[valid], kind="stable")]
    sizes = np.bincount(block[valid], minlength=len(rep))
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    patterns = []
    for rp in sim.rate_patterns:
        b = block[rp.channels]
        idx = np.concatenate([order[offsets[k]:offsets[k] + sizes[k]] for k in b.tolist()]) if len(b) else \
            np.zeros(0, np.int64)
        patterns.append(RatePattern(idx, np.repeat(rp.load_Bps, sizes[b])))
    delivered = _delivered(sim, cl, engine)
    return dataclasses.replace(sim, channel_bytes=channel_bytes, rate_patterns=patterns, delivered=delivered)


def _delivered(sim: SimResult, cl: Classes, engine: Engine) -> list[tuple[float, float]]:
    """Bytes delivered over time, every flow counted: each segment's rates solved again for the
    flows active in it (those of groups started and not yet past their flow's end)."""
    count = {route.paths: int(c) for route, c in zip(cl.routes, cl.count)}
    table = RouteTable(engine.route_ch, engine.route_w)
    caps = np.asarray(engine.route_cap, dtype=float)
    caps = None if np.isinf(caps).all() else caps
    mult = np.ones(len(engine.routes))
    for rid, r in enumerate(engine.routes):
        mult[rid] = count.get(r.paths, 1)
    flows = []                      # (start, end, route id) of every flow
    for g, grp in enumerate(sim.groups):
        if grp.pattern is None or not grp.pattern.pairs:
            continue
        tpl = grp.pattern._template
        ends = sim.flow_ends.get(g)
        for k, rid in enumerate(tpl["route"].tolist()):
            flows.append((float(sim.group_start[g]), float(ends[k]) if ends is not None else float(sim.group_sent[g]),
                          rid))
    if not flows:
        return sim.delivered
    fs = np.asarray([f[0] for f in flows])
    fe = np.asarray([f[1] for f in flows])
    fr = np.asarray([f[2] for f in flows], dtype=np.int64)
    out = [(0.0, 0.0)]
    total = 0.0
    cache: dict[int, float] = {}
    for t0, t1, pid in sim.segments:
        rate = cache.get(pid)
        if rate is None:
            mid = 0.5 * (t0 + t1)
            active = fr[(fs <= mid) & (fe >= mid)]
            counts = np.bincount(active, minlength=len(engine.routes))
            uniq = np.flatnonzero(counts)
            r_u, _, _ = _maxmin(uniq, counts[uniq].astype(float), table, engine.capacity, caps)
            rate = cache[pid] = float(r_u @ (counts[uniq] * mult[uniq]))
        total += rate * (t1 - t0)
        out.append((t1, total))
    return out
