"""Removing devices, links and groups so that they can be put back exactly: what undo keeps of a delete.

A delete used to snapshot the document (its tables, and a deep copy of every group) and an undo put
the snapshot back; on a 2,048-system cluster that costs most of a second each way, and the undo
named nothing it changed, so everything that follows the document had to compare it whole. Here a
removal records only what it takes away (the objects, where each stood in its table, in its group's
member list and in the layout) and ``put_back`` inserts them again at those places: the document
is then the same, order included, so a save after undo is byte-identical to the save before.

Both emit the same events as the single edits (``link_removed``, ``device_added`` ...) in one batch,
so observers touch only the items named. The document's look-up indices (links by device, group by
device) are kept up to date rather than thrown away, so the next look-up does not rebuild them for the
whole cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import weakref
from itertools import compress, count

from ..heap import paused_gc
from .events import ModelEvent
from .topology import Device, Group, Link, ModelError, Topology


@dataclass
class _GroupRemoval:
    group: Group
    index: int                      # in topo.groups
    position: tuple[int, tuple[float, float]] | None   # index in layout.positions and the value
    collapsed: bool
    parent_had: int                 # members the parent listed before this group's moved up
    children: list[str]             # groups whose parent this was


@dataclass
class Removal:
    """What ``remove`` took away, enough for ``put_back`` to restore the document exactly."""

    links: list[tuple[int, Link]] = field(default_factory=list)          # (index in topo.links, link), ascending
    devices: list[tuple[int, Device]] = field(default_factory=list)      # (index in topo.devices, device), ascending
    positions: list[tuple[int, str, tuple[float, float]]] = field(default_factory=list)   # layout.positions, ascending
    members: dict[str, list[tuple[int, str]]] = field(default_factory=dict)   # group -> (index in its list, device)
    slots: dict[str, list[tuple[int, str]]] | None = None   # device -> (index in its links_of list, link id)
    groups: list[_GroupRemoval] = field(default_factory=list)           # in the order removed
    tables: dict[str, dict] | None = None   # copies of the tables as they were (the last few removals only)

    @property
    def empty(self) -> bool:
        return not (self.links or self.devices or self.groups)


# Putting entries back in the middle of a table re-inserts every entry after them: 0.1-0.2 s for the
# 150,000 links of a 2,048-system cluster. A copy of the table as it was (``dict.copy``, a memory copy:
# a few milliseconds) is put back instead, for the last KEEP_TABLES removals; older ones, whose copies
# are dropped to bound memory (about 9 MB a removal at that size), re-insert.
KEEP_TABLES = 8
_kept: list = []   # weak references to the removals that hold copies, oldest first


def _keep_tables(topo: Topology, rec: Removal, names: list[str]) -> None:
    tables = {"links": topo.links, "devices": topo.devices, "positions": topo.layout.positions}
    rec.tables = {n: tables[n].copy() for n in names}
    _kept.append(weakref.ref(rec))
    while len(_kept) > KEEP_TABLES:
        old = _kept.pop(0)()
        if old is not None:
            old.tables = None


def _where(table: dict, keys: set) -> list[tuple[int, str]]:
    """(index, key) of the keys, in the table's order: one pass over the table, in C (map and compress),
    a few milliseconds for the links of a 2,048-system cluster."""
    if not keys:
        return []
    hits = list(map(keys.__contains__, table))
    return list(zip(compress(count(), hits), compress(table, hits)))


def _take(items: list, keys: set) -> list[tuple[int, str]]:
    """Remove the keys from a list in place; returns (index, key) of each, ascending."""
    taken = [(i, k) for i, k in enumerate(items) if k in keys]
    for i, _k in reversed(taken):
        del items[i]
    return taken


def _insert(table: dict, entries: list[tuple[int, str, object]]) -> None:
    """Insert (index, key, value) entries, ascending by index, so each ends at its index; the table is
    changed in place (others may hold it). Entries past the end are simply appended. Keys and values
    are listed apart: a list of 150,000 new (key, value) pairs would start full collections of a large
    heap."""
    if not entries:
        return
    if entries[0][0] >= len(table):
        table.update((k, v) for _i, k, v in entries)
        return
    keys, values = list(table), list(table.values())
    for i, k, v in entries:
        keys.insert(i, k)
        values.insert(i, v)
    with paused_gc():
        table.clear()
        table.update(zip(keys, values))


def remove(topo: Topology, ids, keep_tables: bool = True) -> Removal:
    """Delete links, devices (with their links) and groups (their members and child groups move up to
    the parent), as ``Topology.remove_link``, ``remove_device`` and ``remove_group`` would; returns
    the record to put them back. Unknown ids are skipped. ``keep_tables=False``: no copies of the
    tables for a quick ``put_back`` (for a removal that will not be put back)."""
    ids = list(dict.fromkeys(ids))
    rec = Removal()
    emit = topo.events.emit
    dead = {i for i in ids if i in topo.devices}
    link_ids = {i for i in ids if i in topo.links}
    for d in dead:
        link_ids.update(lk.id for lk in topo.links_of(d))
    placed = any(g in topo.layout.positions for g in ids if g in topo.groups)
    names = [n for n, used in (("links", link_ids), ("devices", dead), ("positions", dead or placed)) if used]
    if names and keep_tables:
        _keep_tables(topo, rec, names)
    with topo.events.batch():
        if link_ids:
            rec.links = [(i, topo.links[k]) for i, k in _where(topo.links, link_ids)]
            index = topo._links_by_device
            if index is not None:
                rec.slots = {}
                for end in {e for _i, lk in rec.links for e in (lk.a, lk.b)}:
                    mine = index.get(end)
                    if mine:
                        rec.slots[end] = _take(mine, link_ids)
            for _i, lk in rec.links:
                del topo.links[lk.id]
                emit(ModelEvent("link_removed", (lk.id,)))
        if dead:
            rec.devices = [(i, topo.devices[k]) for i, k in _where(topo.devices, dead)]
            rec.positions = [(i, k, topo.layout.positions[k]) for i, k in _where(topo.layout.positions, dead)]
            for gid in dict.fromkeys(g.id for g in map(topo.group_of, (d.id for _i, d in rec.devices)) if g):
                rec.members[gid] = _take(topo.groups[gid].devices, dead)
            links_index, group_index = topo._links_by_device, topo._group_by_device
            for _i, dev in rec.devices:
                d = dev.id
                del topo.devices[d]
                topo.layout.positions.pop(d, None)
                if links_index is not None:
                    links_index.pop(d, None)
                if group_index is not None:
                    group_index.pop(d, None)
                emit(ModelEvent("device_removed", (d,)))
        for gid in ids:
            if gid in topo.groups:
                rec.groups.append(_remove_group(topo, gid))
    return rec


def _remove_group(topo: Topology, gid: str) -> _GroupRemoval:
    grp = topo.groups[gid]
    index = list(topo.groups).index(gid)
    pos = None
    if gid in topo.layout.positions:
        pos = (list(topo.layout.positions).index(gid), topo.layout.positions[gid])
    parent = topo.groups.get(grp.parent) if grp.parent else None
    rec = _GroupRemoval(grp, index, pos, gid in topo.layout.collapsed,
                        len(parent.devices) if parent is not None else 0,
                        [g.id for g in topo.groups.values() if g.parent == gid])
    topo.remove_group(gid)   # (members move up, children re-parented, the event sent)
    topo.layout.positions.pop(gid, None)
    return rec


def put_back(topo: Topology, rec: Removal) -> None:
    """Undo ``remove``: groups, then devices, then links, each at the place it had."""
    emit = topo.events.emit
    tables = rec.tables or {}
    with topo.events.batch():
        for g in reversed(rec.groups):
            _put_group_back(topo, g, "positions" not in tables)
        if rec.devices:
            if "devices" not in tables:
                _insert(topo.devices, [(i, d.id, d) for i, d in rec.devices])
            if "positions" not in tables:
                _insert(topo.layout.positions, rec.positions)
            group_index = topo._group_by_device
            for gid, entries in rec.members.items():
                members = topo.groups[gid].devices
                for i, d in entries:
                    members.insert(i, d)
                if group_index is not None:
                    for _i, d in entries:
                        group_index.setdefault(d, gid)
            for _i, d in rec.devices:
                emit(ModelEvent("device_added", (d.id,)))
        if rec.links and "links" not in tables:
            _insert(topo.links, [(i, lk.id, lk) for i, lk in rec.links])
        # the tables as they were before the removal (which is what they are with the entries back)
        if "links" in tables:
            topo.links = tables["links"]
        if "devices" in tables:
            topo.devices = tables["devices"]
        if "positions" in tables:
            topo.layout.positions = tables["positions"]
        rec.tables = None
        if rec.links:
            index = topo._links_by_device
            if index is not None and rec.slots is None:
                topo._links_by_device = None   # built since the removal: built again when next asked
            elif index is not None:
                for end, entries in rec.slots.items():
                    mine = index.setdefault(end, [])
                    for i, lid in entries:
                        mine.insert(i, lid)
            for _i, lk in rec.links:
                emit(ModelEvent("link_added", (lk.id,)))


def _put_group_back(topo: Topology, g: _GroupRemoval, position: bool = True) -> None:
    grp = g.group
    if grp.id in topo.groups or (grp.parent is not None and grp.parent not in topo.groups):
        raise ModelError(f"group {grp.id}: cannot be put back")
    parent = topo.groups.get(grp.parent) if grp.parent else None
    if parent is not None:
        del parent.devices[g.parent_had:]
    for child in g.children:
        topo.groups[child].parent = grp.id
    _insert(topo.groups, [(g.index, grp.id, grp)])
    if g.position is not None and position:
        _insert(topo.layout.positions, [(g.position[0], grp.id, g.position[1])])
    if g.collapsed:
        topo.layout.collapsed.add(grp.id)
    group_index = topo._group_by_device
    if group_index is not None:
        for d in grp.devices:
            if group_index.get(d) in (None, grp.parent):
                group_index[d] = grp.id
    topo.events.emit(ModelEvent("group_added", (grp.id,)))
