"""The switch a CollNet (SHARP) rail reduces in: the network switch every head's routes pass
through, nearest to the heads.

For each head, the switches on its routes to every other head are gathered; the candidates are
the switches every head saw; the one with the most NICs (then the name) is the root. Asked pair by
pair (``plain``) that is heads x heads routes: 4.2 million per rail over 2,048 DGX H100, minutes
before the simulation starts.

``fast`` gives the same set without asking for each pair. A route between two heads' GPUs through
their own NICs is ``Router.via``'s three legs: the GPU to its NIC, the NIC to the other NIC (its
leaf, every least-cost path to the other NIC's leaf, that NIC; or the one leaf both plug into),
that NIC to its GPU. Its switches are the first leg's, the leaves' route's and the last leg's, so a
head's switches towards all others are its own leg's, the leaf routes' towards every leaf that holds
another head, and the other heads' legs'. That holds where the router would answer each pair so:
every head its own system and a NIC with one uplink, no PXN, nothing kept for these pairs already,
and no join thinned past ``max_paths``; anywhere else ``fast`` answers with ``plain``.

The leaves' routes themselves are not built where costs are whole units (``switch_distances``):
which switches lie on a least-cost path between two leaves is read from the distances from every
leaf, all at once; where the router would keep a sample of more than ``max_paths`` paths, from one
route per pair of twin classes (over 2,048 DGX H100: 240 routes a rail instead of 4,032).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from importlib.resources import files

import numpy as np

from . import switch_distances

SWITCH_KINDS = ("ib_switch", "eth_switch")


@lru_cache(maxsize=1)
def sharp_trees() -> dict:
    """How SHARP lays out its trees (``resources/sharp_trees.json``, with its sources)."""
    data = json.loads(files("dgxstudio.resources").joinpath("sharp_trees.json").read_text(encoding="utf-8"))
    if data.get("format") != "dgxstudio-sharp-trees" or not all(isinstance(data.get(k), bool) for k in ("tree_per_rail", "streaming")):
        raise ValueError("resources/sharp_trees.json is not a DGX Studio SHARP trees file")
    return data


def plain(router, topo, heads: list[str]) -> set[str]:
    """The switches every head's routes to the other heads pass through (pair by pair)."""
    common = None
    for h in heads:
        seen = set()
        for other in heads:
            if other == h:
                continue
            for path in router.routes(h, other).paths:
                seen.update(d for d in path if topo.devices[d].kind in SWITCH_KINDS)
        common = seen if common is None else common & seen
    return common or set()


def fast(router, topo, heads: list[str]) -> set[str]:
    """``plain``'s set, read from each head's leg and the routes between leaves."""
    found = _by_leaves(router, topo, heads)
    return plain(router, topo, heads) if found is None else found


def _switches(topo, paths) -> frozenset[str]:
    return frozenset(d for p in paths for d in p if topo.devices[d].kind in SWITCH_KINDS)


def _by_leaves(router, topo, heads: list[str]) -> set[str] | None:
    if len(heads) < 2 or router.pxn or len(set(heads)) != len(heads):
        return None
    system, rails, gpus = router._system, router._rails(), router._gpus
    nic, leaf = {}, {}
    for h in heads:
        if h not in gpus or h not in rails or system.get(h) is None:
            return None
        n = rails[h][0]
        up = router._uplink(n)
        if up is None or system.get(n) != system.get(h):
            return None
        nic[h], leaf[h] = n, up
    if len({system[h] for h in heads}) != len(heads):
        return None  # (two heads of one system: their route stays inside it)
    # nothing the router keeps already for a pair of these heads, of their NICs or a join of them
    head_set, nic_set = set(heads), set(nic.values())
    for key in router._cache:
        if key[0] == "via":
            if len(key) == 5 and key[1] in head_set and key[4] in head_set:
                return None
        elif key[0] != key[1] and ((key[0] in head_set and key[1] in head_set)
                                   or (key[0] in nic_set and key[1] in nic_set)):
            return None
    legs = _Legs(router, topo)  # the legs ``via`` would ask for: (their switches, how many paths)
    first = {h: legs.of(h, nic[h]) for h in heads}
    last = {h: legs.of(nic[h], h) for h in heads}
    widest = max(n for _, n in first.values()) * max(n for _, n in last.values())
    leaves = Counter(leaf.values())
    reach = _by_distances(router, topo, leaves, widest) if _distances_answer(router) else None
    if reach is None:
        reach = _by_routes(router, topo, leaves, widest)
    if reach is False:
        return None
    leg_first = {h: first[h][0] for h in heads}
    leg_last = {h: last[h][0] for h in heads}
    in_last = Counter(s for h in heads for s in leg_last[h])
    common = None
    # (a head's set follows from its leaf and its legs' switches: worked out once per kind of head)
    for a, first_sw, last_sw in dict.fromkeys((leaf[h], leg_first[h], leg_last[h]) for h in heads):
        seen = set(first_sw)
        seen |= reach[a]
        seen.update(s for s, c in in_last.items() if c - (s in last_sw) > 0)
        common = seen if common is None else common & seen
    return common


