import math
import os
import time

import numpy as np
import pytest
from shiboken6 import isValid
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import SimOptions, simulate


def finished(thread, qtbot=None) -> bool:
    """A thread deletes itself once it has finished (the runner never joins on the GUI thread), so a
    deleted thread has finished; give a cancelled one a moment to wind down."""
    def done():
        return not isValid(thread) or thread.isFinished()
    if qtbot is not None:
        qtbot.waitUntil(done, timeout=3000)
    return done()


def configure(w, collective="all-reduce", algorithm="ring", size="256MiB", tab=0, chunk="4MiB", sweep=False,
              sweep_range="1KiB:4GiB"):
    p = w.sim_panel
    p.tabs.setCurrentIndex(tab)
    p.sweep.setChecked(sweep)
    p.sweep_range.setText(sweep_range)
    p.collective.setCurrentText(collective)
    p.algorithm.setCurrentText(algorithm)
    p.size.setText(size)
    p.chunk.setText(chunk)
    return p


# NCCL's double binary tree over the 124 systems at 256 MiB: no steady state to skip, so it runs for
# many seconds on any machine and a faster engine does not make these tests vacuous (the ring sweep
# to 4 GiB this used to be now ends in about a second once earlier tests have cached its routes).
LONG = {"algorithm": "tree", "size": "256MiB"}


