"""The structure of a large cluster, as the canvas overview and the reports draw it (no Qt here).

A cluster of hundreds of systems is drawn as what an architect reads from it: the systems that share
the same leaf switches as one block (a scalable unit, or a leaf's systems), each switch tier as a row
of blocks (the switches that serve the same blocks below), and the cabling between two blocks as one
bundle with its link count and bandwidth per direction. The blocks come from the wiring itself, not
from the builder's names, so an edited or imported cluster gets the same overview.
"""

from __future__ import annotations

import math
import os
from collections import deque
from dataclasses import dataclass, field

from ..model.topology import Topology

# Clusters of at least this many systems open as the block overview; from OVERVIEW_FROM_SYSTEMS up, so
# do those whose system-by-system drawing would take more than OVERVIEW_ITEMS items (boxes, switches
# and links); smaller ones draw every system box.
LOD_MIN_SYSTEMS = int(os.environ.get("DGXSTUDIO_OVERVIEW_SYSTEMS", "200"))
OVERVIEW_FROM_SYSTEMS = 32
OVERVIEW_ITEMS = 1200

TIER_NAMES = {1: "Leaf", 2: "Spine", 3: "Core"}   # by distance from the systems

# Overview geometry, scene units: a block, the gaps between blocks and between tiers.
BLOCK_W, BLOCK_H = 200.0, 100.0
SWITCH_BLOCK_H = 70.0
GAP_X, GAP_Y, TIER_GAP = 40.0, 60.0, 170.0
MAX_PER_LINE = 16
MAX_BLOCKS = 64   # per tier; more are merged


@dataclass
class Block:
    id: str
    tier: int                      # 0: systems; 1: leaves; 2: spines ...
    members: list[str]             # system group ids (tier 0) or switch device ids
    label: str
    summary: str
    short: str = ""                # the label without the words every block of its tier repeats
    rect: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)   # x, y, w, h
    every_member: list[str] = field(default_factory=list)   # as built, deleted ones included (an undo brings them back)


@dataclass
class Bundle:
    a: str
    b: str
    link_ids: list[str]
    count: int                     # physical links
    bandwidth_Bps: float           # all of them together, per direction
    family: str | None
    type_label: str

    @property
    def label(self) -> str:
        return f"{self.count:,} x {self.type_label}, {_bw(self.bandwidth_Bps)} per direction"


@dataclass
class Overview:
    blocks: dict[str, Block] = field(default_factory=dict)
    bundles: list[Bundle] = field(default_factory=list)
    tier_rows: list[tuple[str, float, float]] = field(default_factory=list)   # name, top, height
    block_of: dict[str, str] = field(default_factory=dict)        # system group or switch -> block
    system_of: dict[str, str] = field(default_factory=dict)       # device -> its top-level system group
    system_devices: dict[str, list[str]] = field(default_factory=dict)
    system_gpus: dict[str, int] = field(default_factory=dict)
    bundle_of: dict[str, "Bundle"] = field(default_factory=dict)   # link between two blocks -> its bundle
    unjoined_tier: int | None = None   # the row of devices joined to no system (a part just dropped), if any
    width: float = 0.0                 # of the tier rows, the widest line's (the 'Not connected' row is centred on it)

    def block_for(self, obj_id: str) -> str | None:
        """The block showing a device, a system group or a switch."""
        return self.block_of.get(self.system_of.get(obj_id, obj_id))


def _bw(bps: float) -> str:
    for unit, scale in (("TB/s", 1e12), ("GB/s", 1e9)):
        if bps >= scale:
            return f"{bps / scale:,.1f} {unit}"
    return f"{bps / 1e6:,.1f} MB/s"


def _span(names: list[str]) -> str:
    """'Leaf 1 – 8' from 'Leaf 1' … 'Leaf 8'; one name stays itself."""
    if len(names) == 1:
        return names[0]
    first, last = names[0], names[-1]
    k = 0
    while k < min(len(first), len(last)) and first[k] == last[k]:
        k += 1
    while k > 0 and first[k - 1].isdigit():   # never split a number
        k -= 1
    return f"{first} – {last[k:]}" if k else f"{first} – {last}"


def _shorten(blocks: list[Block]) -> None:
    """Each block's label without the leading words every label of its tier shares ('#33 – 64' for
    'DGX H100 #33 – 64' when every unit is a DGX H100 unit), a pod's blocks their pod ('Pod 3')."""
    if blocks and blocks[0].tier == 0:   # scalable units: their number
        for b in blocks:
            b.short = b.label.split(":")[0]
        return
    words = [b.label.split(" ") for b in blocks]
    k = 0 if len(blocks) > 1 else len(words[0])
    while all(len(w) > k + 1 and w[k] == words[0][k] for w in words):
        k += 1
    for b, w in zip(blocks, words):
        head = b.label.split(" – ")[0].split(" ")
        if len(head) >= 4 and head[1].isdigit():   # 'Pod 3 spine 1 – 32': 'Pod 3' ('3 spine 1 – 32' read as spine 3)
            b.short = " ".join(head[:2])
        else:   # a lone block (every word shared): its first word, 'Core'
            b.short = " ".join(w[k:]) or head[0]


