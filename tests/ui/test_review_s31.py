"""A new user's review of main at 030276d: what the GUI said wrong."""

from PySide6.QtCore import Qt

from dgxstudio.model.builders import build_fat_tree

from .test_runs_belong_to_a_document import run
from .test_simulation_gui import configure


def test_collnet_rails_are_not_offered_as_tree_pairs(make_window, qtbot):
    """The replay bar's chooser called CollNet's rails 0 and 1 "tree pair 0" while the legend beside it
    named them "collnet rail 0" and "collnet rail 1": CollNet runs one aggregation tree per rail, no
    pairs. NCCL's tree keeps its pairs."""
    w = make_window(topology=build_fat_tree(2, "dgx-h100", rail_optimized=True))
    w.sim_panel.show_rings.setChecked(True)
    run(w, qtbot, algorithm="collnet", size="64MiB")
    qtbot.waitUntil(w.tree_pair.isVisible, timeout=3000)
    items = [w.tree_pair.itemText(i) for i in range(w.tree_pair.count())]
    assert items[0].startswith("collnet rail 0 and collnet rail 1 (roots "), items
    assert not any("tree pair" in t for t in items), items
    assert any(e.startswith("collnet rail 1:") for e in w.legend.entries), w.legend.entries
    run(w, qtbot, algorithm="tree", size="64MiB")
    assert w.tree_pair.itemText(0).startswith("tree pair 0 (roots ")


def test_the_algorithm_list_greys_out_what_the_collective_cannot_run(make_window, qtbot):
    """Every algorithm stayed selectable for every collective: all-to-all offered ring, tree, nvls ...
    and each failed only after the run started ("ring is not an algorithm for all-to-all (choose from
    direct)"), which `simulate` says before it runs."""
    w = make_window("dgx-h100")
    p = w.sim_panel
    model = p.algorithm.model()

    def offered():
        return {p.algorithm.itemText(i) for i in range(p.algorithm.count()) if model.item(i).isEnabled()}

    p.collective.setCurrentText("all-to-all")
    assert offered() == {"auto", "direct"}
    p.collective.setCurrentText("all-gather")
    assert offered() == {"auto", "ring", "single-ring"}
    p.collective.setCurrentText("all-reduce")
    assert {"ring", "tree", "nvls", "nvls-tree", "collnet", "hierarchical"} <= offered()
    assert "direct" not in offered()


def test_a_link_override_is_named_in_words_in_the_history(make_window, qtbot):
    """The Inspector's bandwidth and latency overrides were pushed as "set bandwidth_per_direction_Bps
    of l0" and "set latency_s of l0": the History panel, and now the status bar after a History click
    or Ctrl+Z, showed the code's field names."""
    from PySide6.QtCore import Qt
    w = make_window("dgx1-v100")
    stack = w.document.undo_stack
    w.select_and_center(["l0"])
    for key, value in (("bandwidth", "20"), ("latency", "1.5")):
        field = w.inspector.fields[key]
        field.setFocus()
        qtbot.keyClicks(field, value)
        qtbot.keyClick(field, Qt.Key.Key_Return)
    assert [stack.text(i) for i in range(stack.count())] == ["set bandwidth per direction of l0", "set latency of l0"]
    qtbot.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.status.text() == "Undid: set latency of l0"


def test_a_link_stays_selected_after_an_inspector_edit_redraws_it(make_window, qtbot):
    """Setting a link's bandwidth (or count) in the Inspector redraws its item, which dropped the
    selection: the Inspector went to "Nothing selected" at once, so the figure just typed could not
    be read back, nor the latency set next."""
    from PySide6.QtCore import Qt
    w = make_window("dgx1-v100")
    w.select_and_center(["l0"])
    field = w.inspector.fields["bandwidth"]
    field.setFocus()
    qtbot.keyClicks(field, "20")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert w.document.topology.links["l0"].bandwidth_per_direction_Bps == 20e9
    qtbot.waitUntil(lambda: "latency" in w.inspector.fields, timeout=2000)
    assert w.inspector.ids == ["l0"]
    assert w.inspector.fields["bandwidth"].text() == "20"
    assert [list(i.link_ids) for i in w.scene.selectedItems()] == [["l0"]]


