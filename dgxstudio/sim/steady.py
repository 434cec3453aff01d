"""The steady-state shortcut of the engine: watch a run for a state that repeats, and skip the repeats.

``_Periods`` (sim/periods.py) knows the schedule's lanes and which successor links are alike; this
watcher, called by the engine's event loop, keeps a snapshot of the network's state and compares
the state some events later with the snapshot's image one (or two) lane steps on. When they match,
the run from then on is the image of the run since the snapshot, shifted by the period, for as
long as the groups ahead stay alike: the watcher fills in the skipped periods' times, bytes and
segments and moves the state ahead in one step (exact; see the tests in test_engine_periods.py).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from .periods import _Periods


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

    def __init__(self, per: _Periods, groups, deps_left, frontier, start, sent, done, arrival, partial,
                 outstanding, open_ends, flow_ends, segments, delivered, pattern_time):
        self.per = per
        self.bytes_each = np.fromiter((g.bytes_each for g in groups), dtype=float, count=len(groups))
        self.deps_left, self.frontier = deps_left, frontier
        self.start, self.sent, self.done = start, sent, done
        self.arrival, self.partial, self.outstanding, self.open_ends = arrival, partial, outstanding, open_ends
        self.flow_ends, self.segments, self.delivered, self.pattern_time = flow_ends, segments, delivered, pattern_time
        self.snap: dict | None = None
        self.logs: tuple[list[int], list[int], list[int]] | None = None
        self.span = [1]  # lane steps a period spans (the successor map's power the state is compared under)
        self.backoff = [0, 0, 0]  # events to let pass before looking again, the current wait, fruitless looks in a row


    def take_snapshot(self, gs: np.ndarray, r: "_Now") -> None:
        per, span = self.per, self.span
        a_group, a_pos, a_rem, heap, t = r.a_group, r.a_pos, r.a_rem, r.heap, r.t
        frontier, deps_left, arrival, partial = self.frontier, self.deps_left, self.arrival, self.partial
        mapped = per.step(gs, span[0]) if len(gs) else gs
        if not len(gs) or (mapped < 0).any():
            self.snap, self.logs = None, None
            return
        heads = a_group[np.flatnonzero(np.diff(a_group, prepend=-1))] if len(a_group) else a_group
        fk = np.sort(np.fromiter(frontier, dtype=np.int64, count=len(frontier)))
        # what may become active before the image is due: these groups, their successors, and the
        # partly released groups (a lane idle now, waiting for its data) and theirs
        allowed = np.union1d(gs, fk)
        for _ in range(span[0]):
            nxt = per.step(allowed, 1)
            allowed = np.union1d(allowed, nxt[nxt >= 0])
        self.snap = {"t": t, "mapped": np.sort(mapped), "allowed": allowed,
                     "a_group": a_group.copy(), "a_pos": a_pos.copy(), "a_rem": a_rem.copy(),
                     "heap": [(w, g) for w, _, g in heap], "fk": fk, "fv": deps_left[fk],
                     "heads": heads, "arrival": arrival[heads] - t, "partial": partial[heads].copy(),
                     "seg": len(self.segments), "delivered": r.delivered_bytes, "n_delivered": len(self.delivered)}
        self.logs = ([], [], [])

    def states_match(self, T: float, r: "_Now") -> tuple[np.ndarray, np.ndarray] | None:
        """Is the state now the successor-image of the snapshot's, T later?"""
        per, span, snap = self.per, self.span, self.snap
        a_group, a_pos, a_rem, heap, t = r.a_group, r.a_pos, r.a_rem, r.heap, r.t
        frontier, deps_left, arrival, partial = self.frontier, self.deps_left, self.arrival, self.partial
        m = per.step(snap["a_group"], span[0])
        if len(m) != len(a_group):
            return None
        o1 = np.lexsort((snap["a_pos"], m))
        o2 = np.lexsort((a_pos, a_group))
        if not (np.array_equal(m[o1], a_group[o2]) and np.array_equal(snap["a_pos"][o1], a_pos[o2])):
            return None
        if len(m):
            scale = float(self.bytes_each[a_group].max())
            if not np.allclose(snap["a_rem"][o1], a_rem[o2], rtol=_Periods.REL, atol=_Periods.REL * max(scale, 1.0)):
                return None
        hm = per.step(np.fromiter((g for _, g in snap["heap"]), dtype=np.int64, count=len(snap["heap"])), span[0])
        h1 = sorted((int(g), w - snap["t"]) for (w, _), g in zip(snap["heap"], hm.tolist()))
        h2 = sorted((g, w - t) for w, _, g in heap)
        if [g for g, _ in h1] != [g for g, _ in h2]:
            return None
        tol = _Periods.REL * T + 1e-18
        if any(abs(a[1] - b[1]) > tol for a, b in zip(h1, h2)):
            return None
        heads = snap["heads"]
        now = per.step(heads, span[0])
        if not (np.allclose(arrival[now] - t, snap["arrival"], rtol=0, atol=tol)
                and np.array_equal(partial[now], snap["partial"])):
            return None
        # the partly released groups: either all moved one lane step (a ring's next step waiting
        # for its pieces), or those waiting since the snapshot are barriers (a stage's end waiting
        # for all its pieces), whose counts only go down, and the others moved one lane step
        fk1, fv1 = snap["fk"], snap["fv"]
        fk2 = np.sort(np.fromiter(frontier, dtype=np.int64, count=len(frontier)))
        fv2 = deps_left[fk2]

        def moved(k1, v1, k2, v2) -> bool:
            m = per.step(k1, span[0])
            if len(m) != len(k2) or (m < 0).any():
                return False
            o = np.argsort(m)
            return np.array_equal(m[o], k2) and np.array_equal(v1[o], v2)

        if moved(fk1, fv1, fk2, fv2):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        fixed, i1, i2 = np.intersect1d(fk1, fk2, assume_unique=True, return_indices=True)
        if (fv2[i2] > fv1[i1]).any():
            return None
        if not moved(np.delete(fk1, i1), np.delete(fv1, i1), np.delete(fk2, i2), np.delete(fv2, i2)):
            return None
        return fixed, fv1[i1] - fv2[i2]

    def jump(self, T: float, barriers: tuple[np.ndarray, np.ndarray], r: "_Now") -> bool:
        """Skip as many repeats of the period just seen as the groups ahead stay alike, and as no
        barrier would be released (``barriers``: what each one was released per period). Moves
        ``r.t`` and ``r.delivered_bytes`` on by the periods skipped."""
        per, span, snap, logs = self.per, self.span, self.snap, self.logs
        a_group, heap, t, delivered_bytes = r.a_group, r.heap, r.t, r.delivered_bytes
        frontier, deps_left, arrival, partial = self.frontier, self.deps_left, self.arrival, self.partial
        start, sent, done, flow_ends = self.start, self.sent, self.done, self.flow_ends
        outstanding, open_ends, pattern_time = self.outstanding, self.open_ends, self.pattern_time
        segments, delivered = self.segments, self.delivered
        started, sent_l, done_l = (np.asarray(x, dtype=np.int64) for x in logs)
        touched = np.unique(np.concatenate([started, sent_l, done_l, snap["heads"],
                                            np.fromiter((g for _, g in snap["heap"]), dtype=np.int64),
                                            np.setdiff1d(snap["fk"], barriers[0], assume_unique=True)]))
        ms = span[0]  # lane steps per period
        k = (per.reach_all(touched) - 1) // ms
        fixed, per_period = barriers
        busy = per_period > 0
        if busy.any():
            k = min(k, int(((deps_left[fixed[busy]] - 1) // per_period[busy]).min()))
        if k < 1:
            return False
        # the partly released groups now (read before the images below overwrite their counters)
        fk = np.setdiff1d(np.fromiter(frontier, dtype=np.int64, count=len(frontier)), fixed, assume_unique=True)
        f_left = deps_left[fk].copy()
        # times of the groups that the skipped periods start, send and finish
        e = np.unique(np.concatenate([started, sent_l, done_l]))
        kinds = [(arr, np.isin(e, lg), arr[e[np.isin(e, lg)]]) for arr, lg in
                 ((start, started), (sent, sent_l), (done, done_l))]
        ends = [int(np.searchsorted(e, g)) for g in np.unique(sent_l).tolist() if g in flow_ends]
        img = per.images(e, k * ms)[ms - 1::ms]  # row j-1: the groups playing e's parts j periods on
        steps = np.arange(1, k + 1, dtype=float)[:, None] * T
        for arr, mask, vals in kinds:
            arr[img[:, mask]] = vals[None, :] + steps
        deps_left[img[:, kinds[0][1]]] = 0
        for i in ends:
            for j in range(1, k + 1):
                flow_ends.repeat(int(img[j - 1, i]), int(e[i]), j * T)
        shift = k * T
        # the state now, k periods on
        if len(a_group):
            starts_ = np.flatnonzero(np.diff(a_group, prepend=-1))
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
        if frontier:
            fi = per.image(fk, k * ms)
            deps_left[fi] = f_left
            deps_left[fixed] -= k * per_period
            frontier.clear()
            frontier.update(dict.fromkeys(fi.tolist()))
            frontier.update(dict.fromkeys(fixed.tolist()))
        # what the skipped periods carried: pattern time, segments, bytes delivered
        t1 = snap["t"]
        period = []
        for a, b, pid in segments[max(0, snap["seg"] - 1):]:
            a = max(a, t1)
            if b > a:
                period.append((a, b, pid))
                pattern_time[pid] += k * (b - a)
        if k * len(period) <= 20_000:
            for j in range(1, k + 1):
                segments.extend((a + j * T, b + j * T, pid) for a, b, pid in period)
        elif period:
            segments.append((t, t + shift, max(period, key=lambda x: x[1] - x[0])[2]))
        moved = delivered_bytes - snap["delivered"]
        pts = delivered[snap["n_delivered"]:]
        if k * len(pts) <= 20_000:
            for j in range(1, k + 1):
                delivered.extend((x + j * T, y + j * moved) for x, y in pts)
        else:
            delivered.append((t + shift, delivered_bytes + k * moved))
        r.delivered_bytes = delivered_bytes + k * moved
        r.t = t + shift
        per.jumps += 1
        per.skipped_periods += k
        return True

    def watch(self, r: "_Now") -> None:
        # Looking costs a little at every event; where the state keeps not repeating, look less
        # often (waits double up to 32 events; a skip starts over). A late look only starts a
        # skip later: the answer is the same.
        backoff, span = self.backoff, self.span
        if backoff[0] > 0:
            backoff[0] -= 1
            return
        gs = _Periods.group_set(r.a_group, r.heap)
        snap = self.snap
        if snap is None:
            self.take_snapshot(gs, r)
            return
        if len(gs) == len(snap["mapped"]) and np.array_equal(gs, snap["mapped"]):
            T = r.t - snap["t"]
            barriers = self.states_match(T, r) if T > 0 else None
            if barriers is not None and self.jump(T, barriers, r):
                gs = _Periods.group_set(r.a_group, r.heap)
                backoff[1] = 0
            else:
                backoff[1] = min(32, max(1, 2 * backoff[1]))
                backoff[0] = backoff[1]
                # the same groups one lane step on, but not the same state: some runs repeat only
                # every second step (a double tree's two trees take turns on a link), so the next
                # look compares with the state two steps on, and the one after with one step
                span[0] = 3 - span[0]
            self.take_snapshot(gs, r)
        elif not np.isin(gs, snap["allowed"]).all():
            # the state moved on without coming back: after a few such looks in a row, look less
            # often (a schedule without a steady state, a tree's few pieces, pays little for it)
            backoff[2] += 1
            if backoff[2] >= 8:
                backoff[1] = min(16, max(1, 2 * backoff[1]))
                backoff[0] = backoff[1]
            self.take_snapshot(gs, r)
            return
        else:
            return
        backoff[2] = 0
