"""The s36 new-user review: a request that gives no result brings the Results dock forward (its red
line sat behind the Findings tab, where a first start leaves the dock), and the protocol box's tooltip
says the LL128 rule in the words `simulate --protocol`'s help uses."""

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

LEFT = Qt.MouseButton.LeftButton
SHOTS = os.environ.get("DGXSTUDIO_SHOTS")


def _behind_findings(w) -> None:
    """The Results dock behind the Findings tab, as a first start tabs them (main_window._tab_groups)."""
    w.tabifyDockWidget(w.findings_dock, w.results_dock)
    w.findings_dock.raise_()
    QApplication.processEvents()
    assert w.results_dock.visibleRegion().isEmpty()


def _first_start(qtbot, preset: str):
    """The window as a first start shows it on a 1280x768 screen (the test screen would clamp
    MainWindow's own 1400x900), once its default dock layout is made."""
    from dgxstudio.model.presets import load_preset
    from dgxstudio.ui.main_window import MainWindow

    w = MainWindow(load_preset(preset), None, preset)
    qtbot.addWidget(w)
    w.resize(1280, 768)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(100)   # the default dock layout is made once the window is shown
    return w


def test_a_refused_run_brings_the_results_dock_forward(make_window, qtbot):
    w = make_window("dgx1-p100")
    _behind_findings(w)
    p = w.sim_panel
    p.algorithm.setCurrentText("ring")
    p.protocol.setCurrentText("ll128")   # P100 is sm60: refused before the engine
    p.size.setText("1MiB")
    with qtbot.waitSignal(p.runner.failed, timeout=60000):
        qtbot.mouseClick(p.run_button, LEFT)
    QApplication.processEvents()
    assert not w.results_dock.visibleRegion().isEmpty()
    assert w.results.unanswered.isVisible() and "Not run: NCCL does not enable LL128" in w.results.unanswered.text()
    if SHOTS:
        w.grab().save(os.path.join(SHOTS, "s36_refused_results_forward.png"))


def test_a_refused_form_brings_the_results_dock_forward(make_window, qtbot):
    w = make_window("dgx1-v100")
    _behind_findings(w)
    p = w.sim_panel
    p.size.setText("-4MiB")
    qtbot.mouseClick(p.run_button, LEFT)
    QApplication.processEvents()
    assert not w.results_dock.visibleRegion().isEmpty()
    assert w.results.unanswered.isVisible() and "Not run: Size:" in w.results.unanswered.text()


def test_the_protocol_box_and_the_cli_say_the_ll128_rule_in_one_text(make_window, capsys):
    """The rule was written twice, the GUI's tooltip leaving out nvls-tree and the path limits the
    CLI's help named: both now read `tuning.protocol_words`, which reads `ll128_rule`."""
    import pytest

    from dgxstudio.cli import main

    tip = make_window("dgx1-v100").sim_panel.protocol.toolTip()
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split()).replace("- ", "-")   # (argparse wraps at hyphens)
    helped = out.rsplit("--protocol {auto,ll,ll128,simple}", 1)[1].split(" --spread", 1)[0].strip()
    assert helped == " ".join(tip.split())
    # what the rule's data says, in the text: sm70, PATH_PXB below sm90, PATH_PXN from it
    for words in ("sm70", "PATH_PXB (through PCIe switches only", "from sm90 PATH_PXN", "nvls-tree"):
        assert words in tip, (words, tip)


def test_an_engine_refusal_before_its_first_report_reads_failed_at_the_engines_start(make_window, qtbot,
                                                                                     monkeypatch):
    """`_stopped_at` took a bar below 50% for a run still setting up; an engine stopping before its
    first report (it reports after 50 ms) read "Not run". The engine now says when it begins."""
    from dgxstudio.sim import engine as engine_module
    from dgxstudio.sim.limits import TooLarge

    def too_large(self, *args, **kwargs):
        raise TooLarge("stopped past the engine's work budget (on purpose)")
    monkeypatch.setattr(engine_module.Engine, "template", too_large)   # (after the engine began)
    monkeypatch.setattr(engine_module.chain_stages, "run", lambda *a: None)
    w = make_window("dgx-a100")
    p = w.sim_panel
    p.algorithm.setCurrentText("ring")
    p.size.setText("64MiB")
    with qtbot.waitSignal(p.runner.failed, timeout=60000):
        qtbot.mouseClick(p.run_button, LEFT)
    QApplication.processEvents()
    said = "Simulation failed at 50%, no result: stopped past the engine's work budget (on purpose)"
    assert w.status.text() == said and said in w.results.unanswered.text()


