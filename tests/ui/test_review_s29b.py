"""What a reviewer found on a large DGX H100 cluster: names elided where they differ, a progress bar
left behind by a refused run, Select all and Auto-layout at the overview's fit doing nothing silently."""

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dgxstudio.model.fabrics import build_fat_tree


def test_nvswitch_names_keep_the_end_that_tells_them_apart(make_window, qtbot):
    """'DGX H100 #12 NVSwitch0' was drawn 'DGX H…itch0', the same for all four switches of a system."""
    w = make_window(topology=build_fat_tree(12, "dgx-h100", rail_optimized=True))
    system = next(g for g in w.scene.group_items.values() if g.title == "DGX H100 #12")
    w.view.centerOn(system)
    QTest.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                      pos=w.view.mapFromScene(system.sceneBoundingRect().center()))
    qtbot.waitUntil(lambda: any("NVSwitch" in d.name for d in w.scene.device_items.values()), timeout=3000)
    switches = sorted((d for d in w.scene.device_items.values() if d.name.startswith("DGX H100 #12 NVSwitch")),
                      key=lambda d: d.name)
    assert len(switches) == 4
    for i, d in enumerate(switches):
        assert d.label_lines[-1] == f"NVSwitch{i}", d.label_lines
        assert "#12" in d.label_lines[0], d.label_lines
    assert len({tuple(d.label_lines) for d in switches}) == 4


def _run_from_the_dock(w, qtbot, size: str):
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.sweep.setChecked(False)
    p.collective.setCurrentText("all-reduce")
    p.algorithm.setCurrentText("ring")
    p.size.clear()
    qtbot.keyClicks(p.size, size)
    with qtbot.waitSignal(p.resultReady, timeout=20000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    return blocker.args[1]


def test_a_latency_bound_run_names_no_bottleneck(make_window, qtbot):
    """An 8 KiB ring all-reduce on a DGX A100 moves bytes 1% of its 15 us; its busiest NVLink, 0.8% busy,
    was listed under 'Bottleneck links'. A 256 MiB run still names its bottleneck."""
    w = make_window("dgx-a100")
    small = _run_from_the_dock(w, qtbot, "8KiB")
    assert small.sim.bottlenecks(1)[0]["utilization"] < 0.05
    label = w.results.bottlenecks_label.text()
    assert "latency-bound" in label and not label.startswith("Bottleneck")
    assert "latency-bound" in w.results.summary.text().lower()
    assert "per-call and per-hop latency dominate" in w.results.summary.text()
    assert w.results.bottlenecks.count() > 0   # still listed (and clickable), as the busiest links
    big = _run_from_the_dock(w, qtbot, "256MiB")
    assert big.sim.bottlenecks(1)[0]["utilization"] > 0.9
    assert w.results.bottlenecks_label.text().startswith("Bottleneck links")
    assert "latency-bound" not in w.results.summary.text()


def _start_tree_run(w, qtbot):
    """NCCL's tree over the 124-system DGX-1 fat tree at 256 MiB: seconds of work, with progress."""
    p = w.sim_panel
    w.sim_dock.show()
    w.sim_dock.raise_()
    p.tabs.setCurrentIndex(0)
    p.algorithm.setCurrentText("tree")
    p.size.setText("256MiB")
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    return p


def test_a_refused_run_empties_the_progress_bar_and_says_why(make_window, qtbot, monkeypatch):
    """A tree over 512 DGX H100 was stopped by the engine's budget with the bar left at 33%, as if it
    still ran. The budget is lowered here so the same refusal comes after 1 s on the DGX-1 fat tree."""
    from dgxstudio.sim import limits

    monkeypatch.setattr(limits, "MAX_FLOW_EVENTS", 5_000_000)
    w = make_window("dgx1-fat-tree-124")
    p = _start_tree_run(w, qtbot)
    seen = []
    p.runner.progress.connect(lambda pr: seen.append(pr.fraction))
    qtbot.waitUntil(lambda: p.state.text().startswith("Error"), timeout=30000)
    assert seen and max(seen) > 0.05   # the bar had moved before the refusal
    assert p.progress.value() < p.progress.minimum() or p.progress.value() == 0
    assert p.progress.text() in ("", "0%")
    assert "the engine's budget" in p.state.text()
    assert w.status.text().startswith("Simulation failed at ") and "the engine's budget" in w.status.text()


def test_a_cancelled_run_empties_the_progress_bar_and_says_why(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    p = _start_tree_run(w, qtbot)
    qtbot.waitUntil(lambda: p.progress.value() > 0, timeout=20000)
    qtbot.keyClick(w, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)   # Ctrl+. as the tooltip says
    qtbot.waitUntil(lambda: p.state.text() == "Cancelled", timeout=20000)
    assert p.progress.text() in ("", "0%")
    assert "cancelled" in w.status.text() and "no result" in w.status.text()


def _overview(make_window, qtbot):
    w = make_window(topology=build_fat_tree(512, "dgx-h100", rail_optimized=True))
    assert w.scene.lod is not None
    w.view.fit()
    qtbot.wait(20)
    w.view.setFocus()
    return w


def test_select_all_at_the_overviews_fit_says_what_it_could_not_select(make_window, qtbot):
    """Ctrl+A at fit on 512 DGX H100 selected nothing and said nothing."""
    w = _overview(make_window, qtbot)
    qtbot.keyClick(w.view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert w.scene.selected_ids() == []
    assert w.status.text().startswith("Selected nothing; 37 closed blocks (512 systems, 320 switches) cannot be selected")
    assert "double-click one to open it" in w.status.text()
    # a block opened by a double-click: Select all takes what it draws, and says the rest stays out
    block = next(b for b in w.scene.lod.block_items.values() if b.block.tier == 0)
    w.view.centerOn(block)
    QTest.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                      pos=w.view.mapFromScene(block.scene_rect.center()))
    qtbot.waitUntil(lambda: block.block.id in w.scene.lod.open_blocks, timeout=5000)
    qtbot.wait(300)   # what is in view opens over a few turns of the event loop
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    ids = w.scene.selected_ids()
    systems = [i for i in ids if i in w.document.topology.groups]
    assert systems and set(systems) <= set(block.block.members)
    devices = [i for i in ids if i in w.document.topology.devices]
    said = ", ".join([f"{len(devices)} devices"] * bool(devices) + [f"{len(systems)} systems"])
    assert w.status.text().startswith(f"Selected {said} drawn in open blocks; "), w.status.text()
    assert "closed blocks (" in w.status.text()


def test_auto_layout_in_the_overview_refuses_with_a_reason(make_window, qtbot):
    """Ctrl+L in the overview took 1.5 s and changed nothing drawn; it now says why it does nothing."""
    w = _overview(make_window, qtbot)
    before = dict(w.document.topology.layout.positions)
    qtbot.keyClick(w.view, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert "Auto-layout changes nothing in a cluster's overview" in w.status.text()
    assert w.document.undo_stack.count() == 0 and w.document.topology.layout.positions == before
