"""Editor habits a review found in session 33, driven with real keys on real widgets."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.model import dumps

from .test_editor_gestures import _type_and_enter

CTRL = Qt.KeyboardModifier.ControlModifier


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
