"""Edits as plain command objects with ``do`` and ``undo`` (as glue does), free of Qt.

The UI maps every interaction to one of these and wraps it for its undo stack; scripts can use them
directly. Undoing a command returns the document to exactly its previous form, order included, so
a save after undo is byte-identical to the save before the edit.
"""

from __future__ import annotations

import copy

from .removal import Removal, put_back, remove
from .topology import Device, Group, Link, ModelError, Topology


class Command:
    text = "edit"

    def do(self, topo: Topology) -> None:
        raise NotImplementedError

    def undo(self, topo: Topology) -> None:
        raise NotImplementedError


class AddItems(Command):
    """Add devices (with positions and group memberships), links and groups: a drop, a paste, a new link.

    Undo removes what was added (the last entries of every table, so the order before comes back) and
    puts back the positions and collapsed flags it changed on groups that were already there."""

    def __init__(self, devices: list[Device] = (), links: list[Link] = (), groups: list[Group] = (),
                 positions: dict[str, tuple[float, float]] | None = None, memberships: dict[str, str] | None = None,
                 collapsed: set[str] | None = None, text: str = "add"):
        self.devices = [copy.deepcopy(d) for d in devices]
        self.links = [copy.deepcopy(lk) for lk in links]
        self.groups = [copy.deepcopy(g) for g in groups]
        self.positions = dict(positions or {})
        self.memberships = dict(memberships or {})
        self.collapsed = set(collapsed or ())
        self.text = text
        self._was: tuple[dict, dict] | None = None   # existing groups: their positions and collapsed flags before

    def do(self, topo: Topology) -> None:
        added: list[str] = []
        existing = [g for g in dict.fromkeys([*self.positions, *self.collapsed]) if g in topo.groups]
        self._was = ({g: topo.layout.positions.get(g) for g in existing if g in self.positions},
                     {g: g in topo.layout.collapsed for g in existing if g in self.collapsed})
        try:
            with topo.events.batch():
                self._apply(topo, added)
        except Exception:
            self._take_back(topo, added)
            raise

    def _apply(self, topo: Topology, added: list[str]) -> None:
        pending = list(self.groups)
        while pending:
            ready = [g for g in pending if g.parent is None or g.parent in topo.groups]
            if not ready:
                raise ModelError(f"group {pending[0].id}: no parent group {pending[0].parent!r}")
            for g in ready:
                topo.add_group(copy.deepcopy(Group(g.id, g.name, g.kind, g.parent, [], g.properties)))
                added.append(g.id)
                pending.remove(g)
        for d in self.devices:
            topo.add_device(copy.deepcopy(d), self.positions.get(d.id), self.memberships.get(d.id))
            added.append(d.id)
        for lk in self.links:
            topo.add_link(copy.deepcopy(lk))
            added.append(lk.id)
        for gid, xy in self.positions.items():
            if gid in topo.groups:
                topo.layout.positions[gid] = xy
        for gid in self.collapsed:
            topo.set_collapsed(gid, True)

    def undo(self, topo: Topology) -> None:
        self._take_back(topo, [*(g.id for g in self.groups), *(d.id for d in self.devices), *(lk.id for lk in self.links)])

    def _take_back(self, topo: Topology, added: list[str]) -> None:
        positions, collapsed = self._was or ({}, {})
        with topo.events.batch():
            new_groups = [g for g in added if g in topo.groups]
            for gid in new_groups:
                topo.layout.positions.pop(gid, None)   # (a new group's place goes with it)
            remove(topo, [i for i in added if i not in topo.groups] + new_groups[::-1], keep_tables=False)
            for gid, xy in positions.items():
                if xy is None:
                    topo.layout.positions.pop(gid, None)
                else:
                    topo.layout.positions[gid] = xy
            for gid, was in collapsed.items():
                topo.set_collapsed(gid, was)


class RemoveItems(Command):
    """Delete devices (with their links), links and groups (their members move to the parent).

    Keeps only what it removed and where each thing stood (``removal.Removal``), not a copy of the
    document: undo puts them back in place."""

    def __init__(self, ids: list[str], text: str = "delete"):
        self.ids = list(ids)
        self.text = text
        self._removed: Removal | None = None

    def do(self, topo: Topology) -> None:
        self._removed = remove(topo, self.ids)

    def undo(self, topo: Topology) -> None:
        if self._removed is not None:
            put_back(topo, self._removed)
            self._removed = None


class SetAttribute(Command):
    def __init__(self, obj_id: str, attribute: str, value, text: str | None = None):
        self.obj_id, self.attribute, self.value = obj_id, attribute, value
        self.old = None
        self.text = text or f"set {attribute} of {obj_id}"

    def do(self, topo: Topology) -> None:
        self.old = topo.set_attribute(self.obj_id, self.attribute, copy.deepcopy(self.value))

    def undo(self, topo: Topology) -> None:
        topo.set_attribute(self.obj_id, self.attribute, self.old)


class ChangeLinkType(Command):
    """A new link type also picks the port groups that accept it on both ends, and its lane width."""

    FIELDS = ("type", "a_port", "b_port", "width")

    def __init__(self, link_id: str, link_type: str):
        self.link_id, self.link_type = link_id, link_type
        self.old: dict | None = None
        self.text = f"change {link_id} to {link_type}"

    def do(self, topo: Topology) -> None:
        lk = topo.links.get(self.link_id)
        if lk is None:
            raise ModelError(f"no link {self.link_id!r}")
        self.old = {f: getattr(lk, f) for f in self.FIELDS}
        ports = []
        for end in (lk.a, lk.b):
            part = topo.part_of(end)
            pg = part.port_group_for(self.link_type) if part else None
            ports.append(pg.name if pg else None)
        lt = topo.catalog.link_type(self.link_type)
        new = {"type": self.link_type, "a_port": ports[0], "b_port": ports[1],
               "width": (lk.width or lt.default_width) if lt and lt.per_lane else None}
        with topo.events.batch():
            for f in self.FIELDS:
                topo.set_attribute(lk.id, f, new[f])

    def undo(self, topo: Topology) -> None:
        with topo.events.batch():
            for f in self.FIELDS:
                topo.set_attribute(self.link_id, f, self.old[f])


class Move(Command):
    def __init__(self, positions: dict[str, tuple[float, float]], old: dict | None = None, text: str = "move"):
        self.positions = dict(positions)
        self.old = dict(old) if old is not None else None
        self.text = text

    def do(self, topo: Topology) -> None:
        old = topo.move(self.positions)
        if self.old is None:
            self.old = old

    def undo(self, topo: Topology) -> None:
        topo.move(self.old)


class SetCollapsed(Command):
    def __init__(self, group_id: str, collapsed: bool):
        self.group_id, self.collapsed = group_id, collapsed
        self.was = None
        self.text = ("collapse " if collapsed else "expand ") + group_id

    def do(self, topo: Topology) -> None:
        self.was = topo.set_collapsed(self.group_id, self.collapsed)

    def undo(self, topo: Topology) -> None:
        topo.set_collapsed(self.group_id, self.was)


class Macro(Command):
    """Several commands as one undo step."""

    def __init__(self, commands: list[Command], text: str):
        self.commands = list(commands)
        self.text = text

    def do(self, topo: Topology) -> None:
        with topo.events.batch():
            for c in self.commands:
                c.do(topo)

    def undo(self, topo: Topology) -> None:
        with topo.events.batch():
            for c in reversed(self.commands):
                c.undo(topo)
