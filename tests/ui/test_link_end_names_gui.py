"""The Results dock's bottleneck list and the busiest links' plot name a link's ends as the canvas names
the devices, with the system in a design of several: the plot's legend gave ids ("leaf1→s1.ib0") and the
list gave "Leaf 1 → ETH0" for a NIC of a system dropped from the palette, in either system."""

from tests.test_link_end_names import roce_pair
from tests.ui.test_review_s29b import _run_from_the_dock


def test_results_and_plot_legend_name_the_ends_with_their_system(make_window, qtbot):
    w = make_window(topology=roce_pair(short_names=True))
    result = _run_from_the_dock(w, qtbot, "256MiB")
    topo = w.document.topology
    b = result.sim.bottlenecks(1)[0]
    assert (b["from"], b["to"]) == ("leaf1", "s1.ib0") and topo.devices["s1.ib0"].name == "ETH0"
    items = [w.results.bottlenecks.item(i).text() for i in range(w.results.bottlenecks.count())]
    assert items[0].startswith("Leaf 1 → DGX H100 #1 ETH0: "), items[0]
    assert all("DGX H100 #" in t for t in items)
    qtbot.waitUntil(lambda: bool(w.live_plots.util_curves), timeout=10000)
    legend = [label.whole for sample, label in w.live_plots.util_plot.legend.items if label.isVisible()]
    assert legend and legend[0] == "f0 Leaf 1→DGX H100 #1 ETH0", legend
    assert not any("s1." in text or "leaf1" in text for text in legend)