class _Legs:
    """The switches of ``Router.routes(a, b)`` inside one system and its number of paths, read from
    the route of the first system wired alike where the router would rename that one
    (``Router.template_leg``: its paths with this system's prefix), without building the route
    (2 x 16,384 of them over 2,048 DGX H100); else asked of the router."""

    def __init__(self, router, topo):
        self.router, self.topo = router, topo
        self._devices: dict[int, tuple[object, list[str]]] = {}  # template -> (it, its devices after the prefix)

    def of(self, a: str, b: str) -> tuple[frozenset[str], int]:
        router, topo = self.router, self.topo
        got = router.template_leg(a, b)
        if got is None:
            paths = router.routes(a, b).paths
            return _switches(topo, paths), len(paths)
        first = got[0]
        kept = self._devices.get(id(first))
        if kept is None:
            n = len(router._signatures[router._system[first.paths[0][0]]][2])
            kept = self._devices[id(first)] = (first, list(dict.fromkeys(d[n:] for p in first.paths for d in p)))
        prefix = router._signatures[router._system[a]][2]
        return frozenset(prefix + d for d in kept[1] if topo.devices[prefix + d].kind in SWITCH_KINDS), len(first.paths)


def _distances_answer(router) -> bool:
    """Whether ``switch_distances`` gives the router's leaf-to-leaf paths: even spreading over
    whole-unit costs, and no GPU outside systems (a search never passes through one)."""
    return (router.spread == "even" and router._uniform_outside()
            and not any(router._system.get(g) is None for g in router._gpus))


def _by_routes(router, topo, leaves: Counter, widest: int) -> dict[str, set[str]] | bool:
    """For each leaf a, the switches of its routes to every leaf b holding a head (b == a only if
    two heads plug into it), asked of the router pair by pair; False when a join of a head's legs
    with a route would be thinned past ``max_paths``."""
    reach = {}
    for a in leaves:
        seen = set()
        for b, count in leaves.items():
            if a == b:  # (the one path NIC, leaf, NIC)
                if count > 1:
                    seen |= _switches(topo, [[a]])
                continue
            paths = router.routes(a, b).paths
            if widest * len(paths) > router.max_paths:
                return False
            seen |= _switches(topo, paths)
        reach[a] = seen
    return reach


def _by_distances(router, topo, leaves: Counter, widest: int) -> dict[str, set[str]] | bool | None:
    """``_by_routes``'s answer read from least-cost distances between the leaves and every switch
    (``switch_distances``): a switch is on a route from a to b when it lies on a least-cost path,
    unless the router keeps only a sample of more than ``max_paths`` paths (that pair's route is
    asked). None when some leaf cannot reach another (``_by_routes`` says which)."""
    names = list(leaves)
    graph = router.companion(switch_distances.OutsideGraph)  # (one per router: every rail's leaves use it)
    dist, count = graph.distances(names)
    cols = np.array([graph.index[a] for a in names], dtype=np.int64)
    between = dist[:, cols]
    if not np.isfinite(between).all():
        return None
    paths = np.minimum(count[:, cols], router.max_paths)  # (how many the router keeps)
    if (widest * paths > router.max_paths).any():
        return False
    switch = np.array([topo.devices[d].kind in SWITCH_KINDS for d in graph.names])
    twin = {a: router._twin_class(a) for a in names}
    reach = {}
    for i, a in enumerate(names):
        use = np.array([b != a or leaves[a] > 1 for b in names])
        sampled = use & (count[i, cols] > router.max_paths)
        read = np.flatnonzero(use & ~sampled)  # (each leaf b read from distances, each device)
        on = (dist[i][None, :] + dist[read]) == between[i, read][:, None]
        seen = {graph.names[k] for k in np.flatnonzero(on.any(axis=0) & switch)}
        seen |= _sampled_together(router, topo, a, [names[j] for j in np.flatnonzero(sampled)], twin, graph)
        reach[a] = seen
    return reach


