"""Trees that run alike, simulated once: NCCL's tree all-reduce with one flow per class of trees.

NCCL builds a pair of trees per NIC rail; where the fabric and the trees' chains are symmetric, trees
are images of each other (on a rail-optimized DGX H100 cluster, whose chains follow NCCL's order
inside NVSwitch systems, every rail's trees are; a DGX-1's cube-mesh chains differ per rail, and
none are), and trees that are images have the same timing at every instant. Such a run is
simulated with one representative tree per class, each of its flows standing for the class's m
flows, on one representative channel per class of channels (the quotient ``symmetry.py`` builds for
all-to-all), and given back per tree, per flow and per channel as the full run would give it.

Why it is exact. The classes are the coarsest *equitable* partition of the run's flows (every
transfer slot of every tree's patterns) and channels, found by colour refinement over the bipartite
graph of routes (a slot is joined to each channel its route loads, with its weight) and the trees
(a tree to its slots, by their place in it), from initial colours that hold everything the timing
reads: a slot's place (its pattern's role in its tree), latency and rate cap; a channel's capacity.
Equitable means: every channel of a class carries, from each class of slots, the same multiset of
weights, and every slot of a class loads each class of channels alike; trees of a class have the
same slot colours in each role. Then the progressive filling keeps every class at one rate (all
channels of a class fill in the same round, freezing whole classes), so slots of a class start,
move and finish together, and the filling over representatives with the class's load on each
representative channel is the filling over all. The partition is checked exactly (entry by entry,
not by its hashes) before it is used; anything else runs flow by flow. The quotient's weights are
sums over a class, so rates can differ from the flow-by-flow run in the last bits (see the tests).
Where the trees are images of each other by maps checked outright (``tree_orbits.py``: a rail shift
and a mirror on a rail-optimized cluster, for the NCCL tree, the NVLS tree and CollNet), the refinement
runs on tree 0 and the maps' orbits of channels instead of on every tree: the same classes, found
without refining every tree's routes. The maps are checked on the routes' parts (``tree_parts.py``:
a hop spread over the spines is its legs, its NICs' links and its leaf pair's spread), so only tree
0 is routed; the other trees' templates are looked up if something reads them. Inside the
representative tree, slots of one class run as one flow (``slot_merge.py``).

Groups outside the trees (the launch; an NVLS tree's joins, and every system's NVLS reduce and
multicast, between which its trees' pieces run) are shared by all trees, so trees of a class still
start, move and finish together; one that waits for a tree group waits, in the folded run, for that
group's representative. Their transfers run as they are, one flow each, beside the folded trees,
where no tree loads a channel they load (else the run is not folded): the engine counts each flow
as the flows it stands for (``Engine.represents``, per route) in its bytes delivered (its budget
counts the flows it re-times: ``limits.MAX_FLOW_EVENTS``).
An NVLS tree's systems wired alike fold as well, one system per class (``sim/system_fold.py``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..analysis.routing import Route
from . import fold_alike, fold_reduced, slot_rows, tree_orbits
from .engine import Engine, RatePattern, RouteTable, Schedule, SimResult
from .fold_routes import RouteGraph
from .relation_ids import row_ids as _ids
from .slot_merge import SlotMerge
from .symmetry import class_routes
from . import setup_steps
from .system_fold import LazyTemplate, SystemFold
from .tree_parts import TreeParts

_MIX = np.int64(0x5851F42D4C957F2D)


def run(router, sched: Schedule, capacity_scale: float, progress=None, cancel=None) -> SimResult:
    """``Engine(router, capacity_scale).run(sched)``, with alike trees simulated once when the
    schedule lists its trees (``sched.meta["trees"]``) and they fold exactly."""
    engine = Engine(router, capacity_scale)
    setup_steps.step("folding alike systems")  # (1.7 s of 2,048 DGX H100's NVLS tree)
    fold = Fold.of(engine, sched)
    if fold is None:  # (the engine keeps the routes the check looked up)
        return engine.run(sched, progress, cancel)
    return fold.run(progress, cancel)


class Fold:
    """A tree schedule reduced to one tree per class, and how to give its run back in full."""

    @classmethod
    def of(cls, engine: Engine, sched: Schedule) -> "Fold | None":
        """The fold of ``sched`` on ``engine``'s router, or None (then ``engine`` has every tree's
        routes looked up, or looks them up when a run of the whole schedule reads them). Its trees: ``sched.meta["trees"]``,
        each a (first, end) range of group ids or a list of its group ids, ascending.
        Groups outside the trees may wait for tree groups (each then waits for its
        representative's), and may move data where no tree does (``_apart``)."""
        trees = sched.meta.get("trees")
        if not trees or len(trees) < 2:
            return None
        trees = [np.arange(*t) if isinstance(t, tuple) else np.asarray(t, dtype=np.int64) for t in trees]
        cols = sched.columns()
        n = cols.n
        size = len(trees[0])
        if any(len(mem) != size for mem in trees):
            return None
        tree_of = np.full(n, -1, dtype=np.int64)
        pos = np.full(n, -1, dtype=np.int64)  # a tree group's place in its tree
        for t, mem in enumerate(trees):
            if (tree_of[mem] >= 0).any():
                return None
            tree_of[mem] = t
            pos[mem] = np.arange(size)
        # every tree a copy of the first, group for group (bytes, delays, dependencies inside it
        # in the same places, outside it the same), and its patterns in the same roles
        role_patterns = fold_alike.role_patterns(cols, trees, tree_of, pos)
        if role_patterns is None:
            return None
        rest = np.flatnonzero(tree_of < 0)
        # the systems' transfers (an NVLS tree's): one system per class of systems wired alike
        systems = sched.meta.get("systems")
        sys_fold = SystemFold.of(engine, cols, systems, rest) if systems else None
        if sys_fold is not None:
            rest = rest[sys_fold.kept[rest]]
        outside = {id(p): p for k in np.unique(cols.pattern[rest]).tolist() if k >= 0
                   and (p := cols.patterns[k]).pairs}
        if any(len(p) != len(role_patterns[0]) or
               any(len(a.pairs) != len(b.pairs) for a, b in zip(p, role_patterns[0])) for p in role_patterns):
            return None
        fold = cls.__new__(cls)
        fold.eng0, fold.router, fold.scale = engine, engine.router, engine.capacity_scale
        # (each group's pattern kept, not the columns' dependencies: 50 MB on 2,048 DGX H100)
        fold.sched, fold.patterns, fold.pattern = sched, cols.patterns, cols.pattern
        fold.trees, fold.tree_of, fold.role_patterns = trees, tree_of, role_patterns
        fold.outside = list(outside.values())
        fold.systems = sys_fold
        del cols  # (freed before the refinement's peak)
        return fold if fold._classes() and fold._apart() else None

    def _classes(self) -> bool:
        """Colour refinement of slots, channels and trees (see the module's note), checked exactly."""
        eng0 = self.eng0
        n_trees = len(self.trees)
        n_roles = len(self.role_patterns[0])
        per_role = [len(p.pairs) for p in self.role_patterns[0]]
        per_tree = int(sum(per_role))
        if not per_tree:
            return False
        s_role = np.tile(np.repeat(np.arange(n_roles), per_role), n_trees)
        caps = eng0.route_cap
        # trees that are images of each other by maps checked outright (sim/tree_orbits.py), on
        # every tree's routes in parts (sim/tree_parts.py: tree 0's read before the engine routes it)
        # (tree 0's hops routed, the others' in parts unless spread: sim/unrouted_hops.py)
        parts = TreeParts.of(eng0, [p for pats in self.role_patterns for p in pats], n_roles)
        tpl0 = [eng0.template(p) for p in self.role_patterns[0]]
        s_route0 = np.concatenate([tpl["route"] for tpl in tpl0]).astype(np.int64)
        s_lat0 = np.concatenate([tpl["latency"] for tpl in tpl0]).astype(float)
        cap0 = np.asarray(caps, dtype=float)[s_route0]
        packed = parts.packed(n_trees)
        in_parts = packed is not None and parts.matches(s_route0, eng0.route_ch, eng0.route_w, s_lat0, cap0)
        if in_parts:
            found = tree_orbits.orbits(parts.ends.reshape(n_trees, per_tree, 2), packed, parts.lat, parts.cap,
                                       parts.ch, parts.w, eng0.capacity)
            s_init0 = _ids(s_role[:per_tree], s_lat0.view(np.int64), cap0.view(np.int64))
            got = None if found is None else tree_orbits.coarsened(
                found, s_route0, s_init0, eng0.route_ch, eng0.route_w, eng0.capacity, _MIX)
            if got is not None:
                col_c, self.slot_cls = got
                del parts
                # tree 0 is the representative: the others' routes only if something reads them
                self.tpls0 = {id(p): tpl for p, tpl in zip(self.role_patterns[0], tpl0)}
                for pats in self.role_patterns[1:]:
                    for p in pats:
                        self.tpls0[id(p)] = p._template = LazyTemplate(eng0, p)
                self._take_orbits(found.uch, col_c, n_trees, per_tree, per_role, s_route0)
                return True
        del parts
        tpls = [[eng0.template(p) for p in pats] for pats in self.role_patterns]
        self.tpls0 = {id(p): tpl for pats, ts in zip(self.role_patterns, tpls) for p, tpl in zip(pats, ts)}
        s_route = np.concatenate([tpl["route"] for ts in tpls for tpl in ts]).astype(np.int64)
        s_lat = np.concatenate([tpl["latency"] for ts in tpls for tpl in ts]).astype(float)
        s_tree = np.repeat(np.arange(n_trees), per_tree)
        n_s = len(s_route)
        caps = np.asarray(caps, dtype=float)
        s_init = _ids(s_role, s_lat.view(np.int64), caps[s_route].view(np.int64))
        # (maps checked on the parts failed: they fail on the joined routes, or only where parts of
        # different lengths join into routes a map carries onto each other; not looked for again)
        found = None if in_parts else tree_orbits.orbits(self._slot_ends(n_trees, per_tree), s_route, s_lat,
                                                         caps[s_route], eng0.route_ch, eng0.route_w, eng0.capacity)
        got = None if found is None else tree_orbits.coarsened(
            found, s_route[:per_tree], s_init[:per_tree], eng0.route_ch, eng0.route_w, eng0.capacity, _MIX)
        if got is not None:
            col_c, self.slot_cls = got
            self._take_orbits(found.uch, col_c, n_trees, per_tree, per_role, s_route)
            return True
        # slots share routes: the refinement reads each route's entries once (sim/fold_routes.py)
        graph = RouteGraph(s_route, RouteTable(eng0.route_ch, eng0.route_w), _MIX)
        uch = graph.uch
        n_c = len(uch)
        col_c = _ids(np.ascontiguousarray(eng0.capacity[uch], dtype=float).view(np.int64))
        tree_col = np.zeros(n_trees, dtype=np.int64)
        n_tree_cols = 1
        seed = 1
        while True:
            col_s = _ids(s_init, tree_col[s_tree])
            n_cs, n_cc = int(col_s.max()) + 1, int(col_c.max()) + 1
            while True:
                seed += 1
                sig_s = graph.slot_signature(col_c, seed)
                sig_c = graph.channel_signature(col_s, seed + 7919)
                col_s, col_c = _ids(col_s, sig_s), _ids(col_c, sig_c)
                m_s, m_c = int(col_s.max()) + 1, int(col_c.max()) + 1
                if seed == 2 and len(np.unique(_ids(*np.sort((s_role * m_s + col_s).reshape(n_trees, -1),
                                                              axis=1).T))) == n_trees:
                    return False  # every tree apart after one round already (classes only split)
                if m_s == n_cs and m_c == n_cc:
                    break
                n_cs, n_cc = m_s, m_c
            # trees: the multiset of slot colours in each role (slots of one role lie together)
            key = np.sort((s_role * n_cs + col_s).reshape(n_trees, per_tree), axis=1)
            tree_col = _ids(*key.T) if per_tree else np.zeros(n_trees, dtype=np.int64)
            m_t = int(tree_col.max()) + 1
            if m_t == n_tree_cols:
                break
            n_tree_cols = m_t
        counts = np.bincount(tree_col)
        if len(counts) == n_trees or not (counts == counts[0]).all():
            return False  # nothing to fold, or classes of different sizes (one multiplicity per run)
        # the exact check: slots load each channel class alike, channels carry each slot class alike
        if not graph.exact(col_s, col_c):
            return False
        self.m = int(counts[0])
        rep_tree = np.full(int(tree_col.max()) + 1, n_trees, dtype=np.int64)
        np.minimum.at(rep_tree, tree_col, np.arange(n_trees))
        self.rep_of = rep_tree[tree_col]  # each tree's representative
        # each slot of a tree -> the slot of its representative with the same colour, role by role
        perm = np.empty(n_s, dtype=np.int64)
        order = np.lexsort((col_s, s_role, s_tree))  # within each tree: by role, then colour
        at_rep = order.reshape(n_trees, per_tree)
        perm[order] = at_rep[self.rep_of].ravel()
        self.slot_perm = perm
        self.per_tree = per_tree
        self.role_start = np.concatenate([[0], np.cumsum(per_role)])
        # channel classes: sizes and representatives (the lowest channel of each)
        self.n_cls = int(col_c.max()) + 1
        self.cls_size = np.bincount(col_c, minlength=self.n_cls)
        rep_ch = np.full(self.n_cls, len(uch), dtype=np.int64)
        np.minimum.at(rep_ch, col_c, np.arange(n_c))
        self.uch, self.col_c, self.rep_ch = uch, col_c, uch[rep_ch]
        self.s_route = s_route
        self.slot_cls = col_s  # (every tree's slots: the representatives' are read)
        return True

    def _slot_ends(self, n_trees: int, per_tree: int) -> np.ndarray:
        """Each slot's source and destination as numbers, (trees, slots per tree, 2)."""
        return slot_rows.slot_ends([p for pats in self.role_patterns for p in pats]).reshape(n_trees, per_tree, 2)

    def _take_orbits(self, uch: np.ndarray, col_c: np.ndarray, n_trees: int, per_tree: int, per_role: list[int],
                     s_route: np.ndarray) -> None:
        """The fold of one class of trees whose maps put slot j of every tree with slot j of tree 0,
        on channels ``uch`` in classes ``col_c``."""
        self.m = n_trees
        self.rep_of = np.zeros(n_trees, dtype=np.int64)
        self.slot_perm = np.tile(np.arange(per_tree, dtype=np.int64), n_trees)
        self.per_tree = per_tree
        self.role_start = np.concatenate([[0], np.cumsum(per_role)])
        self.n_cls = int(col_c.max()) + 1
        self.cls_size = np.bincount(col_c, minlength=self.n_cls)
        rep_ch = np.full(self.n_cls, len(uch), dtype=np.int64)
        np.minimum.at(rep_ch, col_c, np.arange(len(uch)))
        self.uch, self.col_c, self.rep_ch = uch, col_c, uch[rep_ch]
        self.s_route = s_route

    def _apart(self) -> bool:
        """Whether the transfers outside the trees (an NVLS tree's reduce and multicast inside the
        systems) load no channel a tree loads: they then run as they are, beside the folded trees."""
        if not self.outside:
            return self.systems is None or self.systems.apart_from(self.uch)
        eng0 = self.eng0
        for p in self.outside:
            self.tpls0[id(p)] = eng0.template(p)
        rids = np.unique(np.concatenate([self.tpls0[id(p)]["route"] for p in self.outside]))
        # (their routes' channels only: a table of every route would copy all the trees' too)
        ch = np.concatenate([eng0.route_ch[r] for r in rids.tolist()]) if len(rids) else np.zeros(0, np.int64)
        return not np.isin(ch, self.uch).any() and (self.systems is None or self.systems.apart_from(self.uch))

    def _rep_group(self) -> np.ndarray:
        """Each group's representative: the group in the same place of its tree's representative."""
        src = np.arange(len(self.pattern), dtype=np.int64) if self.systems is None else self.systems.rep_group.copy()
        for t, mem in enumerate(self.trees):
            r = int(self.rep_of[t])
            if r != t:
                src[mem] = self.trees[r]
        return src

    def _class_routes(self, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], Route]:
        """Routes of flows standing for k m each, ``wanted`` as (route id, k): on one channel of each
        channel class a route loads, its load on the class (its weights there summed in its own
        order) times k m over the class's size (symmetry.py's class route), all routes at once."""
        eng0 = self.eng0
        rids = [r for r, _ in wanted]
        ids = np.asarray(rids, dtype=np.int64)
        lens, ch, w = RouteTable([eng0.route_ch[r] for r in rids], [eng0.route_w[r] for r in rids]).gather(
            np.arange(len(ids)))
        # each entry's place in uch: read from a table (a channel outside it: searched, as before)
        where = np.full(int(self.uch[-1]) + 2 if len(self.uch) else 1, -1, dtype=np.int64)
        where[self.uch] = np.arange(len(self.uch))
        at = where[np.minimum(ch, len(where) - 1)]
        if (at < 0).any():
            at = np.searchsorted(self.uch, ch)
        flows = np.asarray([k for _, k in wanted], dtype=np.int64) * self.m  # (an integer: k m exact)
        chans, weights, bounds = class_routes(lens, self.col_c[at], w, flows, self.n_cls, self.rep_ch, self.cls_size)
        # (the engine reads a class route's channels, weights and cap; its latency is the template's)
        return {key: Route((), chans[bounds[i]:bounds[i + 1]], weights[bounds[i]:bounds[i + 1]], 0.0,
                           eng0.routes[key[0]].cap_Bps) for i, key in enumerate(wanted)}

    def kept(self) -> tuple[np.ndarray, np.ndarray]:
        """The groups the folded run simulates (ascending), and each group's number among them
        (a group of a tree not run: its representative's in that place)."""
        keep = np.zeros(len(self.pattern), dtype=bool)
        keep[self.tree_of < 0] = True
        if self.systems is not None:
            keep &= self.systems.kept
        for t in set(self.rep_of.tolist()):
            keep[self.trees[t]] = True
        return np.flatnonzero(keep), (np.cumsum(keep) - 1)[self._rep_group()]

    def run(self, progress=None, cancel=None) -> SimResult:
        kept, new_id = self.kept()
        reduced = fold_reduced.reduced(self.sched, self.sched.columns(), kept, new_id)
        return self._expand(self.run_reduced(reduced, progress, cancel), new_id)

    def run_reduced(self, reduced: Schedule, progress=None, cancel=None) -> SimResult:
        """The engine's run of the folded schedule ``reduced`` (the kept groups, see ``kept``), as
        it ran: one row per kept group, the representatives' channels only."""
        reps = sorted(set(self.rep_of.tolist()))
        # the representatives' patterns travel on class routes (templates made here, not asked of the router)
        eng1 = Engine(self.router, self.scale)
        eng1.represents = {}  # each class route's flow stands for k m (the outside's for one)
        # one flow per class of slots in each role of a representative tree (sim/slot_merge.py)
        self.merge = SlotMerge(self.slot_cls, self.per_tree, self.role_start)
        flows = {(t, k): (self.tpls0[id(p)], *self.merge.role(t, k)[:2])
                 for t in reps for k, p in enumerate(self.role_patterns[t])}
        wanted = sorted({key for tpl, pos, count in flows.values()
                         for key in zip(tpl["route"][pos].tolist(), count.tolist())})
        cache = self._class_routes(wanted)
        for t in reps:
            for k, p in enumerate(self.role_patterns[t]):
                tpl, pos, count = flows[(t, k)]
                ids = []
                for key in zip(tpl["route"][pos].tolist(), count.tolist()):
                    route = cache[key]
                    ids.append(len(eng1.routes))
                    eng1.routes.append(route)
                    eng1.route_ch.append(route.channels)
                    eng1.route_w.append(route.weights)
                    eng1.route_cap.append(min(p.cap_Bps, route.cap_Bps))
                    eng1.represents[ids[-1]] = self.m * key[1]
                p._template = {"engine": eng1, "route": np.asarray(ids, dtype=np.int64),
                               "latency": tpl["latency"][pos]}
        systems = self.sched.meta.get("systems")
        if self.systems is not None:  # a representative system's flows stand for its class's
            eng1.represents.update(self.systems.represents(eng1, systems))
        try:
            sim = eng1.run(reduced, progress, cancel)
        finally:
            for pats in (*self.role_patterns, self.outside):
                for p in pats:
                    p._template = self.tpls0[id(p)]
            if self.systems is not None:  # (never run: routed if a report reads their transfers)
                for p in self.systems.folded_patterns(systems):
                    p._template = LazyTemplate(self.eng0, p)
        return sim

    def channel_bytes(self, sim: SimResult) -> np.ndarray:
        """Every channel's bytes in the full run, from the folded run ``sim``."""
        channel_bytes = sim.channel_bytes.copy()  # (the outside's channels as they ran)
        channel_bytes[self.uch] = sim.channel_bytes[self.rep_ch[self.col_c]]
        if self.systems is not None:
            self.systems.channel_bytes(channel_bytes)
        return channel_bytes

    def _expand(self, sim: SimResult, new_id: np.ndarray) -> SimResult:
        # every group reads its representative's row: the same place in the representative tree
        idx = new_id
        channel_bytes = self.channel_bytes(sim)
        delivered = sim.delivered  # (the engine counted each flow as the ones it stands for)
        return dataclasses.replace(
            sim, group_start=sim.group_start[idx], group_sent=sim.group_sent[idx], group_done=sim.group_done[idx],
            groups=self.sched.groups, flow_ends=_FoldedEnds(self, sim.flow_ends, idx),
            channel_bytes=channel_bytes, rate_patterns=_FoldedPatterns(self, sim.rate_patterns),
            delivered=delivered, routes=self.eng0.routes)


