"""A pipelined chain's piece times without events: the max-plus recurrence of its stages.

A hierarchical all-reduce is three stages one after the other (each waits, through a zero-time
join, for every piece of the one before): a reduce along each system's chain of GPUs, a ring across
the systems' leaders, a broadcast back along the chains. A stage is a lattice of ``steps`` hops by
``pieces`` pieces (sim/collectives.py's ``_pipelined``): piece j of hop k starts once it has
arrived from hop k-1 and hop k has sent piece j-1 (a ring's steps share one connection, so its
step k's first piece also waits for step k-1's last: ``one_lane``).

When no two flows of a stage share a channel (its hops' routes are channel-disjoint, and nothing
else runs beside it), every flow moves at its route's own max-min rate whatever else is active, so
each group takes the same time as every other group of its hop. Its times are then
    start[k, j] = max(done[k-1, j], sent[k, j-1]),
    sent[k, j] = start[k, j] + tx[k],   done[k, j] = start[k, j] + arrive[k] + post[k]
(``tx``: its slowest flow's bytes over its rate; ``arrive``: the latest last-byte-plus-latency),
a max-plus recurrence computed here a hop at a time over all pieces at once: with
``a[j] = done[k-1, j]`` the scan ``s[j] = max(a[j], s[j-1] + tx)`` is
``s[j] = j tx + cummax(a[i] - i tx)``. It equals the engine's event-by-event times up to the
engine's own rounding (its clock is a sum of event steps; it lets flows ending within 1e-9 of a
step end with it): tests/sim/test_chain_stages.py compares the two. (On 2 DGX A100 at 16 GiB the
recurrence's finish is the exact rational one of the same rates to 7e-17; the events', summed over
60,000 pieces, are 1.6e-13 and 2.6e-13 off, with and without their steady-state skip.)

Where flows would share a channel (a system whose chain hops cross the same links, leaders whose
routes meet), :func:`stage_times` answers None: the engine's events are the answer there.
:func:`run` gives the engine's whole record (network states, segments, bytes delivered, channel
bytes) from the stretches each hop transmits without pause; a stage that pauses more than
``MAX_RUNS`` times is left to the engine too (its skip repeats such stretches).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .maxmin import maxmin_reference
from .periods import FlowEnds
from .rates import RatePattern, RouteTable
from .schedule import Lanes, Schedule, SimResult
from .timeline import Timeline


@dataclass(frozen=True)
class ChainStage:
    """One stage of pipelined pieces: group ``first + k * pieces + j`` is piece j of hop k; the
    first hop's pieces wait for the groups ``after`` (their done times)."""
    first: int
    steps: int
    pieces: int
    one_lane: bool
    after: tuple[int, ...]

    @property
    def rows(self) -> int:
        return self.steps * self.pieces


def record(schedule: Schedule, stage: ChainStage) -> None:
    """Note a stage the builder laid out (read by :func:`stage_times`)."""
    schedule.meta.setdefault("chain_stages", []).append(stage)


def _lanes_of(schedule: Schedule, stage: ChainStage) -> Lanes | None:
    """The Lanes block that holds exactly the stage's rows, checked to be the lattice it says."""
    chunk, r0 = schedule.groups._locate(stage.first)
    if not isinstance(chunk, Lanes) or r0 != 0 or chunk.n != stage.rows or chunk.overrides \
            or not isinstance(chunk.deps_done, np.ndarray) or not isinstance(chunk.deps_sent, np.ndarray):
        return None
    n, rows, first, steps = stage.pieces, stage.rows, stage.first, stage.steps
    done, sent = chunk.deps_done, chunk.deps_sent
    prev = np.arange(first - 1, first + rows - 1, dtype=np.int64)  # each row's predecessor's id
    # piece j of hop k >= 1 waits for piece j of hop k-1 and nothing else
    if not np.array_equal(done[n:, 0], prev[1:rows - n + 1]) or (done.shape[1] > 1 and (done[n:, 1:] != -1).any()):
        return None
    after = np.asarray(stage.after, dtype=np.int64)
    if len(after) > done.shape[1] or (done[:n, :len(after)] != after).any() or (done[:n, len(after):] != -1).any():
        return None
    # it follows the piece before it on its hop (a lane: the row before it), the first nothing
    if sent.shape[1] > 1 and (sent[:, 1:] != -1).any():
        return None
    if stage.one_lane:
        if sent[0, 0] != -1 or not np.array_equal(sent[1:, 0], prev[1:]):
            return None
    else:
        lattice = sent[:, 0].reshape(steps, n)
        if (lattice[:, 0] != -1).any() or not np.array_equal(lattice[:, 1:], prev.reshape(steps, n)[:, 1:]):
            return None
    if (chunk.duration_s != 0).any():
        return None
    return chunk


