"""A new user's review of the editor (session 27): habits a diagram tool has that DGX Studio lacked,
driven with real keys on real widgets."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QTableWidget

from dgxstudio.model import dumps

from .conftest import drag
from .test_editor import view_pos
from .test_editor_habits import _close_menus, _menu, right_click


def _visible(w):
    return w.view.mapToScene(w.view.viewport().rect()).boundingRect()


def test_shift_f_zooms_to_the_selection(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.view.fit()
    fit = w.view.transform().m11()
    gpu = w.scene.device_items["gpu3"]
    w.scene.select_ids(["gpu3"])
    qtbot.keyClick(w.view, Qt.Key.Key_F, Qt.KeyboardModifier.ShiftModifier)
    seen = _visible(w)
    assert seen.contains(gpu.sceneBoundingRect())
    assert w.view.transform().m11() > 1.3 * fit
    assert w.view.transform().m11() <= 1.0 + 1e-9   # one device: not blown up past actual size
    w.scene.select_ids(["gpu4", "cpu1"])
    w.zoom_to_selection()
    seen = _visible(w)
    for d in ("gpu4", "cpu1"):
        assert seen.contains(w.scene.device_items[d].sceneBoundingRect())
    w.scene.select_ids([])
    w.zoom_to_selection()
    assert "Nothing selected" in w.status.text()


def test_escape_on_the_canvas_selects_nothing_but_stays_a_fields_key(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu0", "gpu1"])
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    assert w.scene.selected_ids() == []
    w.scene.select_ids(["gpu0"])
    w.find_edit.setFocus()
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Escape)
    assert w.scene.selected_ids() == ["gpu0"]


def test_ungroup_keeps_the_devices_and_links_and_undoes_exactly(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    (gid,) = topo.groups
    devices, links, before = list(topo.devices), list(topo.links), dumps(topo)
    frame = w.scene.group_items[gid]
    title = frame.mapToScene(frame.frame.left() + 60, frame.frame.top() - frame.TITLE / 2)
    right_click(qtbot, w.view.viewport(), w.view.mapFromScene(title))
    assert "Ungroup (keep its devices)" in [a.text() for a in _menu(w).actions()]
    _close_menus(w)
    w.scene.select_ids([gid])
    qtbot.keyClick(w.view, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert not topo.groups
    assert list(topo.devices) == devices and list(topo.links) == links
    assert w.document.undo_stack.undoText().startswith("ungroup")
    w.document.undo_stack.undo()
    assert dumps(topo) == before
    w.scene.select_ids([])
    w.ungroup()
    assert topo.groups and "Select a group" in w.status.text()


def test_shortcut_list_names_undo_not_the_step_it_would_undo(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu0"])
    w.nudge(10, 0)
    dialog = w.shortcut_list()
    table = dialog.findChild(QTableWidget)
    commands = {table.item(r, 1).text() for r in range(table.rowCount())}
    assert "Edit › Undo" in commands and not any(c.startswith("Edit › Undo ") for c in commands)
    assert "Select nothing on the canvas (or drop the link or move being dragged)" in commands
    assert "View › Zoom to selection" in commands
    dialog.close()
    QApplication.processEvents()
    assert isinstance(dialog, QDialog)


def test_pipeline_and_training_runs_use_the_link_figures_the_panel_shows(make_window, qtbot):
    """The pipeline tab ran at peak link figures while the panel (and `dgxstudio pipeline`) said
    achievable, and the training tab ignored the choice: the same pipeline gave two makespans."""
    import pytest

    from dgxstudio.sim.pipeline import PipelineSpec, run_pipeline

    w = make_window("dgx-a100")
    p = w.sim_panel
    assert p.figures.isVisibleTo(p) and p.figures.currentText() == "achievable"
    p.tabs.setCurrentIndex(1)
    assert p.figures.isVisibleTo(p)   # not on the collective tab only: it applies to every tab
    p.stages.setValue(4)
    p.microbatches.setValue(8)
    p.schedule.setCurrentText("1f1b")
    p.fwd.setText("2ms")
    p.bwd.setText("4ms")
    p.activation.setText("256MiB")
    gpus = sorted(d.id for d in w.document.topology.gpus())[:4]
    runs = {}
    for figures in ("achievable", "peak"):
        p.figures.setCurrentText(figures)
        with qtbot.waitSignal(p.resultReady, timeout=20000) as blocker:
            p.run()
        request, result = blocker.args
        assert result.spec.stage_gpus == gpus
        expected = run_pipeline(w.document.topology, PipelineSpec("1f1b", 4, 8, gpus, [2e-3] * 4, [4e-3] * 4,
                                                                  256 * 2**20), achievable=figures == "achievable")
        assert result.makespan_s == pytest.approx(expected.makespan_s, rel=1e-12)
        assert f"{figures} figures" in request.label
        runs[figures] = result.makespan_s
    assert runs["achievable"] > runs["peak"]
    p.tabs.setCurrentIndex(0)
    p.size.setText("64MiB")
    p.sweep.setChecked(False)
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    assert "at peak link figures" in w.results.summary.text()
    row = w.results.table.rowCount() - 1
    assert w.results.table.item(row, 0).text().endswith("→ ring/Simple")   # what auto ran
    from dgxstudio.sim.training import ModelSpec, train_iteration

    p.tabs.setCurrentIndex(2)
    p.dp.setValue(1)
    p.tp.setValue(8)
    p.pp.setValue(1)
    p.train_micro.setValue(2)
    with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
        p.run()
    gpus = sorted(d.id for d in w.document.topology.gpus())
    expected = train_iteration(w.document.topology, gpus, 1, 8, 1, ModelSpec(), 2, overlap=p.overlap.isChecked(),
                               achievable=False)
    assert blocker.args[1].iteration_s == pytest.approx(expected.iteration_s, rel=1e-12)


def test_a_refused_inspector_entry_is_said_in_the_status_bar_naming_the_link_and_field(make_window, qtbot):
    """A bad bandwidth turned the field red with the reason in a tooltip only: nothing on screen said
    why the value had not been taken unless one hovered it."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    before, steps = dumps(topo), w.document.undo_stack.count()
    w.select_and_center(["l0"])
    field = w.inspector.fields["bandwidth"]
    field.setFocus()
    qtbot.keyClicks(field, "abc")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    text = w.status.text()
    assert text.startswith("Link l0 (GPU0 — GPU1): ") and "bandwidth per direction (GB/s) 'abc' not accepted" in text
    assert "nothing changed" in text
    assert dumps(topo) == before and w.document.undo_stack.count() == steps
    w.select_and_center(["gpu0"])
    name = w.inspector.fields["name"]
    name.setFocus()
    name.selectAll()
    qtbot.keyClick(name, Qt.Key.Key_Delete)
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert w.status.text().startswith("Device gpu0 (GPU0): name '' not accepted: a name cannot be blank")
    assert dumps(topo) == before
    name.setText("x" * 10001)
    name.editingFinished.emit()
    assert "is longer than the limit" in w.status.text() and dumps(topo) == before


