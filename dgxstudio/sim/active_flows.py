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
        if self.hi + k > self.i.shape[1]:
            n = self.hi - self.lo
            room = max(256, 2 * (n + k))
            i, f = np.zeros((3, room), dtype=np.int64), np.zeros((2, room))
            i[:, :n] = self.i[:, self.lo:self.hi]
            f[:, :n] = self.f[:, self.lo:self.hi]
            self.i, self.f, self.lo, self.hi = i, f, 0, n
        self.i[:, self.hi:self.hi + k] = ints
        self.f[:, self.hi:self.hi + k] = floats
        self.hi += k
        return self.views()

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
