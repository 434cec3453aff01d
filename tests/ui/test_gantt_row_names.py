"""The s36 review: the pipeline Gantt chart labelled its rows with device ids (s1.gpu0) where the
canvas, the Inspector and the reports say "DGX A100 #1 GPU0"."""

from tests.ui.test_simulation_gui import run_pipeline_tab


def test_gantt_rows_are_labelled_with_the_canvas_names(make_window, qtbot, tmp_path):
    from dgxstudio.model.fabrics import build_fat_tree

    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_pipeline_tab(w, qtbot, "1f1b")
    topo = w.document.topology
    axis = w.gantt.plot.getAxis("left")
    labels = [t for _, t in axis._tickLevels[0]]
    assert len(labels) == len(w.gantt.rows) >= 2
    assert labels == [topo.devices[d].name for d in w.gantt.rows], labels
    assert all(label.startswith("DGX A100 #") for label in labels), labels
    assert axis.fixedWidth > 90   # wide enough for "DGX A100 #1 GPU0", not cut to "GPU0"
    w.plot_tabs.setCurrentWidget(w.gantt)
    w.gantt.grab().save(str(tmp_path / "gantt.png"))
