"""A cluster smaller than one leaf (or scalable unit) gets the down:up ratio asked for."""

import pytest

from dgxstudio.model.builders import build_system, plan_fat_tree


def _plan(systems, **kw):
    return plan_fat_tree(build_system("dgx-h100"), "system", systems, None, None, system="dgx-h100", **kw)


@pytest.mark.parametrize("ratio", [1, 2, 4])
def test_a_partly_filled_unit_keeps_the_asked_oversubscription(ratio):
    """32 DGX H100 rail-optimized at 2:1 had 21 uplinks a leaf for its 32 cabled ports (sized for a
    unit of 42 systems): 1.5:1, not the 2:1 asked."""
    plan = _plan(32, rail_optimized=True, oversubscription=ratio)
    assert plan.per_leaf == 32
    assert plan.uplinks_per_leaf * ratio == 32


def test_a_small_cluster_does_not_cable_uplinks_for_systems_it_does_not_have():
    """4 DGX H100 rail-optimized: 32 uplinks a leaf for 4 systems (288 NDR cables, 4 spines)."""
    plan = _plan(4, rail_optimized=True)
    assert plan.per_leaf == 4 and plan.uplinks_per_leaf == 4


def test_a_full_unit_is_unchanged():
    plan = _plan(64, rail_optimized=True)
    assert plan.per_leaf == 32 and plan.uplinks_per_leaf == 32


def test_description_counts_agree_in_number():
    """'8 leaves, 1 spines' and '1 leaves, 16 spines' on a report's title page."""
    from dgxstudio.model.builders import build_fat_tree

    assert "8 leaves, 1 spine, 4 systems per scalable unit" in build_fat_tree(4, "dgx-h100", rail_optimized=True).description
    assert ": 1 leaf, 16 spines, 2 systems per leaf" in build_fat_tree(2, "dgx-a100", tiers=2).description


def test_one_leaf_gets_no_spines_unless_asked():
    """2 DGX H100 fit one 64-port NDR leaf: the default built 16 spines, each cabled to that leaf
    only, which carried nothing and added 16 switches, 16 cables and 12 kW to the summary."""
    from dgxstudio.model.builders import build_fat_tree
    from dgxstudio.model.catalog import default_catalog
    from dgxstudio.model.fabrics import plan_fat_tree
    from dgxstudio.model.systems import build_system

    topo = build_fat_tree(2, "dgx-h100")
    switches = [d for d in topo.devices.values() if d.kind == "ib_switch"]
    assert [d.id for d in switches] == ["leaf1"]
    assert "no spine tier" in topo.description
    plan = plan_fat_tree(build_system("dgx-h100", default_catalog()), "system", 2, None, None, system="dgx-h100")
    assert (plan.levels, plan.switch_count, plan.cable_count) == (1, {"leaf": 1}, {"node-leaf": 16})
    # asked for, the spine tier is built as before
    assert sum(d.kind == "ib_switch" for d in build_fat_tree(2, "dgx-h100", tiers=2).devices.values()) == 17
    assert sum(d.kind == "ib_switch" for d in build_fat_tree(2, "dgx-h100", spines=2).devices.values()) == 3
    # rail-optimized, the rails' leaves still meet at spines
    assert sum(d.kind == "ib_switch" for d in build_fat_tree(2, "dgx-h100", rail_optimized=True).devices.values()) > 8
