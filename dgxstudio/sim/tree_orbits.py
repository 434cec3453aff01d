"""tree_fold's classes shown by maps between the trees, instead of found by colour refinement.

On a fabric whose rails are wired alike, NCCL's trees are images of each other: rail k's pair of
trees is rail 0's with GPU i of every system renamed GPU i + k, its NICs and leaves likewise, and a
tree's mirror is it with the systems renumbered. tree_fold's colour refinement finds that by reading
every route entry of every tree some fifteen times (12.6 million entries on 2,048 DGX H100 systems:
4.5 s and 1.2 GB, measured). This module instead guesses the maps and checks each one outright:

- the guess: tree 0's transfers against tree t's, slot by slot (the same place in the same role),
  name a GPU map; applied to every tree's transfers it names a map of trees (tree s to the tree
  whose transfers are its image). Maps are taken as generators until the trees they reach from tree
  0 are all of them (on a rail-optimized DGX H100 cluster two: a rail shift and a mirror).
  Where trees join different devices (an NVLS tree's: rail k's pair joins GPU k of every system)
  the devices fall in domains, one a rail, and a map off tree 0's devices is guessed domain by
  domain (``_DeviceMaps``): the same two maps on an NVLS tree, each rail's mirror and rail k to k + 1.
  Where trees share some devices and not others (CollNet's rails: every GPU, and each its own rail's
  leaves) it is guessed place by place instead (``place_maps.py``): rail k to k + 1.
- the check, for each generator over every slot of every tree: slot j of tree s and slot j of its
  image have the same latency and rate cap, and their routes the same length and, entry by entry,
  the same weights; the channels they pair up must be a one-to-one map (every channel some tree
  loads has one image, no two the same image) between channels of the same capacity.

A generator that passes is an automorphism of everything the run's timing reads (the trees are
copies of each other group for group, which tree_fold checks before): it maps every slot to a slot
with the same latency, cap and group place, and every route entry to one of the same weight on a
channel of the same capacity. So is every product of generators, and the orbits of the group they
generate are an equitable partition of slots and channels. The routes are the router's own (the
engine looked them up); nothing here assumes the router respects the symmetry, it is checked.

Orbits can be finer than tree_fold's classes (a permutation of the spines is a symmetry too, but no
map between trees shows it): 4,352 orbits against 1,062 classes on 512 systems, and the folded run
costs twice as much on them. ``coarsened`` merges them into the refinement's classes by refining
tree 0's slots against the orbits (1.0 million route entries on 2,048 systems instead of 12.6
million), checked exactly as tree_fold checks its own. It merges only orbits of one size, so where
the refinement's class would join orbits of different sizes its classes stay finer (exact, slower;
not so on any cluster measured: the classes and answers were the refinement's, bit for bit). Any guess or check that fails leaves tree_fold to its
colour refinement over every tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fold_routes import RouteGraph
from .place_maps import PlaceMaps, renaming, tree0_places
from .rates import RouteTable
from .relation_ids import distinct, numbered, row_ids

_CHUNK = 1 << 19  # route entries compared at a time
_FLAT = 1 << 22   # route entries up to which _channel_map reads every route at once (about 64 MB)


@dataclass
class Orbits:
    """Every tree in one orbit: ``uch`` the channels the trees load (ascending), ``col_c`` each one's
    orbit (numbered from 0)."""

    uch: np.ndarray
    col_c: np.ndarray


def orbits(ends: np.ndarray, s_route: np.ndarray, s_lat: np.ndarray, s_cap: np.ndarray,
           route_ch: list[np.ndarray], route_w: list[np.ndarray], capacity: np.ndarray) -> Orbits | None:
    """The orbits of the trees' slots and channels under maps of trees checked as above, when they
    put every tree in one orbit; else None. ``ends``: (trees, slots per tree, 2) device numbers of
    each slot's source and destination; ``s_route``, ``s_lat``, ``s_cap``: each slot's route id,
    latency and rate cap, tree after tree; ``route_ch``, ``route_w``: the engine's routes;
    ``capacity``: each channel's."""
    n_trees, per_tree = ends.shape[:2]
    if n_trees < 2 or not per_tree:
        return None
    flat = ends.reshape(n_trees, -1)
    maps = _DeviceMaps.of(flat) or PlaceMaps.of(flat)  # (trees sharing some devices: sim/place_maps.py)
    if maps is None:
        return None
    index = {flat[s].tobytes(): s for s in range(n_trees)}
    if len(index) != n_trees:
        return None
    R = s_route.reshape(n_trees, -1)  # (a slot's route, or its parts: tree_parts.py)
    lat = s_lat.reshape(n_trees, per_tree)
    cap = s_cap.reshape(n_trees, per_tree)
    n_ch = len(capacity)
    reached = np.zeros(n_trees, dtype=bool)
    reached[0] = True
    perms: list[np.ndarray] = []   # each generator's channel map (-1: a channel no tree loads)
    table: RouteTable | None | bool = False  # (the routes in one table: made at the first generator)
    taus: list[np.ndarray] = []
    for t in range(1, n_trees):
        if reached[t]:
            continue
        dev = maps.generator(t)
        if dev is None:
            return None  # tree t's transfers are not a renaming of tree 0's, place for place
        tau = np.fromiter((index.get(dev[flat[s]].tobytes(), -1) for s in range(n_trees)), dtype=np.int64,
                          count=n_trees)
        if (tau < 0).any() or len(distinct(tau)) != n_trees:
            return None
        if not ((lat[tau] == lat).all() and (cap[tau] == cap).all()):
            return None
        if table is False:
            table = _table(route_ch, route_w)  # (once, for every generator)
        pi = _channel_map(R.ravel(), R[tau].ravel(), route_ch, route_w, capacity, table)
        if pi is None:
            return None
        perms.append(pi)
        taus.append(tau)
        # the trees reached from tree 0 by the generators so far
        while True:
            grown = reached.copy()
            for tt in taus:
                grown[tt[reached]] = True
            if (grown == reached).all():
                break
            reached = grown
        if reached.all():
            break
    if not reached.all():
        return None
    # the channels' orbits: classes joined by every generator's map, to a fixed point
    uch = np.flatnonzero(perms[0] >= 0)
    at = np.full(n_ch, -1, dtype=np.int64)
    at[uch] = np.arange(len(uch))
    maps = [at[pi[uch]] for pi in perms]
    label = np.arange(len(uch))
    while True:
        before = label
        for m in maps:
            low = np.minimum(label, label[m])
            label = low.copy()
            np.minimum.at(label, m, low)
        label = label[label]
        if (label == before).all():
            break
    return Orbits(uch, numbered(label, len(uch) + 1)[1])



