"""What shape a run's communication has, read from the run's own record (its transfer groups), not from
the algorithm's name: a ring is a closed order of GPUs, a tree has a root and levels (edges from
child to parent), anything else (a server's fan-in and fan-out, all-to-all) is a fan of edges.

Every group of a run carries in ``meta`` the ring or tree it belongs to (``ring``/``tree`` and for
trees ``level``) or its ``phase``; its pattern's pairs are the edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .replay_facts import ReplayFacts
from ..units import counted


@dataclass
class Structure:
    kind: str                      # "ring", "tree" or "fan"
    label: str                     # the ring's, tree's or phase's name in the run
    edges: list[tuple[str, str]] = field(default_factory=list)   # tree: (child, parent)
    order: list[str] = field(default_factory=list)               # ring: GPU order
    root: str | None = None                                      # tree
    hubs: list[str] = field(default_factory=list)                # fan: switches that reduce in the network
    depth: dict[str, int] = field(default_factory=dict)          # tree: node -> level (root 0)
    transfers: int = 0                                           # fan: how many transfers it stands for
    more: bool = False                                           # fan: edges stopped at the drawing cap


def structures(sim, rings: list[list[str]] | None = None, flows: int | None = None,
               counts: dict[tuple[str, str], int] | None = None, facts: ReplayFacts | None = None) -> list[Structure]:
    """The rings, trees and fans of a run, in the order their colour keys first appear. ``flows``: the
    transfers a run simulated by symmetry class stands for (its schedule's ``classes.flows``), counted
    for its one fan instead of the representatives its groups list. ``counts``: the transfers each
    representative pair stands for (``classes.count`` by ``classes.pairs``), which count a run's
    several fans each (a parameter server's push and pull) where ``flows`` cannot. ``facts``: the
    run's groups read per class (the replay's, when it has them), else read here."""
    found: dict[str, Structure] = {}
    seen: dict[str, dict] = {}      # per structure, its edges in order (a dict: constant-time look-ups)
    patterns: set[tuple] = set()    # a pattern shared by many groups (pieces, steps) is read once
    # groups of one class have one pattern and one colour key, kind, switch and phase: read per class,
    # in the order the classes first appear (the order the groups show them)
    for pattern, meta, key in (facts or ReplayFacts(sim.groups)).classes():
        if pattern is None:
            continue
        kind = "tree" if "tree" in meta else "ring" if "ring" in meta else "fan"
        s = found.setdefault(key, Structure(kind, key or "transfers"))
        edges = seen.setdefault(key, {})
        if "switch" in meta and meta["switch"] not in s.hubs:  # an in-switch reduction (NVLS)
            s.hubs.append(meta["switch"])
        flip = kind == "tree" and meta.get("phase", "up") != "up"  # tree edges as (child, parent)
        if (id(pattern), flip, key) in patterns:
            continue
        patterns.add((id(pattern), flip, key))
        for a, b in pattern.pairs:
            if kind == "fan" and len(edges) >= 4096:
                s.more = True
                break
            edges.setdefault((b, a) if flip else (a, b), None)
    for key, s in found.items():
        s.edges = list(seen[key])
        s.transfers = len(s.edges)
    fans = [s for s in found.values() if s.kind == "fan" and not s.hubs]
    if flows is not None and len(fans) == 1:
        fans[0].transfers, fans[0].more = int(flows), False
    elif counts is not None:
        for s in fans:
            s.transfers = sum(int(counts.get(e, 1)) for e in s.edges)
    ring_structs = [s for s in found.values() if s.kind == "ring"]
    given = bool(rings) and len(ring_structs) == len(rings)   # the run's own ring orders, when it gave one each
    for s in found.values():
        if s.kind == "tree":
            _tree_shape(s)
        elif s.kind == "ring" and not given:
            s.order = _ring_order(s.edges)
    if given:
        for s, order in zip(ring_structs, rings):
            s.order = list(order)
    return list(found.values())


def _tree_shape(s: Structure) -> None:
    parent = {c: p for c, p in s.edges}
    nodes = set(parent) | set(parent.values())
    roots = [n for n in nodes if n not in parent]
    s.root = roots[0] if roots else None

    def depth(n: str, seen=()) -> int:
        if n in s.depth:
            return s.depth[n]
        p = parent.get(n)
        d = 0 if p is None or p in seen else depth(p, (*seen, n)) + 1
        s.depth[n] = d
        return d
    for n in nodes:
        depth(n)


def _ring_order(edges: list[tuple[str, str]]) -> list[str]:
    nxt = {}
    for a, b in edges:
        nxt.setdefault(a, b)
    if not edges:
        return []
    start = edges[0][0]
    order, node = [start], nxt.get(start)
    seen = {start}   # (a list's 'in' made a 4,096-GPU ring's order 8 million comparisons, on the GUI thread)
    while node is not None and node not in seen:
        order.append(node)
        seen.add(node)
        node = nxt.get(node)
    return order


def ring_words(structs: list[Structure], channels: int | None) -> tuple[dict[str, str], str | None]:
    """The legend's names for a run's rings, in NCCL's words, and a line that ties them to the run's
    channel count: each ring a run draws is one ring direction standing for ``channels`` / rings of
    NCCL's channels, and NCCL's ring algorithm here runs each ring it finds both ways (the second of
    each pair is the first reversed). A DGX-1 V100's run listed 'ring 0' ... 'ring 5' beside
    '12 channels': now '12 channels: 3 rings, each run both ways (2 channels a way)', then 'ring 0:
    8 GPUs', 'ring 0 reversed' ... Without a channel count (not one of NCCL's algorithms), no names."""
    rings = [s for s in structs if s.kind == "ring"]
    if not rings or not channels:
        return {}, None
    per = channels // len(rings) if channels % len(rings) == 0 else None
    each = counted(per, "channel") if per else None
    paired = len(rings) % 2 == 0 and all(_reversed(a.order, b.order) for a, b in zip(rings[::2], rings[1::2]))
    if not paired:
        names = {s.label: f"{s.label}: {counted(len(s.order), 'GPU')}" for s in rings}
        return names, f"{counted(channels, 'channel')} on {counted(len(rings), 'ring')}" + (f", {each} each" if each else "")
    names = {}
    for k, (a, b) in enumerate(zip(rings[::2], rings[1::2])):
        names[a.label] = f"ring {k}: {counted(len(a.order), 'GPU')}"
        names[b.label] = f"ring {k} reversed"
    pairs = len(rings) // 2
    return names, (f"{channels} channels: {pairs} ring{'s' if pairs > 1 else ''}, {'each ' if pairs > 1 else ''}run both ways"
                   + (f" ({each} a way)" if each else ""))


def _reversed(a: list[str], b: list[str]) -> bool:
    """Whether ring ``b`` is ring ``a`` driven the other way (from any start; two GPUs' ring is its
    own reverse)."""
    if len(a) != len(b) or len(a) < 2:
        return False
    back = a[::-1]
    try:
        k = back.index(b[0])
    except ValueError:
        return False
    return back[k:] + back[:k] == b
