"""A new user's review of the editor (session 27): habits a diagram tool has that DGX Studio lacked,
driven with real keys on real widgets."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QTableWidget

from dgxstudio.model import dumps

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
    w.scene.select_ids(["gpu0"])
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
    assert "Select nothing on the canvas" in commands and "View › Zoom to selection" in commands
    dialog.close()
    QApplication.processEvents()
    assert isinstance(dialog, QDialog)
