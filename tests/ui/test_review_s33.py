"""A new user's review, session 33: what the editor says of each copy it makes."""

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from .conftest import drag
from .test_editor import view_pos

CTRL = Qt.KeyboardModifier.ControlModifier


def test_history_and_status_name_what_a_paste_duplicate_or_ctrl_drag_copied(make_window, qtbot):
    """The History listed "paste" and "duplicate" with nothing to tell two of them apart, and a
    Ctrl+drag copy left the status bar saying what the edit before it did."""
    w = make_window("dgx1-v100")
    stack = w.document.undo_stack
    w.scene.select_ids(["gpu4", "gpu5"])   # one NVLink connection between them
    qtbot.keyClick(w.view, Qt.Key.Key_C, CTRL)
    w._paste_clip(w.copy(), "paste")   # beside the originals, as with the mouse off the canvas
    assert stack.text(stack.count() - 1) == "paste 2 devices and 1 link"
    assert w.status.text() == "Pasted 2 devices and 1 link"
    qtbot.keyClick(w.view, Qt.Key.Key_D, CTRL)
    assert stack.text(stack.count() - 1) == "duplicate 2 devices and 1 link"
    assert w.status.text() == "Duplicated 2 devices and 1 link"
    w.scene.select_ids(["gpu0"])
    QApplication.processEvents()
    drag(w.view, view_pos(w, "gpu0"), view_pos(w, "gpu0") + QPoint(40, 70), modifiers=CTRL)
    assert stack.text(stack.count() - 1) == "copy 1 device by Ctrl+drag"
    assert w.status.text() == "Copied 1 device by Ctrl+drag"


def test_a_refused_sweep_range_names_the_field_and_not_the_last_runs_progress(make_window, qtbot):
    """After a finished run, a sweep range the wrong way round read "Simulation failed at 100%, no
    result: a sweep from ...": the 100% was the finished run's bar, and the field went unnamed."""
    w = make_window("dgx-h100")
    panel = w.sim_panel
    panel.size.setText("1MiB")
    panel.run()
    qtbot.waitUntil(lambda: panel.state.text().startswith("Done"), timeout=60000)
    panel.sweep.setChecked(True)
    panel.sweep_range.setText("4GiB:1KiB")
    panel.run()
    assert w.status.text().startswith("Not run: Sweep range: a sweep from"), w.status.text()   # (the form refused it)
    assert panel.state.text().startswith("Not run: Sweep range: ")


def test_a_cut_says_cut_and_what_it_took(make_window, qtbot):
    """A cut said "Copied 2 devices and 1 links" in the status bar and "cut 2 items" in the History."""
    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu6", "gpu7"])
    qtbot.keyClick(w.view, Qt.Key.Key_X, CTRL)
    assert "gpu6" not in w.document.topology.devices
    assert w.status.text() == "Cut 2 devices and 1 link"
    assert w.document.undo_stack.text(0) == "cut 2 devices and 1 link"
    w.scene.select_ids(["gpu0"])
    qtbot.keyClick(w.view, Qt.Key.Key_C, CTRL)
    assert w.status.text() == "Copied 1 device"
    w.scene.select_ids([])
    qtbot.keyClick(w.view, Qt.Key.Key_X, CTRL)
    assert w.status.text() == "Nothing to cut: select devices or groups"


def test_a_link_chosen_from_a_bundles_menu_is_named_in_the_status_bar(make_window, qtbot):
    """Choosing a link from a collapsed system's bundle opened systems, perhaps out of sight, and
    selected the link with the status bar left blank."""
    w = make_window("dgx1-fat-tree-124")
    topo = w.document.topology
    bundle = next(i for i in w.scene.link_items if i.bundle and len(i.link_ids) > 1)
    menu = w.context_menu(bundle, bundle.a.scenePos(), None)
    sub = next(a.menu() for a in menu.actions() if a.menu() is not None and a.text().startswith("Its "))
    lid = bundle.link_ids[0]
    lk = topo.links[lid]
    next(a for a in sub.actions() if a.isEnabled()).trigger()
    QApplication.processEvents()
    assert w.scene.selected_ids() == [lid]
    opened = w.document.undo_stack.text(0).removeprefix("open ")
    assert w.status.text() == (f"Selected link {lid} ({topo.devices[lk.a].name} — {topo.devices[lk.b].name}: "
                               f"InfiniBand EDR x1); opened {opened}")
