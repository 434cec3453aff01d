"""The engine's components made of the solver's parts, once a run has shown that the parts pay.

Why. sim/split_solve.py solves a large component part by part (routes that only channels that can
never bind tie together, sim/dominated.py), but the engine still keeps the whole component as one:
on a tree all-reduce over 124 DGX-1s (one component of 2,200 routes, three parts) every event that
changes one rail re-keys the whole component, has the split sort and look up the untouched parts,
merges every part's loads over 4,000 channels, writes 2,200 routes' rates and keeps all of that as
a new network state (589 MB over the run). With the parts as the engine's own components an event
solves, keys, writes and keeps only the part it changed.

How. The split is decided a few solves into a run (split_solve's WORTH and TRIAL: a run that rarely
solves, or whose every event moves every part, never pays for it); the engine then runs the
schedule again from the start with these components (``PartsFound``; the first attempt's work is a
few dozen solves). A channel that never binds (a spine plane) is crossed by routes of several
parts: each component keeps its own copy of it (a *virtual* channel past the real ones), so every
component's channels are its own, as the engine's classes and keys assume; loads of such a channel
are added part by part wherever the run's channels are read (network states, channel bytes).

Exactness. A part solved alone is what split_solve solved (the same routes in the same order, with
the channels that cannot bind left out); what moves is the last bits of sums over several parts,
and the first solves of a run, which the joint solve did before the split was decided.
"""

from __future__ import annotations

import numpy as np

from .rates import RouteTable, _components, _Shapes
from .repair_solve import RepairSolver


class NoStepBack:
    """A progress callback that never steps back: when a run starts again with its parts
    (``PartsFound``), the second start's reports before the point the first had reached are not
    passed on, so a window's progress bar and live plots do not jump back to the start."""

    def __init__(self, progress):
        self.progress = progress
        self.time_s = self.fraction = float("-inf")

    def __call__(self, p) -> None:
        if p.sim_time_s < self.time_s or p.fraction < self.fraction:
            return
        self.time_s, self.fraction = p.sim_time_s, p.fraction
        self.progress(p)


class PartsFound(Exception):
    """Raised from a solve once the parts are worth the engine's components (see the module's note):
    the engine runs the schedule again over ``table`` (its ``never_binds`` out of the components,
    and its channel classes, made with them, kept)."""

    def __init__(self, table: RouteTable):
        super().__init__("the engine's components are to follow the solver's parts")
        self.table = table


def table_again(parted: RouteTable | None, route_ch: list, route_w: list) -> tuple[RouteTable, np.ndarray | None]:
    """The engine's route table for a run, and the channels that cannot bind when the run is done
    again with the parts as components (``parted``: the first attempt's table, which holds them)."""
    if parted is None:
        return RouteTable(route_ch, route_w), None
    never_binds = parted.never_binds
    if len(parted.lens) != len(route_ch):  # (routes added since: a table of them all)
        parted = RouteTable(route_ch, route_w)
        parted.never_binds = never_binds
    parted.parts = None
    return parted, never_binds


