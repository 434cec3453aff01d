"""The right-click menu of a bundle of links: it said only 'Bundle of links' and offered nothing; it
now names the bundle and zooms to the two things it joins."""

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.canvas import GroupItem
from dgxstudio.ui.canvas_lod import BundleItem

from .conftest import send_mouse


def test_a_bundles_menu_names_it_and_zooms_to_its_ends(make_window, qtbot):
    w = make_window(topology=build_fat_tree(512, "dgx-h100", rail_optimized=True))
    w.view.fit()
    qtbot.wait(5)
    bundle = next(i for i in w.scene.items() if isinstance(i, BundleItem) and {i.a.block.tier, i.b.block.tier} == {2, 3})
    mid = (bundle.a.sceneBoundingRect().center() + bundle.b.sceneBoundingRect().center()) / 2
    menu = w.context_menu(bundle, mid, None)
    texts = [a.text() for a in menu.actions()]
    assert "1,024 x InfiniBand NDR, 51.2 TB/s per direction" in texts, texts
    before = w.view.transform().m11()
    next(a for a in menu.actions() if a.text() == "Zoom to its ends").trigger()
    qtbot.wait(5)
    seen = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert seen.contains(bundle.a.sceneBoundingRect()) and seen.contains(bundle.b.sceneBoundingRect())
    assert w.view.transform().m11() > before and not w.document.undo_stack.count()


def test_a_collapsed_systems_bundle_zooms_to_its_ends(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    bundle = next(i for i in w.scene.link_items if i.bundle)
    menu = w.context_menu(bundle, bundle.a.scenePos(), None)
    next(a for a in menu.actions() if a.text() == "Zoom to its ends").trigger()
    seen = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert seen.contains(bundle.a.scenePos()) and seen.contains(bundle.b.scenePos())
    assert menu.actions()[1].text() == bundle.toolTip() and not menu.actions()[1].isEnabled()


def test_a_collapsed_systems_bundle_can_be_deleted_and_undone(make_window, qtbot):
    """The editor review: links between collapsed systems could not be selected or deleted without
    opening a system; the bundle's menu now deletes its links in one undo step."""
    w = make_window("dgx1-fat-tree-124")
    bundle = next(i for i in w.scene.link_items if i.bundle)
    ids = list(bundle.link_ids)
    before = len(w.document.topology.links)
    menu = w.context_menu(bundle, bundle.a.scenePos(), None)
    action = next(a for a in menu.actions() if a.text().startswith("Delete its "))
    assert action.text() == f"Delete its {len(ids):,} link{'s' if len(ids) > 1 else ''}"
    action.trigger()
    assert len(w.document.topology.links) == before - len(ids) and not any(i in w.document.topology.links for i in ids)
    assert w.document.undo_stack.count() == 1
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(w.document.topology.links) == before and all(i in w.document.topology.links for i in ids)


def test_a_collapsed_systems_bundle_lists_its_links_and_one_chosen_is_selected(make_window, qtbot):
    """The editor review: links between collapsed systems could not be selected one by one. The bundle's
    menu lists them; choosing one opens the systems around its ends (one undo step) and selects it."""
    from dgxstudio.model import dumps

    w = make_window("dgx1-fat-tree-124")
    topo = w.document.topology
    before = dumps(topo)
    bundle = next(i for i in w.scene.link_items if i.bundle and len(i.link_ids) > 1)
    ids = list(bundle.link_ids)
    menu = w.context_menu(bundle, bundle.a.scenePos(), None)
    sub = next(a.menu() for a in menu.actions() if a.menu() is not None and a.text().startswith("Its "))
    entries = [a for a in sub.actions() if a.isEnabled()]
    assert len(entries) == min(len(ids), 24)
    lid = ids[1]
    lk = topo.links[lid]
    assert entries[1].text().startswith(f"{topo.devices[lk.a].name} — {topo.devices[lk.b].name}: ")
    entries[1].trigger()
    QApplication.processEvents()
    assert w.scene.selected_ids() == [lid]
    assert w.inspector.fields["type"].currentData() == lk.type   # the Inspector edits that one link
    assert w.document.undo_stack.count() == 1 and w.document.undo_stack.text(0).startswith("open ")
    qtbot.keyClick(w.view, Qt.Key.Key_Delete)
    assert lid not in topo.links and all(i in topo.links for i in ids if i != lid)
    w.document.undo_stack.undo()
    w.document.undo_stack.undo()
    assert dumps(topo) == before


def test_a_double_click_on_a_bundle_opens_the_systems_at_its_ends(make_window, qtbot):
    """(The events are sent as they are: QTest's double-click keeps its own record of the last click,
    and the next test's first click, at the same spot within the interval, became a double-click.)"""
    w = make_window("dgx1-fat-tree-124")
    topo = w.document.topology
    bundle = next(i for i in w.scene.link_items if i.bundle)
    ends = [e.group_id for e in (bundle.a, bundle.b) if isinstance(e, GroupItem) and e.collapsed]
    assert ends and all(g in topo.layout.collapsed for g in ends)
    ids = list(bundle.link_ids)
    w.view.fit_rect(bundle.sceneBoundingRect())
    QApplication.processEvents()
    spots = [w.view.mapFromScene(bundle.path().pointAtPercent(k / 20)) for k in range(1, 20)]
    at = next(p for p in spots if w.view.itemAt(p) is bundle)   # a spot of the line no box covers
    vp, none = w.view.viewport(), Qt.MouseButton.NoButton
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease,
                 QEvent.Type.MouseButtonDblClick, QEvent.Type.MouseButtonRelease):   # (not QTest's: see below)
        send_mouse(vp, kind, at, buttons=none if kind == QEvent.Type.MouseButtonRelease else Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    assert not any(g in topo.layout.collapsed for g in ends)
    assert all(lid in w.scene.items_by_link and not w.scene.items_by_link[lid].bundle for lid in ids)
    assert w.document.undo_stack.count() == 1
