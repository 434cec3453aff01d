"""Deletes keep only what they remove, and undo puts it back exactly: the saved text, the order of every
table and the document's look-up indices (links by device, group by device) are as before."""

import random

import pytest

from dgxstudio.model import dumps, removal
from dgxstudio.model.commands import AddItems, Macro, RemoveItems
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.model.topology import Device, Group, Link


def indices(topo):
    """The look-up indices as the document holds them, and as they would be built afresh."""
    kept = {d: [lk.id for lk in topo.links_of(d)] for d in topo.devices}
    groups = {d: (topo.group_of(d).id if topo.group_of(d) else None) for d in topo.devices}
    topo._invalidate()
    fresh = {d: [lk.id for lk in topo.links_of(d)] for d in topo.devices}
    fresh_groups = {d: (topo.group_of(d).id if topo.group_of(d) else None) for d in topo.devices}
    return kept, groups, fresh, fresh_groups


def assert_indices_fresh(topo):
    kept, groups, fresh, fresh_groups = indices(topo)
    assert kept == fresh
    assert groups == fresh_groups


def roundtrip(topo, command):
    topo.links_of("")   # the indices built, as the canvas builds them
    topo.group_of(next(iter(topo.devices)))
    before = dumps(topo)
    command.do(topo)
    after = dumps(topo)
    assert after != before
    assert_indices_fresh(topo)
    command.undo(topo)
    assert dumps(topo) == before
    assert_indices_fresh(topo)
    command.do(topo)
    assert dumps(topo) == after
    assert_indices_fresh(topo)
    command.undo(topo)
    assert dumps(topo) == before


@pytest.fixture(params=["kept tables", "re-inserted"])
def tables(request, monkeypatch):
    """Undo both ways: from the copies of the tables kept for the last removals, and by re-inserting
    entries at their places (older removals, whose copies were dropped)."""
    if request.param == "re-inserted":
        monkeypatch.setattr(removal, "KEEP_TABLES", 0)
    return request.param


@pytest.mark.parametrize("seed", range(12))
def test_random_deletes_in_a_cluster_undo_exactly(seed, tables):
    topo = build_fat_tree(16, "dgx-h100", rail_optimized=True)
    rng = random.Random(seed)
    ids = (rng.sample(list(topo.devices), rng.randint(1, 40)) + rng.sample(list(topo.links), rng.randint(0, 30))
           + rng.sample(list(topo.groups), rng.randint(0, 3)))
    rng.shuffle(ids)
    roundtrip(topo, RemoveItems(ids))


def test_a_whole_system_with_its_group_undoes_exactly(tables):
    topo = build_fat_tree(16, "dgx-h100", rail_optimized=True)
    system = next(g for g in topo.groups.values() if g.kind == "system")
    roundtrip(topo, RemoveItems([system.id, *topo.devices_in_group(system.id)]))


def test_nested_groups_and_their_positions_undo_exactly(tables):
    topo = load_preset("gb200-nvl72")
    trays = [g.id for g in topo.groups.values() if g.parent is not None][:3]
    parent = topo.groups[trays[0]].parent
    roundtrip(topo, RemoveItems([parent, *trays]))   # the rack first: its trays move up, then go


def test_added_items_undo_exactly_with_existing_groups_moved():
    topo = load_preset("dgx1-v100")
    gid = next(iter(topo.groups))
    cmd = AddItems([Device("n1", "gpu", "tesla-v100-sxm2", "N1")], [Link("nl1", "n1", "gpu0", "NVLink2")],
                   [Group("g-new", "New", "system", gid, [], {})],
                   positions={"n1": (1.0, 2.0), "g-new": (3.0, 4.0), gid: (9.0, 9.0)}, memberships={"n1": "g-new"},
                   collapsed={"g-new", gid})
    roundtrip(topo, cmd)


def test_a_failed_add_leaves_nothing_behind():
    topo = load_preset("dgx1-v100")
    before = dumps(topo)
    cmd = AddItems([Device("n1", "gpu", "tesla-v100-sxm2", "N1")], [Link("nl1", "n1", "no-such", "NVLink2")])
    with pytest.raises(ValueError):
        cmd.do(topo)
    assert dumps(topo) == before


def test_delete_then_add_in_one_step_undoes_exactly(tables):
    topo = load_preset("dgx-a100")
    gpu = next(d.id for d in topo.devices.values() if d.kind == "gpu")
    roundtrip(topo, Macro([RemoveItems([gpu]), AddItems([Device(gpu, "gpu", topo.devices[gpu].part, "again")])], "two"))


def test_removal_names_what_it_removed():
    topo = load_preset("dgx-a100")
    gpu = next(d.id for d in topo.devices.values() if d.kind == "gpu")
    links = [lk.id for lk in topo.links_of(gpu)]
    seen = []
    topo.events.connect(seen.append)
    RemoveItems([gpu]).do(topo)
    (batch,) = seen
    named = {(e.kind, e.ids[0]) for e in batch.detail["events"]}
    assert named == {("device_removed", gpu), *(("link_removed", lid) for lid in links)}


def test_only_the_last_removals_keep_copies_of_the_tables():
    topo = load_preset("dgx-a100")
    commands = [RemoveItems([lid]) for lid in list(topo.links)[:removal.KEEP_TABLES + 3]]
    before = dumps(topo)
    for c in commands:
        c.do(topo)
    kept = [c._removed.tables is not None for c in commands]
    assert kept == [False] * 3 + [True] * removal.KEEP_TABLES
    for c in reversed(commands):
        c.undo(topo)
    assert dumps(topo) == before
