"""Parts dropped onto a 512-system cluster's overview join no system and no block: they go into the
'Not connected' row above the others, item by item, never rebuilding the overview; linked to each
other, undone and redone, the drawing is each time what a fresh overview of the same document draws.
Wiring such a part to a system changes the overview's structure (a fresh overview keys that system and
the switch into other blocks): that rebuilds, and its undo gives back exactly what was drawn before."""

from PySide6.QtCore import QPoint, QPointF, Qt

from dgxstudio.model.commands import SetCollapsed
from dgxstudio.model.connect import link_options
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.canvas_lod_items import BlockItem, BundleItem, TierLabel

from .conftest import drag
from .test_editor import drop_from_palette

SWITCH = "part:ib-switch-ndr-64"
CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def drawing(w) -> dict:
    """What the overview draws: every block (place, names, members), row name, bundle (ends, counts,
    bandwidth, shown), the device items drawn, and how many items of each kind the scene holds."""
    scene, lod = w.scene, w.scene.lod
    r = lambda rect: tuple(round(v, 6) for v in rect.getRect())  # noqa: E731
    kinds: dict[str, int] = {}
    for item in scene.items():
        kinds[type(item).__name__] = kinds.get(type(item).__name__, 0) + 1
    return {
        "blocks": {bid: (r(it.sceneBoundingRect()), it.block.tier, it.block.label, it.block.short, it.block.summary,
                         tuple(it.block.members), it.toolTip(), it.open) for bid, it in lod.block_items.items()},
        "rows": sorted((it.name, r(it.sceneBoundingRect())) for it in scene.items() if isinstance(it, TierLabel)),
        "tier_rows": sorted(lod.overview.tier_rows),
        "bundles": sorted((it.info.a, it.info.b, it.count, round(it.info.bandwidth_Bps), it.isVisible())
                          for it in lod.bundle_items if it.count),
        "devices": sorted(scene.device_items),
        "forms": {t: sorted(n.items()) for t, n in lod.form_needs.items()},
        "kinds": kinds,
    }


def fresh(w) -> dict:
    """The drawing of an overview built anew for the document as it is now (the scene is rebuilt)."""
    w.scene.rebuild()
    return drawing(w)


def settle(qtbot):
    qtbot.wait(60)   # blocks that open or close on the next turns


def at_fit(make_window, qtbot):
    """The 512-system rail-optimized DGX H100 cluster in a window, its overview fitted."""
    topo = build_fat_tree(512, "dgx-h100", rail_optimized=True)
    w = make_window(topology=topo)
    w.view.fit()
    settle(qtbot)
    return topo, w


def view_at(w):
    return (w.view.transform().m11(), w.view.mapToScene(w.view.viewport().rect().center()))


def test_parts_dropped_and_linked_on_the_overview_change_only_their_row(make_window, qtbot):
    topo, w = at_fit(make_window, qtbot)
    lod = w.scene.lod
    before = drawing(w)
    assert lod.overview.unjoined_tier is None and "Not connected" not in [n for n, _ in before["rows"]]
    seen = view_at(w)
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))
    corner = QPoint(40, 30)   # at fit: beside the rows, over no block

    had = set(topo.devices)
    drop_from_palette(w, SWITCH, corner)
    settle(qtbot)
    (first,) = set(topo.devices) - had
    row = lod.overview.unjoined_tier
    block = lod.block_items[f"t{row}b0"]
    assert block.block.members == [first] and block.block.summary.startswith("1 x")
    assert not rebuilt, "a part joined to nothing goes into its row, item by item"
    # at fit Qt centres a scene smaller than the window, so the drawing moves down by half the new row
    # (240 scene units): the scale and every block stay as they were, all in view
    scale, centre = view_at(w)
    assert scale == seen[0] and abs(centre.x() - seen[1].x()) < 1e-6 and abs(centre.y() - seen[1].y()) <= 121
    assert w.view.mapToScene(w.view.viewport().rect()).boundingRect().contains(w.scene.itemsBoundingRect())
    # the other rows did not move
    one = drawing(w)
    assert {b: v for b, v in one["blocks"].items() if b != block.block.id} == before["blocks"]
    assert "Not connected" in [n for n, _ in one["rows"]]

    had = set(topo.devices)
    drop_from_palette(w, SWITCH, corner + QPoint(20, 0))
    settle(qtbot)
    (second,) = set(topo.devices) - had
    assert block.block.members == [first, second] and block.block.summary.startswith("2 x") and not rebuilt
    two = drawing(w)

    # open the row (the user zooms onto it) and link the two with the mouse, handle to switch
    lod.zoom_to(block.sceneBoundingRect())
    qtbot.waitUntil(lambda: first in w.scene.device_items and second in w.scene.device_items, timeout=5000)
    a, b = w.scene.device_items[first], w.scene.device_items[second]
    drag(w.view, w.view.mapFromScene(a.mapToScene(a.handle_center())), w.view.mapFromScene(b.scenePos()))
    settle(qtbot)
    assert len(topo.links_of(first)) == 1 and topo.links_of(first)[0].b in (first, second)
    assert not rebuilt
    w.view.fit()
    settle(qtbot)
    linked = drawing(w)

    # the two duplicated (a copy and paste), link and all: still loose parts of the same row
    lod.zoom_to(block.sceneBoundingRect())
    qtbot.waitUntil(lambda: first in w.scene.device_items and second in w.scene.device_items, timeout=5000)
    w.scene.select_ids([first, second])
    had = set(topo.devices)
    w.duplicate()
    settle(qtbot)
    copies = set(topo.devices) - had
    assert len(copies) == 2 and set(block.block.members) == {first, second, *copies} and not rebuilt
    w.view.fit()
    settle(qtbot)
    duplicated = drawing(w)
    assert duplicated == fresh(w), "the drawing is what a fresh overview of the document draws"
    rebuilt.clear()
    lod = w.scene.lod   # (the fresh one)

    undo, redo = (lambda: qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)), (lambda: qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL | SHIFT))
    undo()   # the copies
    settle(qtbot)
    assert drawing(w) == linked and not rebuilt
    undo()   # the link
    settle(qtbot)
    assert drawing(w) == two and not rebuilt
    undo()   # the second switch
    settle(qtbot)
    assert drawing(w) == one and not rebuilt
    undo()   # the first: the row goes, everything else as before the drops
    settle(qtbot)
    assert drawing(w) == before and not rebuilt and lod.overview.unjoined_tier is None
    assert w.scene.lod is lod
    for _ in range(4):
        redo()
    settle(qtbot)
    assert drawing(w) == duplicated and not rebuilt
    assert drawing(w) == fresh(w)


