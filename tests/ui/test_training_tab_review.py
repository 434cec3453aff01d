"""The Training and Pipeline tabs as a Megatron user drives them: the schedule the CLI takes, a replay
bar that does not say "running…" once the iteration is shown, and refusals that name their field."""

import pytest
from PySide6.QtCore import Qt

from dgxstudio.model.builders import build_fat_tree
from dgxstudio.sim.training import ModelSpec, train_iteration
from dgxstudio.units import format_time

from .test_simulation_gui import run_training_tab


def run_training(w, qtbot, schedule):
    run_training_tab(w, qtbot, 1, 8, 2, microbatches=4, schedule=schedule)
    return w.results.table.item(w.results.table.rowCount() - 1, 0).text()


def test_training_tab_runs_the_schedule_chosen_as_the_cli_does(make_window, qtbot):
    topo = build_fat_tree(2, "dgx-a100")
    w = make_window(topology=topo)
    label = run_training(w, qtbot, "zb-h1")
    assert "zb-h1" in label
    gpus = [g.id for g in topo.gpus()]
    cli = train_iteration(topo, gpus, 1, 8, 2, ModelSpec(), 4, "zb-h1")
    one_f = train_iteration(topo, gpus, 1, 8, 2, ModelSpec(), 4, "1f1b")
    assert cli.iteration_s < one_f.iteration_s
    shown = w.results.table.item(w.results.table.rowCount() - 1, 3).text()
    assert shown == format_time(cli.iteration_s) != format_time(one_f.iteration_s)


def test_replay_bar_does_not_stay_running_after_a_training_run(make_window, qtbot):
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training(w, qtbot, "1f1b")
    assert "running" not in w.time_label.text()
    assert "no replay" in w.time_label.text()


@pytest.mark.parametrize("field, text, said", [
    ("bwd", "-4ms", "Backward: cannot read time '-4ms'"),
    ("fwd", "2ms,3ms", "Forward: give one time or 4"),
    ("activation", "lots", "Boundary bytes: cannot read 'lots'"),
])
def test_a_refused_pipeline_field_is_named(make_window, qtbot, field, text, said):
    """Before: "Error: cannot read time '-4ms'" - the forward or the backward field?"""
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(1)
    p.from_model.setChecked(False)
    getattr(p, field).setText(text)
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert said in p.state.text()
    assert w.results.table.rowCount() == 0 and not p.cancel_button.isEnabled()


def test_a_refused_collective_size_is_named(make_window, qtbot):
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.size.setText("big")
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert "Size: cannot read 'big'" in p.state.text()


def test_training_summary_shows_how_busy_each_link_class_was_as_the_cli_does(make_window, qtbot):
    """The verdict names InfiniBand for the lecture's A100 pair; the CLI shows it 0.4% busy beside
    NVLink's 25%, the GUI showed no busy figure at all."""
    topo = build_fat_tree(2, "dgx-a100")
    w = make_window(topology=topo)
    run_training(w, qtbot, "1f1b")
    text = w.results.summary.text()
    r = train_iteration(topo, [g.id for g in topo.gpus()], 1, 8, 2, ModelSpec(), 4, "1f1b")
    busy = ", ".join(f"{k} {100 * v:.1f}%" for k, v in r.details["busy_fraction"].items())
    assert f"Busy fraction per link class:</b> {busy}" in text and busy.startswith("nvlink")


def test_a_training_summary_scrolls_instead_of_growing_the_window(make_window, qtbot):
    """The lecture's A100 pair's ten-line summary made the window's minimum height 897 px (883 before
    the busy line): taller than a 1280x800 screen, the window grew past it."""
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    w.resize(1280, 768)   # (at 1300x850 the Results dock now has room for all of it: nothing to scroll)
    qtbot.wait(50)
    before = w.height()
    run_training(w, qtbot, "1f1b")
    qtbot.wait(50)
    assert w.minimumSizeHint().height() <= 800 and w.height() == before
    text = w.results.summary.text()
    assert text.index("Critical resource at rated figures:") < text.index("Busy fraction") < text.index("compute:")   # the headline first
    area = w.results.summary_area
    assert area.height() < w.results.summary.heightForWidth(area.viewport().width())   # the rest scrolls


def test_a_collective_summary_stays_whole(make_window, qtbot):
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        p.run()
    qtbot.wait(50)
    area = w.results.summary_area
    assert area.height() >= w.results.summary.heightForWidth(area.viewport().width())
    assert w.results.bottlenecks.isVisible() and w.results.bottlenecks.count() > 0


def test_training_summary_says_what_the_backward_hid_of_the_gradient_all_reduce(make_window, qtbot):
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training_tab(w, qtbot, 16, 1, 1, microbatches=2)
    assert "data-parallel: 2.25 GiB of gradients per GPU in 93 buckets of 25 MiB" in w.results.summary.text()


def test_training_summary_splits_the_pipeline_category(make_window, qtbot):
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training(w, qtbot, "zb-h1")
    assert "pipeline: " in w.results.summary.text() and "the rest is the zb-h1 schedule's bubble" in w.results.summary.text()


