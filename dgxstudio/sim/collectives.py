"""Collective algorithms as schedules of transfer groups for the engine.

Data are cut into pieces of at most ``chunk`` bytes that pipeline as NCCL's do: a piece moves on to
the next step once it has arrived (``deps_done``), and the pieces on one connection leave in order
(``deps_sent``). All the transfers of one step of one ring (or one tree level) form one group.

For a ring of P GPUs driven in one direction with link bandwidth B and latency L, K steps (2(P-1) for
all-reduce) and n pieces of c = S / (P n B) seconds each, this gives
    T = max(K n c + L, K (c + L) + (n - 1) c),
which for one piece per step is the alpha-beta formula 2(P-1)(L + S/(P B)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..analysis.channels import reverse_ring
from . import limits
from .chain_stages import ChainStage, record
from .nccl_btree import btree_parent, second_tree_order
from .engine import Group, Pattern, Schedule
from .schedule import Lanes

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce", "all-to-all")
MAX_ALL_TO_ALL_PAIRS = 20_000


@dataclass
class RingSpec:
    """A ring's GPU order, optionally with the device path of each hop (when a hop must cross a GPU).

    ``share`` is the fraction of the data this ring direction carries (default: an equal split),
    ``latency_s`` the per-step latency of its connections (default: each route's), ``cap_Bps`` the
    rate ceiling of each of its connections (a protocol's per-channel ceiling).
    """

    order: list[str]
    hops: list[list[str]] | None = None
    share: float | None = None
    latency_s: float | None = None
    cap_Bps: float = math.inf
    via: list[list[str] | None] | None = None

    def reversed(self) -> "RingSpec":
        order, hops, via = reverse_ring(self.order, self.hops, self.via)
        return RingSpec(order, hops, self.share, self.latency_s, self.cap_Bps, via)

    def pattern(self) -> Pattern:
        n = len(self.order)
        pairs = [(self.order[i], self.order[(i + 1) % n]) for i in range(n)]
        return Pattern(pairs, self.hops, self.latency_s, self.cap_Bps, self.via)


def pieces(nbytes: float, chunk: float) -> tuple[int, float]:
    """How many pieces a segment is cut into, and the size of each."""
    if nbytes <= 0:
        return 1, 0.0
    n = max(1, math.ceil(nbytes / chunk - 1e-9))
    return n, nbytes / n


def _pipelined(sched: Schedule, patterns: list[Pattern], n: int, piece: float, post_delay_s, name, meta: dict,
               after: tuple[int, ...] = (), one_lane: bool = False) -> int:
    """Steps of pipelined pieces as columns (row r = step r // n, piece r % n): a piece moves on to
    the next step once it has arrived there, the first step's pieces wait for ``after``. The pieces
    of a step leave its connections in order; with ``one_lane`` a step's first piece also follows
    the previous step's last (a ring's steps share its connections). ``patterns``: one per step;
    ``post_delay_s``: a value or one per step. Returns the first row's group id."""
    steps = len(patterns)
    rows = steps * n
    sched.reserve(rows)
    base = len(sched.groups)
    # (each column written in one pass: a 16 GiB hierarchical all-reduce's stages are 28,672 rows)
    step = np.repeat(np.arange(steps, dtype=np.int64), n)
    j = np.tile(np.arange(n, dtype=np.int64), steps)
    deps_done = np.empty((rows, max(1, len(after))), dtype=np.int64)
    deps_done[n:, 0] = np.arange(base, base + rows - n, dtype=np.int64)  # the piece's previous step
    deps_done[n:, 1:] = -1
    deps_done[:n] = -1
    deps_done[:n, :len(after)] = np.asarray(after, dtype=np.int64)
    deps_sent = np.arange(base - 1, base + rows - 1, dtype=np.int64)  # the connection's previous piece
    if one_lane:
        deps_sent[0] = -1
    else:
        deps_sent[::n] = -1
    post = np.asarray(post_delay_s, dtype=float)
    unique: list[Pattern] = []
    index: dict[int, int] = {}
    for pat in patterns:
        index.setdefault(id(pat), len(unique))
        if len(unique) < len(index):
            unique.append(pat)
    which = np.asarray([index[id(pat)] for pat in patterns], dtype=np.int64)
    # (a pattern per step, as a chain's hops have: each row's pattern is its step, one column less)
    pattern = step if len(unique) == steps else which[step]
    return sched.add_lanes(Lanes(rows, name, unique, pattern, piece, deps_done, deps_sent,
                                 post_delay_s=post[step] if post.ndim else post,
                                 meta={key: (v(step, j) if callable(v) else v) for key, v in meta.items()}))


def _ring_pass(sched: Schedule, ring: RingSpec, steps: int, segment: float, chunk: float, reduce_steps: int,
               reduce_s_per_byte: float, label: str, after: tuple[int, ...] = ()) -> list[int]:
    """K steps of a ring; returns the ids of the last step's groups. ``reduce_steps`` first steps reduce."""
    n, piece = pieces(segment, chunk)
    if steps * n == 0:
        return []
    post = [piece * reduce_s_per_byte if k < reduce_steps else 0.0 for k in range(steps)]
    first = _pipelined(sched, [ring.pattern()] * steps, n, piece, post,
                       lambda x: f"{label} step {x // n} piece {x % n}",
                       {"ring": label, "step": lambda k, j: k, "piece": lambda k, j: j}, after, one_lane=True)
    return list(range(first + (steps - 1) * n, first + steps * n))


def ring_directions(rings: list[RingSpec], both: bool) -> list[tuple[str, RingSpec]]:
    out = []
    for i, r in enumerate(rings):
        out.append((f"ring {i}", r))
        if both:
            out.append((f"ring {i} reverse", r.reversed()))
    return out


def ring_collective(collective: str, rings: list[RingSpec], size: float, chunk: float, both: bool,
                    reduce_s_per_byte: float = 0.0) -> Schedule:
    """All-reduce, all-gather or reduce-scatter over rings, the data split evenly across them."""
    dirs = ring_directions(rings, both)
    p = len(rings[0].order)
    sched = Schedule([], size, f"{collective} over {len(dirs)} ring direction(s) of {p} GPUs")
    steps = {"all-reduce": 2 * (p - 1), "reduce-scatter": p - 1, "all-gather": p - 1}[collective]
    reduce_steps = {"all-reduce": p - 1, "reduce-scatter": p - 1, "all-gather": 0}[collective]
    for label, ring in dirs:
        share = ring.share if ring.share is not None else 1.0 / len(dirs)
        _ring_pass(sched, ring, steps, size * share / p, chunk, reduce_steps, reduce_s_per_byte, label)
    return sched


def window_latency(hop_latency: list[float], steps: int) -> float:
    """Per-step latency that makes ``steps`` lock-step ring steps cost what the slowest chunk pays.

    A pipelined chunk crosses ``steps`` consecutive hops of the ring and pays each hop's latency
    where it crosses it (NCCL's connections pipeline); the slowest chunk pays the largest sum over
    ``steps`` consecutive hops. Spread over the steps, that is this value.
    """
    n = len(hop_latency)
    if n == 0 or steps <= 0:
        return 0.0
    full, rest = divmod(steps, n)
    total = sum(hop_latency)
    best = 0.0
    if rest:
        window = sum(hop_latency[:rest])
        best = window
        for j in range(1, n):
            window += hop_latency[(j + rest - 1) % n] - hop_latency[j - 1]
            best = max(best, window)
    return (full * total + best) / steps


def with_launch(sched: Schedule, latency_s: float, label: str = "launch") -> Schedule:
    """Start every root group after a per-call latency (NCCL's base latency of the call)."""
    if latency_s <= 0:
        return sched
    roots = sched.roots()
    launch = sched.add(Group(label, duration_s=latency_s, meta={"phase": "launch"}))
    for i in roots:
        sched.set_deps_done(i, (launch,))
    sched.meta["launch_group"] = launch
    return sched


def _chain(sched: Schedule, hops: list[tuple[str, str, list[str] | None]], size: float, chunk: float,
           reduce_s_per_byte: float, label: str, after: tuple[int, ...] = ()) -> list[int]:
    """A pipelined chain: every piece crosses the hops in order. Returns the last hop's groups."""
    n, piece = pieces(size, chunk)
    if not hops:
        return []
    patterns = [Pattern([(src, dst)], [path] if path is not None else None) for src, dst, path in hops]
    first = _pipelined(sched, patterns, n, piece, piece * reduce_s_per_byte,
                       lambda x: f"{label} hop {x // n} piece {x % n}",
                       {"ring": label, "step": lambda k, j: k, "piece": lambda k, j: j}, tuple(after))
    return list(range(first + (len(hops) - 1) * n, first + len(hops) * n))


def _ring_hops(ring: RingSpec, start: int, count: int) -> list[tuple[str, str, list[str] | None]]:
    n = len(ring.order)
    return [(ring.order[(start + i) % n], ring.order[(start + i + 1) % n],
             ring.hops[(start + i) % n] if ring.hops is not None else None) for i in range(count)]


def ring_rooted(collective: str, rings: list[RingSpec], root: str, size: float, chunk: float, both: bool,
                reduce_s_per_byte: float = 0.0) -> Schedule:
    """Broadcast (chain away from the root) or reduce (chain into the root) along each ring direction."""
    dirs = ring_directions(rings, both)
    sched = Schedule([], size, f"{collective} over {len(dirs)} ring direction(s)")
    share = size / len(dirs)
    for label, ring in dirs:
        n = len(ring.order)
        r = ring.order.index(root)
        if collective == "broadcast":
            hops = _ring_hops(ring, r, n - 1)
            _chain(sched, hops, share, chunk, 0.0, label)
        else:
            hops = _ring_hops(ring, r + 1, n - 1)
            _chain(sched, hops, share, chunk, reduce_s_per_byte, label)
    return sched


# ---- trees -------------------------------------------------------------------------------------

def _tree(parent: dict[str, str | None]) -> dict[str, dict]:
    depth: dict[str, int] = {}

    def d(node: str) -> int:
        if node not in depth:
            p = parent[node]
            depth[node] = 0 if p is None else d(p) + 1
        return depth[node]

    for node in parent:
        d(node)
    return {"parent": parent, "depth": depth}


def chained_tree(chains: list[list[str]]) -> dict[str, dict]:
    """NCCL's shape: a chain inside each system, NCCL's binary tree across the systems' chain heads
    (``nccl_btree``: the first system at the root, with one child)."""
    parent: dict[str, str | None] = {}
    depth: dict[str, int] = {}
    heads = [c[0] for c in chains]
    ups = [btree_parent(len(heads), i) for i in range(len(heads))]
    placed: dict[int, int] = {}  # head index -> depth
    for i, chain in enumerate(chains):
        parent[chain[0]] = heads[ups[i]] if ups[i] >= 0 else None
        # (a head's parent may come after it: its unplaced ancestors are placed first, top down, as
        # ``_tree``'s walk meets them; a walk over the heads only, not from each of the 262,000 nodes
        # of the trees over 2,048 DGX H100)
        path, j = [], i
        while j >= 0 and j not in placed:
            path.append(j)
            j = ups[j]
        d = placed[j] if j >= 0 else -1
        for j in reversed(path):
            d += 1
            placed[j] = d
            depth[heads[j]] = d
        top = placed[i]
        for k in range(1, len(chain)):
            parent[chain[k]] = chain[k - 1]
            depth[chain[k]] = top + k
    if len(depth) != sum(map(len, chains)):  # (a GPU in two chains: as ``_tree`` walks it)
        return _tree(parent)
    return {"parent": parent, "depth": depth}


def _levels(tree: dict) -> dict[int, list[str]]:
    levels: dict[int, list[str]] = {}
    for node, d in tree["depth"].items():
        if d > 0:
            levels.setdefault(d, []).append(node)
    return levels


def _tree_phase(sched: Schedule, tree: dict, size: float, chunk: float, up: bool, reduce_s_per_byte: float,
                label: str, after: dict[int, int] | None = None, latency_of=None,
                cap_Bps: float = math.inf, patterns: dict | None = None, lanes: dict | None = None,
                held: dict | None = None, slots: int = 0, key: str | None = None,
                step_pieces: int = 1, whole_step=None, first_piece: int = 0) -> dict[int, int]:
    """Up (reduce towards the root) or down (broadcast from it), level by level, pipelined by piece.

    Returns, per piece, the group that completes the phase for that piece. ``patterns``: a dict kept
    by the caller across calls on the same tree and direction, so that every call's groups share one
    pattern per level (its routes are then looked up once, not once per call). ``lanes``: likewise
    kept across calls, each level's last group, so that a call's pieces leave each connection after
    the previous call's (a connection is a FIFO: NCCL sends its chunks in order). ``held`` (kept by
    the caller per tree, both directions) and ``slots``: each connection has that many buffers at its
    receiver, freed when the receiver has forwarded the piece (up: to its parent, the root down to its
    children; down: to its children), so a level runs at most ``slots`` pieces ahead of the next.
    ``key``: the tree's name in the groups' meta (default ``label``), which the replay colours by.
    ``step_pieces`` pieces make a step; a level for which ``whole_step(pairs)`` is true (a network
    hop, whose proxy sends a step once all of it is written) sends a piece only once the level before
    it has delivered the last piece of that piece's step. ``first_piece``: the number the call's first
    piece has in names and meta (a caller adding a piece at a time).
    """
    n, piece = pieces(size, chunk)
    if not patterns:  # the first call on this tree and direction (or the only one)
        levels = _levels(tree)
        patterns = {} if patterns is None else patterns
        for d, members in levels.items():
            pairs = [(c, tree["parent"][c]) if up else (tree["parent"][c], c) for c in members]
            patterns[d] = Pattern(pairs, latency_s=latency_of(pairs) if latency_of is not None else None,
                                  cap_Bps=cap_Bps)
    depths = sorted(patterns, reverse=up)
    prev_level: dict[int, int] = {}
    for d in depths:
        cur: dict[int, int] = {}
        last = lanes.get(d) if lanes is not None else None
        waits = step_pieces > 1 and whole_step is not None and whole_step(patterns[d].pairs)
        for j in range(n):
            k = min((j // step_pieces + 1) * step_pieces - 1, n - 1) if waits else j
            if prev_level:
                deps_done = (prev_level[k],)
            elif after is not None:
                deps_done = (after[k],)
            else:
                deps_done = ()
            sent_deps = (last,) if last is not None else ()
            if held is not None and slots > 0:
                mine = held.setdefault((up, d), [])
                onward = held.get((True, d - 1) if up and d > 1 else (False, 1) if up else (False, d + 1))
                q = len(mine) - slots
                if onward is not None and 0 <= q < len(onward):
                    sent_deps = (*sent_deps, onward[q])
            gid = sched.add(Group(f"{label} {'up' if up else 'down'} level {d} piece {j + first_piece}", patterns[d], piece,
                                  deps_done, sent_deps,
                                  post_delay_s=piece * reduce_s_per_byte if up else 0.0,
                                  meta={"tree": label if key is None else key, "level": d, "piece": j + first_piece,
                                        "phase": "up" if up else "down"}))
            cur[j] = gid
            last = gid
            if held is not None and slots > 0:
                mine.append(gid)
        if lanes is not None:
            lanes[d] = last
        prev_level = cur
    return prev_level


def double_trees(chains: list[list[str]], root: str | None = None, keep_heads: bool = False) -> list[dict]:
    """Two trees whose roles differ (NCCL's double binary tree): the second mirrors the order of the
    systems (an even count) or shifts it by one (odd: ``nccl_btree.second_tree_order``) and runs each
    chain the other way (with ``keep_heads``, from the same head GPU, the one next to its rail's
    NIC). With a root, both trees start from it."""
    first = [list(c) for c in chains]
    order = [chains[k] for k in second_tree_order(len(chains))]
    if keep_heads:
        second = [[c[0], *c[:0:-1]] for c in order]
    else:
        second = [list(reversed(c)) for c in order]
    if root is not None:
        for trees in (first, second):
            home = next(i for i, c in enumerate(trees) if root in c)
            chain = trees[home]
            k = chain.index(root)
            trees[home] = chain[k:] + chain[:k]
            trees.insert(0, trees.pop(home))
    return [chained_tree(first), chained_tree(second)]


def tree_collective(collective: str, chains: list[list[str]] | list[list[list[str]]], size: float, chunk: float,
                    root: str | None = None, reduce_s_per_byte: float = 0.0, latency_of=None,
                    cap_Bps: float = math.inf, step_pieces: int = 1, whole_step=None) -> Schedule:
    """All-reduce, reduce or broadcast over double binary trees, the data split evenly over them.

    ``chains`` lists each system's GPUs in chain order (NVLink neighbours next to each other), or,
    one such list per NIC rail: NCCL builds a pair of trees per rail, each chain starting at the GPU
    of its rail's NIC. ``latency_of(pairs)`` gives a tree level's per-step latency, ``cap_Bps`` each
    connection's rate ceiling. ``step_pieces`` and ``whole_step``: see ``_tree_phase``.
    """
    per_rail = bool(chains) and isinstance(chains[0][0], list)
    rails = chains if per_rail else [chains]
    trees = []
    for rail in rails:
        trees.extend(double_trees(rail, root if collective in ("broadcast", "reduce") else None, keep_heads=per_rail))
    n_gpus = sum(len(c) for c in rails[0])
    sched = Schedule([], size, f"{collective} over {len(trees) // 2} double binary tree(s) of {n_gpus} GPUs "
                               f"in {len(rails[0])} system(s)")
    share = size / len(trees)
    ranges = []  # each tree's groups, first to last (sim/tree_fold.py runs trees that are alike once)
    for i, tree in enumerate(trees):
        first = len(sched.groups)
        label = f"tree {i}"
        kw = {"latency_of": latency_of, "cap_Bps": cap_Bps, "step_pieces": step_pieces, "whole_step": whole_step}
        if collective == "all-reduce":
            up = _tree_phase(sched, tree, share, chunk, True, reduce_s_per_byte, label, **kw)
            _tree_phase(sched, tree, share, chunk, False, 0.0, label, after=up, **kw)
        elif collective == "reduce":
            _tree_phase(sched, tree, share, chunk, True, reduce_s_per_byte, label, **kw)
        elif collective == "broadcast":
            _tree_phase(sched, tree, share, chunk, False, 0.0, label, **kw)
        else:
            raise ValueError(f"no tree algorithm for {collective}")
        ranges.append((first, len(sched.groups)))
    sched.meta["trees"] = ranges
    return sched


# ---- parameter server, one-by-one, hierarchical, all-to-all ---------------------------------------

def parameter_server(gpus: list[str], server: str, size: float, chunk: float, reduce_s_per_byte: float = 0.0,
                     router=None) -> Schedule:
    """Every worker pushes its gradients to the server, which reduces them and sends the result back.

    With a ``router``, workers that are images of each other under the fabric's symmetry (GPU i of
    every system alike in its relation to the server's) push and pull as one flow per class
    (``symmetry.pattern_classes``; run with ``symmetry.run``): the same answer, a few dozen flows
    instead of one per worker."""
    workers = [g for g in gpus if g != server]
    sched = Schedule([], size, f"parameter server on {server} for {len(workers)} workers")
    sched.meta["server"] = server  # (for its reason: lecture_reasons)
    push_pairs = [(w, server) for w in workers]
    pull_pairs = [(server, w) for w in workers]
    classes = None
    if router is not None and workers:
        from .symmetry import pattern_classes

        classes = pattern_classes(router, push_pairs + pull_pairs)
    if classes is not None:
        sched.meta["classes"] = classes
        push_pairs = [pr for pr in classes.pairs if pr[1] == server]
        pull_pairs = [pr for pr in classes.pairs if pr[0] == server]
    push = Pattern(push_pairs)
    pull = Pattern(pull_pairs)
    n, piece = pieces(size, chunk)
    last_push = last_pull = None
    for j in range(n):
        p = sched.add(Group(f"push piece {j}", push, piece, (), (last_push,) if last_push is not None else (),
                            post_delay_s=piece * len(workers) * reduce_s_per_byte, meta={"phase": "push", "piece": j}))
        q = sched.add(Group(f"pull piece {j}", pull, piece, (p,), (last_pull,) if last_pull is not None else (),
                            meta={"phase": "pull", "piece": j}))
        last_push, last_pull = p, q
    return sched


def one_by_one(gpus: list[str], size: float, reduce_s_per_byte: float = 0.0) -> Schedule:
    """The lecture's decentralized scheme: in round r every GPU sends all its data to the GPU r places on."""
    p = len(gpus)
    if p * (p - 1) > limits.MAX_ROUTED_PAIRS:
        raise limits.TooLarge(
            f"decentralized over {p:,} GPUs sends {p * (p - 1):,} transfers in {p - 1:,} rounds, every pair of GPUs "
            f"on its own route; this version simulates at most {limits.MAX_ROUTED_PAIRS:,} (up to "
            f"{(1 + math.isqrt(1 + 4 * limits.MAX_ROUTED_PAIRS)) // 2} GPUs): choose fewer GPUs (--gpus) or "
            f"another algorithm (ring, tree, hierarchical)")
    sched = Schedule([], size, f"decentralized one-by-one over {p} GPUs ({p - 1} rounds)")
    prev = None
    for r in range(1, p):
        pattern = Pattern([(gpus[i], gpus[(i + r) % p]) for i in range(p)])
        prev = sched.add(Group(f"round {r}", pattern, size, (prev,) if prev is not None else (),
                               post_delay_s=size * reduce_s_per_byte, meta={"round": r}))
    return sched


def hierarchical(systems: list[list[str]], local_rings: list[RingSpec], size: float, chunk: float,
                 reduce_s_per_byte: float = 0.0) -> Schedule:
    """Reduce inside each system to a leader, ring all-reduce across leaders, broadcast inside.
    Its stages are recorded for sim/chain_stages.py (their times without events)."""
    sched = Schedule([], size, f"hierarchical all-reduce over {len(systems)} systems")
    depth = max(len(r.order) for r in local_rings) - 1
    n, piece = pieces(size, chunk)
    leaders = sched.meta["leaders"] = [r.order[0] for r in local_rings]  # (also for its reason: lecture_reasons)

    def local_stage(reduce: bool, after: tuple[int, ...]) -> list[int]:
        patterns = []
        for h in range(depth):
            pairs = []
            for ring in local_rings:
                m = len(ring.order)
                if h >= m - 1:
                    continue
                if reduce:
                    pairs.append((ring.order[m - 1 - h], ring.order[m - 2 - h]))
                else:
                    pairs.append((ring.order[h], ring.order[h + 1]))
            patterns.append(Pattern(pairs))
        if not patterns:
            return []
        word = "reduce" if reduce else "broadcast"
        first = _pipelined(sched, patterns, n, piece, piece * reduce_s_per_byte if reduce else 0.0,
                           lambda x: f"{word} in systems hop {x // n} piece {x % n}",
                           {"phase": "intra-reduce" if reduce else "intra-broadcast", "step": lambda k, j: k,
                            "piece": lambda k, j: j}, tuple(after))
        record(sched, ChainStage(first, depth, n, False, tuple(after)))
        return list(range(first + (depth - 1) * n, first + depth * n))

    def join(ids: list[int], label: str) -> tuple[int, ...]:
        # a stage waits for every piece of the one before: one zero-time join that all its first
        # pieces wait for, not every piece on every piece (n^2 dependencies: 16.8 million at 16 GiB)
        if len(ids) <= 1:
            return tuple(ids)
        return (sched.add(Group(label, deps_done=tuple(ids), meta={"phase": "join"})),)

    reduced = local_stage(True, ())
    if len(leaders) > 1:
        steps, after = 2 * (len(leaders) - 1), join(reduced, "reduced in systems")
        across = _ring_pass(sched, RingSpec(leaders), steps, size / len(leaders), chunk,
                            len(leaders) - 1, reduce_s_per_byte, "leaders ring", after=after)
        if across:
            record(sched, ChainStage(across[0] - (steps - 1) * len(across), steps, len(across), True, after))
    else:
        across = reduced
    local_stage(False, join(across, "reduced across systems"))
    return sched


def all_to_all(gpus: list[str], size: float, chunk: float, router=None, latency_s: float | None = None,
               cap_Bps: float = math.inf) -> Schedule:
    """Every GPU sends size/P to every other, all pairs at once, in pieces of at most ``chunk``
    (``latency_s`` and ``cap_Bps``: each pair's, as ``Pattern`` takes them; NCCL's p2p, sim/nccl_p2p.py).

    With a ``router``, flows that are images of each other under the fabric's symmetry run as one
    flow per class (``symmetry.all_pairs``; run with ``symmetry.run``): the same answer without a
    cap on the GPUs. Without symmetry, every pair is its own flow, up to MAX_ALL_TO_ALL_PAIRS."""
    p = len(gpus)
    classes = None
    if router is not None and p > 1:
        from .symmetry import all_pairs

        classes = all_pairs(router, gpus)
    if classes is None and p * (p - 1) > MAX_ALL_TO_ALL_PAIRS:
        why = (", and these GPUs are not alike enough to run them by symmetry class (systems wired alike "
               "under switches wired alike)" if router is not None else "")
        raise ValueError(f"a direct all-to-all over {p} GPUs makes {p * (p - 1):,} transfers{why}; pair by pair "
                         f"this version simulates at most {MAX_ALL_TO_ALL_PAIRS:,} "
                         f"(about {int(math.isqrt(MAX_ALL_TO_ALL_PAIRS))} GPUs)")
    sched = Schedule([], size, f"direct all-to-all over {p} GPUs")
    if classes is not None:
        pattern = Pattern(classes.pairs, latency_s=latency_s, cap_Bps=cap_Bps)
        sched.meta["classes"] = classes
        sched.description += f" ({len(classes.pairs):,} symmetry classes of {classes.flows:,} transfers)"
    else:
        pattern = Pattern([(a, b) for a in gpus for b in gpus if a != b], latency_s=latency_s, cap_Bps=cap_Bps)
    return _piece_chain(sched, pattern, size / p, chunk)


def _piece_chain(sched: Schedule, pattern: Pattern, nbytes: float, chunk: float) -> Schedule:
    """An all-to-all's pieces, each pair sending ``nbytes`` in chunks, one piece after another."""
    n, piece = pieces(nbytes, chunk)
    _pipelined(sched, [pattern], n, piece, 0.0, lambda x: f"all-to-all piece {x}", {"piece": lambda k, j: j})
    return sched


def all_to_alls(groups: list[list[str]], size: float, chunk: float, router, latency_s: float | None = None,
                cap_Bps: float = math.inf) -> Schedule | None:
    """Several all-to-alls at once (MoE's expert-parallel groups), each GPU sending size/len(group)
    to each member of its group, by symmetry class: None unless the groups together hold whole
    classes and every group holds the same classes (then every group finishes each piece when the
    others do, and one chain of pieces for all is the same as one chain per group)."""
    from .symmetry import pattern_classes

    sizes = {len(g) for g in groups}
    if len(sizes) != 1 or min(sizes) < 2:
        return None
    p = sizes.pop()
    pairs = [(a, b) for g in groups for a in g for b in g if a != b]
    if len(pairs) != len(groups) * p * (p - 1):
        return None
    classes = pattern_classes(router, pairs)
    if classes is None:
        return None
    per_group = np.sort(classes.meta["class_of_pair"].reshape(len(groups), p * (p - 1)), axis=1)
    if not (per_group == per_group[0]).all():
        return None
    sched = Schedule([], size * len(groups), f"{len(groups)} all-to-alls of {p} GPUs at once "
                                             f"({len(classes.pairs):,} symmetry classes of {len(pairs):,} transfers)")
    sched.meta["classes"] = classes
    pattern = Pattern(classes.pairs, latency_s=latency_s, cap_Bps=cap_Bps)
    return _piece_chain(sched, pattern, size / p, chunk)


# NVLink SHARP builders live in sim/nvls.py (kept importable from here)
from .nvls import nvls_allreduce, nvls_tree_allreduce  # noqa: E402,F401
