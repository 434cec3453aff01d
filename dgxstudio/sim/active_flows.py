"""The engine's active flows, kept in order in buffers with room at both ends.

Why. The event loop keeps its active flows in two blocks (ints: route, group, place in the group;
floats: remaining bytes, latency), in the order they started. It rebuilt both blocks whenever flows
ended (a copy of every active flow) and whenever flows started (another). On the 992-GPU DGX-1
tree about 3,500 flows are active at an event and about 26 end at once, and those that end lie
close together, most often near the front (the oldest pieces): on average within the first 12%.

How. The blocks are views of buffers with spare room. Flows that start are written after the last
one (the buffer grows, twice as large, only when it is full). Flows that end are closed up from the
nearer end: the flows before the last one that ended move towards the back by as many places as
ended (or those after the first that ended move towards the front), so an event copies only the
flows between the end it closes up from and those that ended. The flows stay in the same order with
the same values: every array the loop computes from them is the same, bit for bit.
"""

from __future__ import annotations

import numpy as np


class ActiveFlows:
    """``ints`` (3 rows) and ``floats`` (2 rows) of the active flows, as views (``views``)."""

    def __init__(self, room: int = 256):
        self.i = np.zeros((3, room), dtype=np.int64)
        self.f = np.zeros((2, room))
        self.lo = self.hi = 0

    def views(self) -> tuple[np.ndarray, np.ndarray]:
        return self.i[:, self.lo:self.hi], self.f[:, self.lo:self.hi]

    def add(self, ints: np.ndarray, floats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flows that start, after the others; the views."""
        k = ints.shape[1]
        new_i, new_f = self.append(k)
        new_i[:] = ints
        new_f[:] = floats
        return self.views()

    def append(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Room for ``k`` flows that start, after the others: the blocks to write them in."""
        if self.hi + k > self.i.shape[1]:
            n = self.hi - self.lo
            room = max(256, 2 * (n + k))
            i, f = np.zeros((3, room), dtype=np.int64), np.zeros((2, room))
            i[:, :n] = self.i[:, self.lo:self.hi]
            f[:, :n] = self.f[:, self.lo:self.hi]
            self.i, self.f, self.lo, self.hi = i, f, 0, n
        a = self.hi
        self.hi += k
        return self.i[:, a:a + k], self.f[:, a:a + k]

    def drop(self, ended: np.ndarray, idx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The flows where ``ended`` (a mask over the views) is true leave, the others keep their
        order; the views. ``idx``: where ``ended`` is true, ascending, when the caller has it."""
        if idx is None:
            idx = np.flatnonzero(ended)
        m = len(idx)
        if not m:
            return self.views()
        n = self.hi - self.lo
        first, last = int(idx[0]), int(idx[-1]) + 1
        if last - first == m:  # (one run of flows ended, most often a group's: the rest is two slices)
            if last <= n - first:
                a = self.lo
                self.i[:, a + m:a + last] = self.i[:, a:a + first]
                self.f[:, a + m:a + last] = self.f[:, a:a + first]
                self.lo += m
            else:
                a = self.lo + first
                self.i[:, a:self.hi - m] = self.i[:, a + m:self.hi]
                self.f[:, a:self.hi - m] = self.f[:, a + m:self.hi]
                self.hi -= m
            return self.views()
        if last <= n - first:  # the flows before the last one that ended move back by m
            keep = np.flatnonzero(~ended[:last])
            a, b = self.lo, self.lo + last
            self.i[:, a + m:b] = np.take(self.i[:, a:b], keep, axis=1)
            self.f[:, a + m:b] = np.take(self.f[:, a:b], keep, axis=1)
            self.lo += m
        else:  # those after the first one that ended move forward by m
            keep = first + np.flatnonzero(~ended[first:])
            a = self.lo + first
            self.i[:, a:self.hi - m] = np.take(self.i[:, self.lo:self.hi], keep, axis=1)
            self.f[:, a:self.hi - m] = np.take(self.f[:, self.lo:self.hi], keep, axis=1)
            self.hi -= m
        return self.views()


class Started:
    """The flows of the groups an event starts, as ``ActiveFlows.add`` takes them, from the groups'
    templates (``tpls``, one per pattern) and bytes per flow (``bytes_each``).

    Why. A pipeline starts the same templates in the same order again and again (a tree's pieces of
    one step, step after step), with other group ids: what the templates give (routes, places in
    the group, latencies) is built once per such sequence (``tids``, the key), and only the groups'
    ids and bytes are spread over their flows at each event."""

    def __init__(self, tpls: list[dict], bytes_each: np.ndarray):
        self.tpls, self.bytes_each = tpls, bytes_each
        self._seqs: dict[tuple[int, ...], tuple] = {}
        self._calls = self._hits = 0
        self._remember = True

    def into(self, flows: ActiveFlows, tids: tuple[int, ...], groups: list[int]) -> np.ndarray:
        """The started flows added to ``flows`` (as ``started`` builds them); their routes."""
        seq = self._seqs.get(tids) if self._remember else None
        if seq is None:
            tpls = self.tpls
            routes = np.concatenate([tpls[i]["route"] for i in tids]) if len(tids) > 1 else tpls[tids[0]]["route"]
            ints, floats = started(routes, groups, [len(tpls[i]["route"]) for i in tids],
                                   [tpls[i]["latency"] for i in tids], self.bytes_each)
            flows.add(ints, floats)
            if self._remember:
                self._calls += 1
                if self._calls >= REMEMBER_TRIAL and 4 * self._hits < self._calls:
                    self._remember = False
                    self._seqs.clear()
                elif len(routes) <= REMEMBER_FLOWS:
                    if len(self._seqs) >= REMEMBER_SETS:
                        self._seqs.clear()
                    ks = np.array([len(tpls[i]["route"]) for i in tids], dtype=np.int64)
                    self._seqs[tids] = (routes, ints[2].copy(), floats[1].copy(),
                                        None if len(ks) == len(routes) else ks)
            return routes
        self._calls += 1
        self._hits += 1
        routes, pos, lat, ks = seq
        gs = np.array(groups, dtype=np.int64)
        ints, floats = flows.append(len(routes))
        ints[0] = routes
        ints[2] = pos
        floats[1] = lat
        if ks is None:  # (one flow a group)
            ints[1] = gs
            floats[0] = self.bytes_each[gs]
        else:
            ints[1] = np.repeat(gs, ks)
            floats[0] = np.repeat(self.bytes_each[gs], ks)
        return routes


def started(routes: np.ndarray, groups: list[int], counts: list[int], latencies: list[np.ndarray],
            bytes_each: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``ints`` and ``floats`` of the flows of ``groups`` (started in this order, ``counts`` flows
    each, their ``routes`` concatenated; each group's flow latencies), as ``add`` takes them: each
    flow's route, group and place in its group; its bytes (its group's ``bytes_each``) and latency.
    Built once per event for every group started then, not three arrays per group."""
    k = len(routes)
    gs = np.array(groups, dtype=np.int64)
    ks = np.array(counts, dtype=np.int64)
    ints = np.empty((3, k), dtype=np.int64)
    ints[0] = routes
    ints[1] = np.repeat(gs, ks)
    np.subtract(np.arange(k, dtype=np.int64), np.repeat(np.cumsum(ks) - ks, ks), out=ints[2])
    floats = np.empty((2, k))
    floats[0] = np.repeat(bytes_each[gs], ks)
    floats[1] = np.concatenate(latencies)
    return ints, floats


# Flows (routes) up to which ``Counts`` remembers a set of routes' changes, how many sets, and after
# how many calls it stops remembering if fewer than a quarter of them were met again.
REMEMBER_FLOWS = 1024
REMEMBER_SETS = 4096
REMEMBER_TRIAL = 256


class Counts:
    """The engine's per-component flow counts and hash sums (``acc``: rows k1, k2, n, each wrapping
    mod 2**64 as int64 sums do), per-route flow counts and the components touched since they were
    last brought up to date (``dirty``), as flows start and end.

    Why. Each change spread a set of routes over these with four ``np.add.at`` calls and their
    gathers, costing more than the sums at tens of flows. How. All four live in one int64 buffer,
    so a change is one ``np.add.at`` over the flat places it touches (each route: its component's
    three places and its own) with the values added there; and a set of routes met again (a
    pipeline's pieces start and end alike, step after step; ``key``: the caller's key for the set,
    when it has a cheaper one than the routes' bytes) reuses those places and values. The same
    integers are added to the same places (in another order: integer sums mod 2**64 do not depend
    on it), so the counts and sums are the same bit for bit."""

    def __init__(self, route_comp: np.ndarray, h1: np.ndarray, h2: np.ndarray, n_comp: int, n_routes: int):
        self.flat = np.zeros(3 * n_comp + n_routes, dtype=np.int64)
        self.acc = self.flat[:3 * n_comp].reshape(3, n_comp)
        self.route_count = self.flat[3 * n_comp:]
        self.dirty = np.zeros(n_comp, dtype=bool)
        # per route: its four places in ``flat`` and the values a flow on it adds there
        rc = np.asarray(route_comp, dtype=np.int64)[:n_routes]
        self.route_comp = rc
        # (a row per route: a set's rows are taken whole)
        self.places = np.stack([rc, rc + n_comp, rc + 2 * n_comp, 3 * n_comp + np.arange(len(rc), dtype=np.int64)],
                               axis=1)
        self.values = np.stack([np.asarray(h1, dtype=np.int64)[:n_routes], np.asarray(h2, dtype=np.int64)[:n_routes],
                                np.ones(len(rc), dtype=np.int64), np.ones(len(rc), dtype=np.int64)], axis=1)
        self._sets: dict = {}
        self._calls = self._hits = 0
        self._remember = True

    def change(self, routes: np.ndarray, sign: int, key=None) -> None:
        """Flows on ``routes`` start (``sign`` 1) or end (-1)."""
        remember = self._remember and len(routes) <= REMEMBER_FLOWS
        if remember:
            key = (routes.tobytes() if key is None else key, sign)
            self._calls += 1
            hit = self._sets.get(key)
            if hit is not None:
                self._hits += 1
                places, values, comps = hit
                np.add.at(self.flat, places, values)
                self.dirty[comps] = True
                return
            if self._calls >= REMEMBER_TRIAL and 4 * self._hits < self._calls:
                self._remember = remember = False
                self._sets.clear()
        places = self.places[routes].ravel()
        values = self.values[routes].ravel()
        if sign != 1:
            values *= sign
        comps = self.route_comp[routes]
        np.add.at(self.flat, places, values)
        self.dirty[comps] = True
        if remember:
            if len(self._sets) >= REMEMBER_SETS:
                self._sets.clear()
            self._sets[key] = (places, values, comps)