def top_systems(topo: Topology) -> list[str]:
    """System groups not inside another system, in document order."""
    out = []
    for g in topo.groups.values():
        if g.kind != "system":
            continue
        if not any(a.kind == "system" for a in topo.group_chain(g.id)[1:]):
            out.append(g.id)
    return out


def build_overview(topo: Topology, min_systems: int | None = None) -> Overview | None:
    """The block structure of a cluster, or None when it is small enough to draw system by system."""
    systems = top_systems(topo)
    least = LOD_MIN_SYSTEMS if min_systems is None else min_systems
    if len(systems) < min(least, OVERVIEW_FROM_SYSTEMS):
        return None
    ov = Overview()
    children: dict[str, list[str]] = {}
    for g in topo.groups.values():
        if g.parent is not None:
            children.setdefault(g.parent, []).append(g.id)
    for s in systems:
        stack, devs = [s], []
        while stack:
            gid = stack.pop()
            devs.extend(topo.groups[gid].devices)
            stack.extend(children.get(gid, ()))
        ov.system_devices[s] = [d for d in devs if d in topo.devices]
        for d in ov.system_devices[s]:
            ov.system_of[d] = s
        ov.system_gpus[s] = sum(topo.devices[d].kind == "gpu" for d in ov.system_devices[s])
    node = ov.system_of.get
    adj: dict[str, set[str]] = {}
    between_switches = 0
    for lk in topo.links.values():
        if lk.a not in topo.devices or lk.b not in topo.devices:
            continue
        a, b = node(lk.a, lk.a), node(lk.b, lk.b)
        if a != b:
            adj.setdefault(a, set()).add(b)
            adj.setdefault(b, set()).add(a)
            between_switches += a == lk.a and b == lk.b
    outside = [d for d in topo.devices if d not in ov.system_of]
    if len(systems) < least:   # drawn system by system: a box per system, a bundle per system and switch
        drawn = len(systems) + len(outside) + between_switches + sum(len(adj.get(s, ())) for s in systems)
        if drawn <= OVERVIEW_ITEMS:
            return None
    # tiers: distance from the systems
    tier = {s: 0 for s in systems}
    queue = deque(systems)
    while queue:
        u = queue.popleft()
        for v in adj.get(u, ()):
            if v not in tier:
                tier[v] = tier[u] + 1
                queue.append(v)
    top = max(tier.values(), default=0)
    for d in outside:
        if d not in tier:   # devices joined to no system get a row of their own
            tier[d] = ov.unjoined_tier = top + 1
    # tier 0: systems with the same switches above them; tier k: switches serving the same blocks below
    keyed: dict[tuple, list[str]] = {}
    for s in systems:
        keyed.setdefault((0, frozenset(adj.get(s, ()))), []).append(s)
    by_tier: dict[int, list[str]] = {}
    for d in outside:
        by_tier.setdefault(tier[d], []).append(d)
    blocks_in: dict[int, list[list[str]]] = {0: _merged(list(keyed.values()))}
    for k in sorted(by_tier):
        members = blocks_in.setdefault(k, [])
        for i, group in enumerate(blocks_in.get(k - 1, [])):
            for m in group:
                ov.block_of.setdefault(m, f"t{k - 1}b{i}")
        sub: dict[frozenset, list[str]] = {}
        for d in by_tier[k]:
            below = frozenset(ov.block_of[n] for n in adj.get(d, ()) if tier.get(n) == k - 1 and n in ov.block_of)
            sub.setdefault(below, []).append(d)
        members.extend(sub.values())
        blocks_in[k] = _merged(members)
    for k, groups in blocks_in.items():
        for i, group in enumerate(groups):
            bid = f"t{k}b{i}"
            for m in group:
                ov.block_of[m] = bid
            if k == 0:
                names = [f"SU {i + 1}: " + _span([topo.groups[s].name for s in group])]
            else:
                names = [topo.devices[d].name for d in group]
            block = ov.blocks[bid] = Block(bid, k, group, _span(names), "", every_member=list(group))
            block.summary = block_summary(topo, ov, block)
        _shorten([ov.blocks[f"t{k}b{i}"] for i in range(len(groups))])
    _bundles(topo, ov)
    _layout(ov)
    return ov


