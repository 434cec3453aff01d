"""Shortcuts that speed ``analyze`` on large regular clusters (issues 16, 12, 17) give what the
general computation gives, on small, irregular and hand-edited cases as well as regular ones.

- The bisection's capacity graph read from the analysis' Fabric equals the one built link by link
  (same pairs, same order, same capacities bit for bit), and is not read from a Fabric that cannot
  stand for it (one that dropped a pair of zero bandwidth, or of another kind).
"""

import pytest

from dgxstudio.analysis.bisection import _fabric_edges, _graph_edges, bisection_bandwidth
from dgxstudio.analysis.fabric import Fabric
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset, preset_names
from dgxstudio.model.topology import Link


def _edited_tree():
    """A fat tree whose links run both ways round, with a bandwidth override, parallel links added
    in a different order, and counts above one."""
    topo = build_fat_tree(6, "dgx-a100", oversubscription=2)
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    ib[3].a, ib[3].b = ib[3].b, ib[3].a
    ib[4].bandwidth_per_direction_Bps = 3.3e9
    topo.links["extra-parallel"] = Link("extra-parallel", ib[4].b, ib[4].a, ib[4].type, count=3)
    topo._links_by_device = None
    return topo


@pytest.mark.parametrize("make", [lambda: build_fat_tree(6, "dgx-h100", rail_optimized=True),
                                  lambda: build_fat_tree(40, "dgx-h100", rail_optimized=True, per_leaf=8),
                                  _edited_tree]
                         + [(lambda n=n: load_preset(n)) for n in preset_names()])
def test_capacity_graph_from_the_fabric_equals_link_by_link(make):
    topo = make()
    edges = _fabric_edges(topo, Fabric(topo))
    assert edges == _graph_edges(topo)  # same pairs, order and float capacities, bit for bit


def test_capacity_graph_is_not_read_from_a_fabric_that_cannot_stand_for_it():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    assert _fabric_edges(topo, Fabric(topo, achievable=True)) is None
    assert _fabric_edges(topo, Fabric(topo, {"nvlink"})) is None
    assert _fabric_edges(topo, Fabric(build_fat_tree(4, "dgx-h100", rail_optimized=True))) is None
    ib = next(lk for lk in topo.links.values() if lk.type.startswith("IB"))
    ib.bandwidth_per_direction_Bps = 0.0  # the Fabric drops the pair; the capacity graph keeps it
    fab = Fabric(topo)
    assert fab.dropped == 1 and _fabric_edges(topo, fab) is None
    gpus = [d.id for d in topo.gpus()]
    assert bisection_bandwidth(topo, gpus, fabric=fab) == bisection_bandwidth(topo, gpus)


@pytest.mark.parametrize("make", [lambda: build_fat_tree(24, "dgx-h100", rail_optimized=True, oversubscription=2),
                                  _edited_tree])
def test_bisection_with_the_analysis_fabric_equals_its_own(make):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    assert bisection_bandwidth(topo, gpus, fabric=Fabric(topo)) == bisection_bandwidth(topo, gpus)