@dataclass
class _DeviceMaps:
    """Maps of devices guessed from the trees' transfers, where trees join different devices too.

    The devices the trees join fall in domains: each tree joins exactly one domain's devices, every
    domain as many as tree 0's, no device in two (an NCCL tree: one domain, every GPU; an NVLS
    tree: one per rail, its GPU in every system). Tree 0's transfers set against the domain's first
    tree's, slot by slot, name each domain's device in each *place* (a place: one of tree 0's
    devices). Tree t's map is guessed on tree 0's devices slot by slot, as with one domain; off them
    it is read as a renaming of places inside a domain (tree t's places set against its domain's
    first tree's) followed by a shift of domains (domain i to i + j, j tree t's, numbered in the
    order the trees come): on an NVLS tree a mirror in every rail, or GPU i of every system to GPU
    i + 1. Only a guess: ``orbits`` checks it outright against every slot and route entry."""

    dom: np.ndarray    # each device's domain (-1: no tree joins it)
    where: np.ndarray  # each device's place
    base: np.ndarray   # (domains, places): each domain's device in each place
    place0: np.ndarray  # tree 0's transfers' ends as places
    tree_dom: np.ndarray
    flat: np.ndarray

    @classmethod
    def of(cls, flat: np.ndarray) -> "_DeviceMaps | None":
        """The domains of the trees whose transfers' ends are ``flat`` (a row a tree), or None."""
        n_dev, n_p, where, place0 = tree0_places(flat)
        keys: dict[bytes, int] = {}
        first: list[int] = []
        tree_dom = np.empty(len(flat), dtype=np.int64)
        for t, row in enumerate(flat):
            joined = distinct(row)
            if len(joined) != n_p:
                return None
            tree_dom[t] = d = keys.setdefault(joined.tobytes(), len(keys))
            if d == len(first):
                first.append(t)
        base = np.full((len(first), n_p), -1, dtype=np.int64)
        dom = np.full(n_dev, -1, dtype=np.int64)
        for d, t in enumerate(first):
            named = renaming(flat[t], place0, n_p)
            if named is None:
                return None  # the first tree's transfers are not a renaming of tree 0's
            base[d] = named
            if (dom[base[d]] >= 0).any():
                return None  # two domains share a device
            dom[base[d]] = d
            where[base[d]] = np.arange(n_p)
        return cls(dom, where, base, place0, tree_dom, flat)

    def generator(self, t: int) -> np.ndarray | None:
        """Tree t's guessed map (device -> device, -1 off the trees), or None where tree t's
        transfers are not a renaming of tree 0's place for place."""
        b_t = renaming(self.flat[t], self.place0, self.base.shape[1])
        if b_t is None:
            return None
        # (its image is tree t's devices, as many as the places: one-to-one)
        j = int(self.tree_dom[t])
        h = self.where[b_t]  # tree t's places as places of its domain's first tree
        on = np.flatnonzero(self.dom >= 0)
        dev = np.full(len(self.dom), -1, dtype=np.int64)
        dev[on] = self.base[(self.dom[on] + j) % len(self.base), h[self.where[on]]]
        return dev