def test_unsaved_changes_question_names_the_document_as_the_title_bar_does(make_window, qtbot):
    from PySide6.QtWidgets import QMessageBox

    from .conftest import answer_next_dialog

    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu0"])
    w.nudge(10, 0)
    seen = []
    answer_next_dialog(QMessageBox.StandardButton.Cancel, seen)
    w.open_preset("dgx-a100")
    assert seen == ["The dgx1-v100 preset (DGX-1 (V100)) has unsaved changes. Save them?"]
    assert w.document.topology.name == "DGX-1 (V100)" and w.document.dirty


def test_group_makes_a_hand_drawn_server_a_system_that_exports_and_undoes(make_window, qtbot, tmp_path):
    """Nothing in the editor made a group: a server drawn by hand could not become a system, so the
    ASTRA-sim export refused it ("every GPU must belong to a system group") with no way out."""
    from PySide6.QtCore import QPointF

    w = make_window(None)
    topo = w.document.topology
    a = w.scene.drop("part:h100-sxm5-80gb", QPointF(0, 0))
    b = w.scene.drop("part:h100-sxm5-80gb", QPointF(300, 0))
    drag(w.view, view_pos(w, a[0], handle=True), view_pos(w, b[0]))   # an NVLink between them
    assert len(topo.links) == 1
    before = dumps(topo)
    from PySide6.QtWidgets import QMessageBox

    from .conftest import answer_next_dialog

    out, seen = str(tmp_path / "t.yaml"), []
    answer_next_dialog(QMessageBox.StandardButton.Ok, seen)
    assert not w.export_topology("astra-yaml", out)
    assert "must belong to a system group" in seen[0]
    w.scene.select_ids([*a, *b])
    right_click(qtbot, w.view.viewport(), w.view.mapFromScene(w.scene.device_items[a[0]].scenePos()))
    assert "Group the selection" in [x.text() for x in _menu(w).actions()]
    _close_menus(w)
    w.scene.select_ids([*a, *b])
    w.activateWindow()   # (the error box had the focus)
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)
    (gid,) = topo.groups
    assert topo.groups[gid].kind == "system" and topo.groups[gid].name == "System 1"
    assert sorted(topo.groups[gid].devices) == sorted([*a, *b]) and w.scene.selected_ids() == [gid]
    assert gid in w.scene.group_items
    assert w.export_topology("astra-yaml", out)
    w.document.undo_stack.undo()
    assert dumps(topo) == before and gid not in w.scene.group_items
    w.document.undo_stack.redo()
    assert topo.groups[gid].kind == "system"