def _sampled(router, topo, a: str, b: str, twin: dict, graph) -> frozenset[str]:
    """The switches of the router's sample of the least-cost paths from leaf a to leaf b: those of
    the first pair of their twins asked (same neighbours at the same costs, ``Router._twin_class``)
    with the ends renamed, else the route's own (its devices read from the distances,
    ``OutsideGraph.sample``, where they can be). Exchanging a with its twin a0 and b with b0 (four
    switches, the two pairs apart) maps the fabric onto itself, so a0 to b0's least-cost paths with
    their ends renamed are a to b's, in the same sorted order (the same inner devices), and the
    router keeps the same sample of them; unless a or b lies on one of them (``cost(x, y)``: the
    least cost between two leaves). ``graph.kept`` holds the first pairs asked over every rail's call."""
    kept, cost = graph.kept, graph.cost
    key = (twin[a], twin[b])
    rep = kept.get(key)
    if rep is not None:
        a0, b0, inner = rep
        full = cost(a0, b0)
        if ({a, a0}.isdisjoint((b, b0)) and (a == a0 or cost(a0, a) + cost(a, b0) != full)
                and (b == b0 or cost(a0, b) + cost(b, b0) != full)):
            return inner | _switches(topo, [[a, b]])
    on = graph.sample(a, b, router.max_paths)  # (the router's route's devices, without the route)
    got = _switches(topo, [list(on)] if on is not None else router.routes(a, b).paths)
    if rep is None:
        kept[key] = (a, b, got - {a, b})
    return got


def _sampled_together(router, topo, a: str, bs: list[str], twin: dict, graph) -> set[str]:
    """The union of ``_sampled``'s switches from leaf a to each leaf of ``bs``, its guard read for the
    leaves of one twin class at once (from the distance rows of the class's pair kept) where it
    holds, and each remaining leaf asked of ``_sampled``."""
    seen: set[str] = set()
    kept, cost = graph.kept, graph.cost
    by_class: dict[tuple, list[str]] = {}
    for b in bs:
        by_class.setdefault(twin[b], []).append(b)
    for cb, group in by_class.items():
        key = (twin[a], cb)
        if key not in kept:  # (the first pair of the class: its route, kept)
            seen |= _sampled(router, topo, a, group[0], twin, graph)
            group = group[1:]
        if not group:
            continue
        a0, b0, inner = kept[key]
        full = cost(a0, b0)
        if a != b0 and a0 != b0 and (a == a0 or cost(a0, a) + cost(a, b0) != full):
            at = np.array([graph.index[b] for b in group], dtype=np.int64)
            b_ok = (graph.row(a0)[at] + graph.row(b0)[at] != full) | (at == graph.index[b0])
            ok = [b for b, good in zip(group, b_ok.tolist()) if good and b != a and b != a0]
        else:
            ok = []
        if ok:
            seen |= inner
            seen |= _switches(topo, [[a, *ok]])
        if len(ok) < len(group):
            done = set(ok)
            for b in group:
                if b not in done:
                    seen |= _sampled(router, topo, a, b, twin, graph)
    return seen


def aggregation_tree(router, topo, heads: list[str], common: set[str], flat_root: str,
                     rail: int = 0) -> list[list[tuple[str, str]]]:
    """SHARP's reduction tree for one rail as levels of (child, parent) pairs, the heads' level first.

    SHARP reduces in every switch of its tree, so each link of the tree carries the data once each
    way (NVIDIA SHARP: the switches form an aggregation tree, each reducing its children's data and
    sending one result to its parent; ``resources/sharp_trees.json``). Each head sends to its NIC's leaf;
    then, level by level, the switches of a level send to the switch above joined to all of them
    where one exists (a spine every head's routes pass through: the root). Where none does (three
    tiers or more), they are grouped under the fewest switches above (``_cover``): under switches
    that all reach one switch of ``common`` above them where some do (a pod's spines of one plane,
    the plane's core joined to them all), else the fewest that cover them; a level no smaller than
    the one below sends to the nearest common switch over the router's routes (``_nearest``).
    ``rail`` picks among the switches above that reach such a root over different switches: each
    rail's tree its own plane of spines and cores where the fabric has them, as SHARP gives each
    rail its own tree (``resources/sharp_trees.json``). With one leaf, or heads whose NICs have no single
    uplink, every head sends to ``flat_root`` (one level)."""
    rails = router._rails()
    leaf = {}
    for h in heads:
        up = router._uplink(rails[h][0]) if h in rails else None
        if up is None:
            return [[(h, flat_root) for h in heads]]
        leaf[h] = up
    leaves = list(dict.fromkeys(leaf.values()))
    if len(leaves) == 1:
        return [[(h, leaves[0]) for h in heads]]
    if not [s for s in common if s not in leaves]:
        return [[(h, flat_root) for h in heads]]
    if not sharp_trees()["tree_per_rail"]:
        rail = 0
    levels = [[(h, leaf[h]) for h in heads]]
    level, done, root = leaves, set(leaves), None
    while len(level) > 1:
        adj = router.fabric.adj
        above = sorted(s for s in common if s not in done)
        joined = [s for s in above if all(s in adj[a] for a in level)]
        if joined:
            top = root if root in joined else joined[0]
            levels.append([(a, top) for a in level])
            break
        parent, root = _cover(router, topo, level, done, above, rail)
        if parent is None or len(set(parent.values())) >= len(level):
            if not above:  # (every common switch is in the tree already: the leaves' nearest one)
                return [levels[0], [(a, _nearest(router, leaves, sorted(set(common) - set(leaves)))) for a in leaves]]
            top = _nearest(router, level, above)
            levels.append([(a, top) for a in level])
            break
        levels.append([(a, parent[a]) for a in level])
        level = list(dict.fromkeys(parent[a] for a in level))
        done.update(level)
    return levels


