"""Flow-level, discrete-event network engine with max-min fair sharing.

A schedule is a dependency graph of *groups*. A transfer group moves ``bytes_each`` from every source
to its destination in a shared :class:`Pattern` (e.g. all P sends of one ring step); a compute group
just takes time. A group starts when its dependencies are met: ``deps_done`` (the data has arrived)
and ``deps_sent`` (the sender has pushed its bytes out, so the next chunk may follow on the same
connection). A flow transmits at its max-min fair rate, recomputed whenever the set of flows
changes, and arrives its path latency after its last byte left (so pipelined chunks overlap latency).

Speed comes from structure rather than brute force: the fair rates depend only on the multiset of
active routes, so they are cached per such *rate pattern*; repeated ring steps cost one look-up.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable

import numpy as np

from ..cancel import Cancelled, as_check
from . import accounting, limits
from ..analysis.ring_segments import HopRoutes, SpreadHop
from ..analysis.routing import Route, Router
from .active_flows import ActiveFlows, Counts, Started
from .fanout import MANY, release as release_dependents, release_one_by_one
from .kept_arrays import KeptArrays, KeptLevels
from .periods import Dependents, FlowEnds, _Periods
from . import chain_stages, part_components
from . import setup_steps
from .part_components import NoStepBack, PartsFound, PartShapes, solve_misses
from .single_routes import SingleRoutes
from .split_solve import Parts
from .steady import Shortcut, _Now
from .timeline import Timeline
from .schedule import Group, Pattern, Progress, Schedule, SimResult  # noqa: F401 (re-exported: the engine's API)
from .rates import (RatePattern, RouteTable, _ComponentPatterns, _components, _maxmin, _Shapes,  # noqa: F401 (re-exported)
                    shapes_of)


_MASK64 = (1 << 64) - 1

# Raised when a run is cancelled (kept under this name for callers of the engine).
SimulationCancelled = Cancelled


class _PerGroup:
    """``templates[g]``: group g's template (None for a compute group), read from one per pattern."""

    __slots__ = ("tpl_id", "tpls")

    def __init__(self, tpl_id: np.ndarray, tpls: list[dict]):
        self.tpl_id = tpl_id  # read a group at a time: most of a long run's groups are skipped
        self.tpls = tpls + [None]  # index -1: none

    def __getitem__(self, g: int):
        return self.tpls[int(self.tpl_id[g])]


