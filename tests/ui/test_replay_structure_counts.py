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