def test_every_missing_xcb_library_is_named(monkeypatch):
    """Only libxcb-cursor0 was looked for: a Debian 12 with it but without libxcb-icccm4 and
    libxcb-keysyms1 ran README's first command into Qt's abort ("xcb-cursor0 ... is needed")."""
    import ctypes.util

    from dgxstudio.ui.app import missing_display_libraries

    absent = {"xcb-icccm", "xcb-keysyms"}
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name in absent else f"lib{name}.so")
    assert missing_display_libraries({"DISPLAY": ":0"}) == ["libxcb-icccm4", "libxcb-keysyms1"]
    assert missing_display_libraries({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}) == []


def test_a_refused_run_does_not_make_the_window_taller_than_a_1280x768_screen(qtbot):
    """The red line sat above the summary's scroll area, outside its cap of four lines: after a
    latency-bound run on the DGX-1 P100 and a refused LL128, the window grew from 768 to 811 px (taller
    than a 1280x800 laptop's screen, the status bar below its edge)."""
    w = _first_start(qtbot, "dgx1-p100")
    p = w.sim_panel
    p.algorithm.setCurrentText("ring")
    p.size.setText("1MiB")
    for protocol, signal in (("simple", p.resultReady), ("ll128", p.runner.failed)):
        p.protocol.setCurrentText(protocol)
        with qtbot.waitSignal(signal, timeout=60000):
            qtbot.mouseClick(p.run_button, LEFT)
        qtbot.wait(50)
    r = w.results
    assert r.unanswered.isVisible() and "Not run: NCCL does not enable LL128" in r.unanswered.text()
    assert w.height() <= 768, w.height()
    # the red line first, the last run's summary below it (scrolled to when the dock is short)
    assert r.unanswered.mapTo(r, r.unanswered.rect().topLeft()).y() < r.summary.mapTo(r, r.summary.rect().topLeft()).y()
    if SHOTS:
        w.grab().save(os.path.join(SHOTS, "s36_refused_1280x768.png"))
    w.document.undo_stack.setClean()
    w.close()


def test_nccl_xml_of_a_cluster_says_to_select_a_system_on_the_canvas(make_window, tmp_path, monkeypatch):
    """The window exports the system selected on the canvas; with none selected it said "choose one
    of s1.system, s2.system" (ids the canvas does not show, and no word of how to choose)."""
    from dgxstudio.model.fabrics import build_fat_tree

    w = make_window(topology=build_fat_tree(2, "dgx-h100", rail_optimized=True))
    said = []
    monkeypatch.setattr(w, "error", lambda title, text: said.append(text))
    assert not w.export_topology("nccl-xml", str(tmp_path / "one.xml"))
    assert said == ["nccl-xml: NCCL XML describes one system; choose one of DGX H100 #1 (s1.system), "
                    "DGX H100 #2 (s2.system): select it on the canvas (click its frame), then export again"]
    w.select_and_center(["s2.system"])
    assert w.export_topology("nccl-xml", str(tmp_path / "one.xml")) and (tmp_path / "one.xml").exists()


