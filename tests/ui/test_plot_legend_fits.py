"""The busiest links' legend stays inside its plot (issue 17, the review's left-over): it stands in
the plot's top right corner and grows to the left, and in three columns of long names it stuck out
past the plot's left edge, which cut off the first words of the names. It takes as many columns as
the plot's width holds, and elides names only when one column is too narrow."""

import pytest

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import simulate
from dgxstudio.ui.plots import LivePlots


@pytest.fixture(scope="module")
def sim():
    return simulate(load_preset("dgx-h100"), "all-reduce", "ring", 64 * 2**20).sim


def _legend_inside(plots) -> tuple[bool, list[str]]:
    vb = plots.util_plot.getViewBox()
    legend = plots.util_plot.legend
    box = vb.mapRectToScene(vb.boundingRect())
    shown = [label for _s, label in legend.items if label.isVisible()]
    inside = all(box.contains(label.mapRectToScene(label.boundingRect()).adjusted(1, 1, -1, -1)) for label in shown)
    return inside, [label.text for label in shown]


@pytest.mark.parametrize("width", [1400, 900, 600])
def test_the_legend_stays_inside_its_plot(qtbot, sim, width):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(width, 260)
    plots.show()
    qtbot.waitExposed(plots)
    plots.show_result(sim)
    qtbot.wait(30)
    inside, texts = _legend_inside(plots)
    assert len(texts) == 5 and inside, (width, plots.util_plot.legend.columnCount, texts)
    whole = [label.whole for _s, label in plots.util_plot.legend.items if label.isVisible()]
    if width >= 900:
        assert texts == whole   # room for every name whole, in fewer columns
    plots.resize(1400, 260)   # wider again: the names come back whole
    qtbot.wait(30)
    assert _legend_inside(plots) == (True, whole)
