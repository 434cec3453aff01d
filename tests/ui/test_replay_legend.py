"""The replay legend explains the drawing without hiding any of it (issue 15: at 1280x800 it covered
the canvas's top-right corner until folded)."""

from PySide6.QtCore import QPoint, Qt

from .test_runs_belong_to_a_document import run


def _covered(w) -> list[str]:
    """Devices whose drawn box (in view coordinates) meets the legend."""
    legend = w.legend.geometry()
    out = []
    for dev_id, item in w.scene.device_items.items():
        box = w.view.mapFromScene(item.sceneBoundingRect()).boundingRect()
        box.translate(w.view.viewport().pos())
        if item.isVisible() and box.intersects(legend):
            out.append(dev_id)
    return out


def test_the_legend_takes_a_margin_of_its_own_and_gives_it_back(make_window, qtbot):
    w = make_window("dgx-a100")
    w.resize(1280, 800)
    qtbot.wait(50)
    run(w, qtbot, size="64MiB")
    qtbot.wait(50)
    assert w.legend.isVisible() and len(w.legend.entries) > 3
    assert not w.legend.geometry().intersects(w.view.viewport().geometry())
    w.view.fit()
    qtbot.wait(20)
    assert not _covered(w)
    width_open = w.legend.width()
    qtbot.mouseClick(w.legend, Qt.MouseButton.LeftButton, pos=QPoint(10, 8))  # fold to the title
    assert w.legend.folded and w.legend.width() < width_open
    assert not w.legend.geometry().intersects(w.view.viewport().geometry())
    margin_folded = w.view.width() - w.view.viewport().width()
    w.open_preset("dgx1-v100")  # another document: the run and its legend go
    qtbot.wait(20)
    assert not w.legend.isVisible()
    assert w.view.width() - w.view.viewport().width() < margin_folded