def test_opening_a_truncated_file_says_so_and_keeps_the_document(make_window, tmp_path, monkeypatch):
    from dgxstudio.model import fileio

    w = make_window("dgx1-v100")
    whole = tmp_path / "whole.dgxs"
    fileio.save(w.document.topology, whole)
    cut = tmp_path / "cut.dgxs"
    cut.write_text(whole.read_text()[:1500])
    before = fileio.dumps(w.document.topology)
    said = []
    monkeypatch.setattr(w, "error", lambda title, text: said.append((title, text)))
    assert not w.open_path(str(cut))
    assert said and said[0][0] == "Cannot open file" and str(cut) in said[0][1]
    assert "before its JSON does (cut short?)" in said[0][1] and "at at" not in said[0][1]
    assert w.status.text().startswith(f"Not opened: {cut}")
    assert fileio.dumps(w.document.topology) == before and w.document.path is None


def test_a_run_on_two_hand_drawn_gpus_shows_its_result_whole(make_window, qtbot):
    """Two H100s dropped from the palette and joined by one NVLink: the run's live plot has two links
    in its legend, and fitting it in three columns raised ValueError (max() of an empty column) in the
    middle of showing the result: no replay, no structure, the Results dock not brought forward."""
    from PySide6.QtCore import QPoint

    from .conftest import drag
    from .test_editor import drop_from_palette, view_pos

    w = make_window(None)
    drop_from_palette(w, "part:h100-sxm5-80gb", QPoint(200, 200))
    first = next(iter(w.document.topology.devices))
    drop_from_palette(w, "part:h100-sxm5-80gb", view_pos(w, first) + QPoint(300, 0))
    a, b = [g.id for g in w.document.topology.gpus()]
    drag(w.view, view_pos(w, a, handle=True), view_pos(w, b))
    assert len(w.document.topology.links) == 1
    _behind_findings(w)
    p = w.sim_panel
    p.algorithm.setCurrentText("ring")
    p.size.setText("64MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        qtbot.mouseClick(p.run_button, LEFT)
    QApplication.processEvents()
    assert w.results.table.rowCount() == 1 and not w.results_dock.visibleRegion().isEmpty()
    assert w.replayer.sim is not None
    assert len(w.live_plots.util_curves) == 2 and w.live_plots.util_plot.legend.columnCount <= 2


def test_a_training_grid_larger_than_the_gpu_set_says_so_without_a_selection(make_window, qtbot):
    """With "All GPUs" (nothing selected on the canvas) a dp x tp x pp over the design's GPU count read
    "only 8 GPUs are selected"."""
    w = make_window("dgx-h100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(2)
    p.dp.setValue(2)
    p.tp.setValue(8)
    p.pp.setValue(1)
    assert p.gpu_set.currentData() == "all"
    qtbot.mouseClick(p.run_button, LEFT)
    qtbot.waitUntil(lambda: not p.runner.running and p.state.text().startswith("Not run"), timeout=60000)
    assert p.state.text() == "Not run: dp x tp x pp = 16 GPUs, but the GPU set has only 8 GPUs"


def test_the_user_guides_pictures_fit_its_window(make_window, qtbot):
    """The guide's screenshots are 1280 px wide and the dialog 900: the right third of each (the
    legend, the Inspector) sat behind a horizontal scroll bar."""
    w = make_window("dgx1-v100")
    guide = w.user_guide()
    qtbot.waitExposed(guide)
    browser = w.guide_browser
    QApplication.processEvents()
    assert browser.horizontalScrollBar().maximum() == 0
    assert "short tour" in browser.toPlainText()
    if SHOTS:
        guide.grab().save(os.path.join(SHOTS, "s36_guide.png"))
    guide.resize(guide.width() - 200, guide.height())   # narrower still: the pictures follow
    QApplication.processEvents()
    assert browser.horizontalScrollBar().maximum() == 0
    guide.close()


def test_the_first_start_shows_the_whole_design(qtbot):
    """README's first command: the view was fitted before the first start's dock layout (tabs, sizes)
    took height from the canvas, so the DGX-1's bottom row (its Ethernet NIC) stood below the view's
    edge behind a scroll bar at 1280x768."""
    w = _first_start(qtbot, "dgx1-v100")
    shown = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert shown.contains(w.scene.itemsBoundingRect()), (shown, w.scene.itemsBoundingRect())
    w.document.undo_stack.setClean()
    w.close()