def coarsened(orb: Orbits, s_route0: np.ndarray, s_init0: np.ndarray, route_ch: list[np.ndarray],
              route_w: list[np.ndarray], capacity: np.ndarray, mix: np.int64) -> tuple[np.ndarray, np.ndarray] | None:
    """The orbits merged into tree_fold's classes: colour refinement over tree 0's slots and the
    orbits (each orbit standing for its channels), as tree_fold's refinement over every tree's
    slots and channels would colour them; each channel's class in ``orb.uch`` order and each of
    tree 0's slots' class, or None where the exact check refuses them.

    Why it is the same refinement. Orbits are an equitable partition that every colouring
    refinement keeps together (an automorphism maps a channel's neighbourhood onto its image's), so
    refining the whole graph gives classes that are unions of orbits, and may run on the quotient:
    a slot of tree 0 stands for its images (it sees each orbit with the weights its own route has
    there), an orbit of k channels for each of them (a channel carries the entries every tree puts
    on its orbit over k; only orbits of the same size are put together, so comparing what tree 0
    puts on each compares what one channel carries). The exact check is tree_fold's, on the
    quotient. ``s_route0``, ``s_init0``: tree 0's slots' routes and first colours."""
    at = np.full(len(capacity), -1, dtype=np.int64)
    at[orb.uch] = np.arange(len(orb.uch))
    routes, s_r = np.unique(s_route0, return_inverse=True)
    rl = routes.tolist()
    table = RouteTable([route_ch[r] for r in rl], [route_w[r] for r in rl])
    table.ch = orb.col_c[at[table.ch]]  # each entry's orbit (one gather, not one per route)
    graph = RouteGraph(s_r.ravel(), table, mix)
    if len(graph.uch) != int(orb.col_c.max()) + 1:
        return None  # (an orbit tree 0 does not load: not one orbit of trees)
    size = np.bincount(orb.col_c)
    first = np.full(len(size), len(orb.uch), dtype=np.int64)
    np.minimum.at(first, orb.col_c, np.arange(len(orb.uch)))
    cap = np.ascontiguousarray(capacity[orb.uch[first]], dtype=float).view(np.int64)
    col_s, col_c = row_ids(s_init0), row_ids(cap[graph.uch], size[graph.uch])
    n_s, n_c = int(col_s.max()) + 1, int(col_c.max()) + 1
    seed = 1
    while True:
        seed += 1
        sig_s = graph.slot_signature(col_c, seed)
        sig_c = graph.channel_signature(col_s, seed + 7919)
        col_s, col_c = row_ids(col_s, sig_s), row_ids(col_c, sig_c)
        if int(col_s.max()) + 1 == n_s and int(col_c.max()) + 1 == n_c:
            break
        n_s, n_c = int(col_s.max()) + 1, int(col_c.max()) + 1
    if not graph.exact(col_s, col_c):
        return None
    of_orbit = np.empty(len(size), dtype=np.int64)
    of_orbit[graph.uch] = col_c
    return numbered(of_orbit[orb.col_c], len(orb.uch) + 1)[1], col_s