@dataclass
class _Hops:
    """A stage's hops as the recurrence reads them: each hop's transmit and arrival times and its
    pattern (``of_step``: its place among the stage's distinct patterns, a ring's steps sharing
    one); per distinct pattern, its flows' routes, rates and transmit times, pattern p's flows being
    ``bounds[p]:bounds[p + 1]``."""
    tx: np.ndarray
    arrive: np.ndarray
    of_step: np.ndarray
    routes: np.ndarray
    rates: np.ndarray
    flow_tx: np.ndarray
    bounds: np.ndarray

    def flows(self, steps: list[int]) -> np.ndarray:
        """The flows (indices into routes, rates) of these hops."""
        b = self.bounds
        return np.concatenate([np.arange(b[p], b[p + 1]) for p in self.of_step[steps].tolist()])


def _hops(engine, lanes: Lanes, stage: ChainStage, is_cancelled=None) -> _Hops | None:
    """The stage's hops, or None when two flows of the stage would share a channel (or a hop is not
    a transfer of the same bytes for all its pieces)."""
    n = stage.pieces
    pat = lanes.pattern[::n]
    if (pat < 0).any() or not (lanes.pattern.reshape(stage.steps, n) == pat[:, None]).all():
        return None
    nbytes = lanes.bytes_each
    if not (nbytes == nbytes[0]).all():
        return None
    distinct, of_step = np.unique(pat, return_inverse=True)
    of_step = of_step.ravel()
    tpls = [engine.template(lanes.patterns[int(p)], is_cancelled) for p in distinct.tolist()]
    routes = [t["route"] for t in tpls]
    flows = np.concatenate(routes)
    if not len(flows) or (flows < 0).any():
        return None
    # every flow of the stage may be active beside every other (a lane's pieces go one at a time:
    # only a group's own flows are): no channel may carry two of them
    table = RouteTable(engine.route_ch, engine.route_w)
    for together in (routes if stage.one_lane else [np.concatenate([routes[p] for p in of_step.tolist()])]):
        _, ch, _ = table.gather(together)
        if len(ch) != len(np.unique(ch)):
            return None
    unique, inverse = np.unique(flows, return_inverse=True)
    caps = np.asarray(engine.route_cap, dtype=float)
    rates, _, _ = maxmin_reference(unique, np.ones(len(unique)), table, engine.capacity,
                                   None if np.isinf(caps).all() else caps)
    if not (rates > 0).all():
        return None
    rate_of = rates[inverse.ravel()]
    flow_tx = float(nbytes[0]) / rate_of
    bounds = np.concatenate([[0], np.cumsum([len(r) for r in routes])])
    lat = np.concatenate([t["latency"] for t in tpls])
    tx = np.maximum.reduceat(flow_tx, bounds[:-1])
    arrive = np.maximum.reduceat(flow_tx + lat, bounds[:-1])
    return _Hops(tx[of_step], arrive[of_step], of_step, flows, rate_of, flow_tx, bounds)


@dataclass
class _Solved:
    stage: ChainStage
    hops: _Hops
    start: np.ndarray   # (steps, pieces)
    sent: np.ndarray


def _solve(engine, schedule: Schedule, is_cancelled=None, few_runs: bool = False):
    """(start, sent, done) of every group and each stage's solution, or None (see stage_times);
    ``few_runs``: None as soon as a stage is seen to pause more than MAX_RUNS times (see _runs)."""
    stages: list[ChainStage] | None = schedule.meta.get("chain_stages")
    if not stages or getattr(engine, "represents", 1) != 1:
        return None
    n_groups = len(schedule.groups)
    covered = np.zeros(n_groups, dtype=bool)
    for st in stages:
        covered[st.first:st.first + st.rows] = True
    joins = np.flatnonzero(~covered).tolist()
    for g in joins:
        grp = schedule.groups[g]
        if grp.pattern is not None or grp.duration_s or grp.post_delay_s or grp.deps_sent:
            return None
    start = np.empty(n_groups)
    sent = np.empty(n_groups)
    done = np.empty(n_groups)  # (every group is a stage's or a join's: each is written below)
    solved = []
    # stages and joins in id order: builders add a join after what it waits for
    pending = sorted([(st.first, st) for st in stages] + [(g, None) for g in joins], key=lambda x: x[0])
    for g, st in pending:
        if st is None:
            deps = schedule.groups[g].deps_done
            t = _latest(done, deps)
            if np.isnan(t):
                return None
            start[g] = sent[g] = done[g] = t
            continue
        lanes = _lanes_of(schedule, st)
        if lanes is None:
            return None
        hops = _hops(engine, lanes, st, is_cancelled)
        if hops is None:
            return None
        if few_runs and st.one_lane and st.pieces == 1 and st.steps > MAX_RUNS \
                and int((hops.arrive > hops.tx).sum()) > MAX_RUNS:
            return None  # (a step of one piece that arrives after it is sent: the next step waits, a pause)
        t0 = _latest(done, st.after)
        if np.isnan(t0):
            return None
        rows = slice(st.first, st.first + st.rows)
        shape = (st.steps, st.pieces)
        s, e = start[rows].reshape(shape), sent[rows].reshape(shape)
        _lattice(t0, hops.tx, hops.arrive, lanes.post_delay_s.reshape(shape)[:, 0], s, e, done[rows].reshape(shape),
                 st.one_lane)
        solved.append(_Solved(st, hops, s, e))
    return start, sent, done, solved


