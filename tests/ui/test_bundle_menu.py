"""The right-click menu of a bundle of links: it said only 'Bundle of links' and offered nothing; it
now names the bundle and zooms to the two things it joins."""

from PySide6.QtCore import Qt

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.canvas_lod import BundleItem


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
