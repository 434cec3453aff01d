"""The steady-state shortcut of the engine: watch a run for a state that repeats, and skip the repeats.

``_Periods`` (sim/periods.py) knows the schedule's lanes and which successor links are alike; this
watcher, called by the engine's event loop, keeps a snapshot of the network's state and compares
the state some events later with the snapshot's image one (or two) lane steps on. When they match,
the run from then on is the image of the run since the snapshot, shifted by the period, for as
long as the groups ahead stay alike and the releases of the skipped periods start exactly the
groups the skip fills in, when it fills them in: the watcher fills in the skipped periods' times,
bytes and segments and moves the state ahead in one step (exact; see test_engine_periods.py).
"""

from __future__ import annotations

import collections
import heapq
from dataclasses import dataclass

import numpy as np

from . import periodic_releases
from .periodic_releases import stretched
from .periods import _Periods
from .relation_ids import distinct


SMALL = 256  # active flows up to which a look reads them in Python (numpy's per-call cost is most of it)


def heads_and_groups(a_group: np.ndarray, heap) -> tuple[np.ndarray, np.ndarray]:
    """The active groups (each run of flows' group, in order: ``heads``) and, sorted and once each,
    the groups moving data or waiting for their data to arrive (the frontier is compared apart)."""
    if len(a_group) <= SMALL:
        # (each run's first flow by one comparison of the array with itself shifted: a third of the
        # time of walking the flows in Python, 160 flows a look)
        brk = np.empty(len(a_group), dtype=bool)
        if len(a_group):
            brk[0] = True
            np.not_equal(a_group[1:], a_group[:-1], out=brk[1:])
        heads = a_group[brk].astype(np.int64, copy=False)
    else:
        heads = a_group[run_starts(a_group)]
    # np.unique's answer (sorted, once each) from a sort: numpy 2.3+'s unique hashes first, 5x the time here
    return heads, distinct(np.concatenate([heads, np.fromiter((h[2] for h in heap), dtype=np.int64, count=len(heap))]))


def run_starts(a_group: np.ndarray) -> np.ndarray:
    """Where each run of one group's flows begins among the active flows: np.diff(a_group,
    prepend=-1)'s nonzero places, without the prepending (a copy and a broadcast)."""
    at = np.flatnonzero(a_group[1:] != a_group[:-1]) + 1
    return np.concatenate(([0], at)) if len(a_group) and a_group[0] != -1 else at


@dataclass
class _Now:
    """The event loop's state the watcher reads and moves: the active flows' groups, positions and
    remaining bytes (arrays the loop rebinds as flows come and go), the event heap, the time and the
    bytes delivered so far."""

    a_group: np.ndarray
    a_pos: np.ndarray
    a_rem: np.ndarray
    heap: list
    t: float
    delivered_bytes: float


