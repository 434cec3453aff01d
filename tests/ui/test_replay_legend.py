"""The replay legend explains the drawing without hiding any of it (issue 15: at 1280x800 it covered
the canvas's top-right corner until folded)."""

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

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


def test_the_legend_is_drawn_with_its_frame_and_small_labels_when_a_run_shows(make_window, qtbot):
    """Its style (white panel, grey border, 9 pt labels) is given with the first run it shows, not when
    the window opens (issue 17: the window's first frame)."""
    w = make_window("dgx1-v100")
    run(w, qtbot, size="64MiB")
    qtbot.waitUntil(w.legend.isVisible, timeout=5000)
    labels = [c for c in w.legend.findChildren(QLabel) if c.text()]
    assert labels and all(label.font().pointSizeF() == 9 for label in labels)
    image = w.legend.grab().toImage()
    inside = QColor(image.pixel(image.width() // 2, image.height() - 3))
    edge = QColor(image.pixel(image.width() // 2, 0))
    assert min(inside.red(), inside.green(), inside.blue()) > 240, "a white panel"
    assert edge.getRgb()[:3] == (0x99, 0x99, 0x99), "its #999 border (Qt's own frame is lighter)"


def _whole_in_sight(w) -> bool:
    seen = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    return seen.contains(w.scene.itemsBoundingRect())


def test_a_design_seen_whole_stays_whole_beside_the_legend(make_window, qtbot):
    """After a run on a DGX H100 the legend's margin pushed GPU7 and NVSwitch3 out of sight behind
    a scroll bar (review): a design the user saw whole is fitted again beside the legend, and stays
    in sight when the legend goes. A view the user zoomed into is left where it is."""
    w = make_window("dgx-h100")
    w.resize(1280, 800)
    qtbot.wait(50)
    w.view.fit()
    assert _whole_in_sight(w)
    run(w, qtbot, size="64MiB")
    qtbot.waitUntil(w.legend.isVisible, timeout=5000)
    assert _whole_in_sight(w) and not _covered(w)
    zoom = w.view.transform().m11()
    w.legend.clear()   # (as a new run or document does)
    qtbot.wait(20)
    assert _whole_in_sight(w) and w.view.transform().m11() == zoom   # no jump while the next run goes
    # zoomed in on a GPU: showing the legend leaves the zoom alone
    w.scene.select_ids(["gpu0"])
    w.zoom_to_selection()
    zoom = w.view.transform().m11()
    run(w, qtbot, size="64MiB")
    qtbot.waitUntil(w.legend.isVisible, timeout=5000)
    assert w.view.transform().m11() == zoom and not _whole_in_sight(w)


def test_the_legend_counts_nccl_channels_as_the_results_do(make_window, qtbot):
    """NCCL's ring runs each ring it finds both ways, each direction standing for some of the run's
    channels: the legend listed 'ring 0' ... 'ring 5' beside the summary's '12 channels' (a DGX-1
    V100). It now says how the rings make the channels, and names each ring's reverse as such."""
    w = make_window("dgx1-v100")
    result = run(w, qtbot, size="64MiB", algorithm="ring")
    qtbot.waitUntil(w.legend.isVisible, timeout=5000)
    assert f"{result.channels} channels" in w.results.summary.text()
    rings = [e for e in w.legend.entries if e.startswith("ring ")]
    pairs = len(rings) // 2
    assert len(rings) == 2 * pairs and pairs >= 1
    note = w.legend.entries[1]
    assert note == (f"{result.channels} channels: {pairs} rings, each run both ways "
                    f"({result.channels // len(rings)} channels a way)"), w.legend.entries
    assert rings[:2] == ["ring 0: 8 GPUs", "ring 0 reversed"], rings


def test_ring_names_pair_each_ring_with_its_reverse_only():
    from dgxstudio.ui.replay_structure import Structure, ring_words

    def rings(*orders):
        return [Structure("ring", f"ring {i}", order=list(o)) for i, o in enumerate(orders)]
    names, note = ring_words(rings("abcd", "adcb", "acbd", "adbc"), 8)
    assert note == "8 channels: 2 rings, each run both ways (2 channels a way)"
    assert names == {"ring 0": "ring 0: 4 GPUs", "ring 1": "ring 0 reversed", "ring 2": "ring 1: 4 GPUs",
                     "ring 3": "ring 1 reversed"}
    names, note = ring_words(rings("ab", "ba"), 2)   # two GPUs: one ring, both ways
    assert note == "2 channels: 1 ring, run both ways (1 channel a way)"
    _names, note = ring_words(rings("abcd", "acbd"), 4)   # two rings, neither the other reversed
    assert note == "4 channels on 2 rings, 2 channels each"
    assert ring_words(rings("abcd", "adcb"), None) == ({}, None)   # not one of NCCL's algorithms


def test_a_second_run_leaves_no_row_of_the_first_in_the_legend(make_window, qtbot):
    """The review: after an all-to-all, then a ring all-reduce, the legend drew both runs' rows on top
    of each other: the old rows were only scheduled for deletion, and shown until the event loop came
    round to it (a grab, or a paint, before then showed both)."""
    w = make_window("dgx-h100")
    run(w, qtbot, collective="all-to-all", algorithm="auto", size="1KiB")
    qtbot.waitUntil(w.legend.isVisible, timeout=5000)
    old = [lab for lab in w.legend.findChildren(QLabel) if lab.isVisibleTo(w.legend)]
    w.legend.show_run("all-reduce with ring", [("ring 0: 8 GPUs", QColor("red"), "line")], {"idle": None})
    still = [lab.text() for lab in old if lab.isVisibleTo(w.legend)]   # before any event is processed
    assert not still, still
    run(w, qtbot, size="64MiB", algorithm="ring")
    shown = [lab.text() for lab in w.legend.findChildren(QLabel) if lab.isVisibleTo(w.legend)]
    assert not [t for t in shown if "all-to-all" in t], shown
