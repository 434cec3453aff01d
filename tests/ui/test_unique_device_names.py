"""The s36 review: renaming a device in the Inspector to another device's name was accepted, and the
canvas, Find and reports then showed two "GPU1". Names are unique within a system frame (every DGX
holds a GPU0, so two frames may share one); a clash is refused naming the other device."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication


def _rename(w, qtbot, device_id: str, text: str):
    item = w.scene.device_items[device_id]
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(item.scenePos()))
    QApplication.processEvents()
    field = w.inspector.fields["name"]
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)
    return field


def test_a_name_another_device_has_is_refused_and_changes_nothing(make_window, qtbot, tmp_path):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    stack = w.document.undo_stack
    taken = topo.devices["gpu1"].name
    before, steps = topo.devices["gpu0"].name, stack.count()
    field = _rename(w, qtbot, "gpu0", taken)
    assert topo.devices["gpu0"].name == before and stack.count() == steps
    said = w.status.text()
    assert f"name {taken!r} not accepted: {taken} (gpu1) has it" in said and "nothing changed" in said, said
    assert field.styleSheet() and "gpu1" in field.toolTip()
    w.grab().save(str(tmp_path / "refused.png"))
    # a name nobody has is taken, one undo step, and undo gives the old name back
    _rename(w, qtbot, "gpu0", "First GPU")
    assert topo.devices["gpu0"].name == "First GPU" and stack.count() == steps + 1
    stack.undo()
    assert topo.devices["gpu0"].name == before


def test_the_same_name_in_another_system_is_accepted():
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.model.names import name_taken

    topo = build_fat_tree(2, "dgx-a100")
    topo.devices["s2.gpu0"].name = "GPU0"   # as a DGX dropped from the palette names its GPUs
    assert name_taken(topo, "s1.gpu0", "GPU0") is None
    assert name_taken(topo, "s1.gpu0", topo.devices["s1.gpu1"].name) == "s1.gpu1"