class PartShapes:
    """``_Shapes`` over the parts of the ``used`` routes: components tied by channels that can bind;
    a channel in ``never_binds`` is a virtual channel per component crossing it. Reads as
    ``_Shapes`` does, with ``comp_ch`` in real channel ids and ``local(c, channels)`` for the local
    indices of a component's real channels."""

    shared = True

    def __init__(self, table: RouteTable, used: np.ndarray, capacity: np.ndarray, route_cap: np.ndarray | None,
                 n_channels: int, never_binds: np.ndarray):
        keep = ~never_binds[table.ch]
        n_routes = len(table.lens)
        route_of = np.repeat(np.arange(n_routes, dtype=np.int64), table.lens)
        reduced = RouteTable.__new__(RouteTable)
        reduced.lens = np.bincount(route_of[keep], minlength=n_routes).astype(np.int64)
        reduced.offsets = np.concatenate([[0], np.cumsum(reduced.lens)[:-1]]).astype(np.int64)
        reduced.ch, reduced.w = table.ch[keep], table.w[keep]
        part = np.full(n_routes, -1, dtype=np.int64)
        part[used] = _components(reduced, used, n_channels)[0]
        # every (part, channel that cannot bind) an entry of a used route names: a virtual channel
        ch_v = table.ch.copy()
        in_used = np.zeros(n_routes, dtype=bool)
        in_used[used] = True
        nb_entry = ~keep & in_used[route_of]
        pair = part[route_of[nb_entry]] * n_channels + table.ch[nb_entry]
        pairs, inv = np.unique(pair, return_inverse=True)
        ch_v[nb_entry] = n_channels + inv.ravel()
        real = np.concatenate([np.arange(n_channels, dtype=np.int64), pairs % n_channels])  # of each virtual channel
        virtual = RouteTable.__new__(RouteTable)
        virtual.lens, virtual.offsets, virtual.ch, virtual.w = table.lens, table.offsets, ch_v, table.w
        inner = _Shapes(virtual, used, np.asarray(capacity, dtype=float)[real], route_cap, len(real), True)
        for name in ("n_comp", "route_comp", "by_comp", "bounds", "route_local", "comp_class", "n_classes", "h1", "h2"):
            setattr(self, name, getattr(inner, name))
        # a component's channels in local order, real ids (each once: a route's virtual channel
        # stands for one real channel, a component's channels are distinct real ones)
        self.comp_ch = [real[c] for c in inner.comp_ch]
        self._sorted: dict[int, tuple] = {}  # component -> its channels sorted, their local indices, the index by id
        self._local_of: dict[int, tuple[np.ndarray, int, np.ndarray]] = {}  # id(channels) -> them, component, local()
        # a large component re-solved around what changed since its last solve (sim/repair_solve.py)
        self.repair = RepairSolver(table, capacity, route_cap, self.by_comp, self.bounds)

    def local(self, c: int, channels: np.ndarray) -> np.ndarray:
        """The local indices in component ``c`` of its real ``channels`` (ascending, as a solve
        gives them: most often every channel of the component). A repaired solve hands out one
        array per set of classes in use (maxmin's ``expand``), so the answer is kept per such array:
        a large part's solves mostly come back to the same few (one array for all of them, read-only)."""
        hit = self._local_of.get(id(channels))
        if hit is not None and hit[0] is channels and hit[1] == c:
            return hit[2]
        out = self._local(c, channels)
        if len(self._local_of) >= 256:  # (a whole solve's channels are new each time)
            self._local_of.clear()
        self._local_of[id(channels)] = (channels, c, out)  # (the array kept: its id stays its own)
        return out

    def _local(self, c: int, channels: np.ndarray) -> np.ndarray:
        got = self._sorted.get(c)
        if got is None:
            real = self.comp_ch[c]
            order = np.argsort(real, kind="stable").astype(np.int32)  # (kept per network state: int32)
            # a large part's channels: each one's local index read by channel id (a search of the
            # sorted channels cost several times this look-up for the thousands its answers name)
            at = None
            if len(real) >= LOOKUP_CHANNELS:
                at = np.full(int(real.max()) + 1, -1, dtype=np.int32)
                at[real] = np.arange(len(real), dtype=np.int32)
            got = self._sorted[c] = (real[order], order, at)
        real, order, at = got
        if len(channels) == len(real) and np.array_equal(channels, real):
            return order
        return at[channels] if at is not None else order[np.searchsorted(real, channels)]


def solve_misses(reps: list, parts: list[np.ndarray], route_count: np.ndarray, table: RouteTable,
                 capacity: np.ndarray, route_cap: np.ndarray | None, shape, solve) -> list[tuple]:
    """The engine's solve of one member of each missed class state: per rep, (its routes, their
    rates, its channels ascending, their loads). ``reps``: (component, key) pairs; ``parts``: each
    one's active routes; ``solve``: the joint solver. Components that share no channel are solved
    together and the answer split by the channels' components; components of a ``PartShapes``
    (which share channels that cannot bind) one by one, as split_solve solves its parts, each large one
    re-solved around what changed since its last solve (sim/repair_solve.py)."""
    if getattr(shape, "shared", False):
        out = []
        for (c, _), r in zip(reps, parts):
            rates, uch, load = shape.repair.solve(c, r, route_count[r])
            out.append((r, rates, uch, load))
        _check(out)
        return out
    uniq = np.concatenate(parts) if len(parts) > 1 else parts[0]
    rates_u, uch, load = solve(uniq, route_count[uniq], table, capacity, route_cap)
    _check([(None, rates_u)])
    if len(reps) == 1:
        return [(parts[0], rates_u, uch, load)]
    chc = shape.ch_comp[uch]
    split, at = [], 0
    if len(reps) <= SPLIT_BY_SORT:
        # each component's channels (ascending, as solved) and its routes' rates
        for (c, _), r in zip(reps, parts):
            mine = chc == c
            split.append((r, rates_u[at:at + len(r)], uch[mine], load[mine]))
            at += len(r)
        return split
    # the same, with one stable sort by component instead of a comparison over every channel per
    # component (4,000 channels and tens of components on a 992-GPU tree)
    order = np.argsort(chc, kind="stable")
    comps = np.fromiter((c for c, _ in reps), dtype=np.int64, count=len(reps))
    los = np.searchsorted(chc[order], comps, side="left").tolist()
    his = np.searchsorted(chc[order], comps, side="right").tolist()
    ch_sorted, load_sorted = uch[order], load[order]
    for r, lo, hi in zip(parts, los, his):
        split.append((r, rates_u[at:at + len(r)], ch_sorted[lo:hi], load_sorted[lo:hi]))
        at += len(r)
    return split


# A component of this many channels or more finds its channels' local indices in a table by channel id.
LOOKUP_CHANNELS = 256

# A joint solve of more components than this is split among them by sorting its channels by component.
SPLIT_BY_SORT = 4


def _check(answers: list[tuple]) -> None:
    for _, rates, *_ in answers:
        if not rates.min() > 0:
            raise RuntimeError("the schedule is stuck: flows with no capacity on their route")

