"""The s37 new-user review of small GUI items, on the real widgets: an all-to-all kept a greyed-out
algorithm selected (Run then failed on it), a pipeline read "8 stages x 1 micro-batches", the Inspector's
Ports row gave ids ("gpu0.nvlink") where the canvas shows names, and a pipeline's "stages 0-7" badge sat
on a leaf's link under its "x8" count."""

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.cli import main
from dgxstudio.model.fabrics import build_fat_tree
from tests.ui.test_simulation_gui import run_pipeline_tab

MARGIN = 4.0   # scene units a badge keeps from a link's line


def _touches(line: QLineF, r: QRectF) -> bool:
    if r.contains(line.p1()) or r.contains(line.p2()):
        return True
    c = (r.topLeft(), r.topRight(), r.bottomRight(), r.bottomLeft())
    return any(line.intersects(QLineF(c[i], c[(i + 1) % 4]))[0] == QLineF.IntersectionType.BoundedIntersection
               for i in range(4))


def _selected_item_enabled(box) -> bool:
    return box.model().item(box.currentIndex()).isEnabled()


def test_all_to_all_selects_auto_and_gives_the_pick_back(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.algorithm.setCurrentText("ring")
    p.collective.setCurrentText("all-to-all")
    assert p.algorithm.currentText() == "auto" and _selected_item_enabled(p.algorithm), \
        "ring is greyed out for all-to-all: it is not left selected"
    # Run is not refused: the all-to-all runs
    p.size.setText("1MiB")
    with qtbot.waitSignal(p.resultReady, timeout=20000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args[1].collective == "all-to-all"
    p.collective.setCurrentText("all-reduce")
    assert p.algorithm.currentText() == "ring", "the user's pick comes back where it runs"
    # set aside while the collective cannot run it, given back at the first that can
    p.algorithm.setCurrentText("tree")
    p.collective.setCurrentText("all-gather")
    assert p.algorithm.currentText() == "auto"
    p.collective.setCurrentText("broadcast")
    assert p.algorithm.currentText() == "tree"
    # a pick made meanwhile wins: ring is not brought back over the user's direct
    p.algorithm.setCurrentText("ring")
    p.collective.setCurrentText("all-to-all")
    p.algorithm.setCurrentText("direct")
    p.collective.setCurrentText("all-reduce")
    assert p.algorithm.currentText() == "auto" and _selected_item_enabled(p.algorithm)
    p.collective.setCurrentText("all-to-all")
    assert p.algorithm.currentText() == "direct"


def test_one_micro_batch_is_said_in_the_singular(make_window, qtbot, capsys):
    w = make_window("dgx1-v100")
    p = run_pipeline_tab(w, qtbot, "gpipe", stages=8, microbatches=1)
    assert "8 stages x 1 micro-batch," in p.request.label, p.request.label
    assert "1 micro-batch," in w.gantt.plot.titleLabel.text and "micro-batches" not in w.gantt.plot.titleLabel.text
    assert main(["pipeline", "--preset", "dgx1-v100", "--stages", "1", "--microbatches", "1"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "1 stage on " in head and "1 micro-batch," in head, head
    from dgxstudio.units import counted

    assert counted(1, "GPU") == "1 GPU" and counted(16384, "GPU", grouped=True) == "16,384 GPUs"
    assert counted(2, "switch", "switches") == "2 switches"


def _row_text(inspector, label: str) -> str:
    form = inspector.form
    for r in range(form.rowCount()):
        name = form.itemAt(r, form.ItemRole.LabelRole)
        if name is not None and name.widget().text() == label:
            return form.itemAt(r, form.ItemRole.FieldRole).widget().text()
    raise AssertionError(f"no {label} row")


def test_a_links_ports_row_names_its_ends_as_the_canvas_does(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    lk = next(lk for lk in topo.links.values() if lk.a == "gpu0")
    w.select_and_center([lk.id])
    QApplication.processEvents()
    ports = _row_text(w.inspector, "Ports")
    a, b = topo.devices[lk.a].name, topo.devices[lk.b].name
    assert ports == f"{a}: {lk.a_port} — {b}: {lk.b_port}", ports
    assert f"{lk.a}." not in ports and f"{lk.b}." not in ports, "no ids"


def test_a_stage_badge_keeps_off_the_links_and_their_counts(make_window, qtbot):
    topo = build_fat_tree(4, "dgx-h100")   # the leaf over a column of collapsed systems: x8 on each bundle
    w = make_window(topology=topo)
    run_pipeline_tab(w, qtbot, "1f1b", stages=16, microbatches=4)
    badges = [i for i in w.rings_overlay.items if hasattr(i, "text")]
    assert sorted(b.text() for b in badges) == ["stages 0-7", "stages 8-15"]
    lines = [QLineF(k.a.scenePos(), k.b.scenePos()) for k in w.scene.link_items if k.isVisible()]
    for b in badges:
        r = b.sceneBoundingRect()
        assert not any(_touches(line, r.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN))
                       for line in lines), f"{b.text()} sits on a link"
    # and no "x8" drawn over one, at any zoom the counts are drawn at
    for scale in (0.7, 1.0, 1.6, 2.0):
        for b in badges:
            w.view.resetTransform()
            w.view.scale(scale, scale)
            w.view.centerOn(b)
            w.view.viewport().repaint()
            QApplication.processEvents()
            on_screen = QRectF(w.view.mapFromScene(b.sceneBoundingRect()).boundingRect())
            counts = [box for _, box, text in w.scene.link_labels._placed]
            assert counts and not any(box.intersects(on_screen) for box in counts), (scale, b.text())
