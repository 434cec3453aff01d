"""The replay legend counts the transfers a run stands for, not the symmetry classes it simulated."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.ui.replay_structure import structures


def test_an_all_to_all_by_symmetry_class_counts_every_transfer(qapp):
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    gpus = [d.id for d in topo.gpus()]
    result = Simulator(topo, gpus, SimOptions()).run("all-to-all", "direct", 2**20)
    classes = result.schedule.meta.get("classes")
    assert classes is not None and len(classes.pairs) < 32 * 31  # simulated by class
    (fan,) = [s for s in structures(result.sim, result.rings, classes.flows) if s.kind == "fan"]
    assert fan.transfers == 32 * 31 and not fan.more
    (drawn,) = [s for s in structures(result.sim, result.rings) if s.kind == "fan"]
    assert drawn.transfers == len(drawn.edges) == len(classes.pairs)  # without the count: what is drawn


def test_a_parameter_server_by_symmetry_class_counts_its_workers_in_the_legend(make_window, qtbot):
    """A parameter server simulated by class has two fans (push, pull): each counts the workers it
    stands for (31 on 4 DGX H100), not its representatives (15 each)."""
    from PySide6.QtCore import Qt

    from .test_simulation_gui import configure

    w = make_window(topology=build_fat_tree(4, "dgx-h100", rail_optimized=True))
    p = configure(w, algorithm="parameter-server", size="16MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    result = blocker.args[1]
    classes = result.schedule.meta.get("classes")
    assert classes is not None and len(classes.pairs) < 62  # simulated by class
    qtbot.waitUntil(lambda: any(e.startswith("push:") for e in w.legend.entries), timeout=5000)
    assert "push: 31 transfers" in w.legend.entries and "pull: 31 transfers" in w.legend.entries
