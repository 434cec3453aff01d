"""A cluster opened after start-up is taken out of the collector's sight too, once drawn (settle_heap):
only the start-up document was, so on a 512-system cluster opened with File > Open the first zoom that
opened systems paid a full collection of the new document (153-157 ms, in 2 runs of 2)."""

import gc

from dgxstudio.model import fileio
from dgxstudio.model.fabrics import build_fat_tree


def test_a_large_document_opened_later_is_settled(make_window, qtbot, tmp_path, monkeypatch):
    from dgxstudio.ui import app

    path = str(tmp_path / "cluster.dgxs")
    fileio.save(build_fat_tree(512, "dgx-h100", rail_optimized=True), path)
    w = make_window("dgx1-v100")
    calls = []
    settle = app.settle_heap
    monkeypatch.setattr(app, "settle_heap", lambda again=False: (calls.append(again), settle(again)))
    before = gc.get_freeze_count()
    try:
        assert w.open_path(path)
        qtbot.waitUntil(lambda: gc.get_freeze_count() > before + 100_000, timeout=5000)
        assert calls == [True]
        w.open_preset("dgx-a100")   # a small one is not worth a full collection of its own
        qtbot.wait(600)
        assert calls == [True]
    finally:
        gc.unfreeze()
