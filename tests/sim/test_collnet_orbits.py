"""CollNet's classes from maps between its rails (sim/tree_orbits.py with sim/place_maps.py): every
rail's tree joins every GPU and its own rail's leaves, so the maps are guessed place by place; they
give the refinement's classes and the flow-by-flow answer, and a rail wired otherwise is not mapped."""

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.place_maps import PlaceMaps

from .test_collnet_fold import _collnet
from .test_tree_orbits import assert_guessed_then_refused, assert_maps_give_the_refinements_fold

MiB = 2**20


@pytest.mark.parametrize("label, build, size", [
    ("4 DGX H100, two systems a leaf", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2),
     8 * MiB),
    ("12 DGX H100 over spines", lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4), 8 * MiB),
    ("5 DGX H100, uneven leaves oversubscribed 2:1",
     lambda: build_fat_tree(5, "dgx-h100", rail_optimized=True, oversubscription=2, per_leaf=2), 6 * MiB),
])
def test_collnets_rail_maps_give_the_refinements_classes_and_answer(monkeypatch, label, build, size):
    sim, sched, scale = _collnet(build(), size)
    assert len(sched.meta["trees"]) == 8  # every rail
    assert_maps_give_the_refinements_fold(monkeypatch, sim, sched, scale, label)


def test_a_collnet_rail_with_a_slower_cable_is_not_mapped_onto_the_others(monkeypatch):
    """System 2's rail-3 cable at half speed: the rails' maps are guessed place by place, but the
    check refuses them (no map keeps every channel's capacity); the run is the flow-by-flow run's."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    cable = next(link for link in topo.links.values() if "s2.ib3" in (link.a, link.b) and "leaf" in link.a + link.b)
    cable.bandwidth_per_direction_Bps = 25e9  # (NDR's 50 GB/s per direction halved)
    sim, sched, scale = _collnet(topo, 8 * MiB)
    assert_guessed_then_refused(monkeypatch, sim, sched, scale)


def test_place_maps_send_each_trees_own_devices_to_the_next_trees():
    # devices 0-2 in every tree (a chain shifted by one from tree to tree), device 3 + t tree t's own
    flat = np.array([[0, 1, 1, 2, 2, 3], [1, 2, 2, 0, 0, 4], [2, 0, 0, 1, 1, 5]])
    maps = PlaceMaps.of(flat)
    assert maps.generator(1).tolist() == [1, 2, 0, 4, 5, 3]
    assert maps.generator(2).tolist() == [2, 0, 1, 5, 3, 4]


@pytest.mark.parametrize("flat", [
    np.array([[0, 1, 1, 2], [3, 4, 4, 5]]),  # a tree sharing nothing with tree 0 (_DeviceMaps' case)
    np.array([[0, 1, 1, 2], [3, 4, 5, 3]]),  # not a renaming of tree 0 place for place
    np.array([[0, 1, 1, 2], [3, 3, 3, 4]]),  # two of tree 0's devices onto one
])
def test_trees_that_are_no_renaming_of_tree_0_have_no_place_maps(flat):
    maps = PlaceMaps.of(flat)
    assert maps is None or maps.generator(1) is None
