"""At fit, the 512-system cluster's 'Not connected' block is wide enough to show its name: at one
block's width it was 55 px on screen and its shortest name, "InfiniBand", needs 63 px, so it showed
none (block names are never elided)."""

from PySide6.QtCore import QPoint

from dgxstudio.ui.canvas_text import LABEL_BOLD, metrics

from .test_editor import drop_from_palette
from .test_overview_unjoined import SWITCH, at_fit, settle


def test_not_connected_block_shows_its_name_at_fit(make_window, qtbot):
    _topo, w = at_fit(make_window, qtbot)
    drop_from_palette(w, SWITCH, QPoint(40, 30))
    settle(qtbot)
    lod = w.scene.lod
    block = lod.block_items[f"t{lod.overview.unjoined_tier}b0"]
    on_screen = w.view.mapFromScene(block.sceneBoundingRect()).boundingRect().width()
    assert on_screen >= metrics(LABEL_BOLD)[0].horizontalAdvance(block.block.short)
    w.view.viewport().grab()   # painted: the block lays out what it shows
    shown = [line[0] for line in block._text._shown]
    assert shown and shown[0] in (block.block.label, block.block.short)
    # still inside the rows' width, centred above them
    x, _y, bw, _h = block.block.rect
    assert 0 <= x and abs((x + bw / 2) - lod.overview.width / 2) < 1e-6
