"""Putting selected devices and groups into a new group: the editor's *Group* (its inverse, *Ungroup*,
is ``RemoveItems`` on the group, whose members move up to the group around it).

A hand-drawn server is only a set of devices until it is a group of kind ``system``: NCCL XML, the
ASTRA-sim export and the per-system figures all look for one."""

from __future__ import annotations

from .commands import Command
from .topology import Group, ModelError, Topology


def grouping_plan(topo: Topology, ids: list[str]) -> tuple[list[str], list[str], str | None]:
    """(devices, groups, container) of a selection to group: what lies inside another selected group
    goes with that group; the rest must share one container (the innermost group around each, or
    none). ModelError naming the two containers otherwise."""
    chosen_groups = {i for i in ids if i in topo.groups}

    def inside_chosen(gid: str | None) -> bool:
        return any(g.id in chosen_groups for g in (topo.group_chain(gid) if gid else ()))

    devices = [i for i in ids if i in topo.devices and not inside_chosen(getattr(topo.group_of(i), "id", None))]
    groups = [i for i in ids if i in chosen_groups and not inside_chosen(topo.groups[i].parent)]
    if not devices and not groups:
        raise ModelError("select devices or groups to group")
    where = {getattr(topo.group_of(d), "id", None): d for d in devices}
    where.update({topo.groups[g].parent: g for g in groups})
    if len(where) > 1:
        (c1, x1), (c2, x2) = list(where.items())[:2]
        name = lambda c: f"group {topo.groups[c].name!r}" if c else "no group"   # noqa: E731
        raise ModelError(f"cannot group {x1!r} (in {name(c1)}) with {x2!r} (in {name(c2)}): "
                         f"select items of one group, or the groups themselves")
    return devices, groups, next(iter(where))


def grouping_kind(topo: Topology, groups: list[str], container: str | None) -> str:
    """The kind a new group of a ``grouping_plan`` gets: ``system`` for devices that are in no system
    yet (what NCCL XML, ASTRA-sim and the per-system figures look for), else a plain ``group``."""
    around = topo.group_chain(container) if container else []
    inner = [topo.groups[g] for g in groups]
    if any(g.kind == "system" for g in around + inner):
        return "group"
    return "system"


class GroupItems(Command):
    """A new group around the selection, inside the container they share; one undo step, and undo
    gives back the document exactly (the container's member list in its order)."""

    def __init__(self, ids: list[str], group_id: str, name: str, kind: str | None = None):
        self.ids, self.group_id, self.name, self.kind = list(ids), group_id, name, kind
        self.text = f"group {len(self.ids)} items as {name}"
        self._before: list[str] | None = None   # the container's members before
        self._container: str | None = None

    def do(self, topo: Topology) -> None:
        devices, groups, container = grouping_plan(topo, self.ids)
        order = {d: i for i, d in enumerate(topo.devices)}
        devices.sort(key=order.__getitem__)
        kind = self.kind or grouping_kind(topo, groups, container)
        self._container = container
        with topo.events.batch():
            if container is not None:
                members = topo.groups[container].devices
                self._before = list(members)
                taken = set(devices)
                topo.set_attribute(container, "devices", [d for d in members if d not in taken])
            topo.add_group(Group(self.group_id, self.name, kind, container, devices))
            for g in groups:
                topo.set_attribute(g, "parent", self.group_id)

    def undo(self, topo: Topology) -> None:
        with topo.events.batch():
            topo.remove_group(self.group_id)   # (children back to the container, members appended to it)
            topo.layout.positions.pop(self.group_id, None)
            if self._container is not None:
                topo.set_attribute(self._container, "devices", self._before)