def stage_times(engine, schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Every group's (start, sent, done) by the recurrence, for a schedule that is nothing but the
    chain stages its builder recorded and zero-time joins between them; None when it is not, or a
    stage's flows could contend (then the engine runs it)."""
    out = _solve(engine, schedule)
    return None if out is None else out[:3]


def _latest(done: np.ndarray, deps: tuple[int, ...]) -> float:
    """The last done time of ``deps`` (0 for none); a run of consecutive ids (a join's: a stage's
    last hop) read as a slice."""
    if not deps:
        return 0.0
    a, m = deps[0], len(deps)
    if m > 8 and deps[-1] == a + m - 1 and deps == tuple(range(a, a + m)):
        return float(done[a:a + m].max())
    return float(done[list(deps)].max())


def _lattice(t0: float, tx: np.ndarray, arrive: np.ndarray, post: np.ndarray, start: np.ndarray, sent: np.ndarray,
             done: np.ndarray, one_lane: bool) -> None:
    """A stage's (start, sent, done), hops by pieces, written into the three (see the module's note)."""
    n = start.shape[1]
    j = np.arange(n, dtype=float)
    ready = np.full(n, t0)       # when each piece has arrived at this hop (the stage's start for hop 0)
    lane_free = -np.inf          # when the previous hop's last piece left the shared connection
    pace = 0.0                   # pieces reach this hop at least this far apart (the last scanned hop's tx)
    for k in range(len(tx)):
        step = float(tx[k])
        row = start[k]
        if not one_lane and 0 < step <= pace:
            # no piece waits for the one before it (the scan's answer, up to its rounding): each
            # starts as it arrives, as in a chain whose first hop is its slowest
            np.copyto(row, ready)
            np.add(row, step, out=sent[k])
            np.add(row, float(arrive[k]) + float(post[k]), out=done[k])
            ready = done[k]
            continue
        pace = step
        if k == 0 and not one_lane:  # (every piece ready at t0: the scan's answer is t0 + j tx)
            np.multiply(j, step, out=row)
            row += t0
            np.add(row, step, out=sent[k])
            np.add(row, float(arrive[k]) + float(post[k]), out=done[k])
            ready = done[k]
            continue
        np.multiply(j, step, out=row)
        np.subtract(ready, row, out=row)
        if one_lane:  # (its first piece also waits for the connection: ``ready`` is the hop before's done)
            row[0] = max(row[0], lane_free)
        np.maximum.accumulate(row, out=row)
        row += j * step
        np.maximum(row, ready, out=row)  # (the scan's rounding never starts a piece before it arrived)
        np.add(row, step, out=sent[k])
        lane_free = float(sent[k, -1])
        np.add(row, float(arrive[k]) + float(post[k]), out=done[k])
        ready = done[k]


# ---- the whole run's record, without events ---------------------------------------------------

# A hop whose pieces leave back to back transmits in one run; a stage is taken here when its hops
# transmit in at most this many runs in all: then its network states change a few times, whatever
# its size. (Hops of different speeds, whose faster ones pause between pieces, change state every
# piece; so does a ring of many leaders with a piece or two per step, 4,094 steps over 2,048
# systems: the engine, whose steady-state skip handles such periods.)
MAX_RUNS = 64
# False: every run by the engine's events (tests of its steady-state skip, whose case hierarchical is)
ENABLED = True
# two event times this close (relative) are one instant, as the engine's own clock treats them
# (it ends flows within 1e-9 of a step with it, pops a done time within 1e-12 of now)
SAME_INSTANT = 1e-12


def _runs(sv: _Solved) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(start, end, hop) of each stretch in which one of the stage's hops transmits without pause,
    or None when there are too many (or a group's flows end at different times)."""
    hops = sv.hops
    per_pattern = np.maximum.reduceat(hops.flow_tx, hops.bounds[:-1])
    if not (hops.flow_tx == np.repeat(per_pattern, np.diff(hops.bounds))).all():
        return None  # (some flow of a group ends before the others: a state change every piece)
    s, e = sv.start, sv.sent
    pause = s[:, 1:] > e[:, :-1] * (1 + SAME_INSTANT)
    if int(pause.sum()) + len(s) > MAX_RUNS:
        return None
    starts, ends, hop = [], [], []
    for k in range(len(s)):
        cut = np.flatnonzero(pause[k])
        starts.append(s[k, np.concatenate([[0], cut + 1])])
        ends.append(e[k, np.concatenate([cut, [s.shape[1] - 1]])])
        hop.append(np.full(len(cut) + 1, k))
    return np.concatenate(starts), np.concatenate(ends), np.concatenate(hop)


def run(engine, schedule: Schedule, wall0: float, is_cancelled=None):
    """The engine's SimResult for a schedule of chain stages whose flows never contend, computed
    without events (see the module's note), or None: the engine then runs it event by event.
    Network states, segments, bytes delivered over time and channel bytes are those the events would
    give (each state's time summed per stretch between its changes rather than per event: the
    sums may differ in their last bits)."""
    out = _solve(engine, schedule, is_cancelled, few_runs=True) if ENABLED else None
    if out is None:
        return None
    start, sent, done, solved = out
    runs = []
    for sv in solved:
        r = _runs(sv)
        if r is None:
            return None
        runs.append(r)
    segments, delivered = Timeline(), [(0.0, 0.0)]  # (a stretch that goes on where the last ends extends it)
    patterns: list[RatePattern] = []
    pattern_of: dict[tuple, int] = {}
    pattern_time: list[float] = []
    pattern_rate: list[float] = []
    bytes_so_far = 0.0
    events = flow_events = 0
    for sv, (r0, r1, hop) in zip(solved, runs):
        hops = sv.hops
        edges = np.unique(np.concatenate([r0, r1]))
        keep = np.concatenate([[True], edges[1:] > edges[:-1] * (1 + SAME_INSTANT)])
        edges = edges[keep]
        events += len(edges)
        lo, hi = edges[:-1], edges[1:]
        # a stretch is active over a segment when it covers it (its ends taken as the instants above)
        tol = np.abs(edges).max() * SAME_INSTANT
        active = (r0[None, :] <= lo[:, None] + tol) & (r1[None, :] >= hi[:, None] - tol)
        for t0, t1, row in zip(lo.tolist(), hi.tolist(), active):
            on = np.unique(hop[row]).tolist()
            if not on:
                continue
            flows = hops.flows(on)
            key = tuple(sorted(hops.routes[flows].tolist()))  # the network's state: its active routes
            pid = pattern_of.get(key)
            if pid is None:
                ch, w = [], []
                for f in flows.tolist():
                    rid = int(hops.routes[f])
                    ch.append(engine.route_ch[rid])
                    w.append(engine.route_w[rid] * hops.rates[f])
                ch, w = np.concatenate(ch), np.concatenate(w)
                order = np.argsort(ch, kind="stable")
                pid = pattern_of[key] = len(patterns)
                patterns.append(RatePattern(ch[order], w[order]))
                pattern_time.append(0.0)
                pattern_rate.append(float(hops.rates[flows].sum()))
            dt = t1 - t0
            pattern_time[pid] += dt
            flow_events += len(flows)
            bytes_so_far += pattern_rate[pid] * dt
            segments.stretch(t0, t1, pid)
            delivered.append((t1, bytes_so_far))
    channel_bytes = np.zeros(engine.router.n_channels)
    for rp, secs in zip(patterns, pattern_time):
        channel_bytes[rp.channels] += rp.load_Bps * secs
    makespan = float(done.max()) if len(done) else 0.0
    held = sum(rp.channels.nbytes + rp.load_Bps.nbytes for rp in patterns)
    return SimResult(makespan, start, sent, done, schedule.groups, FlowEnds(), channel_bytes, engine.capacity,
                     engine.router.channel_ends, engine.router.channel_links, segments, patterns,
                     Timeline(delivered), engine.routes, events, time.perf_counter() - wall0, 0, flow_events, held)
