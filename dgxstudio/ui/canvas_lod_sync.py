"""Edits seen by the cluster overview: the blocks, bundles and open systems an edit touches are brought
in line with the document, the rest of the overview (and the view) stay as they are.

A delete, an undo, a new link or a retyped link changes counts: a system's devices and GPUs, a
block's members, a bundle's links and bandwidth per direction. Those are recomputed for what the
edit touched; an open system or block whose members changed is closed and opens again with them on
the next turn (only it). What changes the overview's structure (a device that belongs to no system
and no block the overview knows and is wired to the fabric or is in a new system, a link from the 'Not connected' row to the
fabric, a block of the fabric emptied, a system that is not in any block) rebuilds the overview: a fresh
overview would then key systems and switches into other blocks and tiers. A device joined to nothing
(a part dropped from the palette, its undo and redo, links among such devices) changes only the
'Not connected' row above the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .canvas_sync import touched_ids
from ..analysis.cluster_overview import (UNJOINED_ROW, Bundle, add_unjoined_row, block_summary, count_link,
                                         drop_unjoined_row, new_bundle, relabel_unjoined, unjoined_id)

if TYPE_CHECKING:
    from .canvas_lod import LevelOfDetail


def _diff(lod: "LevelOfDetail", event) -> tuple[set[str], set[str]]:
    """Device and link ids the edit may have touched: those the event names, or after an undo (which
    restores a snapshot and names nothing) every id that came or went since the overview last looked."""
    topo = lod.scene.topology
    if event.kind != "reset":
        ids = touched_ids(event)
        return ({i for i in ids if i in topo.devices or i in lod.devices},
                {i for i in ids if i in topo.links or i in lod.links})
    devices = set(topo.devices.keys() ^ lod.devices)
    links = set(topo.links.keys() ^ lod.links.keys())
    return devices, links


def _system_for(lod: "LevelOfDetail", device_id: str) -> str | None:
    """The overview system a device belongs to, through its groups."""
    topo, ov = lod.scene.topology, lod.overview
    g = topo.group_of(device_id)
    if g is None:
        return None
    return next((a.id for a in topo.group_chain(g.id) if a.id in ov.system_devices), None)


def sync(lod: "LevelOfDetail", event) -> bool:
    """Apply an edit to the overview item by item; False when only a rebuild can show it."""
    topo, ov, scene = lod.scene.topology, lod.overview, lod.scene
    devices, links = _diff(lod, event)
    systems: set[str] = set()    # systems whose devices or inside links changed
    blocks: set[str] = set()     # blocks whose members changed
    bundles: dict[int, list[str]] = {}   # bundles whose links changed (by id) -> links they gain
    for d in devices:
        gone = d not in topo.devices
        system = ov.system_of.get(d)
        if gone:   # its item goes with its system or block, which close below
            lod.devices.discard(d)
        else:
            lod.devices.add(d)
            if system is None and d not in ov.block_of:
                system = _system_for(lod, d)
                if system is None:
                    if _in_a_system(topo, d) or not _joins_nothing(topo, ov, d, devices):
                        return False   # a new system, or a device wired into the fabric: the tiers and blocks change
                    block = add_unjoined_row(ov)   # a part dropped: the 'Not connected' row
                    if not block.members:
                        lod.add_block(block)
                    block.every_member.append(d)
                    ov.block_of[d] = block.id
                    blocks.add(block.id)
                    continue
                ov.system_of[d] = system
        if system is not None:
            devs = ov.system_devices[system]
            if gone and d in devs:
                devs.remove(d)
            elif not gone and d not in devs:
                devs.append(d)
            systems.add(system)
        elif d in ov.block_of:
            blocks.add(ov.block_of[d])
    unjoined = unjoined_id(ov)
    for lid in links:
        bundle = ov.bundle_of.get(lid)
        if lid in topo.links:
            lk = lod.links[lid] = topo.links[lid]
            a, b = ov.block_for(lk.a), ov.block_for(lk.b)
            if a is None or b is None:
                return False
            if a != b and unjoined in (a, b):
                return False   # a 'Not connected' device joins the fabric: its tier, its block, its systems' blocks change
            if a != b:
                if bundle is None:
                    bundle = ov.bundle_of[lid] = _bundle(lod, a, b, lk)
                bundles.setdefault(id(bundle), []).append(lid)
            else:
                systems.update(s for s in (ov.system_of.get(lk.a), ov.system_of.get(lk.b)) if s)
        else:
            gone = lod.links.pop(lid, None)
            if gone is not None and any(_left_alone(topo, ov, d) for d in (gone.a, gone.b)):
                return False   # a switch wired to nothing now: a fresh overview draws it 'Not connected'
            if bundle is not None:
                bundles.setdefault(id(bundle), [])
            for sid, (_path, drawn) in lod.system_links.items():   # an inside link of an open system
                if lid in drawn:
                    systems.add(sid)
    # systems: counts, whether they still exist, and their block
    for sid in systems:
        gone = sid not in topo.groups
        block = ov.blocks[ov.block_of[sid]]
        if gone:
            ov.system_devices[sid] = []
        ov.system_gpus[sid] = sum(topo.devices[d].kind == "gpu" for d in ov.system_devices[sid] if d in topo.devices)
        blocks.add(block.id)
        box = lod.system_items.get(sid)
        if box is not None:
            box.recount()
            if sid in lod.open_systems:
                lod._close_system(box)
    for bid in blocks:
        block = ov.blocks[bid]
        if bid == unjoined:
            _unjoined_changed(lod)
            continue
        exists = topo.groups if block.tier == 0 else topo.devices
        before = block.members
        block.members = [m for m in block.every_member if m in exists]
        if not block.members:
            return False   # a block of the fabric emptied: the tiers, blocks and rows are laid out anew
        block.summary = block_summary(topo, ov, block)
        item = lod.block_items[bid]
        item.recount()
        if bid in lod.open_blocks and block.members != before:
            lod._close_block(item)
    for item in list(lod.bundle_items):
        if id(item.info) in bundles:
            _recount(topo, item.info, bundles[id(item.info)])
            item.recount()
    if links:   # port counts on the ends that are drawn
        for item in scene.device_items.values():
            item.refresh()
    lod._label_key = None   # bundle labels placed again with their new counts
    for view in scene.views()[:1]:
        scene.view_changed(view)   # what was closed opens again with its new members
    return True


def _in_a_system(topo, device_id: str) -> bool:
    """A device inside a system group (one the overview does not know: a system pasted or dropped)."""
    g = topo.group_of(device_id)
    return g is not None and any(a.kind == "system" for a in topo.group_chain(g.id))


def _joins_nothing(topo, ov, device_id: str, new: set[str]) -> bool:
    """A device that a fresh overview would put in the 'Not connected' row: every link of it leads to a
    device of that row, or to another device of this edit that belongs to no system and no block (which
    is checked in its turn)."""
    row = unjoined_id(ov)
    for lk in topo.links_of(device_id):
        other = lk.b if lk.a == device_id else lk.a
        if ov.block_of.get(other) == row and row is not None:
            continue
        if other in new and other not in ov.system_of and other not in ov.block_of:
            continue
        return False
    return True


def _left_alone(topo, ov, device_id: str) -> bool:
    """A device outside the systems and the 'Not connected' row that no link joins to any other row
    any more (its last link to the fabric deleted or undone)."""
    row = unjoined_id(ov)
    if device_id not in topo.devices or device_id in ov.system_of or ov.block_of.get(device_id, row) == row:
        return False
    return all(ov.block_of.get(lk.b if lk.a == device_id else lk.a) == row and row is not None
               for lk in topo.links_of(device_id))


def _unjoined_changed(lod: "LevelOfDetail") -> None:
    """The 'Not connected' row after devices came or went: renamed and recounted, or gone with its last
    device (the other rows never move for it: see cluster_overview.add_unjoined_row)."""
    topo, ov = lod.scene.topology, lod.overview
    relabel_unjoined(topo, ov)
    block = ov.blocks[unjoined_id(ov)]
    item = lod.block_items[block.id]
    if not block.members:
        drop_unjoined_row(ov)
        lod.remove_block(block, UNJOINED_ROW)
        return
    lod.measure_forms(block.tier)
    item.recount()
    if block.id in lod.open_blocks:   # opens again with its new members
        lod._close_block(item)


def _bundle(lod: "LevelOfDetail", a: str, b: str, lk) -> Bundle:
    """The bundle between two blocks, made (with its item) when they had none."""
    key = (a, b) if a <= b else (b, a)
    for item in lod.bundle_items:
        if (item.info.a, item.info.b) == key:
            return item.info
    bundle = new_bundle(lod.scene.topology, key[0], key[1], lk)
    lod.overview.bundles.append(bundle)
    lod.add_bundle(bundle)
    return bundle


def _recount(topo, bundle: Bundle, gained: list[str]) -> None:
    """A bundle's links, count and bandwidth per direction from the document."""
    kept = [lid for lid in bundle.link_ids if lid in topo.links]
    have = set(kept)
    bundle.link_ids = kept + [lid for lid in dict.fromkeys(gained) if lid not in have]
    bundle.count = 0
    bundle.bandwidth_Bps = 0.0
    bw_of: dict[tuple, float] = {}
    for lid in bundle.link_ids:
        count_link(topo, bundle, topo.links[lid], bw_of)
