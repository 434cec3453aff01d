"""At fit on the 2,048-system rail-optimized DGX H100 cluster (16,384 GPUs) in a 1,400 x 900 window,
every block of the overview names itself (issue 17: a readable overview): its switch blocks are about
42 x 15 px on screen, where the bold name's line does not fit (12.8 px and its inset) and the leaf
ranges ('505–512', 51 px bold) are wider than the block; they fall back to smaller type."""

from PySide6.QtGui import QFont, QFontMetricsF, QImage

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.canvas_text import LABEL_BOLD, LABEL_FONT, LABEL_SMALL, LABEL_SMALL_PLAIN, metrics

from .test_overview_block_names import shown_names


def test_every_block_is_named_at_fit_on_2048_systems(make_window, qtbot):
    w = make_window(topology=build_fat_tree(2048, "dgx-h100", rail_optimized=True))
    # the canvas a 1,400 x 900 window leaves beside its docks on a first start: 819 x 609 px
    vp = w.view.viewport()
    for _ in range(10):   # (the docks take a share of a change in the window's size)
        w.resize(w.width() + 819 - vp.width(), w.height() + 609 - vp.height())
        qtbot.wait(10)
    assert (vp.width(), vp.height()) == (819, 609)
    w.view.fit()
    qtbot.wait(5)
    lod = w.scene.lod
    scale = w.view.transform().m11()
    leaf = next(b for b in lod.overview.blocks.values() if b.tier == 1)
    on_screen = leaf.rect[2] * scale, leaf.rect[3] * scale
    # the case in question: a switch block too small for the bold name (its line and inset, 14.8 px)
    assert on_screen[1] < metrics(LABEL_BOLD)[1] + 2, on_screen
    names = shown_names(w)
    unnamed = sorted(lod.overview.blocks[b].label for b, n in names.items() if not n)
    assert not unnamed, (on_screen, unnamed[:5])
    tiers = {lod.overview.blocks[b].tier: n for b, n in names.items()}
    assert tiers[3] == "Core" and tiers[2].startswith("Pod "), tiers
    shown = {lod.overview.blocks[b].label: n for b, n in names.items()}
    assert shown["Leaf 505 – 512"] == "505–512" and shown["SU 64: DGX H100 #2017 – 2048"] == "SU 64"


def test_labels_are_measured_as_they_are_drawn():
    """The labels' fonts are made at import, before the application: measured as made, 7 pt text
    was 10 px high and '505–512' 43 px wide, drawn 9 px and 39 px on the canvas's 96 dpi."""
    device = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
    for font in (LABEL_BOLD, LABEL_FONT, LABEL_SMALL, LABEL_SMALL_PLAIN):
        drawn = QFontMetricsF(QFont(font, device), device)
        fm, line_h = metrics(font)
        assert (fm.horizontalAdvance("505–512"), line_h) == (drawn.horizontalAdvance("505–512"), drawn.height())