def test_group_and_ungroup_refuse_in_a_clusters_overview_and_change_nothing(make_window, qtbot):
    w = make_window("dgx-h100-superpod")
    assert w.scene.lod is not None
    before = dumps(w.document.topology)
    w.group_selection()
    assert "drawn as its structure" in w.status.text()
    w.ungroup()
    assert "drawn as its structure" in w.status.text() and dumps(w.document.topology) == before


def test_the_user_guides_tour_names_an_algorithm_the_panel_offers(make_window, qtbot):
    """The guide said "choose all-reduce, *multi-ring*": the panel lists no such algorithm."""
    import re

    w = make_window("dgx1-v100")
    w.user_guide().close()
    text = w.guide_browser.toPlainText()
    step = text[text.index("Simulate."):]
    named = re.search(r"choose all-reduce, (\S+), 256MiB", step).group(1)
    combo = w.sim_panel.algorithm
    assert named in [combo.itemText(i) for i in range(combo.count())]
    assert "Ctrl+G" in text and "Shift+F" in text and "F2" in text


def test_duplicate_and_menu_paste_give_copies_names_of_their_own(make_window, qtbot):
    """A paste under the mouse renamed its copies, but Ctrl+D and Edit > Paste (the mouse on the menu,
    not the canvas) made a second "GPU0", "GPU1": finds and reports could not tell them apart."""
    from unittest import mock

    w = make_window("dgx1-v100")
    topo = w.document.topology
    w.scene.select_ids(["gpu0", "gpu1"])
    w.duplicate()
    w.copy()
    with mock.patch("dgxstudio.ui.window_editing.cursor_scene_pos", return_value=None):   # mouse off the canvas
        w.paste()
    names = [d.name for d in topo.devices.values()]
    assert len(names) == len(set(names)) == 23


def test_escape_drops_a_link_being_dragged(make_window, qtbot):
    """A user who starts dragging a link from a device's handle and thinks better of it presses
    Escape, as in every diagram tool: the dashed line goes, releasing over another device connects
    nothing, and the selection is untouched. Escape did nothing during a drag (review)."""
    from PySide6.QtCore import QEvent

    from dgxstudio.model.topology import Topology
    from .conftest import send_mouse
    from .test_editor_habits import nic_and_switch

    w = make_window(topology=Topology("t"))
    _nic, switch, vp, handle, target = nic_and_switch(w)
    w.scene.select_ids([switch])
    w.view.setFocus()
    send_mouse(vp, QEvent.Type.MouseButtonPress, handle)
    send_mouse(vp, QEvent.Type.MouseMove, target, button=Qt.MouseButton.NoButton)
    assert w.view._link_line is not None and w.view._port_hint is not None
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    assert w.view._link_line is None and w.view._port_hint is None
    assert "Link cancelled (Escape)" in w.status.text()
    assert w.scene.selected_ids() == [switch]   # the first Escape dropped the link only
    send_mouse(vp, QEvent.Type.MouseButtonRelease, target)
    assert not w.document.topology.links
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    assert w.scene.selected_ids() == []
