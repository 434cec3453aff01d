"""The Collective tab's NCCL settings: `simulate --no-nvls`, `--pxn` and `--gpus-per-thread N` had no
place in the GUI, whose runs were made with NVLink SHARP on, PXN off and a process per GPU, whatever
the architect's cluster runs with (the 20-rack GB200 run had NCCL_NVLS_ENABLE=0 in its job script)."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.model.builders import build_fat_tree
from dgxstudio.sim.run import SimOptions, simulate

LEFT = Qt.MouseButton.LeftButton
NVLS = ("nvls", "nvls-tree")


def _panel(w, qtbot, collective, algorithm, size):
    """The Collective tab set up as a user does it: the dock raised, picks from the combos, a size typed."""
    w.sim_dock.raise_()
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    QApplication.processEvents()
    p.collective.setCurrentIndex(p.collective.findText(collective))
    p.algorithm.setCurrentIndex(p.algorithm.findText(algorithm))
    p.size.clear()
    qtbot.keyClicks(p.size, size)
    return p


def _run(p, qtbot):
    """Click Run and wait for the result: (request, result)."""
    with qtbot.waitSignal(p.resultReady, timeout=120000) as blocker:
        qtbot.mouseClick(p.run_button, LEFT)
    return blocker.args


def _click(qtbot, box):
    before = box.isChecked()
    qtbot.mouseClick(box, LEFT, pos=box.rect().center())
    assert box.isChecked() != before, box.text()


def test_auto_takes_nvls_with_nvlink_sharp_on_and_not_off_and_the_run_says_so(make_window, qtbot):
    w = make_window("dgx-h100")
    p = _panel(w, qtbot, "all-reduce", "auto", "1GiB")
    request, on = _run(p, qtbot)
    assert on.algorithm in NVLS and on.options.nvls_enable
    assert "NVLS off" not in request.label
    _click(qtbot, p.nccl.nvls)   # untick NVLink SHARP: NCCL_NVLS_ENABLE=0
    request, off = _run(p, qtbot)
    assert off.algorithm not in NVLS and not off.options.nvls_enable
    assert request.label == "all-reduce auto 1 GiB on 8 GPUs, achievable figures, NVLS off"
    assert "NCCL_NVLS_ENABLE=0" in off.reason   # auto says what it left out, as the CLI's "auto:" line
    rows = [w.results.table.item(r, 0).text() for r in range(w.results.table.rowCount())]
    from dgxstudio.sim.tuning import PROTOCOL_LABELS as LABEL

    assert rows == [f"all-reduce auto 1 GiB on 8 GPUs, achievable figures → {on.algorithm}/Simple",
                    f"all-reduce auto 1 GiB on 8 GPUs, achievable figures, NVLS off → {off.algorithm}/{LABEL[off.protocol]}"]
    # the same run as `simulate --preset dgx-h100 --size 1GiB --no-nvls`
    expected = simulate(w.document.topology, "all-reduce", "auto", 2**30,
                        options=SimOptions(achievable=True, nvls_enable=False))
    assert off.algorithm == expected.algorithm and off.time_s == pytest.approx(expected.time_s, rel=1e-12)


def test_a_sweep_takes_the_settings_too(make_window, qtbot):
    w = make_window("dgx-h100")
    p = _panel(w, qtbot, "all-reduce", "auto", "1GiB")
    _click(qtbot, p.sweep)
    p.sweep_range.setText("256MiB:1GiB")
    _click(qtbot, p.nccl.nvls)
    request, rows = _run(p, qtbot)
    assert request.label == "all-reduce auto sweep 256 MiB..1 GiB, achievable figures, NVLS off"
    assert len(rows) == 3 and all(r.algorithm not in NVLS and not r.options.nvls_enable for r in rows)


def test_nvls_asked_for_with_nvlink_sharp_off_is_refused_and_changes_nothing(make_window, qtbot):
    w = make_window("dgx-h100")
    p = _panel(w, qtbot, "all-reduce", "nvls", "64MiB")
    _run(p, qtbot)
    summary, rows = w.results.summary.text(), w.results.table.rowCount()
    _click(qtbot, p.nccl.nvls)
    shown = []
    p.resultReady.connect(lambda *a: shown.append(a))
    with qtbot.waitSignal(p.runner.failed, timeout=60000):
        qtbot.mouseClick(p.run_button, LEFT)
    QApplication.processEvents()
    why = "nvls is disabled (NCCL_NVLS_ENABLE=0: NCCL sets up no NVLink SHARP)"   # the simulator's words
    # refused before the engine began: nothing ran, nothing failed (as a refused form)
    assert p.state.text() == f"Not run: {why}"
    assert w.status.text() == f"Not run: {why}"
    assert not shown and w.results.table.rowCount() == rows and w.results.summary.text() == summary
    assert p.run_button.text() == "Run" and not p.runner.running


def test_pxn_goes_into_the_run_over_two_systems(make_window, qtbot):
    """Two DGX H100 on rails: with PXN an all-to-all's traffic to another rail crosses NVLink to the GPU
    beside the destination's NIC instead of the spine, and the run is that of `simulate --pxn`."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    w = make_window(topology=topo)
    p = _panel(w, qtbot, "all-to-all", "auto", "64MiB")
    request, plain = _run(p, qtbot)
    assert not plain.options.pxn and "PXN" not in request.label
    _click(qtbot, p.nccl.pxn)
    request, pxn = _run(p, qtbot)
    assert pxn.options.pxn and request.label.endswith("achievable figures, PXN on")
    expected = simulate(topo, "all-to-all", "auto", 64 * 2**20, options=SimOptions(achievable=True, pxn=True))
    assert pxn.time_s == pytest.approx(expected.time_s, rel=1e-12)
    # PXN changed the routes: NVLinks carry the traffic for other rails (the time moved only by the routes'
    # latency, 0.7 us, until the all-to-all took NCCL's per-hop latency instead: both are NIC-bound)
    assert not np.array_equal(pxn.sim.channel_bytes, plain.sim.channel_bytes)


