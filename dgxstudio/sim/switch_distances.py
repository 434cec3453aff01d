"""Least-cost distances and path counts from a few switches to every device outside systems, all
sources at once (numpy), in the router's whole cost units: which switches lie on some least-cost
path between two leaves, and how many such paths there are, without building the leaves' routes.

Between two devices outside systems the router searches the devices outside systems only, and when
``Router._uniform_outside`` holds every bundle there costs a whole number of one unit (1e9 / lcm),
so its least-cost paths are exactly the shortest paths of that graph under those whole costs. A
device v lies on one between a and b exactly when d(a, v) + d(v, b) = d(a, b) (costs are the same
both ways), and the number of them is the count of shortest paths, summed along the tight edges.
With more than ``max_paths`` of them the router keeps an even sample, so that set is not this one:
callers ask the router for such a pair.
"""

from __future__ import annotations

import numpy as np

_MANY = 1e6  # path counts are capped here (only compared with max_paths, at most 4,096)


class OutsideGraph:
    """The router's graph of devices outside systems, its edges in whole cost units."""

    def __init__(self, router):
        system, bundles, lcm = router._system, router.fabric.bundles, router._lcm
        self.names = [d for d in router.fabric.adj if system.get(d) is None]
        self.index = {d: i for i, d in enumerate(self.names)}
        eu, ev, w = [], [], []
        for u in self.names:
            i = self.index[u]
            for v, _ in router._outside_cost[u]:
                eu.append(i)
                ev.append(self.index[v])
                w.append(lcm // int(bundles[(u, v) if u <= v else (v, u)].bandwidth))
        order = np.argsort(np.asarray(ev, dtype=np.int64), kind="stable")
        self.eu = np.asarray(eu, dtype=np.int64)[order]
        self.ev = np.asarray(ev, dtype=np.int64)[order]
        self.w = np.asarray(w, dtype=float)[order]
        # each target's edges are one run of the sorted edges
        self.starts = np.flatnonzero(np.r_[True, self.ev[1:] != self.ev[:-1]]) if len(self.ev) else np.zeros(0, int)
        self.targets = self.ev[self.starts]

    def distances(self, sources: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(least cost, number of least-cost paths capped at a million) from each source (rows) to
        every device (columns); inf and 0 where unreachable."""
        n, rows = len(self.names), np.arange(len(sources))
        cols = np.array([self.index[s] for s in sources], dtype=np.int64)
        dist = np.full((len(sources), n), np.inf)
        dist[rows, cols] = 0.0
        if not len(self.ev):
            return dist, (dist == 0).astype(float)
        for _ in range(n):  # (Bellman-Ford: as many rounds as the longest least-cost path has hops)
            reach = np.minimum.reduceat(dist[:, self.eu] + self.w, self.starts, axis=1)
            new = dist.copy()
            new[:, self.targets] = np.minimum(dist[:, self.targets], reach)
            if np.array_equal(new, dist):
                break
            dist = new
        tight = (dist[:, self.eu] + self.w == dist[:, self.ev]) & np.isfinite(dist[:, self.ev])
        count = np.zeros_like(dist)
        count[rows, cols] = 1.0
        for _ in range(n):  # (the tight edges form a DAG: costs are positive)
            new = np.zeros_like(dist)
            new[:, self.targets] = np.add.reduceat(np.where(tight, count[:, self.eu], 0.0), self.starts, axis=1)
            new[rows, cols] = 1.0
            np.minimum(new, _MANY, out=new)
            if np.array_equal(new, count):
                break
            count = new
        return dist, count
