"""What the engine runs and what it gives back: transfer patterns, groups and their dependencies,
schedules, progress reports and results (``sim/engine.py`` runs them)."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..analysis.routing import Route
from ..cancel import check_cancelled
from . import limits, ragged
from .periods import FlowEnds
from .ragged import Ragged
from .rates import RatePattern


class Pattern:
    """Source/destination pairs shared by many groups (each step of a ring reuses one pattern).

    ``paths`` pins a pair to the device path a planner chose (NCCL pins its channels); ``latency_s``
    replaces the route latency of every pair (a protocol's per-step latency, or a ring's latency
    averaged over its hops, so that pipelined chunks pay each hop's latency where they cross it);
    ``cap_Bps`` limits each pair's rate (a protocol's per-channel ceiling); ``via`` forces a pair
    through waypoints (a ring hop through its rail's NICs) with the fabric free to spread between them.
    """

    def __init__(self, pairs: list[tuple[str, str]], paths: list[list[str]] | None = None,
                 latency_s: float | None = None, cap_Bps: float = float("inf"), via: list[list[str] | None] | None = None):
        self.pairs = pairs
        self.paths = paths
        self.via = via
        self.latency_s = latency_s
        self.cap_Bps = cap_Bps
        self._template = None


@dataclass(slots=True)
class Group:
    name: str
    pattern: Pattern | None = None
    bytes_each: float = 0.0
    deps_done: tuple[int, ...] = ()
    deps_sent: tuple[int, ...] = ()
    duration_s: float = 0.0
    post_delay_s: float = 0.0
    meta: dict = field(default_factory=dict)


class Lanes:
    """Many groups added at once, kept as columns rather than one Python object each (a 16 GiB ring
    is 15,000 pieces): row r is group ``first + r``. ``deps_done`` and ``deps_sent`` are (rows, width)
    arrays of group ids, -1 where a row has fewer (the first send dependency is a lane's predecessor);
    ``pattern`` is the row's index into ``patterns`` (-1 none); ``bytes_each``, ``duration_s`` and
    ``post_delay_s`` are a value or one per row; ``meta`` values likewise (a row's group gets a dict
    in that key order), or ``meta(r)`` gives row r's dict; ``name(r)`` gives row r's name. Either
    dependency table may instead be a :class:`~.ragged.Ragged` (each row's ids, one row after the
    other): for blocks where a few rows wait for many groups and most for one."""

    __slots__ = ("n", "patterns", "pattern", "bytes_each", "duration_s", "post_delay_s", "deps_done",
                 "deps_sent", "meta", "name", "overrides")
    virtual = False  # (``virtual_rows.RepeatedLanes``: rows not built, read one by one when asked)

    def __init__(self, n: int, name, patterns: list[Pattern | None], pattern, bytes_each, deps_done: np.ndarray,
                 deps_sent: np.ndarray, duration_s=0.0, post_delay_s=0.0, meta: dict | None = None):
        self.n = n
        self.name = name
        self.patterns = patterns
        self.pattern = np.broadcast_to(np.asarray(pattern, dtype=np.int64), (n,))
        self.bytes_each = np.broadcast_to(np.asarray(bytes_each, dtype=float), (n,))
        self.duration_s = np.broadcast_to(np.asarray(duration_s, dtype=float), (n,))
        self.post_delay_s = np.broadcast_to(np.asarray(post_delay_s, dtype=float), (n,))
        self.deps_done = self._table(deps_done, n)
        self.deps_sent = self._table(deps_sent, n)
        self.meta = meta or {}
        self.overrides: dict[int, dict] = {}  # rows changed after they were added (a launch latency)

    @staticmethod
    def _table(deps, n: int):
        if isinstance(deps, Ragged):
            if len(deps) != n:
                raise ValueError(f"{len(deps)} rows of dependencies for {n} groups")
            return deps
        return np.asarray(deps, dtype=np.int64).reshape(n, -1) if n else np.zeros((0, 1), np.int64)

    def group(self, r: int) -> Group:
        """Row r as a Group (a new object: change a row through ``Schedule.set_deps_done``)."""
        ov = self.overrides.get(r, {})
        k = int(self.pattern[r])
        deps_done = ov.get("deps_done")
        if deps_done is None:
            deps_done = ragged.row(self.deps_done, r)
        return Group(self.name(r), self.patterns[k] if k >= 0 else None, float(self.bytes_each[r]), deps_done,
                     ragged.row(self.deps_sent, r), float(self.duration_s[r]), float(self.post_delay_s[r]),
                     self.row_meta(r))

    @property
    def piece_image(self):
        """What ``meta`` is a bound method of: a ``virtual_rows.PieceImage`` when these rows are its
        copies (``Schedule.repeat_piece``); None when ``meta`` is no method."""
        return getattr(self.meta, "__self__", None)

    def row_meta(self, r: int) -> dict:
        if callable(self.meta):
            return self.meta(r)
        return {key: (v[r].item() if isinstance(v, np.ndarray) else v) for key, v in self.meta.items()}

    def row_classes(self, keys: tuple[str, ...]):
        """The rows as classes of one pattern and the same values under ``keys`` in their meta (or the
        same lack of them), read from the columns rather than row by row (a replay reads per class what
        it would read per group): (each row's class as an int32 array, and per class in the order
        they first appear: its first row, its pattern, that row's meta)."""
        image = self.piece_image
        if image is not None and hasattr(image, "row_classes"):
            out = image.row_classes(keys, self.n)
            if out is not None:
                return out
        if callable(self.meta):
            return classes_by_row(self.pattern_list(), self.metas(), keys)
        code = self.pattern.astype(np.int64) + 1
        for key in keys:
            v = self.meta.get(key)
            if isinstance(v, np.ndarray) and self.n:
                _, inv = np.unique(v, return_inverse=True)
                code = code * (int(inv.max()) + 1) + inv.reshape(-1)
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        firsts = first[order].tolist()
        return (rank[inv.reshape(-1)], firsts, [self.patterns[k] if k >= 0 else None for k in self.pattern[firsts].tolist()],
                [self.row_meta(r) for r in firsts])

    def groups(self):
        """Every row as a Group, read column by column (far cheaper than ``group`` row by row)."""
        pats = self.pattern_list()
        nb, dur, post = self.bytes_each.tolist(), self.duration_s.tolist(), self.post_delay_s.tolist()
        deps = [ragged.rows(self.deps_done), ragged.rows(self.deps_sent)]
        for r, meta in enumerate(self.metas()):
            ov = self.overrides.get(r)
            yield Group(self.name(r), pats[r], nb[r], ov["deps_done"] if ov else deps[0][r], deps[1][r], dur[r],
                        post[r], meta)

    def metas(self):
        """Every row's meta dict, in order."""
        if callable(self.meta):
            return map(self.meta, range(self.n))
        keys = list(self.meta)
        if not keys:
            return ({} for _ in range(self.n))
        cols = [v.tolist() if isinstance(v, np.ndarray) else itertools.repeat(v, self.n) for v in self.meta.values()]
        return (dict(zip(keys, vals)) for vals in zip(*cols))

    def pattern_list(self) -> list:
        return [self.patterns[k] if k >= 0 else None for k in self.pattern.tolist()]

    def shifted(self, offset: int) -> "Lanes":
        out = Lanes.__new__(Lanes)
        for key in Lanes.__slots__:
            setattr(out, key, getattr(self, key))
        out.deps_done = ragged.shifted(self.deps_done, offset)
        out.deps_sent = ragged.shifted(self.deps_sent, offset)
        out.overrides = {r: {"deps_done": tuple(d + offset for d in ov["deps_done"])}
                         for r, ov in self.overrides.items()}
        return out


def classes_by_row(patterns, metas, keys: tuple[str, ...]):
    """:meth:`Lanes.row_classes` read row by row from (pattern, meta) pairs (a list of Groups, or
    rows whose meta only a function gives)."""
    index: dict[tuple, int] = {}
    codes, firsts, pats, reps = [], [], [], []
    for r, (pattern, meta) in enumerate(zip(patterns, metas)):
        fact = (id(pattern), *((k in meta, meta.get(k)) for k in keys))
        c = index.get(fact)
        if c is None:
            c = index[fact] = len(firsts)
            firsts.append(r)
            pats.append(pattern)
            reps.append(meta)
        codes.append(c)
    return np.asarray(codes, dtype=np.int32), firsts, pats, reps


@dataclass
class Columns:
    """A schedule as the engine reads it: one entry per group, dependencies as CSR (``*_ptr[g]`` to
    ``*_ptr[g + 1]`` in ``*_flat``, in the order the group lists them)."""
    n: int
    patterns: list[Pattern]
    pattern: np.ndarray          # index into patterns, -1 for a compute group
    bytes_each: np.ndarray
    duration_s: np.ndarray
    post_delay_s: np.ndarray
    done_ptr: np.ndarray
    done_flat: np.ndarray
    sent_ptr: np.ndarray
    sent_flat: np.ndarray
    # (B, m): the rows from B on are copies of a piece of m rows (``repeat_piece``), each the one m
    # before it with its ids moved on; a hint for reading them by period (``periodic_dependents``)
    period: tuple[int, int] | None = None


class GroupTable(Sequence):
    """A schedule's groups: a sequence of :class:`Group`, kept as runs of Group objects and of
    :class:`Lanes` (columns). ``table[i]`` is the stored object for the former and a new one built
    from its row for the latter."""

    def __init__(self, schedule: "Schedule"):
        self._sched = schedule
        self._chunks: list[list[Group] | Lanes] = []
        self._starts: list[int] = []
        self._n = 0
        self.unbuilt = 0  # rows of virtual chunks (``virtual_rows.RepeatedLanes``): not counted against the limit

    def __len__(self) -> int:
        return self._n

    def _locate(self, i: int) -> tuple[list[Group] | Lanes, int]:
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("group index out of range")
        c = bisect.bisect_right(self._starts, i) - 1
        return self._chunks[c], i - self._starts[c]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        chunk, r = self._locate(int(i))
        return chunk.group(r) if isinstance(chunk, Lanes) else chunk[r]

    def __iter__(self):
        for chunk in self._chunks:
            if isinstance(chunk, Lanes):
                yield from chunk.groups()
            else:
                yield from chunk

    def append(self, group: Group) -> None:
        self._sched.add(group)

    def blocks(self):
        """(first group id, its run of Group objects or its Lanes) in order: the table as it is kept."""
        return zip(self._starts, self._chunks)

    def build(self, k: int) -> None:
        """Chunk ``k``'s virtual rows built as columns in its place (they count against the limit from now on)."""
        chunk = self._chunks[k]
        self._chunks[k] = chunk.materialized(chunk.copies)
        self.unbuilt -= chunk.n

    def patterns_and_metas(self):
        """(pattern, meta) of every group, in order: what a replay reads, without building Groups."""
        for chunk in self._chunks:
            if isinstance(chunk, Lanes):
                yield from zip(chunk.pattern_list(), chunk.metas())
            else:
                for g in chunk:
                    yield g.pattern, g.meta

    def _push(self, item: Group | Lanes) -> int:
        first = self._n
        if isinstance(item, Lanes):
            self._chunks.append(item)
            self._starts.append(first)
            self._n += item.n
            self.unbuilt += item.n if item.virtual else 0
        else:
            if not self._chunks or isinstance(self._chunks[-1], Lanes):
                self._chunks.append([])
                self._starts.append(first)
            self._chunks[-1].append(item)
            self._n += 1
        return first


class Schedule:
    """What the engine runs: groups and their dependencies (``groups``), the payload the collective
    moves, a description for messages, and builder facts in ``meta``."""

    def __init__(self, groups: list[Group] | None = None, payload_bytes: float = 0.0, description: str = "",
                 meta: dict | None = None):
        self.groups = GroupTable(self)
        self.payload_bytes = payload_bytes
        self.description = description
        self.meta = {} if meta is None else meta
        for g in groups or ():
            self.add(g)

    def _check_size(self, before: int) -> None:
        skip = self.groups.unbuilt  # (the limit counts the groups built)
        n = len(self.groups) - skip
        if n // 4096 != (before - skip) // 4096:
            check_cancelled()
            if n > limits.MAX_SCHEDULED_GROUPS:
                self._too_large(len(self.groups))

    def reserve(self, more: int) -> None:
        """Refuse, before anything is allocated, a block of ``more`` groups that would take the
        schedule past the limit (a block's columns are built whole: a 1 PiB ring's first block
        reached 3.3 GB before the count as built could stop it)."""
        n = len(self.groups) + more
        if n > limits.MAX_SCHEDULED_GROUPS:
            self._too_large(n)

    def _too_large(self, n: int) -> None:
        raise limits.TooLarge(f"{self.description or 'this schedule'} takes {n:,} or more flow groups to simulate, "
                              f"more than the limit of {limits.MAX_SCHEDULED_GROUPS:,} (about a kilobyte of memory "
                              f"each); use a smaller size or fewer GPUs (NCCL's algorithms cut the data in NCCL's own "
                              f"slices; --chunk sets the pieces of the others: a larger one helps those)")

    def add(self, group: Group) -> int:
        gid = self.groups._push(group)
        self._check_size(gid)
        return gid

    def add_lanes(self, lanes: Lanes) -> int:
        """Add many groups at once (see :class:`Lanes`); the id of the first."""
        first = self.groups._push(lanes)
        self._check_size(first)
        return first

    def set_deps_done(self, g: int, deps: tuple[int, ...]) -> None:
        chunk, r = self.groups._locate(g)
        if isinstance(chunk, Lanes):
            chunk.overrides[r] = {"deps_done": tuple(deps)}
        else:
            chunk[r].deps_done = tuple(deps)

    def roots(self) -> list[int]:
        """The groups that wait for nothing, in id order (read from the columns of Lanes as they are)."""
        out: list[int] = []
        for chunk, first in zip(self.groups._chunks, self.groups._starts):
            if isinstance(chunk, Lanes) and chunk.virtual:
                out.extend((chunk.roots() + first).tolist())
            elif isinstance(chunk, Lanes):
                n_sent = ragged.counts_and_flat(chunk.deps_sent)[0]
                free = (ragged.counts_and_flat(chunk.deps_done)[0] == 0) & (n_sent == 0)
                for r, ov in chunk.overrides.items():
                    free[r] = not ov["deps_done"] and not n_sent[r]
                out.extend((np.flatnonzero(free) + first).tolist())
            else:
                out.extend(first + i for i, g in enumerate(chunk) if not g.deps_done and not g.deps_sent)
        return out

    def extend(self, other: "Schedule") -> int:
        """Append another schedule's groups (their dependencies shifted along); their first id."""
        offset = len(self.groups)
        for chunk in other.groups._chunks:
            if isinstance(chunk, Lanes):
                self.add_lanes(chunk.shifted(offset))
            else:
                for g in chunk:
                    g.deps_done = tuple(d + offset for d in g.deps_done)
                    g.deps_sent = tuple(d + offset for d in g.deps_sent)
                    self.add(g)
        return offset

    def repeat_piece(self, prev_first: int, first: int, copies: int, piece: int, virtual: bool = False) -> bool:
        """Append ``copies`` more pieces of a piece-by-piece builder as columns, when the last two
        pieces show its pattern: the groups from ``first`` on are piece ``piece``'s, those from
        ``prev_first`` to ``first`` the piece before's, and each is the other's image shifted by
        their count m (same pattern, bytes and delays; every dependency the same group, outside
        both pieces, or the one m on; name and meta the same with "piece <j>" one on). Copy c is
        then piece ``piece`` + c, its dependencies shifted by c m where the piece's are. Returns
        False (and adds nothing) when the two pieces do not show that. With ``virtual`` the copies
        are not built (``virtual_rows.RepeatedLanes``: rows read when asked, not counted against the
        limit; a run reads them through a fold, ``sim/nvls_virtual.py``, or ``columns`` builds them
        as the limit allows)."""
        from .virtual_rows import PieceImage, RepeatedLanes  # (it builds on this module's Lanes)

        m = len(self.groups) - first
        if copies <= 0 or m <= 0 or first - prev_first != m:
            return False
        if not virtual:
            self.reserve(copies * m)
        image = PieceImage.of(self.groups[prev_first:first], self.groups[first:], prev_first, m, piece)
        if image is None:
            return False
        if virtual:
            self.groups._push(RepeatedLanes(image, copies))
        else:
            self.add_lanes(image.lanes(copies))
        return True

    def columns(self) -> Columns:
        """The groups as columns (built anew on every call: Group objects may have been changed)."""
        patterns: list[Pattern] = []
        index: dict[int, int] = {}

        def pid(p) -> int:
            if p is None:
                return -1
            k = index.get(id(p))
            if k is None:
                k = index[id(p)] = len(patterns)
                patterns.append(p)
            return k

        parts = {key: [] for key in ("pattern", "bytes", "dur", "post", "done_n", "done", "sent_n", "sent")}
        from .virtual_rows import PieceImage  # (it builds on this module's Lanes)

        period = None  # (the last chunk's, when it is a piece's copies)
        for chunk, first in zip(self.groups._chunks, self.groups._starts):
            image = chunk.piece_image if isinstance(chunk, Lanes) else None
            period = (first, image.m) if isinstance(image, PieceImage) else None
            if isinstance(chunk, Lanes) and chunk.virtual:  # (rows not built: built here, as the limit allows)
                if len(self.groups) > limits.MAX_SCHEDULED_GROUPS:
                    self._too_large(len(self.groups))
                chunk = chunk.materialized(chunk.copies)
            if isinstance(chunk, Lanes):
                local = np.asarray([pid(p) for p in chunk.patterns] + [-1], dtype=np.int64)
                parts["pattern"].append(local[chunk.pattern])
                parts["bytes"].append(chunk.bytes_each)
                parts["dur"].append(chunk.duration_s)
                parts["post"].append(chunk.post_delay_s)
                for key, arr in (("done", chunk.deps_done), ("sent", chunk.deps_sent)):
                    if isinstance(arr, Ragged) and not (key == "done" and chunk.overrides):
                        parts[key + "_n"].append(arr)  # (its row ends at hand: no cumsum over its rows)
                        parts[key].append(arr.flat)
                        continue
                    counts, flat = ragged.counts_and_flat(arr)
                    if key == "done" and chunk.overrides:
                        # the few rows changed since: cut them out of the flat list and put theirs in
                        ends = np.cumsum(counts)
                        cut, at = [], 0
                        for r in sorted(chunk.overrides):
                            cut.append(flat[at:ends[r] - counts[r]])
                            cut.append(np.asarray(chunk.overrides[r]["deps_done"], dtype=np.int64))
                            at = ends[r]
                        cut.append(flat[at:])
                        for r, ov in chunk.overrides.items():
                            counts[r] = len(ov["deps_done"])
                        flat = np.concatenate(cut)
                    parts[key + "_n"].append(counts)
                    parts[key].append(flat)
            else:
                m = len(chunk)
                parts["pattern"].append(np.fromiter((pid(g.pattern) for g in chunk), dtype=np.int64, count=m))
                parts["bytes"].append(np.fromiter((g.bytes_each for g in chunk), dtype=float, count=m))
                parts["dur"].append(np.fromiter((g.duration_s for g in chunk), dtype=float, count=m))
                parts["post"].append(np.fromiter((g.post_delay_s for g in chunk), dtype=float, count=m))
                for key in ("done", "sent"):
                    attr = "deps_" + key
                    counts = np.fromiter((len(getattr(g, attr)) for g in chunk), dtype=np.int64, count=m)
                    parts[key + "_n"].append(counts)
                    parts[key].append(np.fromiter(itertools.chain.from_iterable(getattr(g, attr) for g in chunk),
                                                  dtype=np.int64, count=int(counts.sum())))

        def cat(key, dtype):
            return np.concatenate(parts[key]).astype(dtype, copy=False) if parts[key] else np.zeros(0, dtype)

        def ptr(key):
            out = np.zeros(len(self.groups) + 1, dtype=np.int64)
            at = 0
            for part in parts[key + "_n"]:  # each chunk's counts, or its Ragged (whose ends are known)
                rows = out[at + 1:at + 1 + len(part)]
                if isinstance(part, Ragged):
                    np.add(part.ptr[1:], out[at], out=rows)
                else:
                    np.cumsum(part, out=rows)
                    rows += out[at]
                at += len(part)
            return out

        return Columns(len(self.groups), patterns, cat("pattern", np.int64), cat("bytes", float), cat("dur", float),
                       cat("post", float), ptr("done"), cat("done", np.int64), ptr("sent"), cat("sent", np.int64),
                       period)


@dataclass
class Progress:
    fraction: float
    sim_time_s: float
    utilization: list[tuple[tuple[str, ...], float]]


@dataclass
class SimResult:
    time_s: float
    group_start: np.ndarray
    group_sent: np.ndarray
    group_done: np.ndarray
    groups: "GroupTable"
    flow_ends: FlowEnds  # per-flow end times of groups whose flows did not all end at once
    channel_bytes: np.ndarray
    capacity: np.ndarray
    channel_ends: list[tuple[str, str]]
    channel_links: list[tuple[str, ...]]
    segments: list[tuple[float, float, int]]
    rate_patterns: list[RatePattern]
    delivered: list[tuple[float, float]]
    routes: list[Route]
    events: int
    wall_s: float
    periods_skipped: int = 0  # repeats of a steady state advanced in one step (see _Periods)
    flow_events: int = 0      # active flows summed over the events: the work the run did (limits.MAX_FLOW_EVENTS)
    state_bytes: int = 0      # memory its distinct network states keep (limits.MAX_STATE_BYTES)
    # the share of each link's figure the run could use (the engine's capacity_scale: a protocol's or
    # a tree's efficiency; one number, or one per channel); ``capacity`` is already scaled, the
    # link's own figure is capacity / this
    capacity_scale: float | np.ndarray = 1.0

    def utilization(self) -> np.ndarray:
        """Busy fraction of each channel over the whole run."""
        if self.time_s <= 0:
            return np.zeros_like(self.capacity)
        return self.channel_bytes / (self.capacity * self.time_s)

    def bottlenecks(self, top: int = 10) -> list[dict]:
        """Channels ranked by utilization: the links that limited the run. ``capacity_per_direction_Bps``
        is what the run could use (the link's figure times ``capacity_scale``),
        ``link_capacity_per_direction_Bps`` the link's own figure."""
        util = self.utilization()
        order = np.argsort(-util, kind="stable")[:top]
        scale = np.broadcast_to(np.asarray(self.capacity_scale, dtype=float), self.capacity.shape)
        out = []
        for c in order:
            if util[c] <= 0:
                break
            a, b = self.channel_ends[c]
            out.append({"links": list(self.channel_links[c]), "from": a, "to": b,
                        "utilization": float(util[c]), "bytes": float(self.channel_bytes[c]),
                        "capacity_per_direction_Bps": float(self.capacity[c]),
                        "link_capacity_per_direction_Bps": float(self.capacity[c] / scale[c])})
        return out

    def transfers(self, group: int) -> list[dict]:
        """Every transfer of a group: source, destination, bytes, start, end, routes."""
        g = self.groups[group]
        if g.pattern is None:
            return []
        tpl = g.pattern._template
        ends = self.flow_ends.get(group)
        out = []
        for k, (src, dst) in enumerate(g.pattern.pairs):
            end = float(ends[k]) if ends is not None else float(self.group_sent[group])
            out.append({"src": src, "dst": dst, "bytes": g.bytes_each, "start_s": float(self.group_start[group]),
                        "end_s": end + float(tpl["latency"][k]),
                        "paths": [list(p) for p in self.routes[tpl["route"][k]].paths]})
        return out
