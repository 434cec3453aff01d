"""A new user's review of main at 3805ef3: what the window said twice or not at all."""

from dgxstudio.model.builders import build_fat_tree

from .test_simulation_gui import run_training_tab


def test_training_summary_explains_the_headline_without_repeating_it(make_window, qtbot):
    # the lecture's A100 pair: "Critical resource at rated figures: infiniband (achievable and simulated:
    # nvlink) - ... (1.88x offered, 1.75x required) (the lecture's verdict, at rated figures; at the catalog's
    # achievable figures NVLink limits: 1.25x offered)", then the Verdicts lines said the same ratios again
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training_tab(w, qtbot, 1, 8, 2, microbatches=4)
    text = w.results.summary.text()
    headline = next(x for x in text.split("<br>") if "Critical resource" in x)
    assert headline.endswith("</b> - the pipeline boundary's infiniband limits; NVLink has 1.07x the headroom the"
                             " tensor traffic needs"), headline
    assert text.count("1.88x") == 1 and "rated: infiniband limits (NVLink offers 1.88x the network" in text


def run_collective(w, qtbot, collective, algorithm, size=None, sweep=None):
    """Run a collective (or a size sweep) from the Simulation dock's first tab and wait for it."""
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.collective.setCurrentText(collective)
    p.algorithm.setCurrentText(algorithm)
    p.sweep.setChecked(sweep is not None)
    if sweep is not None:
        p.sweep_range.setText(sweep)
    if size is not None:
        p.size.setText(size)
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        p.run()


def test_a_ring_sweep_plot_does_not_call_the_any_algorithm_bound_the_rings(make_window, qtbot):
    # a ring sweep on a DGX H100 drew "DGX H100: all-reduce ring bound 575.4 GB/s" while the CLI says
    # "575.40 GB/s (any algorithm; NCCL's rings alone allow 369.90 GB/s)": the rings never reach that line
    import pyqtgraph as pg

    w = make_window("dgx-h100")
    run_collective(w, qtbot, "all-reduce", "ring", sweep="1KiB:64KiB")
    lines = [i for i in w.sweep_plot.plot.items if isinstance(i, pg.InfiniteLine)]
    texts = [line.label.textItem.toPlainText() for line in lines]
    assert texts == ["DGX H100: all-reduce bound 575.4 GB/s (any algorithm)"], texts
    assert "DGX H100: all-reduce ring" in w.sweep_plot.curves   # the curve keeps its algorithm
    # and the summary says the bound with what the rings alone allow (it read "N% of bound", without the figure)
    assert "% of the bound 575.40 GB/s (any algorithm; NCCL's rings alone allow 369.90 GB/s)" in w.results.summary.text()


def test_results_dock_says_what_the_rings_alone_allow_as_the_cli_does(make_window, qtbot):
    # a ring all-reduce on a DGX H100 read "354.28 GB/s = 61.6% of the topology's 575.4 GB/s" in the Results
    # dock, as if the ring ran at 60%; the CLI adds "(any algorithm; NCCL's rings alone allow 369.90 GB/s)"
    w = make_window("dgx-h100")
    run_collective(w, qtbot, "all-reduce", "ring", "64MiB")
    text = w.results.summary.text()
    assert "of the topology's 575.40 GB/s (any algorithm; NCCL's rings alone allow 369.90 GB/s), at achievable" in text
    run_collective(w, qtbot, "all-to-all", "direct", "1MiB")   # no ring bound to compare with
    assert "rings alone" not in w.results.summary.text()


def test_a_run_refused_for_the_designs_errors_points_at_the_findings_tab(make_window, qtbot):
    # "Error: the topology has errors; fix them first: GPU3 (gpu3): unknown part 'h100-bogus'" did not say
    # where the errors are listed (the CLI's refusal names `dgxstudio validate`)
    from dgxstudio.model.presets import load_preset

    topo = load_preset("dgx-h100")
    topo.devices["gpu3"].part = "h100-bogus"
    w = make_window(topology=topo)
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.run()
    qtbot.waitUntil(lambda: p.state.text().startswith("Not run:"), timeout=30000)   # refused before the engine began
    assert p.state.text() == ("Not run: the topology has errors; fix them first (the Findings tab lists them): "
                              "GPU3 (gpu3): unknown part 'h100-bogus'")


def test_sweeps_again_and_of_other_algorithms_draw_one_bound_line(make_window, qtbot):
    """The review: a sweep run again replaced its curve but left its bound line, and each algorithm's
    sweep on one topology drew the same 'any algorithm' bound again: dashed lines piled up."""
    import pyqtgraph as pg

    w = make_window("dgx-h100")
    for algorithm in ("ring", "ring", "tree"):
        run_collective(w, qtbot, "all-reduce", algorithm, sweep="1KiB:64KiB")
    lines = [i for i in w.sweep_plot.plot.items if isinstance(i, pg.InfiniteLine)]
    texts = [line.label.textItem.toPlainText() for line in lines]
    assert texts == ["DGX H100: all-reduce bound 575.4 GB/s (any algorithm)"], texts
    assert sorted(w.sweep_plot.curves) == ["DGX H100: all-reduce ring", "DGX H100: all-reduce tree"]
