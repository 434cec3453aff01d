"""Clusters of systems on fat trees: two or three tiers, one leaf per group of systems or rail-optimized.

Plain: every cabled NIC port of a system goes to that system's leaf (``per_leaf`` systems a leaf).
Rail-optimized: systems form scalable units (SU) of ``per_leaf`` systems; NIC port k of every system
of a unit goes to leaf k of that unit, as NVIDIA's DGX SuperPOD reference architectures wire them.
Every leaf has ``down / oversubscription`` uplinks. Two tiers: each leaf reaches every spine over the
same number of parallel links. Three tiers (when the leaves outnumber a switch's ports): leaves form
pods with their own aggregation switches, aggregation switch j of every pod reaches the core switches
of plane j. With 64-port switches and 32-system units this gives the switch and cable counts of the
DGX SuperPOD B200 reference architecture's "larger SuperPOD" table (e.g. 32 SU: 256 leaf, 256 spine,
128 core, 8,192 cables a tier).

Switch radix and speed come from the switch part. A NIC port and a switch port that do not share
their best speed link at the fastest type both accept, as real hardware negotiates; validation
reports it. ``plan_fat_tree`` answers every count (switches, cables, power) without building.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .catalog import KIND_LABELS, NETWORK_FAMILIES, Catalog, Part, default_catalog
from .catalog import with_article as _a
from .systems import SYSTEM_BUILDERS, SYSTEM_LABELS, build_system, power_note, system_power_W
from .topology import Device, Group, Link, Topology

# Canvas layout of a fat tree: switch layers on top, each leaf's systems in a row (or two staggered
# rows) under it, two lines of them about the spine row when one would be a strip (_Bands). COLUMN: a
# system's width in one row; STAGGER: from a system to the next in the same row of two staggered rows,
# STAGGER_ROW apart; LEAF_SPACING: the least from a leaf to the next; UNIT_ROW: from a row of a
# rail-optimized unit's systems to the next (_UnitRows); SYSTEM_BOX: the collapsed
# system's box the canvas draws (ui GroupItem.BOX_W, BOX_H).
COLUMN, STAGGER, STAGGER_ROW, LEAF_SPACING, UNIT_ROW = 170.0, 200.0, 90.0, 150.0, 90.0
SYSTEM_BOX = (130.0, 64.0)
CORE_Y, SPINE_Y, LEAF_Y, SYSTEM_Y = -400.0, 0.0, 500.0, 650.0
SCREEN_ASPECT = 1.4   # the shape the drawing is made to fill at fit (the canvas beside the docks: 1.3-1.4)
MAX_SYSTEMS = 100_000


@dataclass(frozen=True)
class FatTreePlan:
    systems: int
    per_leaf: int            # systems per leaf (plain) or per scalable unit (rail-optimized)
    spines: int              # spine switches (two tiers) or aggregation switches per pod (three tiers)
    leaves: int
    levels: int
    leaves_per_pod: int
    pods: int
    link_type: str           # the NIC-to-leaf link type, after negotiation
    switch_part: str
    nics_per_system: int     # NIC ports per system that are cabled
    system: str = "dgx1-v100"
    nic_part: str | None = None
    nics_cabled: int = 0     # compute NICs per system that are cabled
    rail_optimized: bool = False
    rails: int = 1
    oversubscription: float = 1.0
    uplinks_per_leaf: int = 0
    leaf_spine_links: int = 1    # parallel links per leaf-spine (leaf-aggregation) pair
    cores_per_plane: int = 0
    agg_core_links: int = 1
    switch_link_type: str = ""   # switch-to-switch link type
    warnings: tuple[str, ...] = field(default=())

    @property
    def units(self) -> int:
        return math.ceil(self.systems / self.per_leaf)

    @property
    def switch_count(self) -> dict[str, int]:
        if self.levels == 1:
            return {"leaf": self.leaves}
        if self.levels == 2:
            return {"leaf": self.leaves, "spine": self.spines}
        return {"leaf": self.leaves, "spine": self.pods * self.spines, "core": self.spines * self.cores_per_plane}

    @property
    def cable_count(self) -> dict[str, int]:
        node_leaf = self.systems * self.nics_per_system
        leaf_up = self.leaves * self.uplinks_per_leaf
        if self.levels == 1:
            return {"node-leaf": node_leaf}
        if self.levels == 2:
            return {"node-leaf": node_leaf, "leaf-spine": leaf_up}
        return {"node-leaf": node_leaf, "leaf-spine": leaf_up,
                "spine-core": self.pods * self.spines * self.cores_per_plane * self.agg_core_links}

    def power_W(self, catalog: Catalog) -> tuple[float, list[str]]:
        """Published power of the systems and switches, and what has no published figure."""
        unknown = []
        sys_w = system_power_W(self.system)
        total = 0.0
        if sys_w is None:
            unknown.append(f"{SYSTEM_LABELS[self.system]} systems")
        else:
            total += sys_w * self.systems
        sw_w = catalog.part(self.switch_part).specs.get("power_W")
        if sw_w is None:
            unknown.append(f"{catalog.part(self.switch_part).label} switches")
        else:
            total += sw_w * sum(self.switch_count.values())
        return total, unknown

    def summary(self, catalog: Catalog) -> dict:
        power, unknown = self.power_W(catalog)
        return {"systems": self.systems, "gpus_per_system": None, "levels": self.levels,
                "switches": self.switch_count, "switches_total": sum(self.switch_count.values()),
                "cables": self.cable_count, "cables_total": sum(self.cable_count.values()),
                "power_W": power, "power_unknown": unknown,
                "power_basis": [n for n in [power_note(catalog.part(self.switch_part))] if n],
                "link_type": self.link_type,
                "switch_part": self.switch_part, "rails": self.rails if self.rail_optimized else None,
                "warnings": list(self.warnings)}


def _fabric_nics(topo: Topology, group_id: str) -> list[str]:
    """The compute NICs of a system, in document order: not storage or management NICs."""
    out = []
    for did in topo.devices_in_group(group_id):
        dev = topo.devices[did]
        if dev.kind != "nic" or dev.properties.get("role", "compute") != "compute":
            continue
        out.append(did)
    return out


def _network_group(part: Part, catalog: Catalog):
    for pg in part.ports:
        lt = catalog.link_type(pg.accepts[0])
        if lt is not None and lt.family in NETWORK_FAMILIES:
            return pg
    return None


def _network_port(topo: Topology, nic_id: str):
    part = topo.part_of(nic_id)
    pg = _network_group(part, topo.catalog)
    if pg is None:
        raise ValueError(f"{nic_id}: NIC part {part.id} has no network port")
    return pg


def _switch_for(catalog: Catalog, link_type: str) -> str:
    kinds = {"infiniband": "ib_switch", "ethernet": "eth_switch"}
    family = catalog.link_type(link_type).family
    for part in catalog.parts.values():
        if part.kind == kinds[family] and any(pg.accepts[0] == link_type for pg in part.ports):
            return part.id
    for part in catalog.parts.values():
        if part.kind == kinds[family] and any(link_type in pg.accepts for pg in part.ports):
            return part.id
    raise ValueError(f"the catalog has no switch for {link_type}")


def negotiated_type(catalog: Catalog, accepts_a, accepts_b) -> str | None:
    """The fastest link type both port groups accept (what two real ports train to), or None."""
    common = [t for t in accepts_a if t in set(accepts_b) and catalog.link_type(t) is not None]
    if not common:
        return None
    return max(common, key=lambda t: catalog.link_type(t).bandwidth_per_direction_Bps())


def _retype_links(topo: Topology, device_id: str) -> None:
    """After a part change, give each link of the device the best type both of its ends accept."""
    for lk in topo.links_of(device_id):
        pa, pb = topo.part_of(lk.a), topo.part_of(lk.b)
        ga = pa.port_group_for(lk.type) if pa else None
        gb = pb.port_group_for(lk.type) if pb else None
        if ga is not None and gb is not None:
            continue
        family = topo.catalog.link_type(lk.type).family
        pool = lambda part: [t for g in part.ports for t in g.accepts  # noqa: E731
                             if topo.catalog.link_type(t) and topo.catalog.link_type(t).family == family]
        new = negotiated_type(topo.catalog, pool(pa), pool(pb))
        if new is None:
            raise ValueError(f"{topo.devices[device_id].name}: a {pa.label if ga is None else pb.label} "
                             f"has no {family} port for link {lk.id}")
        lk.type = new
        lk.a_port = lk.b_port = None
        lk.a_port = (pa.port_group_for(new).name)
        lk.b_port = (pb.port_group_for(new).name)
        if not topo.catalog.link_type(new).per_lane:
            lk.width = None


def set_compute_nics(topo: Topology, group_id: str, nic_part: str) -> list[str]:
    """Replace every compute NIC of a system by ``nic_part``, re-typing its links (PCIe Gen5 to Gen4...)."""
    nics = _fabric_nics(topo, group_id)
    for did in nics:
        topo.devices[did].part = nic_part
        _retype_links(topo, did)
    return nics


_IB_PORT_NAME = re.compile(r"\bIB(\d+)$")


def name_ports_for_network(topo: Topology, nic_ids: list[str], link_type: str) -> None:
    """Display names of compute NICs cabled at ``link_type``: "IB3" on InfiniBand, "ETH3" on Ethernet.

    The system builders name a compute NIC after its port's InfiniBand interface (``ib0``, ``ib1``...,
    the DGX user guides' IPoIB names); the same ConnectX port run as RoCE on an Ethernet fabric is an
    Ethernet interface (``ethN``, the prefix NCCL XML import already gives Ethernet NICs). Only the
    display name changes: the id (``s01.ib3``) stays, as links, rails and saved files refer to it.
    """
    lt = topo.catalog.link_type(link_type)
    prefix = "ETH" if lt is not None and lt.family == "ethernet" else "IB"
    for did in nic_ids:
        dev = topo.devices[did]
        dev.name = _IB_PORT_NAME.sub(lambda m: prefix + m.group(1), dev.name)


def _parts_named(catalog: Catalog, kinds: tuple[str, ...]) -> str:
    """Every catalog part of these kinds, as `id (label)`: what a mistyped --nic or --switch could have been
    (the 400 GbE RoCE switch is not something a user guesses)."""
    return ", ".join(f"{p.id} ({p.label})" for kind in kinds for p in catalog.parts_of_kind(kind))


def _check_nic_part(catalog: Catalog, nic: str) -> Part:
    part = catalog.part(nic)
    if part is None:
        raise ValueError(f"--nic {nic}: no such catalog part; the NICs: {_parts_named(catalog, ('nic',))}")
    if part.kind != "nic":
        raise ValueError(f"--nic {nic}: {part.label} is {_a(KIND_LABELS[part.kind])}, not a NIC")
    if _network_group(part, catalog) is None:
        raise ValueError(f"--nic {nic}: {part.label} has no InfiniBand or Ethernet port")
    return part


def _check_switch_part(catalog: Catalog, switch: str) -> Part:
    part = catalog.part(switch)
    if part is None:
        raise ValueError(f"--switch {switch}: no such catalog part; the switches: "
                         f"{_parts_named(catalog, ('ib_switch', 'eth_switch'))}")
    if part.kind not in ("ib_switch", "eth_switch"):
        raise ValueError(f"--switch {switch}: {part.label} is {_a(KIND_LABELS[part.kind])}, "
                         "not an InfiniBand or Ethernet switch")
    return part


def _largest_divisor(n: int, limit: int) -> int:
    """The largest d dividing n with d <= limit (at least 1)."""
    return max((d for d in range(1, min(n, max(limit, 1)) + 1) if n % d == 0), default=1)


def plan_fat_tree(topo_probe: Topology, system_group: str, systems: int, per_leaf: int | None,
                  spines: int | None, *, system: str = "dgx1-v100", nic: str | None = None,
                  nics_per_system: int | None = None, rail_optimized: bool = False, rails: int | None = None,
                  oversubscription: float = 1.0, tiers: int | None = None, switch: str | None = None) -> FatTreePlan:
    """Every count of the fabric, checked; ValueError with one clear message when the combination cannot be built."""
    catalog = topo_probe.catalog
    if not isinstance(systems, int) or isinstance(systems, bool) or not 1 <= systems <= MAX_SYSTEMS:
        raise ValueError(f"--systems {systems}: a whole number from 1 to {MAX_SYSTEMS:,} is needed")
    if nic is not None:
        _check_nic_part(catalog, nic)
    nics = _fabric_nics(topo_probe, system_group)
    if not nics:
        raise ValueError("the system has no compute NICs to attach to a fabric")
    if nics_per_system is not None:
        if nics_per_system < 1 or nics_per_system > len(nics):
            raise ValueError(f"--nics-per-system {nics_per_system}: must be 1 to {len(nics)} (a "
                             f"{SYSTEM_LABELS.get(system, system)} has {len(nics)} compute NICs)")
        nics = nics[:nics_per_system]
    nic_part = catalog.part(nic) if nic else topo_probe.part_of(nics[0])
    pg = _network_group(nic_part, catalog)
    native = pg.accepts[0]
    switch_part = _check_switch_part(catalog, switch) if switch else catalog.part(_switch_for(catalog, native))
    sw_group = next((g for g in switch_part.ports if catalog.link_type(g.accepts[0]).family in NETWORK_FAMILIES), None)
    link_type = negotiated_type(catalog, pg.accepts, sw_group.accepts if sw_group else ())
    if link_type is None:
        raise ValueError(f"{_a(nic_part.label)} cannot link to {_a(switch_part.label)}: no common speed "
                         f"({', '.join(pg.accepts)} vs {', '.join(sw_group.accepts if sw_group else ())})")
    warnings = []
    if catalog.link_type(link_type).rate_bps_per_direction < catalog.link_type(native).rate_bps_per_direction:
        warnings.append(f"{nic_part.label} links at {catalog.link_type(link_type).label} on {_a(switch_part.label)}")
    switch_link = sw_group.accepts[0]
    radix = sw_group.count
    ports_per_system = len(nics) * pg.count
    if not (isinstance(oversubscription, (int, float)) and math.isfinite(oversubscription) and oversubscription >= 1):
        raise ValueError(f"--oversubscription {oversubscription:g}: the leaf down:up ratio must be 1 or more")
    if tiers not in (None, 2, 3):
        raise ValueError(f"--tiers {tiers}: a fat tree here has 2 or 3 tiers")
    if rails is not None and not rail_optimized:
        raise ValueError("--rails needs --rail-optimized")
    n_rails = 1
    if rail_optimized:
        n_rails = rails if rails is not None else ports_per_system
        if n_rails < 1 or ports_per_system % n_rails:
            raise ValueError(f"--rails {n_rails}: does not divide the {ports_per_system} cabled NIC ports of a system")
        per_system_per_leaf = ports_per_system // n_rails
    else:
        per_system_per_leaf = ports_per_system
    asked_per_leaf = per_leaf is not None
    if per_leaf is None:
        per_leaf = int(radix * oversubscription / (oversubscription + 1)) // per_system_per_leaf
        while per_leaf > 1 and not _whole(per_leaf * per_system_per_leaf / oversubscription):
            per_leaf -= 1
        per_leaf = max(1, per_leaf)
        # fewer systems than a leaf (or unit) holds: size it to them, so the uplinks keep the asked
        # down:up ratio (32 DGX H100 at 2:1 had 21 uplinks a leaf for 32 cabled ports, sized for 42)
        if systems < per_leaf and _whole(systems * per_system_per_leaf / oversubscription):
            per_leaf = systems
    if per_leaf < 1:
        raise ValueError(f"--per-leaf {per_leaf}: systems per leaf must be at least 1")
    down = per_leaf * per_system_per_leaf
    if spines is not None:
        if spines < 1:
            raise ValueError(f"--spines {spines}: a fat tree needs at least 1 spine")
        up = spines
    else:
        if not _whole(down / oversubscription):
            raise ValueError(f"--oversubscription {oversubscription:g} does not divide a leaf's {down} down ports")
        up = round(down / oversubscription)
    if down + up > radix:
        hint = ("; spread the NICs over rails (--rail-optimized) or cable fewer (--nics-per-system)"
                if per_leaf == 1 and not rail_optimized else "")
        asked = [f"--per-leaf {per_leaf}"] * asked_per_leaf + [f"--spines {spines}"] * (spines is not None)
        held = (", ".join(asked) + ": " if asked else "") + (
            f"a leaf of {per_leaf} systems" if per_leaf > 1 else "a leaf of one system")
        raise ValueError(f"{held} needs {down} ports down and {up} up, but {_a(switch_part.label)} has {radix}{hint}")
    units = math.ceil(systems / per_leaf)
    leaves = units * n_rails
    common = dict(systems=systems, per_leaf=per_leaf, leaves=leaves, link_type=link_type,
                  switch_part=switch_part.id, nics_per_system=ports_per_system, system=system,
                  nic_part=nic, nics_cabled=len(nics), rail_optimized=rail_optimized, rails=n_rails,
                  oversubscription=float(oversubscription), uplinks_per_leaf=up, switch_link_type=switch_link,
                  warnings=tuple(warnings))
    if leaves == 1 and tiers is None and spines is None:
        # One leaf holds every system: a spine tier would carry nothing (every route turns at the
        # leaf), yet it was built, cabled and counted in the switches and power (16 spines for 2 DGX
        # H100). Asked for with --tiers 2 or --spines, it is built as asked.
        return FatTreePlan(spines=0, levels=1, leaves_per_pod=1, pods=1, **dict(common, uplinks_per_leaf=0))
    if (tiers or 2) == 2 and leaves <= radix:
        # Rail-optimized fabrics fill the spines' ports with parallel links, as the SuperPOD tables do
        # (4 SU of 32: 32 leaves, 16 spines); a plain tree keeps one link per leaf-spine pair.
        m = _largest_divisor(up, radix // leaves) if rail_optimized and spines is None else 1
        return FatTreePlan(spines=up // m, levels=2, leaves_per_pod=leaves, pods=1, leaf_spine_links=m, **common)
    if tiers == 2:
        raise ValueError(f"{leaves} leaves need three tiers: two tiers of {radix}-port switches hold at most "
                         f"{radix} leaves")
    # Three tiers: pods of whole scalable units (rail-optimized) under their own aggregation switches.
    leaves_per_pod = radix // 2
    if rail_optimized and n_rails <= leaves_per_pod:
        leaves_per_pod = (leaves_per_pod // n_rails) * n_rails
    leaves_per_pod = min(leaves_per_pod, leaves)
    pods = math.ceil(leaves / leaves_per_pod)
    if pods > radix:
        raise ValueError(f"{systems} systems need more than three tiers of {radix}-port switches")
    m2 = _largest_divisor(leaves_per_pod, radix // pods)
    return FatTreePlan(spines=up, levels=3, leaves_per_pod=leaves_per_pod, pods=pods,
                       cores_per_plane=leaves_per_pod // m2, agg_core_links=m2, **common)


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9 and round(x) >= 1


class _Bands:
    """Where a fat tree's leaves and systems go: ``bays`` bays side by side, a bay per leaf (per
    scalable unit when ``of`` leaves share its systems), each bay's systems under its leaves, so that
    every leaf's cables reach its systems without passing behind another system (a column of systems
    under a leaf drew the cables to the lower ones through those above: a daisy chain).

    The systems stand in one row (COLUMN apart) or in two staggered rows (STAGGER apart in each row,
    the second row's systems under the first row's gaps, so a system takes half a STAGGER of width):
    a cable to the far row runs through a gap of the near one. The rows sit far enough below the leaves
    that the slantest cable stays in its gap and enters its own box, not a neighbour's. A two-level tree
    may also be drawn in two lines of whole bays, mirrored about the spine row: the first line's leaves
    above the spines with their systems above them, the second's below, so every leaf-spine cable runs
    between the two leaf rows and none crosses a system. Of these (one or two rows, one or two lines)
    the drawing is the one shown largest at fit on a SCREEN_ASPECT screen."""

    def __init__(self, bays: int, per_leaf: int, of: int, levels: int):
        box_w, box_h = SYSTEM_BOX
        best = None
        for rows in (1, 2):
            share = COLUMN if rows == 1 else STAGGER / 2   # the width a system takes
            slots = max(per_leaf, math.ceil(LEAF_SPACING * of / share))
            first = (slots - per_leaf) / 2
            reach = max(abs((first + j) * share - ((k + 0.5) * slots * share / of - share / 2))
                        for j in (0, per_leaf - 1) for k in (0, of - 1))
            # the cable enters its box's band this far (per unit of reach and of drop) before its centre
            near = reach * (box_h / 2 + 4) / ((COLUMN if rows == 1 else STAGGER) - box_w / 2 - 8)
            drop = max(SYSTEM_Y - LEAF_Y, near)
            if rows == 2:   # and through the near row's gap, half a STAGGER less a box and a cable wide
                drop = max(drop, reach * (STAGGER_ROW + box_h / 2 + 4) / ((STAGGER - box_w) / 2 - 6) - STAGGER_ROW)
            drop = math.ceil(drop / 10.0) * 10.0
            tall = LEAF_Y + drop + (rows - 1) * STAGGER_ROW - SPINE_Y + box_h
            for lines in ((1, 2) if levels == 2 and bays > 1 else (1,)):
                per_line = math.ceil(bays / lines)
                scale = min(SCREEN_ASPECT / (per_line * slots * share), 1.0 / (lines * tall))
                if best is None or scale > best[0] * 1.0001:
                    best = (scale, rows, share, slots, first, drop, per_line)
        _, self.rows, self.share, self.slots, self.first, self.drop, self.per_line = best
        self._mirror = self.per_line < bays
        self.width = self.per_line * self.slots * self.share   # what the switch rows spread over

    def _bay(self, bay: int) -> tuple[float, float, int]:
        """A bay's left edge, its side (-1 for the mirrored first line, else 1) and its first slot in the line."""
        line, col = divmod(bay, self.per_line)
        return col * self.slots * self.share, -1.0 if self._mirror and not line else 1.0, col * self.slots

    def system(self, bay: int, j: int) -> tuple[float, float]:
        """Where the bay's j-th system goes (staggered: every other slot of the line in the far row)."""
        x0, side, slot0 = self._bay(bay)
        slot = self.first + j
        far = self.rows == 2 and int(slot0 + slot) % 2 == 1
        return x0 + slot * self.share, side * (LEAF_Y + self.drop + far * STAGGER_ROW)

    def leaf(self, bay: int, k: int = 0, of: int = 1) -> tuple[float, float]:
        """Leaf k of a bay's ``of`` leaves: spread evenly over the bay (one leaf over its middle)."""
        x0, side, _ = self._bay(bay)
        return x0 + (k + 0.5) * self.slots * self.share / of - self.share / 2, side * LEAF_Y


