"""Fair rates of a large part re-solved only around the routes an event changed.

Why. On a tree all-reduce over 124 DGX-1s (issue #13's 992-GPU case) the engine re-solves one part
of about 1,000 routes some 4,000 times (sim/part_components.py), each time from scratch, although
an event changes the flows of one or two routes: between one solve of the part and the next, a
median of 2 routes (1.8% of them) get another rate.

How. The last answer of each large part is kept: every route's rate, every channel class's load
(sim/maxmin.py's classes: a fat tree's 16 spine planes count once) and the class each route is
*bottlenecked* at. A new solve starts from it: the routes whose flow counts changed, and those
bottlenecked at a class one of them (or a route that left) loads, form the *region*; the rest keep
their rates. The region is filled progressively on what the others leave of each class it
crosses. Then the whole answer is checked against the definition of max-min fairness, and the
region grows by what the check finds until it passes (or the part is solved whole, as before).

Why it is exact. Rates are max-min fair if and only if they are feasible and every route has a
bottleneck: its flow cap, or a class it loads that is full and on which no route runs faster
(Bertsekas and Gallager, Data Networks, max-min flow control; the argument holds for any positive
weights: a route can only gain at a full class by taking from a route that is not faster). The check asks exactly
that, to 1e-11 relative, of every route in the region and of every other route that loads a class
whose load changed (a class a route that left loaded is full or not by its load without that
route); the others' bottlenecks did not change. Classes that can never bind
(sim/dominated.py) are left out of the fill and the check, as the joint solve leaves them out: the
fair rates without them never load them past their capacity. The fair rates are unique, so an
answer that passes is the joint solve's, up to rounding: the joint filling's own ties are to 1e-12,
and the region's classes are filled from what the other routes leave; the loads of classes that
never bind are moved by what each route that moved adds or takes (the tests bound all three; over
the 992-GPU tree's 6,400 solves of the part, rates and loads came within 1e-14 of the whole solve's).
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from .maxmin import _channel_classes, maxmin

# a part is re-solved around its changes from this many active routes on (smaller ones: whole)
MIN_ROUTES = 128
# slack of the fairness check (full class, fastest route on it, route at its cap), relative
TOL = 1e-11
# the region's growth gives up (the part is solved whole) after this many checks, or at this share
# of the part's active routes
MAX_CHECKS, MAX_SHARE = 8, 0.25
# the parts stop being re-solved around their changes when, after TRIAL tries, more than this
# share of them ended in a whole solve
TRIAL, GIVE_UP_SHARE = 32, 0.5

_TIE = 1 + 1e-12  # the filling's tie of levels (sim/maxmin.py's)


class RepairSolver:
    """The engine's solves of a run's large parts (sim/part_components.py), each re-solved around
    what changed since its last answer (see the module's note). ``solve(c, routes, counts)``: the
    fair rates of component c's active ``routes`` (ascending) with ``counts`` flows each, as
    ``maxmin`` gives them: (rates, channels ascending, their loads)."""

    def __init__(self, table, capacity: np.ndarray, route_cap: np.ndarray | None, by_comp: np.ndarray,
                 bounds: np.ndarray):
        self.table, self.capacity, self.route_cap = table, capacity, route_cap
        self.by_comp, self.bounds = by_comp, bounds
        self.parts: dict[int, _Part | None] = {}
        self.repaired = self.whole = 0

    def solve(self, c: int, routes: np.ndarray, counts: np.ndarray):
        part = self.parts.get(c, False)
        if part is False and len(routes) >= MIN_ROUTES:
            part = self.parts[c] = _Part.of(self, c)
        if not part or part.off:
            return maxmin(routes, counts, self.table, self.capacity, self.route_cap)
        got = part.repair(routes, counts) if part.has_base else None
        if got is not None:
            self.repaired += 1
            part.tries += 1
            return got
        if part.has_base:
            part.tries += 1
            part.wholes += 1
            if part.tries >= TRIAL and part.wholes > GIVE_UP_SHARE * part.tries:
                part.off = True
        self.whole += 1
        out = maxmin(routes, counts, self.table, self.capacity, self.route_cap)
        if not part.off:
            part.rebase(routes, counts, out[0])
        return out


class _Part:
    """One component's routes in class terms and its last answer. Read and written a route or a
    class at a time, as Python lists (a numpy scalar access costs several times a list's), with
    numpy copies of what an answer reads whole."""

    @classmethod
    def of(cls, owner: RepairSolver, c: int) -> "_Part | None":
        cc = _channel_classes(owner.table, owner.capacity)
        if not cc.usable or not cc.merges:  # (maxmin's own branches: the class table is what it solves)
            return None
        ct, ccap = cc.class_table()
        mine = owner.by_comp[owner.bounds[c]:owner.bounds[c + 1]]
        if not len(mine) or not ct.lens[mine].all():
            return None
        self = cls.__new__(cls)
        self.cc, self.ct, self.ccap_arr = cc, ct, ccap
        self.ccap = ccap.tolist()
        self.route_cap = owner.route_cap
        self.caps = owner.route_cap.tolist() if owner.route_cap is not None else None
        nb = ct.never_binds if ct.never_binds is not None else np.zeros(len(ccap), dtype=bool)
        self.nb = nb
        # each route's entries, a class's weight summed per route: binding ones, and those that never bind
        lens, ch, w = ct.gather(mine)
        route_of = np.repeat(mine, lens)
        key, inv = np.unique(route_of * len(ccap) + ch, return_inverse=True)
        w_sum = np.bincount(inv.ravel(), weights=w)
        e_route, e_cls = np.divmod(key, len(ccap))
        self.pairs = (e_route, e_cls)  # every (route, class) it loads, once
        self.bent: dict[int, list[tuple[int, float]]] = {int(r): [] for r in mine.tolist()}
        self.nent: dict[int, list[tuple[int, float]]] = {int(r): [] for r in mine.tolist()}
        self.on: dict[int, list[tuple[int, float]]] = {}     # a binding class: (route, weight) of the routes loading it
        self.on_nb: dict[int, list[tuple[int, float]]] = {}  # a class that never binds: likewise
        for r, k, x, never in zip(e_route.tolist(), e_cls.tolist(), w_sum.tolist(), nb[e_cls].tolist()):
            if never:
                self.nent[r].append((k, x))
                self.on_nb.setdefault(k, []).append((r, x))
            else:
                self.bent[r].append((k, x))
                self.on.setdefault(k, []).append((r, x))
        n_routes, n_cls = len(ct.lens), len(ccap)
        self.rate = np.zeros(n_routes)   # the last answer's rates, counts and class loads (and as lists)
        self.count = np.zeros(n_routes)
        self.now = np.zeros(n_routes, dtype=bool)  # (kept all False between uses)
        self.load = np.zeros(n_cls)
        self.rl, self.cl, self.ll = [0.0] * n_routes, [0.0] * n_routes, [0.0] * n_cls
        self.in_use = np.zeros(n_cls, dtype=np.int64)  # active routes on each class (and as a list)
        self.iu = [0] * n_cls
        # the channels of the classes in use, ascending, and each one's class, while ``in_use`` keeps
        # its zeros (most answers; the same array each time: the engine's look-ups by it then hit);
        # the classes whose use the list moved since the array was last brought up to date
        self._layout: tuple[np.ndarray, np.ndarray] | None = None
        self._unsynced: set[int] = set()
        self.bott: dict[int, int] = {}  # an active route's bottleneck: a class, or -1 (its cap)
        # (route, flows): its (binding class, weight times flows) entries, as the filling reads them
        self.loads_of: dict[tuple[int, float], list[tuple[int, float]]] = {}
        # each binding class: its routes' places in ``on``, and its active routes (those with flows in
        # ``cl``) as ``on`` lists them, with their places: what every scan of a class reads (a route
        # with no flows adds nothing to a sum and is skipped wherever routes are looked for)
        self.place = {k: {r: i for i, (r, _) in enumerate(lst)} for k, lst in self.on.items()}
        self.act: dict[int, list[tuple[int, float]]] = {k: [] for k in self.on}
        self.act_at: dict[int, list[int]] = {k: [] for k in self.on}
        self.act_routes: set[int] = set()
        self.bott_at: dict[int, dict[int, int]] = {}  # a class: the routes bottlenecked at it, their places
        # the channels of the classes the part's routes load, ascending, and each one's class: a
        # layout is read from them alone (the table's other parts' thousands of classes left out)
        in_part = np.zeros(n_cls, dtype=bool)
        in_part[e_cls] = True
        chans = np.flatnonzero(cc.cls_of >= 0)
        chans = chans[in_part[cc.cls_of[chans]]]
        self._chans, self._chans_cls = chans, cc.cls_of[chans]
        self.routes = np.zeros(0, np.int64)
        self.has_base = False
        self.off = False
        self.tries = self.wholes = 0
        return self

    def rebase(self, routes: np.ndarray, counts: np.ndarray, rates: np.ndarray) -> None:
        """Keep a whole solve's answer (its rates; the loads, uses and bottlenecks worked out here)."""
        ct = self.ct
        lens, cls, w = ct.gather(routes)
        ridx = np.repeat(np.arange(len(routes)), lens)
        x = rates[ridx]
        a = w * np.asarray(counts, dtype=float)[ridx]
        n_cls = len(self.ccap)
        load = np.bincount(cls, weights=a * x, minlength=n_cls)
        order = np.argsort(cls, kind="stable")  # each class's fastest route (a sort: ufunc.at is slow)
        starts = np.flatnonzero(np.concatenate([[True], cls[order][1:] != cls[order][:-1]]))
        top = np.zeros(n_cls)
        top[cls[order][starts]] = np.maximum.reduceat(x[order], starts)
        ok = ~self.nb[cls] & (load[cls] >= self.ccap_arr[cls] * (1 - TOL)) & (x >= top[cls] * (1 - TOL))
        bott = np.full(len(routes), -2, dtype=np.int64)
        hit = np.flatnonzero(ok)
        first = hit[np.concatenate([[True], ridx[hit][1:] != ridx[hit][:-1]])] if len(hit) else hit
        bott[ridx[first]] = cls[first]
        if self.route_cap is not None:
            at_cap = rates >= self.route_cap[routes] * (1 - TOL)
            bott[(bott == -2) & at_cap] = -1
        self.has_base = bool((bott != -2).all())  # (a route with no bottleneck found: no base to repair)
        # (the lists written where they change: the part's own routes and the classes in use)
        rl, cl = self.rl, self.cl
        for r in self.routes.tolist():
            cl[r] = 0.0
        for r, v, f in zip(routes.tolist(), rates.tolist(), np.asarray(counts, dtype=float).tolist()):
            rl[r] = v
            cl[r] = f
        self.rate[routes] = rates  # (a route's rate kept after it leaves: as in the list)
        self.count[:] = 0.0
        self.count[routes] = counts
        self.load = load
        e_route, e_cls = self.pairs
        active = np.zeros(len(self.rate), dtype=bool)
        active[routes] = True
        self.in_use = np.bincount(e_cls[active[e_route]], minlength=n_cls)
        self.iu = self.in_use.tolist()
        self._layout = None
        self._unsynced = set()
        self.ll = load.tolist()
        self.bott = dict(zip(routes.tolist(), bott.tolist()))
        self.bott_at = {}
        for r, b in self.bott.items():
            if b >= 0:
                self.bott_at.setdefault(b, {})[r] = self.place[b][r]
        now = set(self.bott)
        self._activate(sorted(now - self.act_routes), sorted(self.act_routes - now))
        self.routes = routes.copy()

    def repair(self, routes: np.ndarray, counts: np.ndarray):
        """The answer for the new active ``routes`` and ``counts`` from the last one (see the
        module's note), as ``_answer`` gives it; None when the region grew too large (then the
        caller solves the part whole, and keeps that answer)."""
        counts = np.asarray(counts, dtype=float)
        old, now = self.routes, self.now
        now[routes] = True
        gone = old[~now[old]].tolist()
        now[routes] = False
        # (a route that was not active has no flows in ``count``, and an active one has some)
        at = np.flatnonzero(self.count[routes] != counts)
        if not len(at) and not gone:
            return self._answer(routes)
        changed = routes[at].tolist()
        cl = self.cl
        arrived = [r for r in changed if cl[r] == 0.0]  # (routes that start loading their classes)
        was = [cl[r] for r in changed + gone]
        for r, f in zip(changed, counts[at].tolist()):
            cl[r] = f
        for r in gone:
            cl[r] = 0.0
        self._activate(arrived, gone)
        # the binding classes the routes that left loaded: their loads without them (a class the
        # region does not load keeps this load; the check must not find it still full)
        on = self.act
        # (each class summed once, however many of the routes that left load it)
        left_on = dict.fromkeys(k for r in gone for k, _ in self.bent[r])
        rl = self.rl
        behind = {k: sum([w * cl[s] * rl[s] for s, w in on[k]]) for k in left_on}
        # the region to start from: those routes and the others bottlenecked where they load
        # (those bottlenecked at a class in the order of ``on``, as a scan of it adds them: the
        # region's order is the fill's)
        region = set(changed)
        bent, bott_at = self.bent, self.bott_at
        for r in changed + gone:
            for k, _ in bent[r]:
                there = bott_at.get(k)
                if there:
                    for s in (sorted(there, key=there.__getitem__) if len(there) > 1 else there):
                        if cl[s] > 0.0:
                            region.add(s)
        limit = MAX_SHARE * len(routes)
        for _ in range(MAX_CHECKS):
            if len(region) > limit:
                return None
            got = self._fill(region)
            if got is None:
                return None
            if isinstance(got, set):
                region |= got
                continue
            x, bott, loads = got
            grow = self._check(region, x, bott, loads, behind)
            if grow is None:
                return None
            if not grow:
                self._commit(routes, at, counts, arrived, gone, was, x, bott, loads, behind)
                return self._answer(routes)
            region |= grow
        return None

    def _activate(self, arrived: list[int], gone: list[int]) -> None:
        """Routes that start loading their classes, and those that stop, in ``act``."""
        act, act_at, place, bent = self.act, self.act_at, self.place, self.bent
        self.act_routes.update(arrived)
        self.act_routes.difference_update(gone)
        for r in arrived:
            for k, x in bent[r]:
                p = place[k][r]
                i = bisect_left(act_at[k], p)
                act_at[k].insert(i, p)
                act[k].insert(i, (r, x))
        for r in gone:
            for k, _ in bent[r]:
                i = bisect_left(act_at[k], place[k][r])
                del act_at[k][i]
                del act[k][i]

    def _fill(self, region: set):
        """Progressive filling of the region's routes on what the other routes leave of the binding
        classes they cross: per route its rate and the class (or -1: its cap) that froze it, and the
        region's classes' new loads; or the routes to add first, those filling a class the region
        loads; None when a route cannot be filled (no cap, no class that binds).""" 
        ccap, caps, bent, on, cl, rl = self.ccap, self.caps, self.bent, self.act, self.cl, self.rl
        cnt: dict[int, float] = {}
        ent: dict[int, list[tuple[int, float]]] = {}
        known = self.loads_of
        for r in region:
            f = cl[r]
            mine = known.get((r, f))
            if mine is None:
                mine = known[(r, f)] = [(k, w * f) for k, w in bent[r]]
            for k, a in mine:
                if k in cnt:
                    cnt[k] += a
                else:
                    cnt[k] = a
            ent[r] = mine
        left: dict[int, float] = {}
        mine_on: dict[int, list[int]] = {}  # the region's routes on each class, in the order of ``on``
        for k in cnt:
            used = 0.0
            mine = mine_on[k] = []
            for s, w in on[k]:
                if s not in region:
                    used += w * cl[s] * rl[s]
                else:
                    mine.append(s)
            v = ccap[k] - used
            left[k] = v if v > 0.0 else 0.0
        # a class the others fill already (they are bottlenecked at another full class too): they
        # join the region, or the region's routes there would get nothing
        crowded = {s for k, v in left.items() if v <= ccap[k] * TOL
                   for s, _ in on[k] if s not in region and cl[s] > 0.0}
        if crowded:
            return crowded
        x: dict[int, float] = {}
        bott: dict[int, int] = {}
        open_ = set(region)
        by_cap = sorted(open_, key=caps.__getitem__) if caps is not None else None
        p = 0
        live = [k for k, c in cnt.items() if c > 1e-12]
        while open_:
            shares = [left[k] / cnt[k] for k in live]
            m = min(shares) if shares else math.inf
            capped = False
            if by_cap is not None:
                while p < len(by_cap) and by_cap[p] not in open_:
                    p += 1
                if p < len(by_cap) and caps[by_cap[p]] <= m * _TIE:
                    m, capped = caps[by_cap[p]], True
            if not math.isfinite(m) or m <= 0.0:
                return None
            mt = m * _TIE
            newly: dict[int, int] = {}
            if capped:
                for r in by_cap[p:]:
                    if caps[r] > mt:
                        break
                    if r in open_:
                        newly[r] = -1
            for k, sh in zip(live, shares):
                if sh <= mt:
                    for s in mine_on[k]:
                        if s in open_ and s not in newly:
                            newly[s] = k
            if not newly:
                return None  # (none of the region's routes at the level: never, with ``act`` as it should be)
            for r, k in newly.items():
                x[r] = m
                bott[r] = k
                open_.discard(r)
                for kk, a in ent[r]:
                    v = left[kk] - m * a
                    left[kk] = v if v > 0.0 else 0.0
                    cnt[kk] -= a
            if open_:
                live = [k for k in live if cnt[k] > 1e-12]
        loads = {k: ccap[k] - v for k, v in left.items()}
        return x, bott, loads

    def _check(self, region: set, x: dict, bott: dict, loads: dict, behind: dict) -> set | None:
        """The routes to add to the region for the answer to be max-min fair (see the module's note):
        empty when every route of the region, and every other one loading a class whose load changed,
        has a bottleneck; None when a region route has none and no faster route to bring down.
        ``behind``: the loads of the classes routes that left loaded, without them."""
        ccap, caps, on, bent, cl, rl, ll = self.ccap, self.caps, self.act, self.bent, self.cl, self.rl, self.ll
        lo = 1 - TOL
        inf = math.inf
        # each class asked about: the rate from which a route is bottlenecked there (the fastest
        # rate on it, less the slack, when it is full; else no rate is)
        at_least: dict[int, float] = {}

        def bar(k: int) -> float:
            v = loads.get(k)
            if v is None:
                v = behind.get(k)
                if v is None:
                    v = ll[k]
            t = inf
            if v >= ccap[k] * lo:  # full: its fastest route
                t = 0.0
                for s, _ in on[k]:
                    if cl[s] > 0.0:
                        v = x.get(s)
                        if v is None:
                            v = rl[s]
                        if v > t:
                            t = v
                t *= lo
            at_least[k] = t
            return t

        def bottlenecked(s: int, v: float, b: int) -> bool:
            """Whether route s at rate v has a bottleneck (``b``: the one it had); kept in ``bott``."""
            if b >= 0:
                t = at_least.get(b)
                if v >= (t if t is not None else bar(b)):
                    return True
            for kk, _ in bent[s]:
                t = at_least.get(kk)
                if v >= (t if t is not None else bar(kk)):
                    bott[s] = kk
                    return True
            return False

        grow: set = set()
        for r, v in x.items():
            if caps is not None and v >= caps[r] * lo:
                bott[r] = -1
            elif not bottlenecked(r, v, bott[r]):
                # faster routes on its full classes must come down: they join the region
                faster = [s for kk, _ in bent[r] if at_least[kk] < inf for s, _ in on[kk]
                          if s not in region and cl[s] > 0.0 and rl[s] > v]
                if not faster:
                    return None  # (none to bring down: rounding beyond the check's slack)
                grow.update(faster)
        old_bott, bott_at = self.bott, self.bott_at
        # the others to check: those bottlenecked at a class whose load changed (an active route
        # always has its bottleneck, a class it loads); when all of them still have one, that is
        # the answer, else they are checked again in the order of the classes and ``on``, which
        # the routes added to the region follow
        def all_still_bottlenecked() -> bool:
            for k in loads:
                there = bott_at.get(k)
                if not there:
                    continue
                t = at_least.get(k)
                if t is None:
                    t = bar(k)
                for s in there:
                    if s in region or s in grow:
                        continue
                    v = rl[s]
                    if v >= t or cl[s] <= 0.0:
                        continue  # (still bottlenecked at k, or no flows)
                    if not bottlenecked(s, v, -2):
                        return False
            return True

        if all_still_bottlenecked():
            return grow
        for k in loads:
            for s, _ in on[k]:
                if s in region or s in grow or cl[s] <= 0.0:
                    continue
                b = old_bott.get(s, -2)
                if b == -1 or (b >= 0 and b not in loads):
                    continue  # its cap, or a class whose load and routes did not change
                if not bottlenecked(s, rl[s], b):
                    grow.add(s)
        return grow

    def _commit(self, routes, at, counts, arrived, gone, was, x, bott, loads, behind) -> None:
        rl, ll, cl, in_use, bent, nent = self.rl, self.ll, self.cl, self.iu, self.bent, self.nent
        changed_routes = routes[at].tolist()
        # every route whose count or rate moves: its count and rate before
        moved_from = {r: (cl_was, rl[r]) for r, cl_was in zip(changed_routes + gone, was)}
        for r, v in x.items():
            if v != rl[r] and r not in moved_from:
                moved_from[r] = (cl[r], rl[r])
        bott_at, place = self.bott_at, self.place
        for r in gone:
            b = self.bott.pop(r, -2)
            if b >= 0:
                del bott_at[b][r]
            for k, _ in bent[r] + nent[r]:
                in_use[k] -= 1
                if not in_use[k]:
                    self._unsynced.add(k)
        for r in arrived:
            for k, _ in bent[r] + nent[r]:
                in_use[k] += 1
                if in_use[k] == 1:
                    self._unsynced.add(k)
        self.count[routes[at]] = counts[at]
        if gone:
            self.count[gone] = 0.0
        moved = [r for r, v in x.items() if v != rl[r]]
        for r in moved:
            rl[r] = x[r]
        if moved:
            self.rate[moved] = [rl[r] for r in moved]
        for r, k in bott.items():
            b = self.bott.get(r, -2)
            if b != k:
                if b >= 0:
                    del bott_at[b][r]
                if k >= 0:
                    bott_at.setdefault(k, {})[r] = place[k][r]
        self.bott.update(bott)
        for k, v in loads.items():
            ll[k] = v
        # binding classes a route that left loaded, and no route of the region: their sums without it
        left_behind = [k for k in behind if k not in loads]
        for k in left_behind:
            ll[k] = behind[k]
        # classes that never bind: their loads moved by what each route that moved adds or takes
        # (summed afresh on the next whole solve; a class no route loads any more is emptied)
        touched = set()
        for r, (c_old, x_old) in moved_from.items():
            mine = nent[r]
            if mine:
                d = cl[r] * rl[r] - c_old * x_old
                for k, w in mine:
                    ll[k] += w * d
                    touched.add(k)
        for k in touched:
            if not in_use[k]:
                ll[k] = 0.0
        if loads or touched or left_behind:
            ks = list(loads) + list(touched) + list(left_behind)
            self.load[ks] = [ll[k] for k in ks]
        self.routes = routes.copy()

    def _answer(self, routes: np.ndarray):
        """(rates of ``routes``, the channels in use ascending, their loads): ``maxmin``'s answer."""
        if self._unsynced:
            ks = list(self._unsynced)
            self.in_use[ks] = [self.iu[k] for k in ks]
            self._unsynced.clear()
            self._layout = None
        if self._layout is None:  # (``expand``'s layout of the classes in use, over the part's channels only)
            live = self.in_use[self._chans_cls] > 0
            self._layout = (self._chans[live], self._chans_cls[live])
        uch, cls = self._layout
        return self.rate[routes], uch, self.load[cls]