class _FoldedEnds:
    """Per-flow end times of every group, read from its representative's with each flow's slot
    mapped to the representative's slot of the same class (what a result's readers ask of a
    ``FlowEnds``: ``get`` and ``in``)."""

    def __init__(self, fold: Fold, ends, idx: np.ndarray, at=None):
        # ``at``: each group's number in the fold's schedule, where the result's is longer (its
        # virtual rows read as the built copy of the same place: sim/nvls_virtual.py)
        self.fold, self.ends, self.idx, self.at = fold, ends, idx, at
        # each pattern's role in its tree (its slots are the role's, in the tree's run of slots)
        self._role = {id(p): k for pats in fold.role_patterns for k, p in enumerate(pats)}

    def get(self, g: int, default=None):
        got = self.ends.get(int(self.idx[g]))
        if got is None:
            return default
        fold = self.fold
        if self.at is not None:
            g = int(self.at[g])
        t = int(fold.tree_of[g])
        if t < 0:
            return got
        r = int(fold.rep_of[t])
        k = self._role[id(fold.patterns[fold.pattern[g]])]
        inner = fold.merge.role(r, k)[2]  # (each slot of the representative's role: its class's flow)
        if r == t:
            return got[inner]
        a, b = int(fold.role_start[k]), int(fold.role_start[k + 1])
        mine = fold.slot_perm[t * fold.per_tree + a:t * fold.per_tree + b]
        return got[inner[mine - r * fold.per_tree - a]]

    def __contains__(self, g: int) -> bool:
        return int(self.idx[g]) in self.ends


