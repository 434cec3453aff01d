"""Max-min fair rates over routes that share channels, solved per independent component.

``_maxmin`` fills the rates of unique routes (each shared by several flows) progressively;
``_components`` splits the channels a schedule uses into the parts no route ties together, which
the engine solves and caches one by one; ``_ComponentPatterns`` keeps a run's network states as
their components' parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .maxmin import maxmin


@dataclass
class RatePattern:
    channels: np.ndarray
    load_Bps: np.ndarray


class RouteTable:
    """Every route's channels and weights in flat arrays (CSR), so the rates of thousands of active
    routes are gathered with a few numpy calls instead of a Python loop per route and event."""

    def __init__(self, route_ch: list[np.ndarray], route_w: list[np.ndarray]):
        self.sources = (route_ch, route_w)  # each route's own arrays (see shapes_of)
        self.lens = np.fromiter((len(c) for c in route_ch), dtype=np.int64, count=len(route_ch))
        self.offsets = np.concatenate([[0], np.cumsum(self.lens)[:-1]]).astype(np.int64) if len(route_ch) else \
            np.zeros(0, np.int64)
        self.ch = np.concatenate(route_ch) if route_ch else np.zeros(0, np.int64)
        self.w = np.concatenate(route_w) if route_w else np.zeros(0)

    def gather(self, route_ids: np.ndarray):
        lens = self.lens[route_ids]
        ends = np.cumsum(lens)
        pos = np.arange(ends[-1] if len(ends) else 0) + np.repeat(self.offsets[route_ids] - (ends - lens), lens)
        return lens, self.ch[pos], self.w[pos]


def _maxmin(route_ids: np.ndarray, mult: np.ndarray, table: RouteTable, capacity: np.ndarray,
            route_cap: np.ndarray | None = None):
    """Progressive filling over unique routes, each shared by ``mult`` flows.

    A route loads each of its channels with a weight (1 on a single path, 1/k per path of k tied
    paths), so a channel fills when the weighted rates on it reach its capacity. A route with a cap
    (a protocol's per-channel ceiling) freezes when the filling level reaches it. Returns the rates,
    the channels the routes load (ascending) and their loads.

    The filling itself is sim/maxmin.py's: ``maxmin_reference`` on arrays, and for small problems
    the same operations over channel classes in plain Python (bit for bit the same answer).
    """
    parts = getattr(table, "parts", None)  # parts no binding channel ties (sim/split_solve.py)
    if parts is not None:
        return parts.solve(route_ids, mult, table, capacity, route_cap)
    return maxmin(route_ids, mult, table, capacity, route_cap)


def _components(table: RouteTable, used: np.ndarray, n_channels: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Connected components of the channels that the ``used`` routes tie together (a route joins all
    its channels). Max-min rates in one component never depend on flows in another, so each is solved
    and cached on its own. Returns (component of each route, component of each channel, count);
    channels no used route touches get -1, and a route without channels a component of its own."""
    parent = np.arange(n_channels, dtype=np.int64)
    lens, ch, _ = table.gather(used) if len(used) else (np.zeros(0, np.int64), np.zeros(0, np.int64), None)
    nonempty = lens > 0
    starts = (np.cumsum(lens) - lens)[nonempty]
    ridx = np.repeat(np.arange(len(used)), lens)
    while len(ch):
        # hook every route's channels onto the smallest root among them, then flatten the trees
        roots = parent[ch]
        rmin = np.full(len(used), n_channels, dtype=np.int64)
        rmin[nonempty] = np.minimum.reduceat(roots, starts)
        low = rmin[ridx]
        if (roots == low).all():
            break
        np.minimum.at(parent, roots, low)
        while True:
            nxt = parent[parent]
            if (nxt == parent).all():
                break
            parent = nxt
    touched = np.zeros(n_channels, dtype=bool)
    touched[ch] = True
    roots_used = np.unique(parent[touched])
    ch_comp = np.full(n_channels, -1, dtype=np.int64)
    comp_of_root = np.full(n_channels, -1, dtype=np.int64)
    comp_of_root[roots_used] = np.arange(len(roots_used))
    ch_comp[touched] = comp_of_root[parent[touched]]
    n_comp = len(roots_used)
    route_comp = np.empty(len(used), dtype=np.int64)
    first = np.zeros(len(used), dtype=np.int64)
    first[nonempty] = ch[starts]
    route_comp[nonempty] = ch_comp[first[nonempty]]
    lonely = np.flatnonzero(~nonempty)
    route_comp[lonely] = n_comp + np.arange(len(lonely))
    return route_comp, ch_comp, n_comp + len(lonely)


class _Shapes:
    """The components of a run's routes and their classes.

    ``route_comp``/``by_comp``/``bounds``: each used route's component, the used routes grouped by
    component (ascending route id inside each), and where each component's run starts.
    ``route_local``: a route's index within its component; ``comp_ch[c]``: the component's channels
    in local order (first use by its routes in order); ``ch_local``/``ch_comp``: a channel's local
    index and component. ``comp_class``: components whose local description (each route's local
    channels and weights, the channels' capacities, the routes' caps) is identical share a class,
    hence every max-min solution in local terms. ``h1``/``h2``: per-route hash terms that depend on
    the local index only, so members of a class in the same state have the same key.
    """

    def __init__(self, table: RouteTable, used: np.ndarray, capacity: np.ndarray, route_cap: np.ndarray | None,
                 n_channels: int, decompose: bool = True):
        n_routes = len(table.lens)
        self.route_comp = np.zeros(n_routes, dtype=np.int64)
        if decompose and len(used):
            comp_of_used, ch_comp, n_comp = _components(table, used, n_channels)
            self.route_comp[used] = comp_of_used
        else:
            n_comp = 1
            ch_comp = np.zeros(n_channels, dtype=np.int64)
        self.n_comp = n_comp
        self.ch_comp = ch_comp
        self.by_comp = used[np.argsort(self.route_comp[used], kind="stable")]
        self.bounds = np.searchsorted(self.route_comp[self.by_comp], np.arange(n_comp + 1))
        self.route_local = np.zeros(n_routes, dtype=np.int64)
        self.route_local[self.by_comp] = np.arange(len(self.by_comp)) - np.repeat(self.bounds[:-1], np.diff(self.bounds))
        self.ch_local = np.zeros(n_channels, dtype=np.int64)
        self.comp_class = np.zeros(n_comp, dtype=np.int64)
        # Every component at once: its routes' entries lie together (by_comp), and a channel belongs to
        # one component, so ranking channels by their first use over all entries ranks them by first
        # use within each component (components in ascending order); a component's description is
        # its slices of a few flat arrays.
        lens, ch, w = table.gather(self.by_comp)
        r_bounds = self.bounds
        e_ends = np.cumsum(lens)
        e_bounds = np.concatenate([[0], e_ends])[r_bounds]
        uniq, first = np.unique(ch, return_index=True)
        order = np.argsort(first, kind="stable")
        chans_all = uniq[order]
        comp_of_chan = np.searchsorted(e_bounds, first[order], side="right") - 1
        c_bounds = np.searchsorted(comp_of_chan, np.arange(n_comp + 1))
        self.ch_local[chans_all] = np.arange(len(chans_all)) - np.repeat(c_bounds[:-1], np.diff(c_bounds))
        local = self.ch_local[ch]
        self.comp_ch: list[np.ndarray] = np.split(chans_all, c_bounds[1:-1]) if n_comp else []
        b_lens = lens.astype(np.int64).tobytes()
        b_local = local.astype(np.int64).tobytes()
        b_w = np.asarray(w, float).tobytes()
        b_cap = np.asarray(capacity[chans_all], float).tobytes()
        b_rcap = np.asarray(route_cap[self.by_comp], float).tobytes() if route_cap is not None else None
        classes: dict[bytes, int] = {}
        rb, eb, cb = (r_bounds * 8).tolist(), (e_bounds * 8).tolist(), (c_bounds * 8).tolist()
        for c in range(n_comp):
            r0, r1 = rb[c], rb[c + 1]
            if r0 == r1:
                self.comp_class[c] = classes.setdefault(b"empty", len(classes))
                continue
            e0, e1 = eb[c], eb[c + 1]
            desc = [b_lens[r0:r1], b_local[e0:e1], b_w[e0:e1], b_cap[cb[c]:cb[c + 1]]]
            if b_rcap is not None:
                desc.append(b_rcap[r0:r1])
            self.comp_class[c] = classes.setdefault(b"|".join(desc), len(classes))
        self.n_classes = len(classes)
        rng = np.random.default_rng(0x5eed)
        size = int(np.diff(self.bounds).max()) if n_comp else 0
        H1 = rng.integers(0, 2**62, size=max(size, 1), dtype=np.int64)
        H2 = rng.integers(0, 2**62, size=max(size, 1), dtype=np.int64)
        self.h1 = H1[np.minimum(self.route_local, len(H1) - 1)]
        self.h2 = H2[np.minimum(self.route_local, len(H2) - 1)]

    def local(self, c: int, channels: np.ndarray) -> np.ndarray:
        """The local indices of component ``c``'s ``channels`` (sim/part_components.py's shapes
        answer it per component)."""
        return self.ch_local[channels]


def shapes_of(owner, table: RouteTable, used: np.ndarray, capacity: np.ndarray, route_cap: np.ndarray | None,
              n_channels: int, decompose: bool = True) -> _Shapes:
    """``_Shapes(...)``, kept on ``owner`` (the router a Simulator's runs share) for the next run
    whose used routes are the same, element for element (a sweep of sizes with one protocol): what it
    is built from is the key, compared exactly, not a hash of it. The last two are kept."""
    sources = getattr(table, "sources", None)
    if sources is None:  # (a table made without its routes' arrays)
        lens, ch, w = table.gather(used)
        flat = len(ch)
    else:  # the used routes' own arrays, by reference: no copy of every entry (6 million at 16,384 GPUs)
        lens = table.lens[used]
        flat = int(lens.sum())
    parts = [np.asarray([len(table.lens), n_channels, int(decompose), route_cap is not None, len(used), flat,
                         len(capacity)], dtype=np.int64),
             used, lens]
    if sources is None:
        parts += [ch, w]
    parts.append(capacity)
    if route_cap is not None:
        parts.append(route_cap[used])
    key = b"|".join(np.ascontiguousarray(p).tobytes() for p in parts)
    if sources is not None:
        ids = used.tolist()
        key = _RoutesKey(key, [sources[0][i] for i in ids], [sources[1][i] for i in ids])
    kept = owner.__dict__.setdefault("_shapes_kept", {})
    shape = kept.get(key)
    if shape is None:
        shape = _Shapes(table, used, capacity, route_cap, n_channels, decompose)
        while len(kept) >= 2:
            kept.pop(next(iter(kept)))
        kept[key] = shape
    return shape


class _RoutesKey:
    """``shapes_of``'s key for a table that has its routes' arrays: the small figures as bytes, and
    the used routes' channels and weights as the arrays themselves, equal when each is the same
    array or has the same bytes (what the key made of every entry's bytes compares)."""

    __slots__ = ("head", "chans", "weights", "_hash")

    def __init__(self, head: bytes, chans: list[np.ndarray], weights: list[np.ndarray]):
        self.head, self.chans, self.weights = head, chans, weights
        self._hash = hash(head)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (isinstance(other, _RoutesKey) and self.head == other.head
                and _same_arrays(self.chans, other.chans, np.int64) and _same_arrays(self.weights, other.weights, float))


def _same_arrays(a: list[np.ndarray], b: list[np.ndarray], dtype) -> bool:
    """Element for element the same arrays, as the table's concatenation (``dtype``) holds them."""
    return len(a) == len(b) and all(
        x is y or np.asarray(x, dtype).tobytes() == np.asarray(y, dtype).tobytes() for x, y in zip(a, b))


class _ComponentPatterns:
    """The run's rate patterns, each stored as the (component, class pattern) pairs it is made of
    (one per busy component) and assembled into channels and loads only when asked for: a run with
    thousands of distinct network states keeps one small array per state, not every channel's load."""

    def __init__(self, parts: list[np.ndarray], comp_ch: list[np.ndarray], lch: list[np.ndarray],
                 loads: list[np.ndarray], shared: bool = False):
        self._shared = shared  # components share channels (sim/part_components.py): loads added up
        self._parts = parts
        self._comp_ch = comp_ch
        self._lch = lch
        self._loads = loads
        self._last: tuple[int, RatePattern] | None = None

    def __len__(self) -> int:
        return len(self._parts)

    def __getitem__(self, pid: int) -> RatePattern:
        if pid < 0:
            pid += len(self._parts)
        if self._last is not None and self._last[0] == pid:
            return self._last[1]
        comps, cps = self._parts[pid]
        if not len(comps):
            rp = RatePattern(np.zeros(0, np.int64), np.zeros(0))
        else:
            rp = RatePattern(np.concatenate([self._comp_ch[c][self._lch[q]] for c, q in zip(comps.tolist(), cps.tolist())]),
                             np.concatenate([self._loads[q] for q in cps.tolist()]))
            if self._shared:
                uch, inv = np.unique(rp.channels, return_inverse=True)
                rp = RatePattern(uch, np.bincount(inv.ravel(), weights=rp.load_Bps, minlength=len(uch)))
        self._last = (pid, rp)
        return rp

    def __iter__(self):
        return (self[i] for i in range(len(self)))
