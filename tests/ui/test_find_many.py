"""Find on a cluster where the text matches hundreds of devices: the status bar says how many and how
to reach the next, and Enter again in the find box goes to the next match (it found the first again)."""

from PySide6.QtCore import Qt

from dgxstudio.model.fabrics import build_fat_tree


def test_find_says_how_many_match_and_enter_again_steps_on(make_window, qtbot):
    w = make_window(topology=build_fat_tree(512, "dgx-h100", rail_optimized=True))
    qtbot.keyClick(w.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(w.find_edit, "gpu3")
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    assert w.scene.selected_ids() == ["s001.gpu3"]
    assert w.status.text() == "Found DGX H100 #1 GPU3 (s001.gpu3): 1 of 512 matches, Enter or F3 for the next"
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    assert w.scene.selected_ids() == ["s002.gpu3"] and w.status.text().startswith("2 of 512")
    # new text starts over from its first match
    w.find_edit.clear()
    qtbot.keyClicks(w.find_edit, "s300.gpu3")
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    assert w.scene.selected_ids() == ["s300.gpu3"] and w.status.text() == "Found DGX H100 #300 GPU3 (s300.gpu3)"


def test_one_match_says_nothing_more(make_window, qtbot):
    w = make_window("dgx1-v100")
    qtbot.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(w.find_edit, "gpu5")
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    assert w.scene.selected_ids() == ["gpu5"] and w.status.text().endswith("(gpu5)")


def test_a_device_found_in_the_overview_is_drawn_large_enough_to_read(make_window, qtbot):
    w = make_window(topology=build_fat_tree(512, "dgx-h100", rail_optimized=True))
    w.view.fit()
    qtbot.wait(5)
    qtbot.keyClick(w.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(w.find_edit, "s300.gpu3")
    qtbot.keyClick(w.find_edit, Qt.Key.Key_Return)
    qtbot.wait(5)
    item = w.scene.device_items["s300.gpu3"]
    # at 0.3 and above its name is drawn, at 0.6 its ports too (DeviceItem.paint); it was found at 0.29
    assert item.scale() * w.view.transform().m11() >= 0.6
    seen = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert seen.contains(item.sceneBoundingRect()) and w.scene.selected_ids() == ["s300.gpu3"]
    assert len(w.scene.items()) < 1500
