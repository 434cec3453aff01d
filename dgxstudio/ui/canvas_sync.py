"""Edits reach the canvas item by item: after an add, delete, retype or undo, the scene's items are
brought in line with the document by touching only what differs, so selection, the view and every
other item stay as they are and the cost follows the edit, not the design.

Groups too: a group added, removed, collapsed or expanded changes what hides what; the group boxes
that differ are replaced (with the links drawn to them), the devices they now hide or show come or go,
and the links are compared as always. Nothing else is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.layout import default_position, drawn_links, group_position, hidden_by_collapsed

if TYPE_CHECKING:
    from .canvas import TopologyScene


def drawn_key(a_id: str, b_id: str, links: list, bundle: bool) -> tuple:
    """What a drawn link or bundle stands for: its ends and its links with every figure it shows."""
    return (a_id, b_id, bundle, tuple((lk.id, lk.type, lk.count, lk.width, lk.bandwidth_per_direction_Bps,
                                       lk.a, lk.b) for lk in links))


def group_signature(scene: "TopologyScene") -> tuple:
    """Everything about groups that decides which group items exist and what they hide (a device
    joining or leaving an expanded group only moves its frame and changes its counts)."""
    topo = scene.topology
    return (tuple((g.id, g.parent, g.name, g.kind) for g in topo.groups.values()), frozenset(topo.layout.collapsed),
            tuple(sorted(hidden_by_collapsed(topo).items())))


def members(scene: "TopologyScene") -> dict[str, tuple]:
    return {gid: tuple(g.devices) for gid, g in scene.topology.groups.items()}


def touched_ids(event) -> set[str]:
    """The ids an event names, through batches."""
    if event.kind == "batch":
        out: set[str] = set()
        for e in event.detail.get("events", ()):
            out |= touched_ids(e)
        return out
    return set(event.ids)


def visible_groups(topo) -> dict[str, bool]:
    """Groups drawn (those no collapsed ancestor hides), each with whether it is drawn collapsed."""
    out = {}
    for gid in topo.groups:
        if not any(a.id in topo.layout.collapsed for a in topo.group_chain(gid)[1:]):
            out[gid] = gid in topo.layout.collapsed
    return out


def _drop_link_item(scene: "TopologyScene", item, refresh: set) -> None:
    scene.link_items.remove(item)
    for lid in item.link_ids:
        if scene.items_by_link.get(lid) is item:
            del scene.items_by_link[lid]
    for end in (item.a, item.b):
        at = scene._links_at.get(end)
        if at is not None and item in at:
            at.remove(item)
        refresh.add(getattr(end, "device_id", None))
    scene.removeItem(item)


def _sync_groups(scene: "TopologyScene", touched: set[str], refresh: set) -> None:
    """Group boxes in line with the document: those gone, newly hidden or collapsed the other way are
    removed (with the links drawn to them), new ones made; a renamed one refreshed."""
    from .canvas_items import GroupItem

    topo = scene.topology
    scene._hidden = hidden_by_collapsed(topo)
    wanted = visible_groups(topo)
    reselect = set()   # a group collapsed or expanded (the Inspector's "Drawn", its -/+ box) stays selected
    for gid, item in list(scene.group_items.items()):
        if wanted.get(gid) is None or wanted[gid] != item.collapsed:
            if item.isSelected() and gid in wanted:
                reselect.add(gid)
            del scene.group_items[gid]
            for link in list(scene._links_at.pop(item, ())):
                if link in scene.link_items:
                    _drop_link_item(scene, link, refresh)
            scene.removeItem(item)
        elif gid in touched:
            item.refresh()
    for gid, collapsed in wanted.items():
        if gid not in scene.group_items:
            item = GroupItem(scene, gid, collapsed)
            if collapsed:
                item.setPos(*group_position(topo, gid))
            scene.addItem(item)
            scene.group_items[gid] = item
            if gid in reselect:
                item.setSelected(True)


def sync(scene: "TopologyScene", event) -> None:
    """Add, remove and refresh only the items that differ from the document."""
    topo = scene.topology
    touched = touched_ids(event)
    refresh: set[str] = set()
    signature = group_signature(scene)
    if signature != scene._groups:
        _sync_groups(scene, touched, refresh)
        scene._groups = signature
    hidden = scene._hidden
    # devices that went or came
    for did in [d for d in scene.device_items if d not in topo.devices or d in hidden]:
        item = scene.device_items.pop(did)
        scene._links_at.pop(item, None)
        scene.removeItem(item)
    for i, dev in enumerate(topo.devices.values()):
        item = scene.device_items.get(dev.id)
        xy = topo.layout.positions.get(dev.id)
        if dev.id in hidden:
            continue
        if item is None:
            from .canvas_items import DeviceItem

            item = DeviceItem(scene, dev.id)
            item.setPos(*(xy or default_position(i)))
            scene.addItem(item)
            scene.device_items[dev.id] = item
        elif xy is not None and (item.pos().x(), item.pos().y()) != xy:   # an undo put it back
            item.setPos(*xy)
        if dev.id in touched:
            refresh.add(dev.id)
    # links: drawn ones compared by what they stand for
    wanted = {drawn_key(a, b, links, bundle): (a, b, links, bundle) for a, b, links, bundle in drawn_links(topo, hidden)}
    reselect: list[str] = []   # a link redrawn for a new figure (the Inspector's count, bandwidth) stays selected
    for item in [i for i in scene.link_items if getattr(i, "key", None) not in wanted]:
        if item.isSelected():
            reselect.extend(item.link_ids)
        _drop_link_item(scene, item, refresh)
    have = {getattr(i, "key", None) for i in scene.link_items}
    for key, (a, b, links, bundle) in wanted.items():
        if key not in have:
            scene._make_link(a, b, links, bundle)
            refresh.update((a, b))
    for lid in reselect:
        item = scene.items_by_link.get(lid)
        if item is not None:
            item.setSelected(True)
    for did in refresh:   # port counts and names on the ends
        item = scene.device_items.get(did) if did else None
        if item is not None:
            item.refresh()
    now = members(scene)
    for gid, item in scene.group_items.items():   # a group that gained or lost devices: its counts
        if now.get(gid) != scene._members.get(gid):
            item.refresh()
    scene._members = now
    scene._update_frames()
