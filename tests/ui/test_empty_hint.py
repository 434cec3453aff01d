"""An empty design says how to start (the editor review: File > New opened a bare canvas), in the
middle of the canvas, without taking the mouse or a drop from it, and goes with the first device."""

from PySide6.QtCore import Qt

from .test_editor import drop_from_palette


def test_an_empty_design_says_how_to_start_until_a_part_is_dropped(make_window, qtbot):
    w = make_window(None)
    hint = w.empty_hint
    assert hint.isVisible() and "drag a system or a part from the Palette" in hint.text()
    assert "File \u25b8 New from preset" in hint.text()
    vp = w.view.viewport()
    centre = hint.geometry().center()
    assert abs(centre.x() - vp.width() // 2) <= 1 and abs(centre.y() - vp.height() // 2) <= 1
    # the mouse and a drop at the hint's place reach the canvas beneath it
    assert vp.childAt(centre) is None
    drop_from_palette(w, "part:h100-sxm5-80gb", centre)
    assert len(w.document.topology.devices) == 1 and not hint.isVisible()
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not w.document.topology.devices and hint.isVisible()


def test_a_preset_shows_no_hint_and_new_brings_it_back(make_window, qtbot):
    w = make_window("dgx-h100")
    assert not w.empty_hint.isVisible()
    w.document.undo_stack.setClean()
    w.new_document()
    assert w.empty_hint.isVisible()
