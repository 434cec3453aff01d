"""A click on the canvas never widens the docks: the inspector's choice lists ask for a dozen letters,
not for their longest entry (an NVSwitch's part list widened the right docks from 280 to 309 px on the
first click, shrinking the canvas under the mouse and relaying the whole window in that frame)."""

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip


def _click(w, qtbot, device_id: str) -> None:
    item = w.scene.device_items[device_id]
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.mapFromScene(item.scenePos()))
    for _ in range(3):
        QApplication.processEvents()


def test_the_first_click_on_an_nvswitch_leaves_the_docks_and_canvas_as_they_are(make_window, qtbot):
    w = make_window("dgx-a100")
    qtbot.wait(50)
    dock, canvas = w.inspector_dock.width(), w.view.viewport().size()
    for device in ("nvswitch0", "ib0", "gpu0", "pcie0", "cpu0"):
        _click(w, qtbot, device)
        assert w.inspector.fields["name"].text() == w.document.topology.devices[device].name
        assert w.inspector_dock.width() == dock, f"selecting {device} widened the inspector's dock"
        assert w.view.viewport().size() == canvas, f"selecting {device} resized the canvas"


def test_a_long_part_name_is_elided_in_the_box_and_whole_in_its_list_and_tooltip(make_window, qtbot):
    w = make_window("dgx-a100")
    _click(w, qtbot, "nvswitch0")
    combo = w.inspector.fields["part"]
    labels = [combo.itemText(i) for i in range(combo.count())]
    longest = max(labels, key=combo.fontMetrics().horizontalAdvance)
    assert combo.fontMetrics().horizontalAdvance(longest) > combo.width() - 30, "the longest part does not fit"
    combo.setCurrentIndex(labels.index(longest))   # a user's choice: a new part, one undo step
    assert w.document.topology.devices["nvswitch0"].part == combo.currentData()
    assert w.inspector.width() == w.inspector_dock.widget().viewport().width(), "the rows fill the dock, none cut off"
    combo = w.inspector.fields["part"]
    assert combo.currentText() == longest
    combo.showPopup()
    qtbot.waitUntil(lambda: combo.view().isVisible(), timeout=2000)
    view = combo.view()
    assert view.visualRect(view.model().index(labels.index(longest), 0)).width() >= \
        combo.fontMetrics().horizontalAdvance(longest), "the open list shows the entry whole"
    combo.hidePopup()
    at = QPoint(10, combo.height() // 2)
    QApplication.sendEvent(combo, QHelpEvent(QEvent.Type.ToolTip, at, combo.mapToGlobal(at)))
    assert QToolTip.isVisible() and QToolTip.text().startswith(longest)
    QToolTip.hideText()


def test_a_dock_dragged_narrow_still_shows_whole_rows(make_window, qtbot):
    # the inspector scrolls in a short dock; it must not cut its rows off in a narrow one
    w = make_window("dgx-a100")
    _click(w, qtbot, "nvswitch0")
    w.resizeDocks([w.inspector_dock], [60], Qt.Orientation.Horizontal)
    qtbot.wait(50)
    scroll = w.inspector_dock.widget()
    assert w.inspector.width() == scroll.viewport().width() >= w.inspector.minimumSizeHint().width()
    _click(w, qtbot, "gpu0")   # other rows: the dock rereads the width they need
    qtbot.wait(50)
    assert w.inspector.width() == scroll.viewport().width() >= w.inspector.minimumSizeHint().width()


def test_every_field_of_a_link_reads_whole_at_the_default_dock_width(make_window, qtbot):
    """The name "Bandwidth per direction, GB/s (per link)" beside its field widened the name column for
    every row: at the default dock width a link's Type box showed "NVLink ..." in 87 px of 260, and
    the latency's "0.47 (catal...". Long names now go above their fields."""
    from PySide6.QtWidgets import QStyle, QStyleOptionComboBox

    w = make_window("dgx1-v100")
    qtbot.wait(50)
    dock = w.inspector_dock.width()
    topo = w.document.topology
    qpi = next(lk.id for lk in topo.links.values() if lk.type == "QPI")   # "Intel QPI 9.6 GT/s"
    for lid in ("l0", qpi):
        w.scene.select_ids([lid])
        for _ in range(3):
            QApplication.processEvents()
        assert w.inspector_dock.width() == dock
        combo = w.inspector.fields["type"]
        opt = QStyleOptionComboBox()
        combo.initStyleOption(opt)
        field = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                             QStyle.SubControl.SC_ComboBoxEditField, combo)
        assert combo.fontMetrics().horizontalAdvance(combo.currentText()) <= field.width() - 2, \
            f"{lid}: the Type box cuts off {combo.currentText()!r}"
        for key in ("bandwidth", "latency"):
            edit = w.inspector.fields[key]
            room = edit.contentsRect().width() - edit.textMargins().left() - edit.textMargins().right() - 4
            assert edit.fontMetrics().horizontalAdvance(edit.placeholderText()) <= room, \
                f"{lid}: {key} cuts off {edit.placeholderText()!r}"
        assert w.inspector.width() == w.inspector_dock.widget().viewport().width(), "no row cut off on the right"
