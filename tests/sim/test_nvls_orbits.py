"""The NVLS tree's classes from maps between trees (sim/tree_orbits.py), whose trees join different
GPUs (one per system, per rail): the maps extended rail by rail give the refinement's classes and the
flow-by-flow answer, and a rail wired otherwise is not mapped."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_orbits

from .test_nvls_fold import _nvls_tree
from .test_tree_orbits import assert_guessed_then_refused, assert_maps_give_the_refinements_fold

MiB = 2**20


@pytest.mark.parametrize("label, build, size", [
    ("2 DGX H100, rail-optimized", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 24 * MiB),
    ("4 DGX H100, two systems a leaf", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2),
     40 * MiB),
    ("12 DGX H100 over spines", lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4), 40 * MiB),
])
def test_an_nvls_trees_maps_give_the_refinements_classes_and_answer(monkeypatch, label, build, size):
    sim, sched, scale = _nvls_tree(build(), size)
    assert len(sched.meta["trees"]) == 16  # every rail's pair
    assert_maps_give_the_refinements_fold(monkeypatch, sim, sched, scale, label)


def test_an_nvls_rail_with_a_slower_cable_is_not_mapped_onto_the_others(monkeypatch):
    """System 2's rail-3 cable at half speed: rail 3's trees route as every other rail's, and the
    rails' maps are guessed, but the check refuses them (no map keeps every channel's capacity);
    the refinement keeps that rail apart and the run is the flow-by-flow run's."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    cable = next(link for link in topo.links.values() if {link.a, link.b} == {"s2.ib3", "leaf4"})
    cable.bandwidth_per_direction_Bps = 25e9
    sim, sched, scale = _nvls_tree(topo, 24 * MiB)
    assert_guessed_then_refused(monkeypatch, sim, sched, scale)


def test_device_maps_shift_domains_and_rename_places():
    # tree 0 over devices 0-2, tree 1 its mirror (0 <-> 2), trees 2 and 3 the same over devices 3-5
    flat = np.array([[0, 1, 1, 2], [2, 1, 1, 0], [3, 4, 4, 5], [5, 4, 4, 3]])
    maps = tree_orbits._DeviceMaps.of(flat)
    assert maps.tree_dom.tolist() == [0, 0, 1, 1]
    assert maps.generator(1).tolist() == [2, 1, 0, 5, 4, 3]  # the mirror in both domains
    assert maps.generator(2).tolist() == [3, 4, 5, 0, 1, 2]  # domain 0 to 1 and 1 to 0
    assert maps.generator(3).tolist() == [5, 4, 3, 2, 1, 0]


@pytest.mark.parametrize("flat", [
    np.array([[0, 1, 1, 2], [2, 3, 3, 4]]),  # trees that share one device and not the others
    np.array([[0, 1, 1, 2], [3, 4, 4, 3]]),  # a tree over fewer devices
    np.array([[0, 1, 1, 2], [3, 4, 5, 3]]),  # a domain's first tree not a renaming of tree 0
])
def test_trees_that_are_no_renaming_of_tree_0_have_no_device_maps(flat):
    assert tree_orbits._DeviceMaps.of(flat) is None