def test_wiring_a_dropped_switch_to_a_system_rebuilds_and_undoes_exactly(make_window, qtbot):
    topo, w = at_fit(make_window, qtbot)
    had = set(topo.devices)
    drop_from_palette(w, SWITCH, QPoint(40, 30))
    settle(qtbot)
    (switch,) = set(topo.devices) - had
    dropped = drawing(w)
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))
    nic = next(d for d in w.scene.lod.overview.system_devices["s300.system"] if topo.devices[d].kind == "nic"
               and any(o.ok for o in link_options(topo, switch, d)))
    w.view._connect(next(o for o in link_options(topo, switch, nic) if o.ok))
    settle(qtbot)
    assert rebuilt, "the switch joins the fabric and s300 is wired unlike its unit: the structure changed"
    wired = drawing(w)
    assert w.scene.lod.overview.unjoined_tier is None and wired != dropped
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    settle(qtbot)
    assert drawing(w) == dropped, "undo draws exactly what was drawn before the link"
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL | SHIFT)
    settle(qtbot)
    assert drawing(w) == wired


def test_collapsing_a_system_changes_nothing_the_overview_draws(make_window, qtbot):
    topo, w = at_fit(make_window, qtbot)
    before = drawing(w)
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))
    w.document.push(SetCollapsed("s300.system", True))
    settle(qtbot)
    assert "s300.system" in topo.layout.collapsed and drawing(w) == before and not rebuilt
    w.document.undo_stack.undo()
    settle(qtbot)
    assert drawing(w) == before and not rebuilt
    assert drawing(w) == fresh(w)


def test_block_items_and_bundles_stay_the_same_objects(make_window, qtbot):
    """Dropping and undoing keeps every other block's and bundle's item: nothing is made anew."""
    topo, w = at_fit(make_window, qtbot)
    lod = w.scene.lod
    blocks, bundles = dict(lod.block_items), list(lod.bundle_items)
    drop_from_palette(w, SWITCH, QPoint(40, 30))
    settle(qtbot)
    assert all(lod.block_items[b] is it for b, it in blocks.items()) and lod.bundle_items == bundles
    assert all(isinstance(it, BlockItem) for it in lod.block_items.values())
    assert all(isinstance(it, BundleItem) for it in lod.bundle_items)
    w.document.undo_stack.undo()
    settle(qtbot)
    assert lod.block_items == blocks and lod.bundle_items == bundles and w.scene.lod is lod
    assert w.scene.itemAt(QPointF(-1e6, -1e6), w.view.transform()) is None


def test_a_system_dropped_on_the_overview_is_a_new_unit_not_a_loose_part(make_window, qtbot):
    """A whole DGX H100 from the palette is a system wired to nothing: a fresh overview draws it as a
    unit of its own in the systems' row, which lays that row out anew (a rebuild), never as loose
    devices in the 'Not connected' row; its undo draws what was there before."""
    topo, w = at_fit(make_window, qtbot)
    before = drawing(w)
    rebuilt = []
    w.scene.rebuilt.connect(lambda: rebuilt.append(1))
    systems = {g.id for g in topo.groups.values() if g.kind == "system"}
    drop_from_palette(w, "system:dgx-h100", QPoint(40, 30))
    settle(qtbot)
    (new,) = {g.id for g in topo.groups.values() if g.kind == "system"} - systems
    lod = w.scene.lod
    assert rebuilt and lod.overview.unjoined_tier is None and new in lod.overview.block_of
    assert drawing(w) == fresh(w)
    rebuilt.clear()
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    settle(qtbot)
    assert drawing(w) == before
