"""Systems that run alike, simulated once: an NVLS tree's NVLink SHARP reduce and multicast of one
system per class of systems wired alike, its flows standing for the class's (issue #17).

NCCL's NVLS tree reduces in every system's NVSwitches, crosses the systems' trees and multicasts in
the NVSwitches again. On 2,048 DGX H100 systems that is 16,384 groups a piece outside the trees,
against about 400 in them: ``tree_fold`` folds the trees, and this module folds the systems.

Why it is exact. A system s is folded onto its class's representative r when:
- its transfers are r's, renamed: the schedule lists each system's patterns in the same roles
  (``sched.meta["systems"]``), of the same sizes, caps and latencies, and the router answers each of
  s's pairs with the same template route as r's pair in that place, moved by one channel offset D
  for the whole system (``Router.template_leg``: a system wired alike, its channels checked to be
  the reference's renamed, with the same figures); the capacities at c + D are those at c;
- its groups are r's, renamed: the k-th group on a pattern of s is the k-th on the pattern in the
  same role of r, with the same bytes, durations and delays, and dependencies that are the same
  groups once every system group is read as its representative's;
- no other flow loads a channel it loads: every system's channels (r's moved by its D) are apart
  from the others' and from the trees'.
Then s's component of the network sees the flows r's sees, renamed, from the same instants (its
groups wait for groups that are timed alike, by induction over the run), so it runs r's run, and a
group waiting for one of s's groups waits, in the folded run, for r's. The engine counts each of
r's flows as the class's (``Engine.represents``); bytes, channel loads and end times are given back
per system: the channel at c + D carries what c carried.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .schedule import Columns


class SystemFold:
    """The classes of systems, each group's representative group and how to give channels back."""

    @classmethod
    def of(cls, engine, cols: Columns, systems: list[list], outside: np.ndarray) -> "SystemFold | None":
        """The fold of the systems' transfers listed in ``systems`` (per system, its patterns in role
        order), or None where no two systems fold. ``outside``: the groups that are not in a tree,
        every one of which with a transfer must be on one of those patterns (else None)."""
        router = engine.router
        if len(systems) < 2 or not hasattr(router, "template_leg"):
            return None
        n_roles = len(systems[0])
        if any(len(ps) != n_roles for ps in systems):
            return None
        index = {id(p): k for k, p in enumerate(cols.patterns)}
        sys_of = np.full(len(cols.patterns) + 1, -1, dtype=np.int64)  # (index -1: a compute group)
        role_of = np.full(len(cols.patterns) + 1, -1, dtype=np.int64)
        pid = np.full((len(systems), n_roles), -1, dtype=np.int64)
        for s, ps in enumerate(systems):
            for r, p in enumerate(ps):
                k = index.get(id(p))
                if k is None or sys_of[k] >= 0:
                    return None
                sys_of[k], role_of[k], pid[s, r] = s, r, k
        pat = cols.pattern[outside]
        with_pairs = np.asarray([len(p.pairs) > 0 for p in cols.patterns] + [False])
        if (with_pairs[pat] & (sys_of[pat] < 0)).any():
            return None  # another transfer outside the trees: left as it is
        # classes: the same template routes in every place, one channel offset for the system
        for p in systems[0]:  # (routed first: its searches give the templates the others are read from)
            engine.template(p)
        legs = _Legs(engine)
        keys: dict[tuple, int] = {}
        rep_sys = np.arange(len(systems), dtype=np.int64)
        deltas = np.zeros(len(systems), dtype=np.int64)
        offsets: list[list[int]] = []
        templates: dict[int, list] = {}  # a representative's template routes, pair by pair
        template_leg = engine.router.template_leg
        for s, ps in enumerate(systems):
            got = _system_legs(ps, template_leg, legs)
            if got is not None:
                firsts, ds = [g[0] for g in got], [g[1] for g in got]
                shape = tuple((len(p.pairs), p.cap_Bps, p.latency_s) for p in ps)
                r = keys.setdefault((shape, tuple(map(id, firsts))), s)
                if r == s:
                    offsets.append(ds)
                    templates[s] = firsts
                    continue
                move = [d - d0 for d, d0 in zip(ds, offsets[r])]
                if len(set(move)) == 1:
                    rep_sys[s], deltas[s] = r, move[0]
                    offsets.append(ds)
                    continue
            offsets.append([])  # (folds onto no other system, nor another onto it)
            keys[("alone", s)] = s
        if (rep_sys == np.arange(len(systems))).all():
            return None
        fold = cls.__new__(cls)
        fold.rep_sys, fold.deltas, fold.pid = rep_sys, deltas, pid
        fold.count = np.bincount(rep_sys, minlength=len(systems))  # each representative's class size
        fold.templates, fold.offsets = templates, offsets
        fold._members = None
        return fold if fold._groups(cols, sys_of, role_of) and fold._channels(engine, systems) else None

    def _groups(self, cols: Columns, sys_of: np.ndarray, role_of: np.ndarray) -> bool:
        """Each group's representative (``rep_group``) and the check that system groups are their
        representatives' renamed (see the module's note)."""
        n = cols.n
        pat = cols.pattern
        order = np.argsort(pat, kind="stable")  # each pattern's groups, ascending
        ranked = pat[order]
        start = np.searchsorted(ranked, np.arange(len(cols.patterns)))
        count = np.searchsorted(ranked, np.arange(len(cols.patterns)), side="right") - start
        rank = np.empty(n, dtype=np.int64)  # a group's place among its pattern's
        rank[order] = np.arange(n) - np.searchsorted(ranked, ranked)
        mine = np.flatnonzero(sys_of[pat] >= 0)
        k = pat[mine]
        kr = self.pid[self.rep_sys[sys_of[k]], role_of[k]]  # the same role's pattern in the representative
        if (count[kr] != count[k]).any():
            return False
        rep = order[start[kr] + rank[mine]]
        rep_group = np.arange(n, dtype=np.int64)
        rep_group[mine] = rep
        moved = mine[rep != mine]
        r = rep_group[moved]
        for col in (cols.bytes_each, cols.duration_s, cols.post_delay_s):
            if (col[moved] != col[r]).any():
                return False
        for ptr, flat in ((cols.done_ptr, cols.done_flat), (cols.sent_ptr, cols.sent_flat)):
            lens = np.diff(ptr)
            if (lens[moved] != lens[r]).any():
                return False
            take = lens[moved]
            step = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
            a = flat[np.repeat(ptr[moved], take) + step]
            b = flat[np.repeat(ptr[r], take) + step]
            if (rep_group[a] != rep_group[b]).any():
                return False
        self.rep_group = rep_group
        self.kept = np.ones(n, dtype=bool)
        self.kept[moved] = False  # (a representative's groups and everything outside the systems stay)
        return True

    def _channels(self, engine, systems: list[list]) -> bool:
        """Each representative's channels (through the engine's templates of its patterns) and the
        check that every system's, moved by its offset, are apart and of the same capacities."""
        reps = np.unique(self.rep_sys).tolist()
        self.rep_ch: dict[int, np.ndarray] = {}
        for r in reps:
            rids = np.concatenate([engine.template(p)["route"] for p in systems[r]]).tolist()
            chans = np.concatenate([engine.route_ch[i] for i in rids])
            if r in self.templates:  # the engine's routes are the templates the classes were read from
                firsts = self.templates[r]
                lens = [len(f.channels) for f in firsts]
                if not (lens == [len(engine.route_ch[i]) for i in rids]
                        and np.array_equal(chans, np.concatenate([f.channels for f in firsts])
                                           + np.repeat(np.asarray(self.offsets[r], dtype=np.int64), lens))
                        and np.array_equal(np.concatenate([engine.route_w[i] for i in rids]),
                                           np.concatenate([f.weights for f in firsts]))):
                    return False
            self.rep_ch[r] = np.unique(chans)
        cap = engine.capacity
        every = []
        for s in range(len(systems)):
            ch = self.rep_ch[int(self.rep_sys[s])]
            moved = ch + self.deltas[s]
            if moved.size and (moved[0] < 0 or moved[-1] >= len(cap) or (cap[moved] != cap[ch]).any()):
                return False
            every.append(moved)
        every = np.concatenate(every)
        self.channels = np.unique(every)
        return len(self.channels) == len(every)  # no channel in two systems

    def apart_from(self, channels: np.ndarray) -> bool:
        """No system's transfers load any of ``channels`` (the trees')."""
        return not np.isin(self.channels, channels).any()

    def members(self) -> dict[int, np.ndarray]:
        """Each representative's folded systems' offsets (itself excluded; worked out once, as a
        replay reads the run's rate patterns one after the other)."""
        if self._members is None:
            out: dict[int, list[int]] = {}
            for s, r in enumerate(self.rep_sys.tolist()):
                if r != s:
                    out.setdefault(r, []).append(int(self.deltas[s]))
            self._members = {r: np.asarray(d, dtype=np.int64) for r, d in out.items()}
        return self._members

    def channel_bytes(self, bytes_: np.ndarray) -> None:
        """Give every folded system's channels its representative's bytes, in place."""
        for r, d in self.members().items():
            ch = self.rep_ch[r]
            bytes_[(ch[None, :] + d[:, None]).ravel()] = np.tile(bytes_[ch], len(d))

    def spread(self, chans: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A rate pattern's channels and loads with each representative channel's load given to the
        same channel of every system folded onto it (unsorted)."""
        out_c, out_l = [chans], [loads]
        for r, d in self.members().items():
            at = np.isin(chans, self.rep_ch[r])
            if at.any():
                out_c.append((chans[at][None, :] + d[:, None]).ravel())
                out_l.append(np.tile(loads[at], len(d)))
        return np.concatenate(out_c), np.concatenate(out_l)

    def folded_patterns(self, systems: list[list]) -> list:
        """The patterns of folded systems (not run: the representative's stand for them)."""
        return [p for s, ps in enumerate(systems) if self.rep_sys[s] != s for p in ps]

    def represents(self, engine, systems: list[list]) -> dict[int, int]:
        """{route id: systems it stands for} of the representatives' routes on ``engine``."""
        out: dict[int, int] = {}
        for r in np.unique(self.rep_sys).tolist():
            for p in systems[r]:
                for rid in engine.template(p)["route"].tolist():
                    out[rid] = int(self.count[r])
        return out


def _system_legs(ps: list, template_leg, legs: "_Legs") -> list | None:
    """``legs`` of every pair of a system's patterns ``ps`` in order, or None at the first pair
    without one. Most pairs are ``Router.template_leg``'s, asked in one pass; a pair it has none
    for is asked of ``legs``, which may route its pattern: where that added routes or shapes to
    the router, the pairs after it are asked again, as one by one they would have been asked
    after it."""
    router = legs.router
    pairs = [pair for p in ps for pair in p.pairs]
    got = [template_leg(a, b) for a, b in pairs]
    j = 0
    while None in got[j:]:
        j = got.index(None, j)
        k = j
        for p in ps:  # (the pair's pattern and place in it)
            if k < len(p.pairs):
                break
            k -= len(p.pairs)
        before = (len(router._cache), len(router._shapes))
        leg = legs(p, k, *pairs[j])
        if leg is None:
            return None
        got[j] = leg
        j += 1
        if (len(router._cache), len(router._shapes)) != before:
            got[j:] = [template_leg(a, b) for a, b in pairs[j:]]
    return got


class _Legs:
    """A pair's route inside a system as (the template route of its shape, the channel offset that
    moves it there): ``Router.template_leg`` for a pair not routed yet, else the route the engine has
    for it when that is the shape's template moved by one offset; None otherwise."""

    def __init__(self, engine):
        self.engine, self.router = engine, engine.router

    def __call__(self, pattern, i: int, a: str, b: str):
        router = self.router
        leg = router.template_leg(a, b)
        if leg is not None or (a, b) not in router._cache:
            return leg
        shape = router._shape_key(a, b)[0]
        template = router._shapes.get(shape) if shape is not None else None
        if template is None:
            return None
        first = template[2]
        if router._cache[(a, b)] is first:  # (the search that made the template: the router answers it)
            return first, 0
        engine = self.engine
        rid = int(engine.template(pattern)["route"][i])
        ch = engine.route_ch[rid]
        if len(ch) != len(first.channels) or not len(ch) or not np.array_equal(engine.route_w[rid], first.weights):
            return None
        d = int(ch[0] - first.channels[0])
        return (first, d) if np.array_equal(ch, first.channels + d) else None


class LazyTemplate(Mapping):
    """A folded system's pattern's template, asked of ``engine`` when first read (a report reading
    a few transfers; the run itself never needs it)."""

    def __init__(self, engine, pattern):
        self.engine, self.pattern = engine, pattern

    def _real(self) -> dict:
        if self.pattern._template is self:
            self.pattern._template = None
        return self.engine.template(self.pattern)

    def __getitem__(self, key):
        return self._real()[key]

    def __iter__(self):
        return iter(self._real())

    def __len__(self) -> int:
        return len(self._real())