def test_ring_allreduce_from_the_dock_matches_the_cli(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = configure(w)
    progress = []
    p.runner.progress.connect(progress.append)
    with qtbot.waitSignal(p.resultReady, timeout=20000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    request, result = blocker.args
    expected = simulate(load_preset("dgx1-v100"), "all-reduce", "multi-ring", 256 * 2**20,
                        options=SimOptions(chunk=4 * 2**20, achievable=True))
    assert result.time_s == pytest.approx(expected.time_s, rel=1e-12)
    assert result.busbw_Bps == pytest.approx(expected.busbw_Bps, rel=1e-12)
    assert progress and progress[-1].fraction == 1.0
    assert w.live_plots.delivered_curve.getData()[0] is not None and len(w.live_plots.util_curves) == 5
    assert f"{expected.busbw_Bps / 1e9:.2f}" in w.results.summary.text() and w.results.table.rowCount() == 1
    assert not p.runner.running


def test_long_run_keeps_the_window_responsive_and_cancels(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    p = configure(w, **LONG)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(20)
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    thread = p.runner._thread
    assert thread is not None and thread.isRunning()
    qtbot.wait(1500)
    assert p.runner.running, "the run ended too soon to test cancelling"
    assert len(ticks) >= 15, f"the GUI thread ran its timer only {len(ticks)} times in 1.5 s"
    with qtbot.waitSignal(p.runner.cancelled, timeout=2000):
        qtbot.mouseClick(p.cancel_button, Qt.MouseButton.LeftButton)
    timer.stop()
    assert not p.runner.running and p.state.text() == "Cancelled"
    assert finished(thread, qtbot)


def test_new_run_cancels_the_previous_and_close_mid_run_is_clean(make_window, qtbot):
    w = make_window("dgx1-fat-tree-124")
    p = configure(w, **LONG)
    p.run()
    first = p.runner._thread
    qtbot.wait(300)
    configure(w, size="1MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        p.run()
    assert finished(first, qtbot)
    configure(w, **LONG)  # a long run again, and the window closed while it goes
    p.run()
    qtbot.wait(300)
    running = p.runner._thread
    w.document.undo_stack.setClean()
    assert w.close()
    assert finished(running) and not p.runner.running


def test_worker_errors_arrive_as_messages(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = configure(w, collective="all-gather", algorithm="tree")
    with qtbot.waitSignal(p.runner.failed, timeout=5000) as blocker:
        p.run()
    assert "not an algorithm for all-gather" in blocker.args[0]
    assert p.state.text().startswith("Not run: ") and "all-gather" in w.status.text()   # refused before the engine began
    assert "dgxstudio." not in blocker.args[0] and "SimulationError" not in blocker.args[0]


def test_a_refused_run_shows_its_reason_not_a_class_path(make_window, qtbot):
    """A request the engine refuses (too large) reads as the refusal, not 'dgxstudio.sim.results.
    SimulationError: ...' (found by the review)."""
    w = make_window("dgx-a100")
    p = configure(w, algorithm="single-ring", size="2TiB")
    with qtbot.waitSignal(p.runner.failed, timeout=10000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert "dgxstudio." not in blocker.args[0] and "Error:" not in blocker.args[0]
    assert p.state.text().startswith("Not run: ") and "dgxstudio." not in p.state.text()


def test_animation_steps_and_scrubs(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = configure(w, size="64MiB")
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    r = w.replayer
    assert r.sim is not None and r.t == 0.0
    times = [r.t]
    for _ in range(5):
        r.step(+1)
        times.append(r.t)
    assert times == sorted(times) and times[-1] > 0
    r.step(-1)
    assert r.t == times[-2]
    w.scrubber.setValue(500)
    assert r.t == pytest.approx(r.duration / 2, rel=1e-9)
    assert any(item.state_color is not None for item in w.scene.device_items.values())
    assert any(item.drawn_pen().color() != item.base_pen.color() for item in w.scene.link_items)
    dots = [d for d in r._dots if d.isVisible()]
    assert dots
    before = [d.pos() for d in dots]
    r.set_time(r.t + r.duration / 1000)
    assert [d.pos() for d in r._dots if d.isVisible()] != before
    r.play()
    qtbot.wait(200)
    assert r.t > r.duration / 2
    r.pause()


def run_pipeline_tab(w, qtbot, schedule, stages=4, microbatches=8, times=None):
    """Run a pipeline from the Simulation panel's pipeline tab (``times``: forward, backward, free boundaries)."""
    p = w.sim_panel
    p.tabs.setCurrentIndex(1)
    p.schedule.setCurrentText(schedule)
    p.stages.setValue(stages)
    p.microbatches.setValue(microbatches)
    if times:
        p.from_model.setChecked(False)
        p.fwd.setText(times[0])
        p.bwd.setText(times[1])
        p.activation.setText("0")
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    return p


def run_training_tab(w, qtbot, dp, tp, pp, microbatches=8, schedule="1f1b"):
    """Run a training iteration from the Simulation panel's training tab."""
    p = w.sim_panel
    p.tabs.setCurrentIndex(2)
    p.dp.setValue(dp)
    p.tp.setValue(tp)
    p.pp.setValue(pp)
    p.train_micro.setValue(microbatches)
    p.train_schedule.setCurrentText(schedule)
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        p.run()
    return p


def test_gantt_has_a_row_per_stage_and_a_box_per_task(make_window, qtbot):
    w = make_window("dgx1-v100")
    run_pipeline_tab(w, qtbot, "1f1b")
    assert w.gantt.rows == ["gpu0", "gpu1", "gpu2", "gpu3"]
    assert w.gantt.box_count() == 4 * 8 * 2
    assert "bubble" in w.gantt.plot.titleLabel.text
    # the colour key: narrow boxes lose their "F3" labels, their colours still say what they are
    title = w.gantt.plot.titleLabel.text
    for kind, words in (("F", "forward"), ("B", "backward")):
        assert f'color:{w.gantt.COLORS[kind].name()}">&#9632;</span>&nbsp;{kind} {words}' in title
    assert "weight gradient" not in title
    labels = [i.text() for i in w.rings_overlay.items if hasattr(i, "text")]
    assert labels == ["stage 0", "stage 1", "stage 2", "stage 3"]
    w.replayer.set_time(w.replayer.duration / 2)
    assert any(item.state_color is not None for item in w.scene.device_items.values())


def test_stages_on_a_collapsed_system_share_one_badge(make_window, qtbot):
    # the 16 stages of two DGX A100 drawn collapsed: one badge per system box, not eight on top of each other
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.ui.animation import stages_text

    topo = build_fat_tree(2, "dgx-a100")
    assert topo.layout.collapsed == {"s1.system", "s2.system"}   # a generated cluster opens with its systems closed
    w = make_window(topology=topo)
    run_pipeline_tab(w, qtbot, "1f1b", stages=16, microbatches=16)
    labels = sorted(i.text() for i in w.rings_overlay.items if hasattr(i, "text"))
    assert labels == ["stages 0-7", "stages 8-15"]
    assert stages_text([3]) == "stage 3" and stages_text([0, 2, 5]) == "stages 0, 2, 5"


def test_sweep_plot_and_exports(make_window, qtbot, tmp_path):
    w = make_window("dgx1-v100")
    p = configure(w)
    p.sweep.setChecked(True)
    p.sweep_range.setText("1KiB:16MiB")
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    assert len(w.sweep_plot.curves) == 1
    xs, ys = list(w.sweep_plot.curves.values())[0].getData()
    assert len(xs) == 15 and ys[-1] > ys[0]
    for ext in ("png", "svg"):
        out = w.export_current_plot(str(tmp_path / f"sweep.{ext}"))
        assert os.path.getsize(out) > 1000
    from PySide6.QtGui import QImage
    img = QImage(str(tmp_path / "sweep.png"))  # a picture, not a blank of the right size
    assert len({img.pixel(x, y) for x in range(0, img.width(), 9) for y in range(0, img.height(), 9)}) > 2
    assert (tmp_path / "sweep.svg").read_text().rstrip().endswith("</svg>")
    assert sorted(os.listdir(tmp_path)) == ["sweep.png", "sweep.svg"]


def test_screenshots_mid_animation_and_plots(make_window, qtbot, tmp_path_factory):
    folder = os.environ.get("DGXSTUDIO_SCREENSHOTS") or str(tmp_path_factory.mktemp("sim-screens"))
    os.makedirs(folder, exist_ok=True)
    w = make_window("dgx1-v100")
    p = configure(w, size="256MiB")
    p.show_rings.setChecked(True)
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    w.replayer.set_time(w.replayer.duration * 0.4)
    w.plots_dock.raise_()
    QApplication.processEvents()
    assert w.grab().save(os.path.join(folder, "animation-dgx1-v100.png"))
    w.plot_tabs.setCurrentWidget(w.live_plots)
    assert w.export_current_plot(os.path.join(folder, "plot-live.png"))
    p.tabs.setCurrentIndex(1)
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    w.replayer.set_time(w.replayer.duration * 0.5)
    QApplication.processEvents()
    assert w.export_current_plot(os.path.join(folder, "plot-gantt.png"))
    assert w.grab().save(os.path.join(folder, "pipeline-dgx1-v100.png"))


def test_file_menu_exports_imports_and_report(make_window, qtbot, tmp_path):
    w = make_window("dgx-a100")
    p = configure(w, size="16MiB")
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    assert w.export_topology("nccl-xml", str(tmp_path / "a.xml"))
    assert w.export_topology("graphml", str(tmp_path / "a.graphml"))
    for name in ("canvas.png", "canvas.svg"):
        assert w.export_canvas(str(tmp_path / name)) and (tmp_path / name).stat().st_size > 1000
    from PySide6.QtGui import QImage
    img = QImage(str(tmp_path / "canvas.png"))  # a picture, not a blank of the right size
    assert len({img.pixel(x, y) for x in range(0, img.width(), 9) for y in range(0, img.height(), 9)}) > 2
    assert (tmp_path / "canvas.svg").read_text().rstrip().endswith("</svg>")
    assert w.export_report(str(tmp_path / "session.html"))
    html = (tmp_path / "session.html").read_text()
    assert "Simulation 1" in html and "600.00 GB/s" in html
    assert w.export_report(str(tmp_path / "session.pdf")) and (tmp_path / "session.pdf").read_bytes().startswith(b"%PDF")
    assert w.import_nccl(str(tmp_path / "a.xml"))
    assert len(w.document.topology.gpus()) == 8 and w.isWindowModified()


def test_clicking_a_gantt_box_selects_its_gpu(make_window, qtbot):
    from PySide6.QtCore import QPointF
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(1)
    p.stages.setValue(4)
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    w.plots_dock.show()
    w.plots_dock.raise_()
    w.plot_tabs.setCurrentWidget(w.gantt)
    QApplication.processEvents()
    box = next(e for e in w.gantt.timeline if e["device"] == "gpu2" and e["kind"] == "B")
    scene_pt = w.gantt.plot.vb.mapViewToScene(QPointF((box["start_s"] + box["end_s"]) / 2, 2))
    view_pt = w.gantt.widget.mapFromScene(scene_pt)
    with qtbot.waitSignal(w.gantt.taskClicked, timeout=2000) as blocker:
        qtbot.mouseClick(w.gantt.widget.viewport(), Qt.MouseButton.LeftButton, pos=view_pt)
    assert blocker.args[0]["device"] == "gpu2"
    assert "gpu2" in w.scene.selected_ids()


def test_pipeline_tab_takes_per_stage_times_or_the_model(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(1)
    p.stages.setValue(2)
    p.microbatches.setValue(4)
    p.fwd.setText("1ms,3ms")
    p.bwd.setText("2ms")
    p.activation.setText("0")
    with qtbot.waitSignal(p.resultReady, timeout=20000) as blocker:
        p.run()
    result = blocker.args[1]
    assert result.spec.fwd_s == [1e-3, 3e-3] and result.spec.bwd_s == [2e-3, 2e-3]
    p.fwd.setText("1ms,2ms,3ms")
    p.run()
    assert "one per stage" in p.state.text()
    p.from_model.setChecked(True)
    with qtbot.waitSignal(p.resultReady, timeout=20000) as blocker:
        p.run()
    spec = blocker.args[1].spec
    assert spec.bwd_s[0] == pytest.approx(2 * spec.fwd_s[0]) and spec.activation_bytes == 1 * 2048 * 2048 * 2


def test_gantt_draws_the_zero_bubble_split_and_zb_v_chunks(make_window, qtbot):
    """ZB-V from the panel: F, B and W of both model chunks each get their own bars, the second chunk
    lighter, and the title gives the paper's per-stage bubble beside the makespan's."""
    w = make_window("dgx1-v100")
    run_pipeline_tab(w, qtbot, "zb-v", times=("1ms", "2ms"))
    assert w.gantt.box_count() == 4 * 2 * 8 * 3
    assert set(w.gantt.bars) == {"F", "F1", "B", "B1", "W", "W1"}
    assert QColor(w.gantt.bars["F1"].opts["brush"]) != QColor(w.gantt.bars["F"].opts["brush"])
    assert "per stage" in w.gantt.plot.titleLabel.text
    assert "B input gradient" in w.gantt.plot.titleLabel.text and "W weight gradient" in w.gantt.plot.titleLabel.text
    assert "the zero-bubble paper's measure" in w.results.summary.text()
    if os.environ.get("DGX_SCREENSHOTS"):
        w.plots_dock.raise_()
        w.plot_tabs.setCurrentWidget(w.gantt)
        qtbot.wait(100)
        w.grab().save(os.path.join(os.environ["DGX_SCREENSHOTS"], "zb-v-window.png"))


def test_training_summary_gives_the_verdict_on_each_basis(make_window, qtbot):
    from dgxstudio.model.builders import build_fat_tree

    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training_tab(w, qtbot, 1, 8, 2, microbatches=2)
    text = w.results.summary.text()
    assert "rated: infiniband limits" in text and "achievable: nvlink limits" in text and "why: NCCL reaches" in text


def test_busiest_links_plot_shows_each_links_busy_time(qtbot):
    """Each curve of "Busiest links" averages, over the run, to the utilization the results list for
    that link (a rate pattern lists its channels component by component, out of order: the plot once
    looked them up by binary search and drew 0 for links 90% busy), and drops to 0 between
    segments, where nothing moves."""
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.sim.run import Simulator
    from dgxstudio.ui.plots import LivePlots

    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    result = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run(
        "all-reduce", "ring", 256 * 2**20)
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.show_result(result.sim)
    busiest = result.sim.bottlenecks(5)
    assert len(plots.util_curves) == len(busiest) == 5
    for curve, link in zip(plots.util_curves, busiest):
        xs, ys = curve.getData()
        busy = float(np.sum((xs[1::2] - xs[::2]) * ys[::2]))
        assert busy / result.sim.time_s == pytest.approx(link["utilization"], rel=1e-9)
        assert ys.max() == pytest.approx(1.0) and ys.min() == 0.0


@pytest.mark.parametrize("width_px", [200, 600, 1400])
def test_sweep_axis_ticks_at_powers_of_two_with_their_unit(qtbot, width_px):
    """The sweep's size axis: ticks at powers of two labelled "1 KiB", "32 KiB", "1 MiB" (not decades
    of bytes like "9.77 KiB"), as many as fit, and no "x1e+09" scale beside "message size"."""
    from dgxstudio.ui.plots import SweepPlot

    plot = SweepPlot()
    qtbot.addWidget(plot)
    plot.add_curve("ring", [2.0**k for k in range(10, 31)], [1e9 * k for k in range(10, 31)], bound=3e10)
    axis = plot.plot.getAxis("bottom")
    lo, hi = math.log10(2**10), math.log10(2**30)
    levels = axis.tickValues(lo, hi, width_px)
    majors = levels[0][1]
    labels = axis.tickStrings(majors, 1.0, levels[0][0])
    assert 2 <= len(labels) <= max(3, width_px // 80)
    assert all(abs(v / math.log10(2) - round(v / math.log10(2))) < 1e-9 for v in majors)
    assert all(lab.split()[1] in ("B", "KiB", "MiB", "GiB") and "e" not in lab.split()[0] for lab in labels)
    assert ("1 KiB" in labels or "1 MiB" in labels) and "1 GiB" in labels
    assert "x1e" not in axis.labelString()