class _FoldedPatterns:
    """The run's rate patterns with every representative channel's load given to its whole class."""

    def __init__(self, fold: Fold, patterns):
        self.patterns = patterns
        self.systems = fold.systems
        rep_cls = np.full(fold.router.n_channels, -1, dtype=np.int64)  # -1: outside the trees (as it ran)
        rep_cls[fold.uch] = -2  # a class member that is not its representative: never loaded in the run
        rep_cls[fold.rep_ch] = np.arange(fold.n_cls)
        self.rep_cls = rep_cls
        order = np.argsort(fold.col_c, kind="stable")
        self.members = fold.uch[order]
        self.start = np.concatenate([[0], np.cumsum(fold.cls_size)[:-1]])
        self.size = fold.cls_size
        self._last: tuple[int, RatePattern] | None = None

    def __len__(self) -> int:
        return len(self.patterns)

    def __getitem__(self, pid: int) -> RatePattern:
        if pid < 0:
            pid += len(self)
        if self._last is not None and self._last[0] == pid:
            return self._last[1]
        rp = self.patterns[pid]
        k = self.rep_cls[rp.channels]
        if (k == -2).any():
            raise ValueError("a folded run loaded a channel of a class other than its representative")
        apart = k == -1
        k = k[~apart]
        sizes = self.size[k]
        at = np.repeat(self.start[k] - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(int(sizes.sum()))
        chans, loads = rp.channels[apart], rp.load_Bps[apart]
        if self.systems is not None:  # (the systems' channels: each folded system's as its representative's)
            chans, loads = self.systems.spread(chans, loads)
        chans = np.concatenate([self.members[at], chans])
        loads = np.concatenate([np.repeat(rp.load_Bps[~apart], sizes), loads])
        order = np.argsort(chans, kind="stable")
        out = RatePattern(chans[order], loads[order])
        self._last = (pid, out)
        return out

    def __iter__(self):
        return (self[i] for i in range(len(self)))