def _channel_map(a_routes: np.ndarray, b_routes: np.ndarray, route_ch: list[np.ndarray], route_w: list[np.ndarray],
                 capacity: np.ndarray, table: RouteTable | None = None) -> np.ndarray | None:
    """The map of channels that carries each route ``a_routes[i]`` onto ``b_routes[i]`` entry by
    entry (same length, same weights, channels of the same capacity), one-to-one; None if none.
    ``table``: the routes in one table (``_table``), read all at once; without it routes are read
    a few million entries at a time from their own arrays (not copied whole)."""
    n_r = len(route_ch)
    pairs = distinct(a_routes.astype(np.int64) * n_r + b_routes)
    a, b = np.divmod(pairs, n_r)
    size = table.lens if table is not None else np.fromiter(map(len, route_ch), dtype=np.int64, count=n_r)
    lens = size[a]
    if not (lens == size[b]).all():
        return None
    pi = np.full(len(capacity), -1, dtype=np.int64)
    for ca, wa, cb, wb in (_entries(a, b, lens, route_ch, route_w) if table is None
                           else [(*table.gather(a)[1:], *table.gather(b)[1:])]):
        if not (wa == wb).all():
            return None
        if not (capacity[ca] == capacity[cb]).all():
            return None
        known = pi[ca]
        if not ((known < 0) | (known == cb)).all():
            return None
        pi[ca] = cb
        if not (pi[ca] == cb).all():  # (one channel given two images within this chunk)
            return None
    img = pi[pi >= 0]
    if len(distinct(img)) != len(img) or not np.isin(img, np.flatnonzero(pi >= 0)).all():
        return None  # two channels onto one, or onto a channel no tree loads
    return pi


def _entries(a: np.ndarray, b: np.ndarray, lens: np.ndarray, route_ch: list[np.ndarray], route_w: list[np.ndarray]):
    """Routes ``a`` and ``b``'s channels and weights, a few million entries at a time."""
    a, b = a.tolist(), b.tolist()
    ends = np.cumsum(lens)
    i = 0
    while i < len(a):
        j = max(int(np.searchsorted(ends, ends[i] - lens[i] + _CHUNK, side="right")), i + 1)
        yield (np.concatenate([route_ch[r] for r in a[i:j]]), np.concatenate([route_w[r] for r in a[i:j]]),
               np.concatenate([route_ch[r] for r in b[i:j]]), np.concatenate([route_w[r] for r in b[i:j]]))
        i = j


def _table(route_ch: list[np.ndarray], route_w: list[np.ndarray]) -> RouteTable | None:
    """Every route in one table when they are few enough entries (``_FLAT``: one copy of them costs
    less than the Python of reading hundreds of thousands of routes chunk by chunk), else None."""
    total = sum(map(len, route_ch))
    return RouteTable(route_ch, route_w) if total <= _FLAT else None