def test_training_run_moves_the_progress_bar(make_window, qtbot):
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    seen = []
    w.sim_panel.progress.valueChanged.connect(seen.append)
    run_training_tab(w, qtbot, 2, 4, 2, microbatches=2)
    assert any(0 < v < 1000 for v in seen), seen


def test_the_user_guide_explains_every_tab_of_the_simulation_dock(make_window):
    """The guide's tour stopped at collectives: nothing said where ZB-H1's Gantt or the lecture's
    verdict are."""
    w = make_window("dgx1-v100")
    guide = w.user_guide()
    text = w.guide_browser.toPlainText()
    tabs = w.sim_panel.tabs
    for i in range(tabs.count()):
        assert tabs.tabText(i) in text
    assert "ZB-H1" in text and "weight gradient" in text and "NVLink-to-network verdict" in text
    guide.close()


def test_on_a_large_screen_the_results_dock_grows_to_the_whole_summary(make_window, qtbot):
    """With the summary scrolling, a 1600x1000 window showed four of its fourteen lines until the
    dock was dragged taller; the dock now grows to the summary, up to half the window."""
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    w.resize(1600, 1000)
    qtbot.wait(50)
    run_training(w, qtbot, "1f1b")
    qtbot.wait(50)
    area = w.results.summary_area
    assert w.results_dock.height() <= w.height() // 2 + 2
    assert area.height() >= w.results.summary.heightForWidth(area.viewport().width())


def test_training_tab_runs_a_mixture_of_experts_with_expert_parallelism(make_window, qtbot):
    """`train --experts 8 --ep 4` had no counterpart in the GUI."""
    topo = build_fat_tree(2, "dgx-a100")
    w = make_window(topology=topo)
    p = w.sim_panel
    p.experts.setValue(8)
    p.ep.setValue(4)
    run_training_tab(w, qtbot, 4, 2, 2, microbatches=2)
    label = w.results.table.item(w.results.table.rowCount() - 1, 0).text()
    cli = train_iteration(topo, [g.id for g in topo.gpus()], 4, 2, 2, ModelSpec(experts=8), 2, "1f1b", ep=4)
    assert "ep=4, 8 experts" in label and cli.breakdown_s["expert_parallel"] > 0
    assert w.results.table.item(w.results.table.rowCount() - 1, 3).text() == format_time(cli.iteration_s)
    p.ep.setValue(3)
    with qtbot.waitSignal(p.runner.failed, timeout=20000):
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert "ep 3 must divide the data-parallel size 4" in p.state.text()


def test_training_tab_runs_interleaved_with_its_chunks_as_the_cli_does(make_window, qtbot):
    topo = build_fat_tree(2, "dgx-a100")
    w = make_window(topology=topo)
    p = w.sim_panel
    p.tabs.setCurrentIndex(2)
    assert not p.train_chunks.isEnabled()   # chunks belong to the interleaved schedule only
    p.train_schedule.setCurrentText("interleaved")
    assert p.train_chunks.isEnabled()
    p.train_chunks.setValue(3)
    label = run_training(w, qtbot, "interleaved")
    assert "interleaved x3 chunks" in label
    gpus = [g.id for g in topo.gpus()]
    cli = train_iteration(topo, gpus, 1, 8, 2, ModelSpec(), 4, "interleaved", chunks=3)
    assert w.results.table.item(w.results.table.rowCount() - 1, 3).text() == format_time(cli.iteration_s)


def test_training_summary_says_when_the_model_does_not_fit_in_gpu_memory(make_window, qtbot):
    """GPT-3 XL's 1.2 B parameters need 19 GB of model states on one GPU: more than a DGX-1 V100's
    16 GB; tensor parallelism over 8 GPUs fits. The summary said nothing about memory at all."""
    w = make_window("dgx1-v100")
    run_training_tab(w, qtbot, 8, 1, 1)
    text = w.results.summary.text()
    assert 'color:#c0392b">Memory:</b>' in text and "DOES NOT FIT: each GPU needs at least" in text
    assert "16 GB" in text and "more GPUs (Tensor (tp), Pipeline (pp))" in text and "--tp" not in text
    run_training_tab(w, qtbot, 1, 8, 1)
    text = w.results.summary.text()
    assert "<b>Memory:</b> each GPU needs at least" in text and "DOES NOT FIT" not in text


def test_training_breakdown_reads_in_words_not_json_keys(make_window, qtbot):
    """The Results dock listed 'tensor_parallel: 0.0 ns (bottleneck: none)' (the review): categories
    now read as words, an absent one as 'none' without a bottleneck."""
    w = make_window("dgx1-v100")
    run_training_tab(w, qtbot, 1, 8, 1)
    text = w.results.summary.text()
    assert "tensor parallel: " in text and "(bottleneck: nvlink)" in text
    assert "pipeline bubble and transfers: none<br>" in text and "data parallel (exposed): none" in text
    assert "_" not in text.split("Memory")[0] + text.split("compute:")[1] and "0.0 ns" not in text
