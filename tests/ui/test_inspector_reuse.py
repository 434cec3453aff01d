"""The inspector reuses its field widgets from one selection to the next (a click on the canvas no longer
makes and deletes a dozen widgets): an edit still reaches only the object shown, once, as one undo step."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication


def _click(w, qtbot, device_id: str) -> None:
    item = w.scene.device_items[device_id]
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(item.scenePos()))
    QApplication.processEvents()


def _rename(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def test_a_reused_name_field_renames_only_the_device_shown(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    _click(w, qtbot, "gpu0")
    first = w.inspector.fields["name"]
    _click(w, qtbot, "gpu1")
    field = w.inspector.fields["name"]
    assert field is first, "the same field shows the next device"
    assert field.text() == topo.devices["gpu1"].name and field.isVisible()
    before = w.document.undo_stack.count()
    gpu0_name = topo.devices["gpu0"].name
    _rename(qtbot, field, "Renamed one")
    assert topo.devices["gpu1"].name == "Renamed one"
    assert topo.devices["gpu0"].name == gpu0_name, "the field no longer edits the device shown before"
    assert w.document.undo_stack.count() == before + 1, "one edit, one undo step (no connection left over)"
    w.document.undo_stack.undo()
    assert topo.devices["gpu1"].name != "Renamed one"


def test_device_link_group_and_back_show_their_own_rows(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    _click(w, qtbot, "gpu0")
    device_rows = w.inspector.form.rowCount()
    lid = next(lk.id for lk in topo.links.values() if lk.count > 1)
    w.select_and_center([lid])
    QApplication.processEvents()
    spin = w.inspector.fields["count"]
    assert "name" not in w.inspector.fields and spin.value() == topo.links[lid].count
    assert spin.maximum() >= topo.links[lid].count
    gid = next(iter(topo.groups))
    w.scene.select_ids([gid])
    QApplication.processEvents()
    assert w.inspector.fields["collapsed"].isChecked() == (gid in topo.layout.collapsed)
    assert "count" not in w.inspector.fields and not spin.isVisible(), "the link's rows are gone"
    name = w.inspector.fields["name"]
    assert name.text() == topo.groups[gid].name
    _click(w, qtbot, "gpu2")
    assert w.inspector.form.rowCount() == device_rows
    assert w.inspector.fields["name"].text() == topo.devices["gpu2"].name
    # every row the form holds is shown, and nothing else in the inspector is
    shown = {w.inspector.form.itemAt(r, role).widget() for r in range(w.inspector.form.rowCount())
             for role in (w.inspector.form.ItemRole.LabelRole, w.inspector.form.ItemRole.FieldRole)}
    for child in w.inspector.form_host.children():
        if hasattr(child, "isVisible"):
            assert child.isVisible() == (child in shown), child


def test_a_refused_entry_does_not_stay_red_on_the_next_device(make_window, qtbot):
    w = make_window("dgx1-v100")
    _click(w, qtbot, "gpu0")
    field = w.inspector.fields["name"]
    field.setText("GPU\x00one")
    field.editingFinished.emit()
    assert field.styleSheet() and "control character" in field.toolTip()
    _click(w, qtbot, "gpu1")
    field = w.inspector.fields["name"]
    assert not field.styleSheet() and "control character" not in field.toolTip()


def test_changing_the_part_after_several_selections_is_one_undo_step(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = w.document.topology
    for g in ("gpu0", "gpu1", "gpu3"):
        _click(w, qtbot, g)
    combo = w.inspector.fields["part"]
    before = w.document.undo_stack.count()
    target = next(i for i in range(combo.count()) if combo.itemData(i) != topo.devices["gpu3"].part)
    parts = {g: topo.devices[g].part for g in ("gpu0", "gpu1")}
    combo.setCurrentIndex(target)
    assert topo.devices["gpu3"].part == combo.itemData(target)
    assert {g: topo.devices[g].part for g in ("gpu0", "gpu1")} == parts
    assert w.document.undo_stack.count() == before + 1


def test_a_links_type_list_is_sized_for_its_own_choices_after_a_device(make_window, qtbot):
    """A combo box keeps the size of the first list it showed: the link's short list of types must not
    inherit the width of a device's long list of parts (its row would wrap under its name)."""
    from PySide6.QtWidgets import QComboBox

    w = make_window("dgx-a100")
    topo = w.document.topology
    _click(w, qtbot, "gpu0")
    lid = next(lk.id for lk in topo.links.values() if lk.count > 1)
    w.select_and_center([lid])
    QApplication.processEvents()
    combo = w.inspector.fields["type"]
    fresh = QComboBox()
    for i in range(combo.count()):
        fresh.addItem(combo.itemText(i), combo.itemData(i))
    assert combo.minimumSizeHint().width() == fresh.minimumSizeHint().width()
    fresh.deleteLater()


def test_the_part_list_is_kept_for_a_device_of_the_same_kind_and_edits_only_it(make_window, qtbot):
    """A device after a device of its kind: the form keeps its part list (no new widget in the
    selection's frame), shows the new device's part, and a choice there changes only that device."""
    w = make_window("dgx1-v100")
    topo = w.document.topology
    gpus = [d for d in topo.devices.values() if d.kind == "gpu"]
    _click(w, qtbot, gpus[0].id)
    first = w.inspector.fields["part"]
    _click(w, qtbot, gpus[1].id)
    combo = w.inspector.fields["part"]
    assert combo is first and combo.isVisible()
    assert combo.currentData() == gpus[1].part
    other = next(i for i in range(combo.count()) if combo.itemData(i) != gpus[1].part)
    before, part0 = w.document.undo_stack.count(), gpus[0].part
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down if other > combo.currentIndex() else Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: topo.devices[gpus[1].id].part != gpus[1].part or
                    w.document.undo_stack.count() > before, timeout=3000)
    assert topo.devices[gpus[0].id].part == part0, "the list no longer edits the device shown before"
    assert w.document.undo_stack.count() == before + 1
    switch = next(d for d in topo.devices.values() if d.kind == "nvswitch" and d.id in w.scene.device_items) \
        if any(d.kind == "nvswitch" for d in topo.devices.values()) else \
        next(d for d in topo.devices.values() if d.kind != "gpu" and d.id in w.scene.device_items)
    _click(w, qtbot, switch.id)
    combo2 = w.inspector.fields["part"]
    assert combo2 is not combo and combo2.currentData() == switch.part
    assert all(topo.catalog.parts[combo2.itemData(i)].kind == switch.kind for i in range(combo2.count())
               if combo2.itemData(i) in topo.catalog.parts)