def test_gpus_per_thread_goes_into_the_run(make_window, qtbot):
    """nccl-tests -g 8: one thread launches the 8 GPUs' kernels in turn, so a small call takes longer."""
    w = make_window("dgx-h100")
    p = _panel(w, qtbot, "all-reduce", "ring", "1KiB")
    _, alone = _run(p, qtbot)
    spin = p.nccl.gpus_per_thread
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "8")
    assert spin.value() == 8
    request, serial = _run(p, qtbot)
    assert serial.options.gpus_per_thread == 8 and request.label.endswith("achievable figures, -g 8")
    expected = simulate(w.document.topology, "all-reduce", "ring", 1024,
                        options=SimOptions(achievable=True, gpus_per_thread=8))
    assert serial.time_s == pytest.approx(expected.time_s, rel=1e-12) and serial.time_s > alone.time_s


def test_an_all_to_all_shows_nccls_p2p_protocol_and_channels(make_window, qtbot):
    """An all-to-all runs as NCCL's grouped send/receive: the Results dock names its protocol and channels
    as it does for the ring and the tree (it showed neither: the run had none)."""
    w = make_window("dgx-h100")
    p = _panel(w, qtbot, "all-to-all", "auto", "1KiB")
    _request, small = _run(p, qtbot)
    assert (small.protocol, small.channels) == ("ll", 7)
    assert "(LL, 7 channels)" in w.results.summary.text()
    p = _panel(w, qtbot, "all-to-all", "auto", "64MiB")
    _request, big = _run(p, qtbot)
    assert "(Simple, 28 channels)" in w.results.summary.text()
    assert w.results.table.item(w.results.table.rowCount() - 1, 0).text().endswith("→ direct/Simple")