def _cover(router, topo, level: list[str], done: set[str], above: list[str], rail: int):
    """The fewest switches above ``level`` (not yet in the tree) that each of its switches is joined
    to, as {switch: its parent}, and the switch of ``above`` they all join (None if not found that
    way). Preferred: the middle switches joined to one root switch of ``above`` (tried in turn,
    grouped by the middle switches they use, ``rail`` picking the group and then the root within
    it, so that each rail takes its own plane); else a greedy cover, most switches first, then by
    name. (None, None) when some switch of the level has no switch above it."""
    adj = router.fabric.adj
    kinds = topo.devices

    def up(a: str) -> list[str]:
        return sorted(s for s in adj[a] if s not in done and kinds[s].kind in SWITCH_KINDS)

    ups = {a: up(a) for a in level}
    if not all(ups.values()):
        return None, None
    middles = set().union(*ups.values())
    by_group: dict[frozenset, list[str]] = {}
    for t in above:
        if t in middles:
            continue
        mids = frozenset(m for m in adj[t] if m in middles)
        if mids and all(mids.intersection(ups[a]) for a in level):
            by_group.setdefault(mids, []).append(t)
    if by_group:
        groups = list(by_group.items())
        mids, tops = groups[rail % len(groups)]
        root = tops[(rail // len(groups)) % len(tops)]
        return _greedy(level, {a: [m for m in ups[a] if m in mids] for a in level}), root
    return _greedy(level, ups), None


def _greedy(level: list[str], ups: dict[str, list[str]]) -> dict[str, str]:
    """Each switch of ``level`` to one of its ``ups``: the switch above covering the most of those
    still uncovered taken first (then by name), until every one has its parent."""
    below: dict[str, list[str]] = {}
    for a in level:
        for m in ups[a]:
            below.setdefault(m, []).append(a)
    parent: dict[str, str] = {}
    while len(parent) < len(level):
        m = min(below, key=lambda m: (-sum(1 for a in below[m] if a not in parent), m))
        for a in below.pop(m):
            parent.setdefault(a, m)
    return parent


def _nearest(router, leaves: list[str], above: list[str]) -> str:
    """The switch of ``above`` whose routes from the leaves are shortest in sum (each route's first
    path, in devices), then the first by name: what asking every leaf's route to every candidate
    gives (over 2,048 DGX H100, 37,440 routes a rail: 12 s of the run), asking only the candidates that can
    win. A path from a leaf to a switch has at least two devices, three unless they are joined, four
    unless one device joins them, so each candidate's sum is at least its floor: candidates are
    asked in the order of their floors, and no more once a floor (with the name) comes after the
    best sum found."""
    adj = router.fabric.adj
    floor = dict.fromkeys(above, 0)
    for a in leaves:
        near = set(adj[a])
        two = set().union(*(adj[v] for v in near))
        for s in above:
            floor[s] += 2 if s in near else 3 if s in two else 4
    best = None
    for low, s in sorted((f, s) for s, f in floor.items()):
        if best is not None and (low, s) > best:
            break
        got = (sum(len(router.routes(a, s).paths[0]) for a in leaves), s)
        if best is None or got < best:
            best = got
    return best[1]
