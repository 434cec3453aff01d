"""The s37 new-user review of the GUI, driven with the real widgets: after a refused run on one design,
File > New and a GPU dropped from the palette left the status bar saying "GPU 0 (gpu0) uses 40 nvlink
ports" of the new, empty design's fresh GPU 0 (a drop said nothing, and neither did New or a preset)."""

import pytest
from PySide6.QtCore import QPoint

from dgxstudio.model.topology import Link, Topology

from .test_editor import drop_from_palette


def _overfull() -> Topology:
    from dgxstudio.model.presets import load_preset

    topo = load_preset("dgx-h100")
    link = next(lk for lk in topo.links.values() if lk.a == "gpu0" and lk.type == "NVLink4")
    topo.links[link.id] = Link(link.id, link.a, link.b, link.type, 40, link.a_port, link.b_port)
    return topo


def _refused_run(w, qtbot) -> str:
    w.sim_panel.run()
    qtbot.waitUntil(lambda: "Not run" in w.status.text(), timeout=10000)
    return w.status.text()


def test_a_drop_says_what_was_added_not_the_last_designs_refusal(make_window, qtbot):
    w = make_window(None, topology=_overfull())
    assert "GPU0 (gpu0) uses 53 nvlink ports" in _refused_run(w, qtbot)
    w.document.undo_stack.setClean()
    w.new_document()
    qtbot.wait(50)
    assert w.status.text() == "New empty design"
    drop_from_palette(w, "part:h100-sxm5-80gb", QPoint(300, 250))
    assert w.status.text() == ("Added GPU 0 (H100 SXM5 80GB): drag from its round handle to another device to "
                               "link them"), w.status.text()
    drop_from_palette(w, "system:dgx-h100", QPoint(600, 300))
    assert w.status.text() == "Added DGX H100 (8 GPUs, 28 devices)", w.status.text()


def test_a_preset_opened_says_so_instead_of_the_last_designs_refusal(make_window, qtbot):
    w = make_window(None, topology=_overfull())
    _refused_run(w, qtbot)
    w.document.undo_stack.setClean()
    w.open_preset("dgx-a100")
    assert w.status.text() == "Opened the dgx-a100 preset (DGX A100)", w.status.text()


@pytest.mark.parametrize("typed", ["1KiB", "1KiB:", ":4GiB", " : "])
def test_a_sweep_range_of_one_size_asks_for_low_and_high(make_window, qtbot, typed):
    """"1KiB" in the Sweep range box read "Sweep range: cannot read ''": the missing high end, with
    nothing said of the form the box wants (`simulate --sweep 1KiB` says "expected LOW:HIGH"); so did
    a range with one end left empty ("1KiB:", ":4GiB")."""
    w = make_window("dgx-h100")
    sp = w.sim_panel
    sp.sweep.setChecked(True)
    sp.sweep_range.setText(typed)
    sp.run()
    assert sp.state.text() == f"Not run: Sweep range: expected LOW:HIGH, e.g. 1KiB:4GiB, not {typed!r}", sp.state.text()
    assert not w.session["sweeps"]


def test_a_training_refusal_names_the_tabs_fields_not_the_clis_options(make_window, qtbot):
    """ep 3 with dp 1 read "--ep 3 must divide the data-parallel size 1": an option the panel does not
    have; the Training tab's box reads "ep 3" (beside Experts)."""
    w = make_window("dgx-h100")
    sp = w.sim_panel
    sp.tabs.setCurrentIndex(2)
    sp.dp.setValue(1), sp.tp.setValue(8), sp.pp.setValue(1), sp.experts.setValue(8), sp.ep.setValue(3)
    sp.run()
    qtbot.waitUntil(lambda: not sp.cancel_button.isEnabled(), timeout=20000)
    said = sp.state.text()
    assert "ep 3 must divide the data-parallel size 1" in said and "--ep" not in said, said
    assert "--ep" not in w.status.text()


def test_a_links_inspector_title_names_which_system_its_ends_are_in(make_window, qtbot):
    """Two DGX H100 dropped from the palette both have a "GPU0" and an "NVSwitch0": a link of the
    second, clicked in the Results dock or on the canvas, showed in the Inspector as "Link l3: GPU0 —
    NVSwitch0". Its ends now read as the canvas and the Results dock name them, and a refused edit's
    message names the link the same way."""
    w = make_window(None)
    drop_from_palette(w, "system:dgx-h100", QPoint(300, 300))
    drop_from_palette(w, "system:dgx-h100", QPoint(800, 300))
    topo = w.document.topology
    second = next(g for g in topo.groups.values() if g.name == "DGX H100 #2")
    gpu0 = next(d for d in topo.devices_in_group(second.id) if topo.devices[d].name == "GPU0")
    lk = next(lk for lk in topo.links.values() if lk.a == gpu0 and topo.devices[lk.b].kind == "nvswitch")
    switch = topo.devices[lk.b].name
    w.select_and_center([lk.id])
    title = w.inspector.title.text()
    assert title == f"<b>Link {lk.id}</b>: DGX H100 #2 GPU0 — DGX H100 #2 {switch}", title
    assert w.inspector._what(lk.id) == f"link {lk.id} (DGX H100 #2 GPU0 — DGX H100 #2 {switch})"
