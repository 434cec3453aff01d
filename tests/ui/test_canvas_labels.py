"""Link counts ('x2') on a DGX preset: readable, clear of the devices and of one another, and placed
again when a device is dragged."""

from PySide6.QtCore import QPoint

from .conftest import drag


def placed(w):
    w.view.viewport().repaint()
    return list(w.scene.link_labels._placed)


def test_link_counts_cover_no_device_and_no_other_count(make_window, qtbot):
    # the default dock layout (every test starts from empty settings, conftest's _clean_settings): a
    # layout an earlier test's window saved (a Results dock grown by a long summary) left the canvas
    # too small for 80% of the counts in two full runs of three
    w = make_window("dgx-a100")
    w.view.fit()
    qtbot.wait(5)
    labels = placed(w)
    multi = [i for i in w.scene.link_items if i.count > 1]
    assert len(labels) >= len(multi) * 0.8, f"{len(labels)} of {len(multi)} counts shown"
    t = w.view.viewportTransform()
    devices = [t.mapRect(d.sceneBoundingRect()) for d in w.scene.device_items.values()]
    boxes = [box for _item, box, _text in labels]
    for k, box in enumerate(boxes):
        assert box.height() >= 12, "readable on screen"
        assert not any(box.intersects(d) for d in devices), "a count covers a device"
        assert not any(box.intersects(o) for o in boxes[k + 1:]), "two counts overlap"
    assert {text for _i, _b, text in labels} == {f"x{i.count}" for i in multi}

    # a dragged GPU takes its links along: their counts are placed again, still clear of it
    gpu = w.scene.device_items["gpu0"]
    start = w.view.mapFromScene(gpu.scenePos())
    drag(w.view, start + QPoint(-20, 0), start + QPoint(-20, 90))
    qtbot.wait(5)
    after = placed(w)
    assert after != labels
    box = w.view.viewportTransform().mapRect(gpu.sceneBoundingRect())
    assert not any(b.intersects(box) for _i, b, _t in after)


def test_a_narrow_window_leaves_the_canvas_room(qtbot):
    """On an 800 px screen the side docks give way: the canvas keeps over two fifths of the width
    (247 px of 800 before, where a DGX H100 drew as blank boxes)."""
    from dgxstudio.model.presets import load_preset
    from dgxstudio.ui.main_window import MainWindow

    # a first start: no layout saved by an earlier window (conftest's _clean_settings)
    w = MainWindow(load_preset("dgx-h100"), None, "dgx-h100")
    qtbot.addWidget(w)
    w.resize(800, 800)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(20)   # the default dock layout is applied once the window is laid out
    assert w.view.viewport().width() > 0.4 * w.width()
    w.document.undo_stack.setClean()


def test_link_counts_stay_on_their_links_while_the_view_pans(make_window, qtbot):
    """Panning moves the counts with the drawing (they are placed once per zoom step, not again at
    every pan step, where a count could jump when a device scrolled into view)."""
    w = make_window("dgx-a100")
    w.view.fit()
    w.view.zoom(2.5)
    qtbot.wait(5)

    def on_scene(labels):
        inverse = w.view.viewportTransform().inverted()[0]
        return {id(item): inverse.mapRect(box).center() for item, box, _text in labels}

    before = on_scene(placed(w))
    bar = w.view.horizontalScrollBar()
    moved = []
    for step in (60, 60, -200):
        bar.setValue(bar.value() + step)
        qtbot.wait(5)
        after = on_scene(placed(w))
        common = set(before) & set(after)
        assert common, "some counts in view before and after"
        for key in common:
            assert (after[key] - before[key]).manhattanLength() < 0.5, "a count moved along its link"
        moved.append(len(after))
    assert all(moved)


def test_a_16_system_fat_tree_at_fit_counts_only_bundles_of_several_links(make_window, qtbot):
    """The 16-system rail-optimized DGX H100 fat tree drew an 'x1' on each of its 128 system-to-leaf
    bundles: they crowded the row under the leaves and covered the lines, and only 44 found a place,
    so some bundles read as counted and others not. A bundle of one link is told by its dashed line;
    every bundle of several (the 16 spine-leaf 'x8') is counted."""
    from dgxstudio.model.fabrics import build_fat_tree

    w = make_window(topology=build_fat_tree(16, "dgx-h100", rail_optimized=True))
    w.view.fit()
    qtbot.wait(30)
    w.view.viewport().repaint()
    placed = w.scene.link_labels._placed
    several = [i for i in w.scene.link_items if i.count > 1]
    assert len(several) == 16 and sum(1 for i in w.scene.link_items if i.bundle and i.count == 1) == 128
    assert sorted(text for _i, _b, text in placed) == ["x8"] * 16