def test_a_sweeps_bottleneck_list_says_which_size_it_is_of(make_window, qtbot):
    """After a size sweep the list under "Bottleneck links (click to select on the canvas):"
    held the last size's links, beside a table of every size, without saying which."""
    from PySide6.QtCore import Qt
    from .test_simulation_gui import configure
    w = make_window("dgx-h100")
    p = configure(w, algorithm="ring", sweep=True, sweep_range="1MiB:64MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert w.results.bottlenecks_label.text().startswith("Bottleneck links at 64 MiB (click")
    p.sweep.setChecked(False)
    p.size.setText("64MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert w.results.bottlenecks_label.text() == "Bottleneck links (click to select on the canvas):"


def test_the_training_headline_says_the_critical_resource_is_at_rated_figures(make_window, qtbot):
    """The Results dock's "Critical:" line named infiniband on two DGX A100 at tp=8 pp=2 while the
    achievable and simulated verdicts under it said NVLink limits: it now says which basis it is on."""
    from .test_simulation_gui import run_training_tab
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training_tab(w, qtbot, 1, 8, 2, microbatches=4, schedule="1f1b")
    text = w.results.summary.text()
    assert "<b>Critical resource at rated figures: infiniband (achievable and simulated: nvlink)</b> - " in text
    assert "Critical:" not in text


def test_the_sweep_header_says_sweep_once(make_window, qtbot):
    """A size sweep's summary read "Sweep all-reduce auto sweep 1 KiB..1 GiB": the run's label says
    "sweep" already."""
    w = make_window("dgx1-v100")
    run(w, qtbot, algorithm="ring", sweep=True, sweep_range="1KiB:1MiB")
    head = w.results.summary.text().split("<br>")[0]
    assert head.startswith("<b>all-reduce ring sweep 1 KiB..1 MiB, "), head
    assert head.lower().count("sweep") == 1, head


def test_the_sweep_range_is_off_unless_size_sweep_is_ticked(make_window, qtbot):
    """The Sweep range field stayed enabled with "size sweep" unticked, where a run ignores it."""
    w = make_window("dgx1-v100")
    w.sim_dock.show()
    w.sim_dock.raise_()
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    qtbot.waitUntil(p.sweep.isVisible, timeout=3000)
    assert not p.sweep.isChecked() and not p.sweep_range.isEnabled()
    qtbot.mouseClick(p.sweep, Qt.MouseButton.LeftButton, pos=p.sweep.rect().center())
    assert p.sweep.isChecked() and p.sweep_range.isEnabled()
    qtbot.mouseClick(p.sweep, Qt.MouseButton.LeftButton, pos=p.sweep.rect().center())
    assert not p.sweep.isChecked() and not p.sweep_range.isEnabled()


def test_a_refusal_names_the_chunk_box_not_the_cli_option(make_window, qtbot, monkeypatch):
    """A run over the schedule's size limit failed with the engine's "--chunk sets the pieces of the
    others", an option the GUI does not have: it names the panel's Chunk box."""
    from dgxstudio.sim import limits
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", 5000)
    w = make_window(topology=build_fat_tree(2, "dgx-h100"))
    p = configure(w, algorithm="nvls-tree", size="8GiB")
    messages = []
    p.message.connect(messages.append)
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: p.state.text().startswith("Not run"), timeout=30000)   # refused while building the schedule
    assert "flow groups to simulate" in p.state.text(), p.state.text()
    assert "the Chunk box sets the pieces of the others" in p.state.text()
    assert "--chunk" not in p.state.text() and "--chunk" not in messages[-1]