def unjoined_id(ov: Overview) -> str | None:
    """The block of the 'Not connected' row (always one: its devices serve no block below)."""
    return None if ov.unjoined_tier is None else f"t{ov.unjoined_tier}b0"


def add_unjoined_row(ov: Overview) -> Block:
    """The 'Not connected' row's block, made (empty, above every other row) when the overview has none,
    as build_overview would place it: the other rows do not move."""
    bid = unjoined_id(ov)
    if bid is None:
        ov.unjoined_tier = max(b.tier for b in ov.blocks.values()) + 1
        bid = unjoined_id(ov)
        ov.blocks[bid] = Block(bid, ov.unjoined_tier, [], "", "")
        _place_unjoined(ov)
    return ov.blocks[bid]


def relabel_unjoined(topo: Topology, ov: Overview) -> None:
    """The 'Not connected' block's members (in document order), name and summary after devices came or
    went, as build_overview names it."""
    block = ov.blocks[unjoined_id(ov)]
    have = set(block.every_member)
    block.members = [d for d in topo.devices if d in have]
    if block.members:
        block.label = _span([topo.devices[d].name for d in block.members])
        block.summary = block_summary(topo, ov, block)
        _shorten([block])


def drop_unjoined_row(ov: Overview) -> Block:
    """The 'Not connected' row taken away (its last device went), as if the overview had never had it."""
    block = ov.blocks.pop(unjoined_id(ov))
    for d in block.every_member:
        if ov.block_of.get(d) == block.id:
            del ov.block_of[d]
    ov.tier_rows = [row for row in ov.tier_rows if row[0] != UNJOINED_ROW]
    ov.unjoined_tier = None
    return block


def block_summary(topo: Topology, ov: Overview, block: Block) -> str:
    """'32 systems, 256 GPUs' for a unit; '16 x Quantum-2 QM9700' for switches."""
    group = block.members
    if block.tier == 0:
        return f"{len(group)} systems, {sum(ov.system_gpus[s] for s in group):,} GPUs"
    part = topo.part_of(group[0])
    return f"{len(group)} x {part.label if part else topo.devices[group[0]].part}"


def _merged(groups: list[list[str]]) -> list[list[str]]:
    """A tier of more blocks than a row of the overview can show, merged run by run (neighbours in
    document order, so a pod's units stay together)."""
    if len(groups) <= MAX_BLOCKS:
        return groups
    per = math.ceil(len(groups) / MAX_BLOCKS)
    return [[m for g in groups[i:i + per] for m in g] for i in range(0, len(groups), per)]


def _bundles(topo: Topology, ov: Overview) -> None:
    found: dict[tuple[str, str], Bundle] = {}
    bw_of: dict[tuple, float] = {}
    for lk in topo.links.values():
        if lk.a not in topo.devices or lk.b not in topo.devices:
            continue
        a, b = ov.block_for(lk.a), ov.block_for(lk.b)
        if a is None or b is None or a == b:
            continue
        key = (a, b) if a <= b else (b, a)
        bundle = found.get(key)
        if bundle is None:
            bundle = found[key] = new_bundle(topo, key[0], key[1], lk)
        bundle.link_ids.append(lk.id)
        ov.bundle_of[lk.id] = bundle
        count_link(topo, bundle, lk, bw_of)
    ov.bundles = list(found.values())


def new_bundle(topo: Topology, a: str, b: str, lk) -> Bundle:
    """An empty bundle between blocks a and b (a <= b) of links like ``lk``."""
    lt = topo.link_type_of(lk)
    return Bundle(a, b, [], 0, 0.0, lt.family if lt else None, lt.label if lt else lk.type)


def count_link(topo: Topology, bundle: Bundle, lk, bw_of: dict) -> None:
    """Add a link's count and bandwidth per direction to its bundle (``bw_of``: bandwidths by link
    signature, shared across calls)."""
    bundle.count += lk.count
    sig = (lk.type, lk.width, lk.count, lk.bandwidth_per_direction_Bps)
    bw = bw_of.get(sig)
    if bw is None:
        bw = bw_of[sig] = topo.link_bandwidth_per_direction_Bps(lk)
    bundle.bandwidth_Bps += bw


def _paired(ov: Overview, tiers: dict[int, list[Block]]) -> dict[str, str] | None:
    """Tier-1 block -> the one tier-0 block it serves, when every leaf block serves exactly one unit
    and every unit hangs from exactly one leaf block (then each is drawn right above its unit)."""
    if len(tiers.get(1, ())) != len(tiers.get(0, ())):
        return None
    ends: dict[str, set[str]] = {}
    for bu in ov.bundles:
        ta, tb = ov.blocks[bu.a].tier, ov.blocks[bu.b].tier
        if {ta, tb} == {0, 1}:
            ends.setdefault(bu.a, set()).add(bu.b)
            ends.setdefault(bu.b, set()).add(bu.a)
    pair = {}
    for b in tiers[1]:
        below = ends.get(b.id, set())
        if len(below) != 1:
            return None
        pair[b.id] = next(iter(below))
    if len(set(pair.values())) != len(pair) or any(len(ends.get(u.id, ())) != 1 for u in tiers[0]):
        return None
    return pair


