"""Editor habits a review found in session 33, driven with real keys on real widgets."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.model import dumps

from .test_editor_gestures import _type_and_enter

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def test_a_name_typed_in_the_inspector_loses_the_spaces_at_its_ends_only(make_window, qtbot):
    """"   GPU  one  " was stored as typed: the canvas, Find and the reports showed the stray spaces."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    stack = w.document.undo_stack
    w.scene.select_ids(["gpu0"])
    QApplication.processEvents()
    _type_and_enter(qtbot, w.inspector.fields["name"], "   GPU  one  ")
    assert topo.devices["gpu0"].name == "GPU  one"   # the inner spaces stay
    assert w.inspector.fields["name"].text() == "GPU  one"
    steps = stack.count()
    _type_and_enter(qtbot, w.inspector.fields["name"], " GPU  one ")   # only spaces added: no step
    assert stack.count() == steps and w.inspector.fields["name"].text() == "GPU  one"
    before = dumps(topo)
    _type_and_enter(qtbot, w.inspector.fields["name"], "    ")   # all blank: refused as before
    assert "a name cannot be blank" in w.status.text() and dumps(topo) == before and stack.count() == steps
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    assert topo.devices["gpu0"].name == "GPU0"
    (gid,) = topo.groups
    w.scene.select_ids([gid])
    QApplication.processEvents()
    _type_and_enter(qtbot, w.inspector.fields["name"], "  Box  A ")
    assert topo.groups[gid].name == "Box  A"


def test_ungroup_with_a_member_device_selected_ungroups_its_innermost_group(make_window, qtbot):
    """Ctrl+Shift+G with a device selected said "Select a group ..."; PowerPoint, draw.io and Visio
    ungroup the group the selected member is in."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    stack = w.document.undo_stack
    (system,) = topo.groups
    w.scene.select_ids(["gpu0", "gpu1"])
    qtbot.keyClick(w.view, Qt.Key.Key_G, CTRL)
    (inner,) = set(topo.groups) - {system}
    name = topo.groups[inner].name
    before, steps = dumps(topo), stack.count()
    w.view.setFocus()
    gpu0 = w.scene.device_items["gpu0"]
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=w.view.mapFromScene(gpu0.sceneBoundingRect().center()))
    assert w.scene.selected_ids() == ["gpu0"]
    qtbot.keyClick(w.view, Qt.Key.Key_G, CTRL | SHIFT)
    assert set(topo.groups) == {system}   # the innermost group only: the system around it stays
    assert topo.group_of("gpu0").id == system and topo.group_of("gpu1").id == system
    assert stack.count() == steps + 1 and stack.undoText() == f"ungroup {name}"
    assert w.status.text() == f"Ungrouped {name} (the group around GPU0)"
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    assert dumps(topo) == before
    w.scene.select_ids(["gpu0", "cpu0"])   # one in the inner group, one in the system only: no shared group
    qtbot.keyClick(w.view, Qt.Key.Key_G, CTRL | SHIFT)
    assert dumps(topo) == before and stack.index() == steps
    assert w.status.text().startswith("The selected devices share no group. Select a group")
    w.scene.select_ids(["gpu0", "gpu1"])
    qtbot.keyClick(w.view, Qt.Key.Key_G, CTRL | SHIFT)
    assert set(topo.groups) == {system}
    assert w.status.text() == f"Ungrouped {name} (the group around the 2 selected devices)"
