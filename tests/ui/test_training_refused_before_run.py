"""The training tab's refusal of an expert-parallel size: `--ep` was checked only after every tensor
group's all-reduces had run, so the tab read "Error: ..." and the Results dock "Simulation failed at
N%" for input the core refuses; it reads "Not run: ..." as a refused form does, and nothing is simulated."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from dgxstudio.model.builders import build_fat_tree
from dgxstudio.sim import training


@pytest.mark.parametrize("experts, ep, said", [
    (0, 2, "expert parallelism needs a mixture-of-experts model (Experts)"),
    (6, 4, "6 experts do not split evenly over 4 expert-parallel ranks"),
])
def test_training_tab_refuses_ep_before_anything_runs(make_window, qtbot, experts, ep, said):
    w = make_window(topology=build_fat_tree(4, "dgx-h100"))
    p = w.sim_panel
    engines = []
    real_engine = training.Engine

    def counting(*args, **kwargs):
        engines.append(args)
        return real_engine(*args, **kwargs)
    training.Engine, restore = counting, real_engine
    try:
        p.tabs.setCurrentIndex(2)
        p.dp.setValue(4)
        p.tp.setValue(4)
        p.pp.setValue(2)
        p.experts.setValue(experts)
        p.ep.setValue(ep)
        shown = []
        p.resultReady.connect(lambda *a: shown.append(a))
        with qtbot.waitSignal(p.runner.failed, timeout=60000):
            qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
        QApplication.processEvents()
    finally:
        training.Engine = restore
    assert p.state.text() == f"Not run: {said}"
    assert w.status.text() == f"Not run: {said}"
    assert "failed" not in w.results.unanswered.text().lower()
    assert not shown and not engines and p.run_button.text() == "Run"