class Engine:
    """Runs schedules over a router's channels. ``capacity_scale`` is the share of each channel's
    bytes that are data (a protocol's efficiency: LL moves 8 data bytes in 16): one number for every
    channel, or one per channel (NVLS's efficiency holds on the NVLink channels only)."""

    def __init__(self, router: Router, capacity_scale: float | np.ndarray = 1.0, decompose: bool = True,
                 templates: bool = True, splice=None):
        scale = np.asarray(capacity_scale, dtype=float)
        if scale.ndim and scale.shape != router.capacity.shape:
            raise ValueError(f"capacity_scale has {scale.size} channels, the router {router.n_channels}")
        if not ((scale > 0) & (scale <= 1)).all():
            raise ValueError("capacity_scale must be in (0, 1]")
        self.router = router
        self.capacity_scale = capacity_scale
        # flows each flow run here stands for (sim/tree_fold.py), counted so in the bytes it delivers
        # and named in a refusal (the budget counts the flows re-timed here: limits.MAX_FLOW_EVENTS):
        # one number for every route, or {route id: flows} (other routes: one)
        self.represents: int | dict[int, int] = 1
        # Solve and cache the fair rates per independent component of the network (False: the whole
        # network as one, the reference the component-wise solve is tested against).
        self.decompose = decompose
        self.capacity = router.capacity * capacity_scale
        self._route_ids: dict[tuple, list[int]] = {}
        self._by_object: dict[tuple[int, float], tuple[int, Route]] = {}  # (id(route), cap) -> id, and the route kept alive
        # ring hops read from templates of systems wired alike (False: every hop asked of the router,
        # the reference the templates are tested against); never past a router that answers some
        # pairs its own way (symmetry's class router)
        self.templates = templates and isinstance(router, Router)
        self.routes: list[Route] = []
        self.route_ch: list[np.ndarray] = []
        self.route_w: list[np.ndarray] = []
        self.route_cap: list[float] = []
        self.splice = splice  # handed to the steady-state shortcut (sim/spliced_run.py)

    def _route_id(self, route: Route, cap_Bps: float, ends: tuple[str, str] | None = None) -> int:
        """The id of ``route`` limited to ``cap_Bps`` (its cap is kept beside it: no capped copy of
        the route is made, 75,000 of them on a 16,384-GPU ring). Routes with the same paths and cap
        share an id; they are looked for among those with the same two ends (``ends``, given for a
        ``LazyRoute`` whose paths are not built unless another route has its ends)."""
        cap = min(cap_Bps, route.cap_Bps)
        if ends is None:
            ends = (route.paths[0][0], route.paths[0][-1])
        key = (ends, cap)
        alike = self._route_ids.get(key)
        if alike is not None:
            for rid in alike:
                if self.routes[rid] is route or self.routes[rid].paths == route.paths:
                    return rid
        rid = len(self.routes)
        self._route_ids.setdefault(key, []).append(rid)
        self.routes.append(route)
        self.route_ch.append(route.channels)
        self.route_w.append(route.weights)
        self.route_cap.append(cap)
        return rid

    def template(self, pattern: Pattern, is_cancelled=None, spreads: list | None = None) -> dict:
        """One flow per pair of a pattern: its route id and latency. With ``spreads``, a hop spread
        over the spines not asked before is not routed: its route id is -1 and (its pair, its
        ``SpreadHop``: the parts the router would join) goes to ``spreads`` (sim/tree_parts.py);
        the template is then not kept."""
        if spreads is None and pattern._template is not None and pattern._template["engine"] is self:
            return pattern._template
        route, latency = [], []
        by_object = self._by_object  # the router hands out one Route object per pair: its id is found once
        # hops read from templates of systems wired alike (LazyRoute), one object per request
        hops = HopRoutes.of(self.router) if self.templates and pattern.paths is None else None
        cap_Bps = pattern.cap_Bps
        # (a hop HopRoutes already answered read from its table: what ``HopRoutes.route`` returns)
        known = hops._known if hops is not None and pattern.via is None else None
        for k, (src, dst) in enumerate(pattern.pairs):
            if is_cancelled is not None and k % 64 == 63 and is_cancelled():
                raise SimulationCancelled()
            r = known.get((src, dst), hops) if known is not None else hops
            if r is hops:
                r = (hops.route(src, dst, pattern.via[k] if pattern.via is not None else None, spreads is not None)
                     if hops is not None else None)
            if r is None:
                if pattern.paths is not None and pattern.paths[k] is not None:
                    r = self.router.direct(pattern.paths[k])
                elif pattern.via is not None and pattern.via[k] is not None:
                    r = self.router.via(pattern.via[k])
                else:
                    r = self.router.routes(src, dst)
            elif spreads is not None and type(r) is SpreadHop:
                spreads.append((k, r))
                route.append(-1)
                latency.append(hops.via_latency(r.way) if pattern.latency_s is None else pattern.latency_s)
                continue
            hit = by_object.get((id(r), cap_Bps))
            if hit is None:
                hit = by_object[(id(r), cap_Bps)] = (self._route_id(r, cap_Bps, getattr(r, "ends", None)), r)
            route.append(hit[0])
            latency.append(r.latency_s if pattern.latency_s is None else pattern.latency_s)
        tpl = {"engine": self, "route": np.asarray(route, dtype=np.int64), "latency": np.asarray(latency, dtype=float)}
        if spreads is None:
            pattern._template = tpl
        return tpl

    def run(self, schedule: Schedule, progress: Callable[[Progress], None] | None = None,
            cancel=None, progress_interval_s: float = 0.05, periods: bool = True) -> SimResult:
        """Run a schedule. ``periods``: skip the repeats of a steady state (exact; False runs every
        piece, the reference that shortcut is tested against). Run again from the start with the
        solver's parts as components once they pay (sim/part_components.py)."""
        wall0 = time.perf_counter()
        if progress is not None:
            progress = NoStepBack(progress)
        if periods:  # chain stages that never contend, without events (sim/chain_stages.py)
            quick = chain_stages.run(self, schedule, wall0, as_check(cancel))
            if quick is not None:
                setup_steps.engine_begins()   # (to a run's callback, once: sim/setup_steps.py)
                if progress is not None:
                    progress(Progress(1.0, quick.time_s, []))
                return quick
        try:
            return self._run(schedule, progress, cancel, progress_interval_s, periods, wall0, None)
        except PartsFound as found:
            parted = found.table
        return self._run(schedule, progress, cancel, progress_interval_s, periods, wall0, parted)

    def _run(self, schedule, progress, cancel, progress_interval_s, periods, wall0, parted) -> SimResult:
        groups = schedule.groups
        cols = schedule.columns()   # (a schedule over the group limit is refused here, before the engine begins)
        setup_steps.engine_begins()   # (to a run's callback, once: sim/setup_steps.py)
        n = cols.n
        is_cancelled = as_check(cancel)
        # one template per pattern (every piece of a lane shares its pattern): -1 for compute groups
        tpls: list[dict] = []
        tpl_of_pattern = np.full(len(cols.patterns) + 1, -1, dtype=np.int64)
        for k, pattern in enumerate(cols.patterns):
            if pattern.pairs:
                if is_cancelled is not None and pattern._template is None and is_cancelled():
                    raise SimulationCancelled()
                tpl_of_pattern[k] = len(tpls)
                tpls.append(self.template(pattern, is_cancelled))
        tpl_id = tpl_of_pattern[cols.pattern]
        templates = _PerGroup(tpl_id, tpls)
        tpls_of = templates.tpls  # (index -1: a compute group's, None)
        # read a group at a time as it starts (most of a long run's groups are skipped, never read)
        bytes_each, duration, post_delay = cols.bytes_each, cols.duration_s, cols.post_delay_s

        def name_of(g: int) -> str:
            return groups[g].name

        on_done = Dependents(cols.done_ptr, cols.done_flat, name_of, cols.period)
        on_sent = Dependents(cols.sent_ptr, cols.sent_flat, name_of, cols.period)
        deps_left = on_done.waits + on_sent.waits

        start = np.full(n, np.nan)
        sent = np.full(n, np.nan)
        done = np.full(n, np.nan)
        outstanding = np.zeros(n, dtype=np.int64)
        arrival = np.zeros(n)
        partial = np.zeros(n, dtype=bool)
        flow_ends = FlowEnds() if self.splice is None else self.splice.flow_ends()
        open_ends: dict[int, np.ndarray] = {}  # per-flow end times of active groups, while they run
        heap: list[tuple[float, int, int]] = []
        seq = 0

        flows = ActiveFlows()  # (sim/active_flows.py: closed up and appended to in place)
        a_int, a_flt = flows.views()
        a_route, a_group, a_pos = a_int
        a_rem, a_lat = a_flt
        pend_tid, pend_group = [], []  # (the templates and groups started: sim/active_flows.py)
        starting = Started(tpls, bytes_each)

        mult = None  # each route's flows per flow run (None: ``represents`` for all)
        if isinstance(self.represents, dict):
            mult = np.ones(len(self.routes))
            mult[list(self.represents)] = list(self.represents.values())
        flows_of = np.asarray([len(t["route"]) if mult is None else mult[t["route"]].sum() for t in tpls] + [0],
                              dtype=float)
        total_bytes = float((cols.bytes_each * flows_of[tpl_id]).sum()) if progress is not None else 0.0  # (read there only)
        delivered_bytes = 0.0

        def schedule_done(g: int, when: float) -> None:
            nonlocal seq
            heapq.heappush(heap, (when, seq, g))
            seq += 1

        steady = None  # the steady-state shortcut (below); it logs what starts, sends and ends

        def activate(g: int, t: float) -> None:
            start[g] = t
            tid = tpl_id.item(g)
            tpl = tpls_of[tid]
            logs = steady.logs if steady is not None else None
            if logs is not None:
                logs[0].append(g)
                if tpl is None:
                    logs[1].append(g)
            if tpl is None:
                dur = float(duration[g])
                sent[g] = t + dur
                schedule_done(g, t + dur + float(post_delay[g]))
                if on_sent.any_of(g):
                    # a compute group "sends" when its work ends: at once, or by an event then
                    if dur == 0:
                        release(on_sent[g])
                    else:
                        schedule_done(-g - 1, t + dur)
                return
            outstanding[g] = len(tpl["route"])
            arrival[g] = t
            pend_tid.append(tid)
            pend_group.append(g)

        ready: list[int] = []
        frontier: dict[int, None] = {}  # groups some but not all of whose dependencies are met

        def release(dependents: list[int]) -> None:
            # one by one, or a barrier's fan-out counted down at once (sim/fanout.py; most release one
            # or two: the loop called straight, a call less per group)
            if len(dependents) > MANY:
                release_dependents(dependents, deps_left, ready, frontier)
            else:
                release_one_by_one(dependents, deps_left, ready, frontier)

        ready.extend(np.flatnonzero(deps_left == 0).tolist())

        # Fair rates are solved per *component*: channels tied together by the routes this schedule
        # uses (each system's NVLink domain is usually one, each rail of the network another).
        # A component's rates depend only on its own active routes, so an event re-solves only the
        # components whose flows changed. Components wired alike (systems of one kind, the rails of
        # a rail-optimized fabric) form a *class*: their routes are listed in the same order, cross
        # channels of the same capacities in the same places, so one solution in local terms (the
        # i-th route, the j-th channel) serves every member. The cache key is the class and the
        # multiset of active local routes, kept as two random 64-bit sums (mod 2**64, as numpy's
        # int64 sums wrap) updated as flows come and go, so finding cached rates needs no sort.
        route_rate = np.zeros(len(self.routes))
        table, never_binds = part_components.table_again(parted, self.route_ch, self.route_w)
        # channels no rates can overfill (a fat tree's spine planes behind the NICs) out of the filling,
        # and routes that only such channels tie together solved part by part (sim/split_solve.py)
        table.parts = Parts(table, self.capacity, self.router.channel_ends, self.decompose,
                            self.router.channel_devices) if never_binds is None else None
        route_cap = np.asarray(self.route_cap, dtype=float)
        if np.isinf(route_cap).all():
            route_cap = None
        used = np.unique(np.concatenate([tpl["route"] for tpl in tpls])) if tpls else np.zeros(0, np.int64)
        if never_binds is None:
            shape = shapes_of(self.router, table, used, self.capacity, route_cap, self.router.n_channels, self.decompose)
        else:
            shape = PartShapes(table, used, self.capacity, route_cap, self.router.n_channels, never_binds)
        n_comp = shape.n_comp
        route_comp, by_comp, comp_bounds = shape.route_comp, shape.by_comp, shape.bounds
        h1, h2 = shape.h1, shape.h2
        # flow counts and hash sums per component, flows per route, components touched
        # (sim/active_flows.py: a set of routes met again adds its summed changes)
        counts = Counts(route_comp, h1, h2, n_comp, len(self.routes))
        route_count, comp_dirty = counts.route_count, counts.dirty
        comp_k1, comp_k2, comp_n = counts.acc
        # each component's key when it was last brought up to date: most components an event touches
        # (a ring step ending and the next one starting on the same routes) come back to it
        # (Python lists where an event reads or writes one component at a time: a numpy scalar access
        # costs several times a list's, and an event of a tree over 124 systems touches 30 components)
        seen: list[tuple[int, int, int]] = [(0, 0, 0)] * n_comp
        comp_pid = np.full(n_comp, -1, dtype=np.int64)
        pid_of: list[int] = [-1] * n_comp  # comp_pid, read one at a time
        class_of: list[int] = shape.comp_class.tolist()
        bounds_of: list[int] = comp_bounds.tolist()
        cp_single: list[tuple[int, float] | None] = []  # a class pattern of one route: its local index and rate
        comp_cache: dict[tuple[int, int, int, int], int] = {}
        kept = KeptArrays()  # (equal arrays of those kept once, rates and loads as levels: sim/kept_arrays.py)
        cp_lroutes: list[np.ndarray] = []  # a class pattern: active local routes, their rates,
        cp_rates = KeptLevels(kept)        # the local channels they load and the loads
        cp_lch: list[np.ndarray] = []
        cp_load = KeptLevels(kept)
        cp_hash: list[tuple[int, int]] = []
        cp_class: list[int] = []            # the class each class pattern serves
        held = [0]  # bytes the class patterns above keep (every network state the run went through)
        # the whole network's state: which pattern each busy component is in (again two hash sums)
        hasher = random.Random(0x5eed)
        comp_mul = [hasher.getrandbits(63) | 1 for _ in range(n_comp)]
        g_key = [0, 0, 0]
        global_cache: dict[tuple[int, int, int], int] = {}
        global_parts: list[np.ndarray] = []
        pattern_time: list[float] = []
        rate_patterns = _ComponentPatterns(global_parts, shape.comp_ch, cp_lch, cp_load, never_binds is not None)
        # (the run keeps every network state it went through: local indices and pattern ids as int32)
        route_local32 = shape.route_local.astype(np.int32)
        # one-route components with one flow or none, moved all at once (sim/single_routes.py)
        singles = SingleRoutes(comp_bounds, by_comp, shape.comp_class, comp_mul)
        single_of: list[bool] = singles.single.tolist()

        def set_pattern(c: int, new: int, routes: np.ndarray | None = None) -> None:
            """Put component c in class pattern ``new`` (-1: idle). ``routes``: its active routes, when
            the caller has them at hand (else they are found from the pattern's local routes)."""
            old = pid_of[c]
            if old == new:
                return
            m = comp_mul[c]
            if old >= 0:
                h = cp_hash[old]
                g_key[0] -= h[0] * m
                g_key[1] -= h[1] * m
                g_key[2] -= 1
            if new >= 0:
                h = cp_hash[new]
                g_key[0] += h[0] * m
                g_key[1] += h[1] * m
                g_key[2] += 1
                one = cp_single[new]
                if routes is None and one is not None:
                    route_rate[by_comp[bounds_of[c] + one[0]]] = one[1]
                else:
                    if routes is None:
                        routes = by_comp[bounds_of[c] + cp_lroutes[new]]
                    route_rate[routes] = cp_rates[new]
            comp_pid[c] = new
            pid_of[c] = new

        def resolve() -> int:
            """Bring every changed component to the pattern of its active routes; the global pattern id.
            (Called on every event that adds or ends flows: it works on Python scalars where it can,
            a small numpy call costing more than the arithmetic it does.)"""
            changed = comp_dirty.nonzero()[0]
            comp_dirty[changed] = False
            if singles.any:
                changed = singles.settle(changed, comp_n, comp_pid, route_rate, g_key)
            misses: dict[tuple[int, int, int, int], list[int]] = {}
            ones = []  # one-route components and their flows: their class's pattern of that many, for ``singles``
            for c, a, b, nn in (zip(changed.tolist(), comp_k1[changed].tolist(), comp_k2[changed].tolist(),
                                    comp_n[changed].tolist()) if len(changed) else ()):
                now = (a, b, nn)
                if single_of[c]:  # (``singles`` moves them without ``pid_of`` or ``seen``)
                    pid_of[c] = int(comp_pid[c])
                    ones.append((c, nn))
                elif seen[c] == now:
                    continue  # back to the key it had when last brought up to date
                seen[c] = now
                if nn == 0:
                    set_pattern(c, -1)
                    continue
                key = (class_of[c], a, b, nn)
                hit = comp_cache.get(key)
                if hit is None:
                    misses.setdefault(key, []).append(c)
                else:
                    set_pattern(c, hit)
            if misses:
                # one member of each class state is solved; all members of it take the answer
                reps = sorted((cs[0], key) for key, cs in misses.items())
                parts = []
                for c, _ in reps:
                    r = by_comp[bounds_of[c]:bounds_of[c + 1]]
                    parts.append(r[route_count[r] > 0])
                split = solve_misses(reps, parts, route_count, table, self.capacity, route_cap, shape, _maxmin)
                for (c, key), (r, rates_c, ch_c, load_c) in zip(reps, split):
                    cpid = len(cp_lroutes)
                    cp_lroutes.append(kept.keep(route_local32[r]))
                    cp_rates.append(rates_c)
                    cp_single.append((int(cp_lroutes[-1][0]), float(rates_c[0])) if len(rates_c) == 1 else None)
                    cp_lch.append(kept.keep(shape.local(c, ch_c)))
                    cp_load.append(load_c)
                    held[0] = kept.nbytes
                    cp_hash.append((hasher.getrandbits(62), hasher.getrandbits(62)))
                    cp_class.append(key[0])
                    comp_cache[key] = cpid
                    for member in misses[key]:
                        set_pattern(member, cpid, r if member == c else None)
            for c, nn in ones:
                pid = pid_of[c]
                if pid >= 0:
                    singles.learn(c, nn, pid, cp_hash[pid], cp_single[pid][1])
            gkey = (g_key[0] & _MASK64, g_key[1] & _MASK64, g_key[2])
            gpid = global_cache.get(gkey)
            if gpid is None:
                gpid = len(global_parts)
                busy = (comp_pid >= 0).nonzero()[0]
                global_parts.append(np.array([busy, comp_pid[busy]], dtype=np.int32))
                pattern_time.append(0.0)
                global_cache[gkey] = gpid
            return gpid
        segments = Timeline()  # (start, end, network state): a list, with a steady state's repeats kept as one block
        delivered = Timeline([(0.0, 0.0)])  # (time, bytes delivered by then)
        a_rate = np.zeros(0)
        total_rate = 0.0
        current_pid = -1
        dirty = True
        t = 0.0
        events = 0
        flow_events = 0  # active flows summed over events: the work this run does (a folded flow counts once)
        last_progress = wall0

        # ---- steady states (sim/steady.py): find a repeat of the whole state under the successor map, skip the repeats
        # (not with compute groups that take time and have groups waiting on their send: those
        # put a second kind of event in the queue that the state comparison does not follow; read at the compute groups c)
        timed_sends = bool(((cols.duration_s[(c := np.flatnonzero(tpl_id < 0))] > 0) & (on_sent.ptr[c + 1] > on_sent.ptr[c])).any())
        per = _Periods(cols, tpl_id, tpls, on_done, on_sent) \
            if periods and n and not timed_sends else None
        if per is not None and not per.enabled:
            per = None
        steady = Shortcut(per, cols.bytes_each, deps_left, frontier, start, sent, done, arrival, partial, outstanding,
                          open_ends, flow_ends, segments, delivered, pattern_time, self.splice) if per is not None else None
        state = _Now(a_group, a_pos, a_rem, heap, t, delivered_bytes)

        while True:
            while ready:
                g = ready.pop()
                activate(g, t)
            if pend_tid:
                tids = tuple(pend_tid)
                # Parallel arrays packed in two blocks, so adding and dropping flows is two copies (of a
                # few: sim/active_flows.py)
                counts.change(starting.into(flows, tids, pend_group), 1, tids)
                a_int, a_flt = flows.views()
                a_route, a_group, a_pos = a_int
                a_rem, a_lat = a_flt
                pend_tid.clear()
                pend_group.clear()
                dirty = True
            if steady is not None:
                state.a_group, state.a_pos, state.a_rem, state.t = a_group, a_pos, a_rem, t
                state.delivered_bytes = delivered_bytes
                steady.watch(state)
                t, delivered_bytes = state.t, state.delivered_bytes
            n_active = len(a_route)
            if n_active == 0 and not heap:
                break
            events += 1
            flow_events += n_active
            if flow_events > limits.MAX_FLOW_EVENTS or held[0] > limits.MAX_STATE_BYTES:
                over = (f"has re-timed more than {limits.MAX_FLOW_EVENTS:,} flows" if flow_events > limits.MAX_FLOW_EVENTS
                        else f"keeps more than {limits.MAX_STATE_BYTES / 1e9:g} GB of network states")
                flows_now = n_active * self.represents if mult is None else int(mult[a_route].sum())
                folded = f" ({n_active:,} re-timed, each for alike ones)" if flows_now != n_active else ""
                raise limits.TooLarge(
                    f"{schedule.description or 'this schedule'} was stopped after {events:,} events at "
                    f"{t * 1e3:.3g} ms of simulated time: it moves about {flows_now:,} flows at a time{folded} and "
                    f"{over}, the engine's budget for one run; its pieces do not settle into a repeating "
                    f"state at this scale. Use fewer GPUs (or micro-batches), or for a collective the ring "
                    f"algorithm, whose steady state is skipped at any scale")
            if is_cancelled is not None and is_cancelled():
                raise SimulationCancelled()

            if dirty and n_active:
                current_pid = resolve()
                a_rate = route_rate[a_route]
                # (no BLAS: its threads; the ufunc's own reduce, which ndarray.sum calls after Python layers)
                total_rate = float(np.add.reduce(a_rate) if mult is None else np.add.reduce(a_rate * mult[a_route]))
                dirty = False

            if n_active:
                # Remaining bytes never go below zero (float rounding once left -2e-9 B, a negative
                # time to finish, and a finish test that was never true: a livelock).
                np.maximum(a_rem, 0.0, out=a_rem)
                ttf = a_rem / a_rate
                dt_tx = float(np.minimum.reduce(ttf))  # (ndarray.min's own reduce, without its Python layers)
            else:
                dt_tx = np.inf
            t_heap = heap[0][0] if heap else np.inf
            tx_event = t + dt_tx <= t_heap
            t_next = t + dt_tx if tx_event else t_heap
            # On a transmission event the flows advance by exactly dt_tx, not by (t + dt_tx) - t,
            # which rounds and once drove the first finisher's bytes below zero (the livelock).
            dt = dt_tx if tx_event else t_next - t
            if n_active and dt > 0:
                a_rem -= a_rate * dt
                delivered_bytes += total_rate * dt
                pattern_time[current_pid] += dt
                segments.stretch(t, t_next, current_pid)
                delivered.append((t_next, delivered_bytes))
            t = t_next

            if tx_event and n_active:
                finished = ttf <= dt_tx * (1 + 1e-9) + 1e-15
                idx = finished.nonzero()[0]  # (found once: a scan of the mask costs more than its use)
                completed = accounting.finish_flows(idx, a_group, a_pos, a_lat, t, outstanding, arrival,
                                                    partial, flow_ends, open_ends, templates, sent, post_delay,
                                                    schedule_done, release, on_sent)
                if steady is not None and steady.logs is not None:
                    steady.logs[1].extend(completed)
                counts.change(a_route[idx], -1)
                a_int, a_flt = flows.drop(finished, idx)
                a_route, a_group, a_pos = a_int
                a_rem, a_lat = a_flt
                dirty = True

            while heap and heap[0][0] <= t * (1 + 1e-12) + 1e-18:
                _, _, g = heapq.heappop(heap)
                if g < 0:  # a compute group's end of work releases what waits for its send
                    release(on_sent[-g - 1])
                    continue
                done[g] = t
                if steady is not None and steady.logs is not None:
                    steady.logs[2].append(g)
                release(on_done[g])

            if progress is not None:
                now = time.perf_counter()
                if now - last_progress >= progress_interval_s:
                    last_progress = now
                    progress(self._progress(delivered_bytes, total_bytes, t, rate_patterns,
                                            current_pid if len(a_route) else -1))

        if np.isnan(done).any():
            stuck = [name_of(int(i)) for i in np.nonzero(np.isnan(done))[0][:5]]
            raise ValueError(f"the schedule never runs some groups (a dependency cycle?): {', '.join(stuck)}")
        channel_bytes = accounting.channel_bytes(self.router.n_channels, global_parts, pattern_time, n_comp,
                                                 shape.comp_ch, cp_lch, cp_load, shape.comp_class, cp_class)
        makespan = float(done.max()) if n else 0.0
        if progress is not None:
            progress(Progress(1.0, makespan, []))
        return SimResult(makespan, start, sent, done, groups, flow_ends, channel_bytes, self.capacity,
                         self.router.channel_ends, self.router.channel_links, segments, rate_patterns, delivered,
                         self.routes, events, time.perf_counter() - wall0,
                         per.skipped_periods if per is not None else 0, flow_events, held[0])

    def _progress(self, delivered: float, total: float, t: float, patterns: list[RatePattern], pid: int) -> Progress:
        util = []
        if pid >= 0:
            rp = patterns[pid]
            frac = rp.load_Bps / self.capacity[rp.channels]
            for i in np.argsort(-frac)[:8]:
                util.append((self.router.channel_links[rp.channels[i]], float(frac[i])))
        return Progress(min(delivered / total, 1.0) if total > 0 else 1.0, t, util)