class _UnitRows:
    """Where a rail-optimized tree's leaves and systems go: a column per leaf, a unit's systems in rows
    as wide as its rails under its leaves (two lines of units mirrored about the spine row when one
    line would be drawn smaller at fit). Every system of a unit is cabled to every leaf of it, so the
    cables to the lower rows pass behind the systems above; one row per unit (as _Bands draws a leaf's
    systems) would avoid it, but a unit of 16-32 systems in one row is drawn 2-4 times smaller at fit
    (32 DGX H100: at 0.13 of full size instead of 0.48 in a 1300 x 850 window), too small for the
    bundles' counts, where the complete mesh of a unit's cables reads as that anyway."""

    def __init__(self, bays: int, per_leaf: int, of: int, levels: int):
        columns, self._of, rows = bays * of, of, math.ceil(per_leaf / of)
        self._columns = self.per_line = columns
        self._rows = rows
        if levels == 2 and bays > 1:
            top = SYSTEM_Y + rows * UNIT_ROW   # below the spines (and as much above them when mirrored)
            one = min(SCREEN_ASPECT / (columns * COLUMN), 1.0 / (top - SPINE_Y))
            halves = math.ceil(bays / 2) * of
            two = min(SCREEN_ASPECT / (halves * COLUMN), 1.0 / (2 * (top - SPINE_Y)))
            if two > one:
                self.per_line = halves
        self.width = self.per_line * COLUMN   # what the switch rows spread over

    def _at(self, column: int, row: int | None = None) -> tuple[float, float]:
        line, col = divmod(column, self.per_line)
        if line or self.per_line == self._columns:
            return col * COLUMN, LEAF_Y if row is None else SYSTEM_Y + row * UNIT_ROW
        return col * COLUMN, 2 * SPINE_Y - (LEAF_Y if row is None else SYSTEM_Y + (self._rows - 1 - row) * UNIT_ROW)

    def system(self, bay: int, j: int) -> tuple[float, float]:
        """The unit's j-th system: rows of its rails' width, the first one top left (as seen from the spines)."""
        return self._at(bay * self._of + j % self._of, j // self._of)

    def leaf(self, bay: int, k: int = 0, of: int = 1) -> tuple[float, float]:
        return self._at(bay * of + k)


def build_fat_tree(systems: int, system: str = "dgx1-v100", per_leaf: int | None = None, spines: int | None = None,
                   catalog: Catalog | None = None, *, nic: str | None = None, nics_per_system: int | None = None,
                   rail_optimized: bool = False, rails: int | None = None, oversubscription: float = 1.0,
                   tiers: int | None = None, switch: str | None = None, name: str | None = None) -> Topology:
    """N systems on a two-level (or, when N outgrows the switch radix, three-level) fat tree.

    Defaults keep a leaf non-blocking: half its ports down, half up. See the module text for the wiring.
    """
    if system not in SYSTEM_BUILDERS:
        raise ValueError(f"unknown system {system!r} (one of {', '.join(SYSTEM_BUILDERS)})")
    catalog = catalog or default_catalog()
    probe = build_system(system, catalog)
    plan = plan_fat_tree(probe, "system", systems, per_leaf, spines, system=system, nic=nic,
                         nics_per_system=nics_per_system, rail_optimized=rail_optimized, rails=rails,
                         oversubscription=oversubscription, tiers=tiers, switch=switch)
    label = SYSTEM_LABELS[system]
    topo = Topology(name or f"{systems} x {label} {'rail-optimized ' if rail_optimized else ''}fat tree", catalog)
    if plan.levels == 1:
        topo.description = (f"one {plan.link_type} leaf switch holds the {systems} system{'' if systems == 1 else 's'} "
                            f"(no spine tier: every route turns at the leaf)")
    else:
        topo.description = (f"{plan.levels}-level {plan.link_type} fat tree: {plan.leaves} lea{'f' if plan.leaves == 1 else 'ves'}, "
                            f"{plan.spines} spine{'' if plan.spines == 1 else 's'}{' per pod' if plan.levels == 3 else ''}, "
                            f"{plan.per_leaf} system{'' if plan.per_leaf == 1 else 's'} per "
                            f"{'scalable unit' if rail_optimized else 'leaf'}")
    cluster = topo.add_group(Group("cluster", topo.name, "cluster", None, [], {"builder": "fat-tree"}))
    fabric = topo.add_group(Group("fabric", "Fabric", "fabric", cluster.id, []))
    sys_groups = []
    digits = len(str(systems))
    short = label.split(" (")[0]
    # a bay per leaf, its systems under it (a unit's in rows under its leaves when rail-optimized)
    of = plan.rails if rail_optimized else 1
    bays = (_UnitRows if rail_optimized else _Bands)(plan.leaves // of, plan.per_leaf, of, plan.levels)
    for i in range(systems):
        prefix = f"s{i + 1:0{digits}d}."
        gid = SYSTEM_BUILDERS[system](topo, prefix=prefix, name=f"{short} #{i + 1}",
                                      origin=(i * 1100.0, 3000.0), parent=cluster.id)
        sys_groups.append(gid)
        bay, j = divmod(i, plan.per_leaf)
        topo.layout.positions[gid] = bays.system(bay, j)
        topo.layout.collapsed.add(gid)
    nlink = 0

    def connect(a: str, b: str, link_type: str, count: int = 1) -> None:
        nonlocal nlink
        topo.add_link(Link(f"f{nlink}", a, b, link_type, count))
        nlink += 1

    kind = catalog.part(plan.switch_part).kind

    def make_switch(sid: str, sname: str, xy) -> str:
        topo.add_device(Device(sid, kind, plan.switch_part, sname), xy, fabric.id)
        return sid

    width = bays.width
    leaves = [make_switch(f"leaf{k + 1}", f"Leaf {k + 1}", bays.leaf(k // of, k % of, of))
              for k in range(plan.leaves)]
    local_nics = _fabric_nics(probe, "system")[:plan.nics_cabled]
    for i, gid in enumerate(sys_groups):
        prefix = gid[:-len("system")]
        nics = [prefix + n for n in local_nics]
        if nic is not None:
            for did in nics:
                topo.devices[did].part = nic
                _retype_links(topo, did)
        name_ports_for_network(topo, nics, plan.link_type)
        ports = [did for did in nics for _ in range(_network_port(topo, did).count)]
        unit = i // plan.per_leaf
        if rail_optimized:
            per_rail = len(ports) // plan.rails
            for k, did in enumerate(ports):
                connect(did, leaves[unit * plan.rails + k // per_rail], plan.link_type)
        else:
            for did in ports:
                connect(did, leaves[unit], plan.link_type)
    up_type, m = plan.switch_link_type, plan.leaf_spine_links
    if plan.levels == 1:
        return topo
    if plan.levels == 2:
        span = width / plan.spines
        spine_ids = [make_switch(f"spine{j + 1}", f"Spine {j + 1}", (j * span + span / 2 - COLUMN / 2, SPINE_Y))
                     for j in range(plan.spines)]
        for leaf in leaves:
            for sp in spine_ids:
                connect(leaf, sp, up_type, m)
        return topo
    planes = plan.spines
    span = width / (plan.pods * planes)
    aggs: list[list[str]] = []
    for p in range(plan.pods):
        pod_aggs = [make_switch(f"pod{p + 1}.spine{j + 1}", f"Pod {p + 1} spine {j + 1}",
                                ((p * planes + j) * span, SPINE_Y)) for j in range(planes)]
        aggs.append(pod_aggs)
        for leaf in leaves[p * plan.leaves_per_pod:(p + 1) * plan.leaves_per_pod]:
            for a in pod_aggs:
                connect(leaf, a, up_type)
    cspan = width / (planes * plan.cores_per_plane)
    for j in range(planes):
        for c in range(plan.cores_per_plane):
            core = make_switch(f"core{j + 1}.{c + 1}", f"Core {j + 1}.{c + 1}",
                               ((j * plan.cores_per_plane + c) * cspan, CORE_Y))
            for p in range(plan.pods):
                connect(aggs[p][j], core, up_type, plan.agg_core_links)
    return topo
