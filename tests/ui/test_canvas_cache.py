"""Boxes draw straight to the screen while the view zooms and get their cached pictures back once it
rests, a batch per frame (so no single frame redraws every picture), and a new zoom stops the batches."""

from PySide6.QtWidgets import QGraphicsItem

from dgxstudio.ui.canvas import RECACHE_BATCH

CACHED = QGraphicsItem.CacheMode.DeviceCoordinateCache
DIRECT = QGraphicsItem.CacheMode.NoCache


def _modes(w):
    return [item.cacheMode() for item in w.scene.device_items.values()]


def test_a_rested_zoom_recaches_in_batches_and_a_new_zoom_stops_them(make_window, qtbot):
    w = make_window("dgx-h100")
    boxes = len(w.scene._boxes())
    assert boxes > RECACHE_BATCH, "enough boxes for more than one batch"
    qtbot.waitUntil(lambda: all(m == CACHED for m in _modes(w)), timeout=3000)   # after the window's fit
    w.view.zoom(1.2)
    assert all(m == DIRECT for m in _modes(w)), "while zooming every box draws straight"
    # the view rests (its timer fires): the first batch at once, the others in later turns
    w.scene._recache.stop()
    w.scene._recache.timeout.emit()
    assert sum(m == CACHED for m in _modes(w)) == RECACHE_BATCH
    w.view.zoom(1.2)   # zooming again before the batches are through
    assert all(m == DIRECT for m in _modes(w))
    qtbot.wait(60)
    assert all(m == DIRECT for m in _modes(w)), "the interrupted rest's batches stopped"
    qtbot.waitUntil(lambda: all(m == CACHED for m in _modes(w)), timeout=3000)