class Shortcut:
    """Finds and skips a run's steady states. The arrays and containers given here are the engine's
    own, changed in place; ``logs`` (groups started, sent and done since the snapshot) is filled by
    the engine while a snapshot is held."""

    def __init__(self, per: _Periods, bytes_each: np.ndarray, deps_left, frontier, start, sent, done, arrival, partial,
                 outstanding, open_ends, flow_ends, segments, delivered, pattern_time, splice=None):
        self.per = per
        self.splice = splice  # a short schedule's skip standing for a longer one's (sim/spliced_run.py)
        self.bytes_each = bytes_each
        self.deps_left, self.frontier = deps_left, frontier
        self.start, self.sent, self.done = start, sent, done
        self.arrival, self.partial, self.outstanding, self.open_ends = arrival, partial, outstanding, open_ends
        self.flow_ends, self.segments, self.delivered, self.pattern_time = flow_ends, segments, delivered, pattern_time
        self.snap: dict | None = None  # the snapshot a look compares with (one of ``history``)
        # groups started, sent and done (the engine appends while there is a history; a snapshot
        # keeps where each list stood, less ``log_base``: what was dropped from the front)
        self.logs: tuple[list[int], list[int], list[int]] | None = ([], [], [])
        self.log_base = [0, 0, 0]
        self.span = [1]  # lane steps a period spans (the successor map's power the state is compared under)
        self.backoff = [0, 0, 0]  # events to let pass before looking again, the current wait, fruitless looks in a row
        self.waits = 0  # waits set (see _fruitless)
        # the recent looks' snapshots, oldest first, and each one's image group sets one and two lane
        # steps on (``index``: the bytes of the sorted image and the span -> the snapshots): a look
        # finds at once any earlier state whose image has the groups now (see ``watch``)
        self.history: collections.deque = collections.deque()
        self.index: dict[tuple[int, bytes], list[dict]] = {}
        self.held_flows = 0  # active flows the history's snapshots copy, all told
        self.misses = 0  # looks in a row whose groups were the image of no snapshot
        self.mismatches = 0  # looks in a row that found such a snapshot but not the same state
        self._found = None  # (a window's parts, what the few-period check answered for them): see _length

    HISTORY = 256  # snapshots kept at most (a period of more looks than this is not found) ...
    # ... and active flows copied in them, all told (about 6 MB): past it, the newest snapshots stay
    # and so does the oldest, held as long as the look limit allows (a period longer than the
    # history is still found from it, as when one snapshot at a time was held)
    HISTORY_FLOWS = 1 << 18
    LOG_SLACK = 4096  # log entries no snapshot reads any more, kept until there are this many

    def take_snapshot(self, heads: np.ndarray, gs: np.ndarray, r: "_Now") -> bool:
        """Keep the state now (``heads_and_groups``) in the history, under its images one and two
        lane steps on. False when a lane ends among the groups now (no image to compare with;
        nothing kept)."""
        succ = self.per.succ
        a_group, a_pos, a_rem, heap, t = r.a_group, r.a_pos, r.a_rem, r.heap, r.t
        if not len(gs) or gs[0] < 0:  # (a compute group's end of work: not with the shortcut)
            return False
        one = succ[gs]
        one.sort()  # (in place, a copy of succ's; its first entry says whether a lane ends: no min() besides)
        if one.item(0) < 0:
            return False
        logs, base = self.logs, self.log_base
        snap = {"t": t, "a_group": a_group.copy(), "a_pos": a_pos.copy(), "a_rem": a_rem.copy(),
                "heap": heap.copy(),  # (its (time, seq, group) entries: tuples, never changed in place)
                "heads": heads, "arrival": self.arrival[heads] - t, "partial": self.partial[heads],
                "open": self._open_ends_at(heads, t) if self.open_ends else [],
                "seg": len(self.segments), "delivered": r.delivered_bytes, "n_delivered": len(self.delivered),
                "log_at": (len(logs[0]) + base[0], len(logs[1]) + base[1], len(logs[2]) + base[2]), "keys": [],
                "rem_sum": None, "spent": None}
        index = self.index
        key = (1, one.tobytes())
        snap["keys"].append(key)
        index.setdefault(key, []).append(snap)
        two = succ[one]
        two.sort()
        if two.item(0) >= 0:
            key = (2, two.tobytes())
            snap["keys"].append(key)
            index.setdefault(key, []).append(snap)
        history = self.history
        history.append(snap)
        self.held_flows += len(a_group)
        limit = min(self.HISTORY, 4 * len(gs) + 16)
        while len(history) > limit:
            self._evict(0)
        while self.held_flows > self.HISTORY_FLOWS and len(history) > 2:
            self._evict(1)
        return True

    def _evict(self, place: int) -> None:
        old = self.history[place]
        del self.history[place]
        self.held_flows -= len(old["a_group"])
        for key in old["keys"]:
            same = [x for x in self.index[key] if x is not old]
            if same:
                self.index[key] = same
            else:
                del self.index[key]
        # the logs before the oldest snapshot left are read no more: drop them now and then
        at = self.history[0]["log_at"] if self.history else None
        for i, x in enumerate(self.logs):
            drop = (at[i] if at is not None else self.log_base[i] + len(x)) - self.log_base[i]
            if drop > self.LOG_SLACK or (at is None and drop):
                del x[:drop]
                self.log_base[i] += drop

    def forget(self) -> None:
        """Drop every snapshot and log (after a skip: the state has moved on)."""
        self.history.clear()
        self.index.clear()
        self.held_flows = 0
        for i, x in enumerate(self.logs):
            self.log_base[i] += len(x)
            x.clear()

    def states_match(self, T: float, r: "_Now") -> bool:
        """Is the state now the successor-image of the snapshot's, T later?

        The partly released groups (the frontier) are not compared: they need not be an image (a
        ring's next step queues up behind its current one and the queue grows; a last step's queue
        drains). The jump counts instead what the skipped periods release, and checks that exactly
        the groups it fills in become ready, each at the time it fills in (``_releases``)."""
        per, span, snap = self.per, self.span, self.snap
        a_group, a_pos, a_rem, heap, t = r.a_group, r.a_pos, r.a_rem, r.heap, r.t
        arrival, partial = self.arrival, self.partial
        if len(snap["a_group"]) != len(a_group):  # (most looks that find a snapshot: before its image is made)
            return False
        if len(a_group) and not self._sums_agree(snap, a_group, a_rem):
            return False
        m = per.step(snap["a_group"], span[0])
        o1 = np.lexsort((snap["a_pos"], m))
        o2 = np.lexsort((a_pos, a_group))
        if not (np.array_equal(m[o1], a_group[o2]) and np.array_equal(snap["a_pos"][o1], a_pos[o2])):
            return False
        if len(m):
            # each flow against its own size: a tolerance scaled by the largest piece active let a
            # 1 kB flow differ by 4e-3 B beside 4 MB pieces (4e-6 of it), and the skip copied that
            # flow's late finish into every period it filled in (6e-7 off; test_engine_periods_adversarial)
            scale = np.maximum(self.bytes_each[a_group[o2]], 1.0)
            if not (np.abs(snap["a_rem"][o1] - a_rem[o2]) <= _Periods.REL_BYTES * (scale + np.abs(a_rem[o2]))).all():
                return False
        hm = per.step(np.fromiter((h[2] for h in snap["heap"]), dtype=np.int64, count=len(snap["heap"])), span[0])
        h1 = sorted((int(g), w - snap["t"]) for (w, _, _), g in zip(snap["heap"], hm.tolist()))
        h2 = sorted((g, w - t) for w, _, g in heap)
        if [g for g, _ in h1] != [g for g, _ in h2]:
            return False
        tol = _Periods.REL * T + 1e-18
        if any(abs(a[1] - b[1]) > tol for a, b in zip(h1, h2)):
            return False
        heads = snap["heads"]
        now = per.step(heads, span[0])
        return bool(np.allclose(arrival[now] - t, snap["arrival"], rtol=0, atol=tol)
                    and np.array_equal(partial[now], snap["partial"])
                    and self._open_ends_match(snap["open"], per.step(np.asarray([h for h, _ in snap["open"]],
                                                                                 dtype=np.int64), span[0]), t, tol))

    def _sums_agree(self, snap: dict, a_group: np.ndarray, a_rem: np.ndarray) -> bool:
        """Can the flows now be the snapshot's within their tolerance, judged by the remaining bytes
        summed? A necessary condition, read before the flows are paired (two sorts), which turns down
        most looks of a run still settling (a 16 GiB NVLS tree's transient: 50 of 75 compared).

        Paired flows within REL_BYTES (s_i + |y_i|) of each other (x_i the snapshot's bytes, y_i
        now's, s_i its group's piece, at least 1) give |sum |x_i| - sum |y_i|| <= REL_BYTES (S + B),
        S and B the sums of s_i and |y_i|. Sums of n terms at least 0 are computed within n u of
        their value (u the unit round-off; 2 n u allowed for here, and for the products), so the
        check turns a pair down only where the exact sums prove it fails."""
        A = snap["rem_sum"]
        add = np.add.reduce  # (the ufunc's own: ndarray.sum's Python layers cost as much as the sum here)
        if A is None:
            A = snap["rem_sum"] = float(add(np.abs(snap["a_rem"])))
        B = float(add(np.abs(a_rem)))
        S = float(add(np.maximum(self.bytes_each[a_group], 1.0)))
        slack = 2.3e-16 * (len(a_rem) + 4)
        return abs(A - B) <= _Periods.REL_BYTES * (S + B) * (1 + 2 * slack) + slack * (A + B + S)

    def _open_ends_at(self, heads: np.ndarray, t: float) -> list[tuple[int, np.ndarray]]:
        """The end times, less ``t``, of the flows already ended in each active group some of whose
        flows are still running (NaN where a flow runs). A skip copies the groups' per-flow ends into
        the periods it fills in, so these must repeat too: two states alike in every running flow
        can differ in when a group's ended flows ended (a ring's first piece, whose third flow ended
        a microsecond earlier than in the pieces after it, was copied into them;
        test_engine_periods_adversarial)."""
        open_ends = self.open_ends
        if not open_ends:
            return []
        part = heads[self.partial[heads]]
        return [(h, open_ends[h] - t) for h in part.tolist() if h in open_ends]

    def _open_ends_match(self, kept: list[tuple[int, np.ndarray]], images: np.ndarray, t: float, tol: float) -> bool:
        """Each snapshot group's ended flows ended, relative to its time, when its image's did now (and
        no other active group has ended flows: ``partial`` was compared, so the counts agree)."""
        open_ends = self.open_ends
        if len(open_ends) < len(kept):
            return False
        for (_h, rel), g in zip(kept, images.tolist()):
            ends = open_ends.get(g)
            if ends is None or len(ends) != len(rel):
                return False
            now = ends - t
            gaps = np.isnan(rel)
            if not np.array_equal(gaps, np.isnan(now)) or (np.abs(now[~gaps] - rel[~gaps]) > tol).any():
                return False
        return True

    def jump(self, T: float, r: "_Now") -> bool:
        """Skip as many repeats of the period just seen as the groups ahead stay alike and as the
        skipped periods' releases bear out (``_releases``). Moves ``r.t`` and ``r.delivered_bytes``
        on by the periods skipped."""
        per, span, snap, logs = self.per, self.span, self.snap, self.logs
        a_group, heap, t, delivered_bytes = r.a_group, r.heap, r.t, r.delivered_bytes
        frontier, deps_left, arrival, partial = self.frontier, self.deps_left, self.arrival, self.partial
        start, sent, done, flow_ends = self.start, self.sent, self.done, self.flow_ends
        outstanding, open_ends, pattern_time = self.outstanding, self.open_ends, self.pattern_time
        segments, delivered = self.segments, self.delivered
        started, sent_l, done_l = (np.asarray(x[at - base:], dtype=np.int64)
                                   for x, at, base in zip(logs, snap["log_at"], self.log_base))
        ms = span[0]  # lane steps per period
        # the groups that the period started, sent and finished, and when
        e = distinct(np.concatenate([started, sent_l, done_l]))
        k, k_sure = self._periods_ahead(e, ms)
        if k < 1:
            return False
        masks = [np.isin(e, lg) for lg in (started, sent_l, done_l)]
        times = [arr[e[m]] for arr, m in zip((start, sent, done), masks)]
        whole = [bool(m.all()) for m in masks]  # a kind that has every group of the period: its table is img
        while True:
            img = per.images(e, k, ms)  # row j-1: the groups playing e's parts j periods on
            # each kind's groups and times, period by period (read once: checked, then filled in)
            steps = np.arange(1, k + 1)[:, None] * T
            cut = {}  # (kinds with the same groups share one table: a ring's sends and finishes)
            for mask, every in zip(masks, whole):
                if not every and mask.tobytes() not in cut:
                    cut[mask.tobytes()] = img[:, mask]
            parts = [(img if every else cut[mask.tobytes()], vals[None, :] + steps)
                     for mask, every, vals in zip(masks, whole, times)]
            if k > k_sure:
                k, parts = self._length(parts, T, k, k_sure)  # see _periods_ahead
                img = img[:k]
            checked = self._releases(parts, T, k)
            if isinstance(checked, tuple):
                break
            k = checked
            if k < 1:
                return False
        released, left = checked
        K, filled = k, parts  # (periods of time the skip stands for, and what it fills in: sim/spliced_run.py)
        if self.splice is not None:
            K, filled = self.splice.jumped(self, parts, times, k, T, k_sure)
        for arr, (gs, when) in zip((start, sent, done), filled):
            arr[gs] = when
        deps_left[released] = left
        if frontier:  # those released in full leave it (a partly released group still waits: count > 0)
            waiting = np.fromiter(frontier, dtype=np.int64, count=len(frontier))
            gone = deps_left[waiting] == 0
            if 4 * gone.sum() > len(waiting):  # most of it (a stage barrier's thousands): keep the rest, in order
                frontier.clear()
                frontier.update(dict.fromkeys(waiting[~gone].tolist()))
            else:
                for g in waiting[gone].tolist():
                    del frontier[g]
        frontier.update(dict.fromkeys(released[left > 0].tolist()))
        have = [i for i in range(len(e)) if masks[1][i] and int(e[i]) in flow_ends]
        if have:
            cols = np.asarray(have, dtype=np.int64)
            flow_ends.repeat_block(img[:, cols], e[cols], np.arange(1, k + 1, dtype=float) * T)
        shift = K * T
        # the state now, k periods on
        if len(a_group):
            starts_ = run_starts(a_group)
            heads = a_group[starts_]
            img = per.image(heads, k * ms)
            outstanding[img] = outstanding[heads]
            arrival[img] = arrival[heads] + shift
            partial[img] = partial[heads]
            for h, g in zip(heads.tolist(), img.tolist()):
                if h in open_ends:
                    open_ends[g] = open_ends.pop(h) + shift
            a_group[:] = np.repeat(img, np.diff(np.append(starts_, len(a_group))))
        if heap:
            hg = per.image(np.fromiter((g for _, _, g in heap), dtype=np.int64, count=len(heap)), k * ms)
            heap[:] = [(w + shift, sq, int(g)) for (w, sq, _), g in zip(heap, hg.tolist())]
            heapq.heapify(heap)
        # what the skipped periods carried: pattern time, segments, bytes delivered
        t1 = snap["t"]
        period = []
        for a, b, pid in segments[max(0, snap["seg"] - 1):]:
            a = max(a, t1)
            if b > a:
                period.append((a, b, pid))
                pattern_time[pid] += K * (b - a)
        if K * len(period) <= 20_000:
            # kept as the period's segments and the shift per period (sim/timeline.py)
            segments.repeat(period, (T, T, None), K)
        elif period:
            segments.append((t, t + shift, max(period, key=lambda x: x[1] - x[0])[2]))
        moved = delivered_bytes - snap["delivered"]
        pts = delivered[snap["n_delivered"]:]
        if K * len(pts) <= 20_000:
            delivered.repeat(pts, (T, moved), K)
        else:
            delivered.append((t + shift, delivered_bytes + K * moved))
        r.delivered_bytes = delivered_bytes + K * moved
        r.t = t + shift
        per.jumps += 1
        per.skipped_periods += K
        return True

    def _periods_ahead(self, e: np.ndarray, ms: int) -> int:
        """How many periods of ``ms`` lane steps a jump may fill in: the window's groups ``e`` are
        copied k periods on (k ms links along their lanes, all alike), and the state now, the
        snapshot's image one period on, is moved k periods further (its groups (k + 1) ms links
        from the snapshot's). Asking the snapshot's groups for one period more than the window's,
        rather than every group for one more, lets a skip end a period later (a hierarchical
        all-reduce's last full period inside a system was played event by event)."""
        snap, per = self.snap, self.per
        held = np.concatenate([snap["heads"], np.fromiter((h[2] for h in snap["heap"]), dtype=np.int64)])
        k = (per.reach_all(held) - ms) // ms
        if len(e) and k >= 1:
            k = min(k, per.reach_all(e) // ms)
        # The window's last period then holds its lanes' last groups, whose releases are not the
        # period before's moved on: the check on a few periods (sim/periodic_releases.py) declines
        # and a long window is checked group by group. Such a window keeps to one period less (the
        # length every group allows one more of, ``k_sure``), where the few periods still answer.
        k_sure = min(k, (per.reach_all(np.concatenate([e, held])) - 1) // ms)
        return k, k_sure

    # what ``_length`` found for a window the few-period check does not answer: the full check decides
    FULL = "full"

    def _length(self, parts, T: float, k: int, k_sure: int) -> tuple[int, list]:
        """How many periods a window whose reach allows k (one more than ``k_sure``) is checked for:
        k when its releases are checked without reading every group (too short for the few-period
        check, whose full check is cheap, or one that check answers), or when the few-period check
        answers neither k nor k_sure periods (the full check runs either way: the longer skip
        leaves fewer events to play; a ring of 16 GiB on two systems crosses its steps' ends, whose
        dependents differ, in every window); else k_sure. The same answer with
        ``periodic_releases.ENABLED`` off, so that the skip's length and the run do not depend on it.
        Returns the length and its periods' tables (the first rows of ``parts``); what was found for
        them is kept for ``_releases``."""
        self._found = None
        if not periodic_releases.applies(parts, k):
            return k, parts
        got = self._few(parts, T, k)
        if got is None:
            short = [(gs[:k_sure], w[:k_sure]) for gs, w in parts]  # (row j-1: period j)
            if k_sure < 1:
                return k_sure, short
            if periodic_releases.applies(short, k_sure):
                got_short = self._few(short, T, k_sure)
                if got_short is not None:
                    self._found = (short, got_short)
                    return k_sure, short
            got = self.FULL
        self._found = (parts, got)
        return k, parts

    def _few(self, parts, T: float, k: int):
        """The few-period check's answer for a window (``stretched``, also with it switched off), or None."""
        return stretched(self.per, self.deps_left, self.start, parts, T, k, self._tol(parts, T, k), self._releases,
                         count=False)

    def _tol(self, parts, T: float, k: int) -> float:
        """How far a start may be from its last release in a window: relative to the period, and to
        the window's times (which grow down each column: the largest is in its first or last period)."""
        ends_t = parts[0][1][[0, -1]] if k > 2 else parts[0][1].ravel()
        return _Periods.REL * T + 1e-15 * float(np.abs(ends_t).max(initial=0.0))

    def _releases(self, parts, T: float, k: int, tol: float | None = None):
        """What the k skipped periods release, checked against what the jump fills in.

        Every send and finish the jump fills in releases its dependents, as the run would. The skip
        is exact when exactly the groups it starts become ready, each at the time it starts it (the
        time of its last release), and no count goes below zero. Groups released but not ready keep
        their counts: a queue that grows behind a busy lane (a ring's next step), or a barrier.
        Returns (released groups, their counts left), or the number of periods that stay exact.
        ``parts``: the groups the window starts, sends and finishes and when, each a (period, group of
        the period) table of ids and one of times. ``tol``: how far a start may be from its last
        release (default: the window's own, as below). When the periods are images of one another,
        a few of them are checked and the answer read from theirs (sim/periodic_releases.py).
        """
        per = self.per
        s_g, s_t = parts[0][0].ravel(), parts[0][1].ravel()
        if tol is None:
            tol = self._tol(parts, T, k)
            found, self._found = self._found, None
            if found is not None and found[0] is parts and found[1] is not self.FULL and periodic_releases.ENABLED:
                periodic_releases.uses[0] += 1
                return found[1]
            # (the few-period check asked again, unless it was asked for these periods and did not answer)
            few = None if found is not None and found[0] is parts else stretched(per, self.deps_left, self.start,
                                                                                parts, T, k, tol, self._releases)
            if few is not None:
                return few
        rows = np.arange(1, k + 1)
        n_ev = [gs.shape[1] for gs, _ in parts]
        dep_s, t_s = per.released(*parts[1], sent=True)
        dep_d, t_d = per.released(*parts[2], sent=False)
        deps = np.concatenate([dep_s, dep_d])
        rel_t = np.concatenate([t_s, t_d])
        # per released group: how often and its last release's time (its first release's period only
        # if something is wrong), in tables over the ids in play (no sort: a skip of many periods
        # releases tens of thousands)
        ends = [x for x in (deps, s_g) if len(x)]
        lo, hi = (min(int(x.min()) for x in ends), max(int(x.max()) for x in ends) + 1) if ends else (0, 0)
        rel = deps - lo
        cnt = np.bincount(rel, minlength=hi - lo)
        last = np.full(hi - lo, -np.inf)
        np.maximum.at(last, rel, rel_t)
        u_at = np.flatnonzero(cnt)
        u = u_at + lo
        left = self.deps_left[u] - cnt[u_at]
        at = s_g - lo
        c_at = cnt[at]
        ok_start = ((c_at > 0) & np.isnan(self.start[s_g]) & (self.deps_left[s_g] == c_at)
                    & (np.abs(last[at] - s_t) <= tol))
        # ready in the window but not started by the jump, or released more often than it waits
        started = np.zeros(hi - lo, dtype=bool)
        started[at] = True
        if ok_start.all() and not (left < 0).any() and np.count_nonzero(left == 0) == np.count_nonzero(started):
            return u, left  # (each group it starts is at 0, so no other is: the skip holds)
        bad = [np.repeat(rows, n_ev[0])[~ok_start]]
        extra = (left < 0) | ((left == 0) & ~started[u_at])
        if extra.any():  # the period of each one's first release (only then: a skip that holds needs none)
            dep_s, cnt_s = per.dependents(parts[1][0].ravel(), sent=True)
            dep_d, cnt_d = per.dependents(parts[2][0].ravel(), sent=False)
            first = np.full(hi - lo, k + 1, dtype=np.int64)
            np.minimum.at(first, np.concatenate([dep_s, dep_d]) - lo,
                          np.concatenate([np.repeat(np.repeat(rows, n_ev[1]), cnt_s),
                                          np.repeat(np.repeat(rows, n_ev[2]), cnt_d)]))
            bad.append(first[u[extra] - lo])
        bad = np.concatenate(bad)
        if len(bad):
            return int(bad.min()) - 1
        return u, left

    def _spent(self, snap: dict) -> bool:
        """Is a skip from ``snap`` sure to find no whole period ahead (its groups' lanes end within a
        period, as after a skip to a stage's end)? Asked only once the lanes' reach is known (a run's
        first skip computes it): the jump's own count, on part of its groups (it takes the fewest
        links over more), read before the state is compared."""
        per = self.per
        if not per.reach_known:
            return False
        reach = snap["spent"]  # (a snapshot's groups' reach, read once: a look may find it again and again)
        if reach is None:
            gs = np.concatenate([snap["heads"], np.fromiter((h[2] for h in snap["heap"]), dtype=np.int64)])
            reach = snap["spent"] = per.reach_all(gs)
        return (reach - 1) // self.span[0] < 1

    def _fruitless(self) -> None:
        backoff = self.backoff
        backoff[2] += 1
        if backoff[2] >= 8:
            backoff[1] = min(16, max(1, 2 * backoff[1]))
            # Each wait another of 0 .. 2w - 1 (7 steps on, mod 2w: every one of them in turn), so
            # that two looks lie every number of events apart: a state that repeats every P events
            # is found from two looks P (or 2P) apart. Looks a constant w + 1 events apart saw only
            # periods with P or 2P a multiple of w + 1 (CollNet's period of four events, once its
            # chains inside systems had run ahead, never: its 16 GiB ran piece by piece).
            self.waits += 1
            backoff[0] = (7 * self.waits) % (2 * backoff[1])

    def watch(self, r: "_Now") -> None:
        """Look for an earlier state whose image is the state now, and skip the repeats from there.

        Every look keeps a snapshot (``take_snapshot``), filed under its image group sets one and two
        lane steps on (some runs repeat only every second step: a double tree's two trees take
        turns on a link). A look whose groups are such an image compares the whole state with that
        snapshot's, the most recent first: the first period that repeats is skipped as soon as it
        has been seen once, exactly as a later one would be. Looking costs a little at every event;
        where the state keeps not repeating (or lanes end among the groups), look less often (waits
        of up to twice 1, 2, 4, 8, then 16 events, varied: ``_fruitless``; a skip starts over). A late
        look only starts a skip later: the answer is the same."""
        backoff = self.backoff
        if backoff[0] > 0:
            backoff[0] -= 1
            return
        heads, gs = heads_and_groups(r.a_group, r.heap)
        key = gs.tobytes()
        found = self.index.get((1, key), []) + self.index.get((2, key), [])
        if found:
            self.misses = 0
            found.sort(key=lambda x: -x["t"])  # the most recent first: the shortest period
            for snap in found[:4]:
                T = r.t - snap["t"]
                self.snap = snap
                self.span[0] = 1 if (1, key) in snap["keys"] else 2
                if self._spent(snap):
                    continue
                if T > 0 and self.states_match(T, r) and self.jump(T, r):
                    self.forget()
                    self.mismatches = 0
                    backoff[:] = [0, 0, 0]
                    self.take_snapshot(*heads_and_groups(r.a_group, r.heap), r)
                    return
            self.snap = None
            self.mismatches += 1
            if self.mismatches > 16:  # the same groups come back, but never the same state
                self._fruitless()
        else:
            self.misses += 1
            self.mismatches = 0
        if not self.take_snapshot(heads, gs, r) or self.misses > 4 * len(gs) + 16:
            # a lane ends among the groups now (a tree's few pieces), or the state moved on without
            # coming back: after a few such looks in a row, look less often
            self._fruitless()
        elif not self.mismatches:
            backoff[2] = 0