def _layout(ov: Overview, aspect: float = 1.4) -> None:
    """Tiers as rows, the highest on top; a tier of many blocks wraps onto several lines, each line
    centred, as many per line as makes the whole fit a screen of ``aspect`` largest. Leaf blocks that
    each serve one unit are drawn right above it (a band of leaf and unit lines)."""
    tiers: dict[int, list[Block]] = {}
    for b in ov.blocks.values():
        tiers.setdefault(b.tier, []).append(b)
    pair = _paired(ov, tiers) if ov.unjoined_tier != 1 else None
    if pair is not None:
        order = {u: i for i, u in enumerate(b.id for b in tiers[0])}
        tiers[1].sort(key=lambda b: order[pair[b.id]])
    # the 'Not connected' row sits above the others and moves none of them (a part dropped and its undo
    # change only that row: see add_unjoined_row)
    rows = [k for k in sorted(tiers, reverse=True) if not (pair is not None and k == 1) and k != ov.unjoined_tier]
    band = SWITCH_BLOCK_H + GAP_Y / 2 if pair is not None else 0.0   # a leaf line above each unit line

    def extent(per_line: int) -> tuple[float, float]:
        h = sum(math.ceil(len(tiers[k]) / per_line) * ((BLOCK_H + band if k == 0 else SWITCH_BLOCK_H) + GAP_Y)
                for k in rows) + TIER_GAP * (len(rows) - 1)
        return per_line * (BLOCK_W + GAP_X), h

    widest = max(len(tiers[k]) for k in rows)
    per_line = max(range(1, min(MAX_PER_LINE, widest) + 1),
                   key=lambda n: min(aspect / extent(n)[0], 1.0 / extent(n)[1]))
    total_w = ov.width = per_line * (BLOCK_W + GAP_X) - GAP_X
    y = 0.0
    for k in rows:
        blocks = tiers[k]
        h = BLOCK_H if k == 0 else SWITCH_BLOCK_H
        pitch = h + GAP_Y + (band if k == 0 else 0.0)
        lines = math.ceil(len(blocks) / per_line)
        for i, b in enumerate(blocks):
            line, col = divmod(i, per_line)
            in_line = min(per_line, len(blocks) - line * per_line)
            left = (total_w - (in_line * (BLOCK_W + GAP_X) - GAP_X)) / 2
            x, top = left + col * (BLOCK_W + GAP_X), y + line * pitch
            if k == 0 and band:
                leaf = tiers[1][i]
                leaf.rect = (x, top, BLOCK_W, SWITCH_BLOCK_H)
                top += band
            b.rect = (x, top, BLOCK_W, h)
        height = lines * pitch - GAP_Y
        names = [TIER_NAMES.get(k, f"Tier {k}") + " switches" if k else "Systems"]
        if k == 0 and band:
            names = ["Leaves and units"]
        ov.tier_rows.append((names[0], y, height))
        y += height + TIER_GAP
    if ov.unjoined_tier is not None:
        _place_unjoined(ov)


UNJOINED_ROW = "Not connected"


# The 'Not connected' row's one block is as wide as two blocks and their gap: alone in its row it has
# the room, and at BLOCK_W a 512-system cluster at fit draws it 55 px wide, too narrow for its name
# ("InfiniBand" needs 63 px), so it showed none.
UNJOINED_W = 2 * BLOCK_W + GAP_X


def _place_unjoined(ov: Overview) -> None:
    """The 'Not connected' row's one block, centred above the top row, no wider than the rows below."""
    top = -(SWITCH_BLOCK_H + TIER_GAP)
    w = max(BLOCK_W, min(UNJOINED_W, ov.width))
    ov.blocks[unjoined_id(ov)].rect = ((ov.width - w) / 2, top, w, SWITCH_BLOCK_H)
    ov.tier_rows.insert(0, (UNJOINED_ROW, top, SWITCH_BLOCK_H))


def grid(n: int, width: float, height: float, cell_w: float, cell_h: float) -> tuple[int, float]:
    """Columns and scale that fit n cells of cell_w x cell_h into width x height as large as possible."""
    best = (1, 0.0)
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        s = min(width / (cols * cell_w), height / (rows * cell_h))
        if s > best[1]:
            best = (cols, s)
    return best
