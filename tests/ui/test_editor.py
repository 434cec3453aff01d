import os

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from dgxstudio.model import dumps
from dgxstudio.model.presets import preset_names
from dgxstudio.ui.canvas import GroupItem

from .conftest import answer_next_dialog, drag


def drop_from_palette(window, payload: str, at: QPoint) -> None:
    """A drag that leaves the palette with the palette's own drag data and lands on the canvas."""
    item = window.palette.item_for(payload)
    assert item is not None
    mime = window.palette.tree.drag_data([item])
    vp = window.view.viewport()
    actions = Qt.DropAction.CopyAction
    for cls in (QDragEnterEvent, QDragMoveEvent):
        ev = cls(at, actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(vp, ev)
        assert ev.isAccepted()
    drop = QDropEvent(QPointF(at), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(vp, drop)
    QApplication.processEvents()


def view_pos(window, device_id: str, handle: bool = False) -> QPoint:
    item = window.scene.device_items[device_id]
    scene_pt = item.mapToScene(item.handle_center()) if handle else item.scenePos()
    return window.view.mapFromScene(scene_pt)


def test_drag_a_gpu_from_the_palette_onto_the_canvas(make_window):
    w = make_window(None)
    at = QPoint(300, 250)
    expected = w.view.mapToScene(at)
    drop_from_palette(w, "part:tesla-v100-sxm2", at)
    topo = w.document.topology
    assert len(topo.gpus()) == 1
    gpu = topo.gpus()[0]
    x, y = topo.layout.positions[gpu.id]
    assert abs(x - expected.x()) < 1 and abs(y - expected.y()) < 1
    assert gpu.id in w.scene.device_items
    drop_from_palette(w, "system:dgx-a100", QPoint(500, 300))
    assert len(topo.gpus()) == 9 and any(g.kind == "system" for g in topo.groups.values())


def test_connect_two_v100s_and_refuse_the_seventh_nvlink(make_window):
    w = make_window(None)
    drop_from_palette(w, "part:tesla-v100-sxm2", QPoint(200, 250))
    drop_from_palette(w, "part:tesla-v100-sxm2", QPoint(600, 250))
    a, b = [g.id for g in w.document.topology.gpus()]
    for n in range(1, 7):
        drag(w.view, view_pos(w, a, handle=True), view_pos(w, b))
        links = list(w.document.topology.links.values())
        assert len(links) == 1 and links[0].type == "NVLink2" and links[0].count == n
    drag(w.view, view_pos(w, a, handle=True), view_pos(w, b))
    assert list(w.document.topology.links.values())[0].count == 6
    assert "no free nvlink port (6 of 6 used)" in w.status.text()


def test_every_edit_undoes_to_the_saved_form_and_redoes(make_window, qtbot):
    w = make_window("dgx1-v100")
    topo = lambda: w.document.topology  # noqa: E731
    steps = []

    def record(action):
        before = dumps(topo())
        action()
        after = dumps(topo())
        assert after != before, action
        steps.append((before, after))

    record(lambda: drop_from_palette(w, "part:connectx-6-hdr", QPoint(200, 200)))
    record(lambda: drag(w.view, view_pos(w, "gpu0"), view_pos(w, "gpu0") + QPoint(80, 40)))
    w.scene.select_ids(["gpu3"])
    record(lambda: qtbot.keyClick(w.view, Qt.Key.Key_Delete))
    w.scene.select_ids(["gpu1"])
    QApplication.processEvents()

    def rename():
        field = w.inspector.fields["name"]
        field.setText("Renamed GPU")
        field.editingFinished.emit()
    record(rename)
    w.scene.select_ids(["gpu4", "gpu5"])
    record(lambda: (qtbot.keyClick(w.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier),
                    qtbot.keyClick(w.view, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)))
    record(lambda: w.scene.toggle_group("system"))
    for before, after in reversed(steps):
        assert dumps(topo()) == after
        qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert dumps(topo()) == before
    for before, after in steps:
        qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert dumps(topo()) == after


def test_copy_paste_keeps_internal_links_and_selects_the_copies(make_window, qtbot):
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu0", "gpu1", "gpu2", "gpu3"])
    qtbot.keyClick(w.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(w.view, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    topo = w.document.topology
    new = [i for i in w.scene.selected_ids() if i in topo.devices]
    assert len(new) == 4 and not set(new) & {"gpu0", "gpu1", "gpu2", "gpu3"}
    internal = [lk for lk in topo.links.values() if lk.a in new and lk.b in new]
    assert len(internal) == 6 and sum(lk.count for lk in internal) == 9
    qtbot.keyClick(w.view, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert len(topo.gpus()) == 16


def test_collapse_then_expand_keeps_every_link(make_window):
    w = make_window("dgx1-v100")
    links_before = dumps(w.document.topology).split('"links"')[1].split('"groups"')[0]
    w.scene.toggle_group("system")
    assert isinstance(w.scene.group_items["system"], GroupItem) and w.scene.group_items["system"].collapsed
    assert not w.scene.device_items
    w.scene.toggle_group("system")
    assert len(w.scene.device_items) == 19
    assert dumps(w.document.topology).split('"links"')[1].split('"groups"')[0] == links_before
    shown = {lid for item in w.scene.link_items for lid in item.link_ids}
    assert shown == set(w.document.topology.links)


def test_fat_tree_bundles_links_of_collapsed_systems(make_window):
    w = make_window("dgx1-fat-tree-124")
    bundles = [i for i in w.scene.link_items if i.bundle]
    assert len(bundles) == 124 and all(b.count == 4 for b in bundles)
    assert len(w.scene.device_items) == 47


def test_open_edit_save_reopen_and_corrupt_file(make_window, tmp_path):
    w = make_window("dgx-a100")
    path = str(tmp_path / "a100.dgxs")
    assert w._save_to(path)
    assert w.windowTitle().startswith("a100.dgxs")
    w.scene.select_ids(["gpu7"])
    w.delete()
    assert w.isWindowModified()
    assert w.save()
    saved = dumps(w.document.topology)
    assert w.open_path(path)
    assert dumps(w.document.topology) == saved and not w.isWindowModified()
    bad = tmp_path / "bad.dgxs"
    bad.write_text('{"format": "dgxstudio-topology", "schema_version": 1, "devices": [{"id": 3}]}')
    seen = []
    answer_next_dialog(QMessageBox.StandardButton.Ok, seen)
    assert not w.open_path(str(bad))
    assert seen and "devices[0].id: expected text" in seen[0]
    assert dumps(w.document.topology) == saved and w.document.path == path


def test_closing_with_unsaved_changes_asks(make_window):
    w = make_window("dgx1-p100")
    w.scene.select_ids(["gpu2"])
    w.delete()
    seen = []
    answer_next_dialog(QMessageBox.StandardButton.Cancel, seen)
    assert not w.close()
    assert seen and "unsaved changes" in seen[0] and w.isVisible()
    answer_next_dialog(QMessageBox.StandardButton.Discard, seen)
    assert w.close()


def test_find_selects_and_centres(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    qtbot.keyClick(w.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    # (a leaf in the middle of its line: one at the drawing's edge cannot be scrolled to the centre)
    qtbot.keyClicks(w.find_edit, "Leaf 24")
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    assert w.scene.selected_ids() == ["leaf24"]
    centre = w.view.mapToScene(w.view.viewport().rect().center())
    item = w.scene.device_items["leaf24"]
    assert abs(centre.x() - item.scenePos().x()) < 20 and abs(centre.y() - item.scenePos().y()) < 20


def test_findings_click_selects_the_culprit(make_window):
    w = make_window("dgx1-v100")
    w.document.topology.devices["gpu2"].part = "mystery-gpu"
    w.findings.refresh()
    item = next(w.findings.item(i) for i in range(w.findings.count()) if "mystery-gpu" in w.findings.item(i).text())
    w.findings.itemClicked.emit(item)
    assert w.scene.selected_ids() == ["gpu2"]


@pytest.mark.parametrize("preset", preset_names())
def test_screenshot_of_each_preset(make_window, tmp_path_factory, preset):
    w = make_window(preset)
    w.view.fit()
    QApplication.processEvents()
    folder = os.environ.get("DGXSTUDIO_SCREENSHOTS") or str(tmp_path_factory.mktemp("screenshots"))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{preset}.png")
    assert w.grab().save(path)
    assert os.path.getsize(path) > 10_000
