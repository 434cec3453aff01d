"""The Results dock's bottleneck list says both figures when a protocol scaled the link's."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.results import SimOptions
from dgxstudio.sim.run import simulate
from dgxstudio.ui.results_panel import ResultsPanel
from dgxstudio.ui.sim_panel import RunRequest

MiB = 2**20


def test_bottleneck_list_shows_usable_of_the_links_figure(qtbot):
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    r = simulate(topo, "all-reduce", "ring", 64 * MiB, options=SimOptions(protocol="ll128", achievable=True))
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show_collective(RunRequest("collective", "ring"), r, "h100")
    b = r.sim.bottlenecks(1)[0]
    text = panel.bottlenecks.item(0).text()
    assert (f"{b['capacity_per_direction_Bps'] / 1e9:.1f} of the link's "
            f"{b['link_capacity_per_direction_Bps'] / 1e9:.1f} GB/s per direction usable by ring with LL128") in text
