"""Least-cost routes between switches and across the fabric: the searches ``Router`` runs, and the
ways it finds a route between switches without one (the reverse of a route already found, two
leaves under common spines, a pair of twins' route renamed). Part of ``Router`` (``routing.py``)."""

from __future__ import annotations

import heapq
import math

_ENUMERATION_LIMIT = 4096


class SwitchRoutes:
    """Searches of ``Router``: mixed into it, using its tables (``_adj_cost``, ``_system``, ``_gpus``)."""

    def _dag(self, src: str, dst: str, prune: bool = True) -> dict[str, list[str]] | None:
        """Least-cost paths from src to dst as a predecessor map, or None if unreachable.

        A bidirectional Dijkstra keeping ties: one search from each end, so a route across a fat tree
        settles the two ends' leaves and the spines between them, not the whole fabric. Every
        least-cost path is kept: each one crosses a *meeting edge* (its last node settled from src,
        the next settled from dst), and the paths are the forward ties to the edge joined to the
        backward ties from it. Paths through a GPU or a third system's insides are never formed.

        With ``prune`` (the same map, ``prune=False`` the plain search), once a path is known a
        neighbour is not queued when reaching it costs more than that path less the other side's
        least open distance (what any path through it still needs), with a margin above the tie
        tolerance: such an entry could never be settled before the search stops (its stop test
        would hold first), and only settled nodes' distances and predecessors are read, so the
        nodes settled, in their order, and the map are the plain search's. It spares a cross-pod
        search its cores' pushes to every other pod's spines.
        """
        gpus = self._gpus
        system = self._system
        ends = (system[src], system[dst])
        # Between two devices outside systems every neighbour inside a system is skipped below: the
        # lists without them (same order) give the same search with fewer steps (a leaf's NICs).
        adj = self._outside_cost if ends == (None, None) else self._adj_cost
        dist = ({src: 0.0}, {dst: 0.0})
        preds: tuple[dict[str, list[str]], dict[str, list[str]]] = ({src: []}, {dst: []})
        heaps = ([(0.0, src)], [(0.0, dst)])
        done: tuple[set, set] = (set(), set())
        origin = (src, dst)
        inf = best = float("inf")
        tol = 1e-9

        def top(side: int) -> float:
            h = heaps[side]
            while h and h[0][1] in done[side]:
                heapq.heappop(h)
            return h[0][0] if h else float("inf")

        while True:
            tf, tb = top(0), top(1)
            if tf + tb > best * (1 + tol) + 1e-12 or (tf == float("inf") and tb == float("inf")):
                break
            side = 0 if tf <= tb else 1
            # (the stop test's bound, raised by a margin far above its tolerance and the ties')
            past = (best * (1 + tol) + 1e-12) * (1 + 1e-6) + 1e-6 - (tb if side == 0 else tf) if prune else inf
            d, u = heapq.heappop(heaps[side])
            done[side].add(u)
            if u in gpus and u != origin[side]:
                continue
            other = 1 - side
            du = dist[side]
            pu = preds[side]
            settled, met = done[side], done[other]
            for v, cost in adj[u]:
                nd = d + cost
                if nd > past and v not in met:  # (neither a meeting nor a push, as below)
                    continue
                sv = system[v]
                if sv is not None and sv not in ends:
                    continue
                if v in met and (v == origin[other] or v not in gpus):
                    total = nd + dist[other][v]
                    if total < best:
                        best = total
                if v in settled or nd > past:
                    continue
                old = du.get(v)
                if old is None or nd < old * (1 - 1e-12) - 1e-12:
                    du[v] = nd
                    pu[v] = [u]
                    heapq.heappush(heaps[side], (nd, v))
                elif abs(nd - old) <= 1e-9 * max(1.0, old):
                    pu[v].append(u)
        if best == float("inf"):
            return None
        # Meeting edges on a least-cost path: u settled from src (and passable), v settled from dst.
        fwd_done, bwd_done = done
        df, db = dist
        meet: dict[str, list[str]] = {}
        for u in fwd_done:
            if u in gpus and u != src:
                continue
            for v, cost in adj[u]:
                if v not in bwd_done or (v in gpus and v != dst) or v in meet.get(u, ()):
                    continue
                sv = system[v]
                if sv is not None and sv not in ends:
                    continue
                if abs(df[u] + cost + db[v] - best) <= 1e-9 * max(1.0, best):
                    meet.setdefault(v, []).append(u)
        # Forward ties reaching the meeting edges' tails, backward ties from their heads to dst.
        out: dict[str, list[str]] = {}
        stack = [u for us in meet.values() for u in us]
        seen = set(stack)
        while stack:
            x = stack.pop()
            out[x] = list(preds[0][x])
            for p in out[x]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        # Walk from the meeting heads toward dst; each backward tie (x closer to dst than w) makes w a
        # predecessor of x. A head's predecessors include its meeting tails.
        stack = list(meet)
        heads_seen = set(stack)
        for v, us in meet.items():
            lst = out.setdefault(v, [])
            for u in us:
                if u not in lst:
                    lst.append(u)
        while stack:
            w = stack.pop()
            for x in preds[1][w]:
                lst = out.setdefault(x, [])
                if w not in lst:
                    lst.append(w)
                if x not in heads_seen:
                    heads_seen.add(x)
                    stack.append(x)
        return out

    def _enumerate(self, preds: dict[str, list[str]], src: str, dst: str) -> list[list[str]]:
        return self._subsample(sorted(self._collect(preds, src, dst)))

    @staticmethod
    def _collect(preds: dict[str, list[str]], src: str, dst: str) -> list[list[str]]:
        """The paths of a predecessor map from src to dst (at most ``_ENUMERATION_LIMIT``), unsorted."""
        out: list[list[str]] = []
        stack = [(dst, [dst])]
        while stack and len(out) < _ENUMERATION_LIMIT:
            node, tail = stack.pop()
            if node == src:
                out.append(tail[::-1])
                continue
            for p in reversed(preds[node]):
                stack.append((p, tail + [p]))
        return out

    def _subsample(self, out: list[list[str]]) -> list[list[str]]:
        """At most ``max_paths`` of the sorted paths, evenly spaced."""
        if len(out) > self.max_paths:
            step = len(out) / self.max_paths
            out = [out[int(i * step)] for i in range(self.max_paths)]
        return out

    def _uniform_outside(self) -> bool:
        """Routes between two devices outside systems (switch to switch) are the other way's reversed.

        Such a route crosses only bundles between devices outside systems. When their bandwidths are
        whole numbers, every cost 1e9 / bandwidth is a whole multiple of one unit 1e9 / lcm, so two
        path costs are equal or differ by at least that unit, which is far above the search's tie
        tolerance (1e-9 of the cost) and float rounding when the longest conceivable path costs under
        a million units: the search from either end then keeps exactly the least-cost paths, the same
        set, reversed."""
        if self._uniform is None:
            system = self._system
            adj, bundles = self.fabric.adj, self.fabric.bundles
            if self._ends is not None:
                # the same, read from the bundles' ends already numbered (a ring's loads did): a
                # bundle's two channels carry its bandwidth
                _, _, ends, owner, _ = self._ends
                outside = (owner[ends[:, 0]] < 0) & (owner[ends[:, 1]] < 0)
                bandwidths = set(self.capacity[0::2][outside].tolist())
                outside_devices = range(int((owner < 0).sum()))
            else:
                # the bundles between devices outside systems, read from those devices' neighbours
                outside_devices = [d for d in adj if system.get(d) is None]
                bandwidths = {bundles[(u, v) if u <= v else (v, u)].bandwidth
                              for u in outside_devices for v in adj[u] if system.get(v) is None}
            ok = all(bw == bw // 1 and 0 < bw < 2.0 ** 53 for bw in bandwidths)
            if ok and bandwidths:
                lcm = self._lcm = math.lcm(*(int(bw) for bw in bandwidths))
                # the cheapest bundle between switches, in units (lcm // bw falls as bw grows)
                self._cheapest = lcm // int(max(bandwidths))
                # the costliest path visits every outside device once, each step at the highest cost
                ok = len(outside_devices) * (lcm / min(bandwidths)) < 1e6
            self._uniform = ok
        return self._uniform

    def _twin_class(self, node: str) -> tuple:
        """A switch's neighbours a route may enter (outside systems, not GPUs) with their costs in
        whole units (``_uniform_outside``): switches of one class are twins (leaves of one pod under
        the same spines)."""
        key = self._twin_keys.get(node)
        if key is None:
            lcm, bundles, system, gpus = self._lcm, self.fabric.bundles, self._system, self._gpus
            key = self._twin_keys[node] = tuple(sorted(
                (v, lcm // int(bundles[(node, v) if node <= v else (v, node)].bandwidth))
                for v, _ in self._adj_cost[node] if system.get(v) is None and v not in gpus))
        return key

    def _twin_paths(self, src: str, dst: str) -> list[list[str]] | None:
        """Every least-cost path between two switches from those of a pair of their twins, without a
        search, or None. Exchanging a switch with its twin (same neighbours, same costs) maps the
        routes' graph onto itself, so the twins' least-cost paths with their ends renamed are these
        (a least-cost path never passes through a twin of its own end: going to the common
        neighbour directly costs less)."""
        cs, cd = self._twin_class(src), self._twin_class(dst)
        rep = self._twin_routes.get((cs, cd))
        if rep is None:
            # the other way's twins: their every path reversed is every path this way (costs are
            # whole units the same both ways, see _uniform_outside)
            back = self._twin_routes.get((cd, cs))
            if back is None:
                return None
            rep = self._twin_routes[(cs, cd)] = (back[1], back[0], [p[::-1] for p in back[2]])
        s0, d0, every = rep
        if s0 == dst or d0 == src:
            return None
        inner = {src, dst}
        if any(not inner.isdisjoint(p[1:-1]) for p in every):
            return None
        return [[src, *p[1:-1], dst] for p in every]

    def _note_inner(self, src: str, dst: str, every: list[list[str]]) -> None:
        """Keep the devices inside every least-cost path between two switches (``_twin_spread``)."""
        self._route_inner[(src, dst)] = set().union(*(p[1:-1] for p in every))

    def _two_hop(self, src: str, dst: str) -> list[list[str]] | None:
        """Two switches one switch apart (leaves of one pod under their spines): the least-cost paths,
        sorted, without a search, or None when that cannot be shown.

        Only when ``_uniform_outside`` holds, so costs are whole numbers of one unit and compare
        exactly: with no link between the two, the cheapest paths through a common neighbour (outside
        systems, not a GPU) are all the least-cost paths when they cost less than any longer path can:
        the cheapest link out of src, plus the cheapest link anywhere, plus the cheapest link into dst.
        """
        adj, system, gpus, lcm = self._adj_cost, self._system, self._gpus, self._lcm
        bundles = self.fabric.bundles

        def units(u: str, v: str) -> int:
            return lcm // int(bundles[(u, v) if u <= v else (v, u)].bandwidth)

        if self._cheapest is None:
            self._cheapest = min(lcm // int(b.bandwidth) for (u, v), b in bundles.items()
                                 if system.get(u) is None and system.get(v) is None)
        out_of: dict[str, int] = {}
        for v, _ in adj[src]:
            if v == dst:
                return None
            if system.get(v) is None and v not in gpus:
                out_of[v] = units(src, v)
        if not out_of:
            return None
        best, via, into = None, [], []
        for w, _ in adj[dst]:
            if system.get(w) is not None or w in gpus:
                continue
            cost_in = units(w, dst)
            into.append(cost_in)
            if w in out_of:
                cost = out_of[w] + cost_in
                if best is None or cost < best:
                    best, via = cost, [w]
                elif cost == best:
                    via.append(w)
        if best is None or best >= min(out_of.values()) + self._cheapest + min(into):
            return None
        return [[src, w, dst] for w in sorted(via)]
