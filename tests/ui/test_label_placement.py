"""Labels placed all at once (numpy) land exactly where placing them one by one puts them: link counts on
GB200 NVL72 (162 counted bundles) and bundle labels on a cluster overview, at many zooms and shifts,
with blocks open. The general path (any transform, QRectF and QTransform arithmetic) is the reference."""

from itertools import chain

from PySide6.QtCore import QRectF
from PySide6.QtGui import QTransform

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.canvas_lod_items import place_bundle_labels
from dgxstudio.ui.canvas_text import LinkLabels, Taken, carries_count, metrics


def boxes(placed):
    return [(item, box.getRect(), text) for item, box, text in placed]


def views():
    for scale in (0.45, 0.8, 1.0, 1.37, 2.2, 3.3):
        for dx, dy in ((0.0, 0.0), (-311.5, 120.25), (412.0, -207.75)):
            yield QTransform(scale, 0, 0, scale, dx, dy)


def test_link_counts_placed_at_once_equal_one_by_one(make_window):
    w = make_window("gb200-nvl72")
    scene = w.scene
    counted = [i for i in scene.link_items if carries_count(i)]
    assert len(counted) > 150
    shown = 0
    for t in views():
        for viewport in (QRectF(0, 0, 1000, 700), None):
            area = QRectF(viewport) if viewport is not None else QRectF(-1e12, -1e12, 2e12, 2e12)
            devices = list(chain(scene.device_items.values(), (g for g in scene.group_items.values() if g.collapsed)))
            fast, each = LinkLabels(), LinkLabels()
            got = fast._place(t, viewport, scene.link_items, devices, scene.label_version)
            fm, line_h = metrics(each._font)   # the general way: QTransform and QRectF, one at a time
            want = each._place_any(t, area, scene.link_items, devices, Taken(), [], each._font, fm, line_h + 2)
            assert boxes(got) == boxes(want)
            shown += len(got)
    assert shown > 500


def test_bundle_labels_placed_at_once_equal_one_by_one(make_window, qtbot):
    w = make_window(None, build_fat_tree(256, "dgx-h100", rail_optimized=True))
    lod = w.scene.lod
    view = w.view
    shown = 0
    for step in range(14):   # from fit into the middle (blocks open on the way) and across
        view.zoom(1.3)
        if step % 4 == 1:
            view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + 137)
        qtbot.wait(5)
        base = view.viewportTransform()
        for shift in (0.0, 0.37, -55.25):
            t = QTransform(base.m11(), 0, 0, base.m22(), base.dx() + shift, base.dy() - shift)
            area = t.inverted()[0].mapRect(QRectF(view.viewport().rect()))
            got = place_bundle_labels(t, area, lod.block_items.values(), lod.bundle_items)
            assert boxes(got) == boxes(lod.place_labels_each(t, area))
            shown += len(got)
    assert lod.open_blocks, "the zoom opened blocks"
    assert shown > 100
