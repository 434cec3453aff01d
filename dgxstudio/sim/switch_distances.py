"""Least-cost distances and path counts from a few switches to every device outside systems, all
sources at once (numpy), in the router's whole cost units: which switches lie on some least-cost
path between two leaves, and how many such paths there are, without building the leaves' routes.

Between two devices outside systems the router searches the devices outside systems only, and when
``Router._uniform_outside`` holds every bundle there costs a whole number of one unit (1e9 / lcm),
so its least-cost paths are exactly the shortest paths of that graph under those whole costs. A
device v lies on one between a and b exactly when d(a, v) + d(v, b) = d(a, b) (costs are the same
both ways), and the number of them is the count of shortest paths, summed along the tight edges.
With more than ``max_paths`` of them the router keeps an even sample, so that set is not this one:
``sample`` reads the sample's devices (or callers ask the router for such a pair).

Twins (devices with the same neighbours at the same costs: the leaves of one pod, every rail's)
have the same rows but at their own two columns, so one search serves a class of twins, over every
rail's call (see ``distances``).
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
        self._first: dict[tuple, int] = {}  # a class of twins -> its first source asked
        self._reps: dict[int, int] = {}  # a source -> that first source of its class
        self._kept_rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # see row
        self._nbrs: dict[int, list[tuple[int, float]]] = {}  # see _neighbours
        self._kept_lists: dict[str, tuple[list[float], list[float]]] = {}  # see sample
        self._rows: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # that source -> its two rows
        self._twins = bool(len(self.w)) and bool((self.w > 0).all())  # (see distances)
        self.kept: dict[tuple, tuple] = {}  # collnet_root._sampled's twin pairs' routes, every rail's

    def _class(self, i: int) -> tuple:
        """Device i's neighbours with their costs (its twins have the same), or i alone when some
        cost is not positive."""
        return tuple(sorted(self._neighbours(i))) if self._twins else (i,)

    def _rep(self, i: int) -> int:
        """The first source asked of device i's class of twins."""
        first = self._reps.get(i)
        if first is None:
            first = self._reps[i] = self._first.setdefault(self._class(i), i)
        return first

    def cost(self, a: str, b: str) -> float:
        """The least cost between two devices (``distances``' entry)."""
        i, j = self.index[a], self.index[b]
        if i == j:
            return 0.0
        r = self._rep(i)
        if r not in self._rows:
            self.distances([a])
        return float(self._rows[r][0][i if j == r else j])

    def row(self, a: str) -> np.ndarray:
        """The least costs from a to every device (``distances``' row, kept: do not change it)."""
        return self._both_rows(a)[0]

    def _both_rows(self, a: str) -> tuple[np.ndarray, np.ndarray]:
        got = self._kept_rows.get(a)
        if got is None:
            dist, count = self.distances([a])
            got = self._kept_rows[a] = (dist[0], count[0])
        return got

    def _lists(self, a: str) -> tuple[list[float], list[float]]:
        got = self._kept_lists.get(a)
        if got is None:
            got = self._kept_lists[a] = tuple(x.tolist() for x in self._both_rows(a))
        return got

    def _neighbours(self, u: int) -> list[tuple[int, float]]:
        """Device u's neighbours with the costs to them (its edges in: a bundle costs alike both ways)."""
        got = self._nbrs.get(u)
        if got is None:
            k = int(np.searchsorted(self.targets, u))
            lo, hi = (self.starts[k], self.starts[k + 1] if k + 1 < len(self.starts) else len(self.ev)) \
                if k < len(self.targets) and self.targets[k] == u else (0, 0)
            got = self._nbrs[u] = list(zip(self.eu[lo:hi].tolist(), self.w[lo:hi].tolist()))
        return got

    def sample(self, a: str, b: str, max_paths: int) -> set[str] | None:
        """The devices on the router's paths from a to b: every least-cost path sorted by its devices'
        names and, past ``max_paths`` of them, ``max_paths`` evenly spaced (``Router._subsample``),
        found without listing the paths: sorted paths that all start at a are the depth-first order
        of the least-cost paths' graph with each device's next devices by name, and a subtree holds
        as many paths as there are least-cost paths from its device to b (b's count, the same both
        ways), so the sampled paths' positions lead down to their devices. None when the count is
        capped (``_MANY``)."""
        d_a, (d_b, c_b) = self._lists(a)[0], self._lists(b)  # (read item by item: lists)
        ia, ib = self.index[a], self.index[b]
        n, total = c_b[ia], d_a[ib]
        if not n or n >= _MANY:
            return None
        n = int(n)
        if n > max_paths:
            step = n / max_paths
            wanted = [int(i * step) for i in range(max_paths)]
        else:
            wanted = list(range(n))
        names, on = self.names, set()
        todo = [(ia, wanted)]  # a device and the positions of the wanted paths among those through it
        while todo:
            u, at = todo.pop()
            on.add(u)
            if u == ib:
                continue
            du = d_a[u]
            nxt = sorted((names[v], v) for v, w in self._neighbours(u) if du + w == d_a[v] and d_a[v] + d_b[v] == total)
            base, j = 0, 0
            for _, v in nxt:
                c = int(c_b[v])
                mine = []
                while j < len(at) and at[j] < base + c:
                    mine.append(at[j] - base)
                    j += 1
                if mine:
                    todo.append((v, mine))
                base += c
        return {names[v] for v in on}

    def distances(self, sources: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(least cost, number of least-cost paths capped at a million) from each source (rows) to
        every device (columns); inf and 0 where unreachable.

        Searched once per class of twins (``_class``), the first source asked of it r: where every
        cost is positive, a least-cost path from r's twin s never passes through r (going to their
        common neighbour directly costs less), so s's paths to any other device v are r's with the
        first device renamed: the same cost and count, but at s itself (0, one path) and at r (r's
        to s, the same both ways). The rows are kept for later calls (CollNet asks rail by rail;
        a pod's leaves of every rail are twins)."""
        cols = [self.index[s] for s in sources]
        reps = [self._rep(i) for i in cols]
        todo = list(dict.fromkeys(r for r in reps if r not in self._rows))
        if todo:
            dist, count = self._search(np.array(todo, dtype=np.int64))
            for k, r in enumerate(todo):
                self._rows[r] = (dist[k], count[k])
        dist = np.array([self._rows[r][0] for r in reps]).reshape(len(reps), len(self.names))
        count = np.array([self._rows[r][1] for r in reps]).reshape(len(reps), len(self.names))
        for row, (i, r) in enumerate(zip(cols, reps)):
            if i != r:
                dist[row, r], count[row, r] = self._rows[r][0][i], self._rows[r][1][i]
                dist[row, i], count[row, i] = 0.0, 1.0
        return dist, count

    def _search(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``distances`` from the devices at ``cols``, searched (Bellman-Ford, every source at once)."""
        n, rows = len(self.names), np.arange(len(cols))
        dist = np.full((len(cols), n), np.inf)
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
