"""Every command undone returns the document to exactly its previous saved form; redo returns it again."""

import pytest

from dgxstudio.model import Device, Link, dumps
from dgxstudio.model.clipboard import copy_selection, paste_command
from dgxstudio.model.commands import AddItems, ChangeLinkType, Macro, Move, RemoveItems, SetAttribute, SetCollapsed
from dgxstudio.model.layout import auto_layout
from dgxstudio.model.presets import load_preset


def roundtrip(topo, command):
    before = dumps(topo)
    command.do(topo)
    after = dumps(topo)
    assert after != before
    command.undo(topo)
    assert dumps(topo) == before
    command.do(topo)
    assert dumps(topo) == after


@pytest.mark.parametrize("make", [
    lambda t: AddItems([Device("new", "gpu", "tesla-v100-sxm2", "New")], positions={"new": (5, 5)},
                       memberships={"new": "system"}),
    lambda t: AddItems(links=[Link("nl", "gpu0", "gpu5", "NVLink2")]),
    lambda t: RemoveItems(["gpu3"]),
    lambda t: RemoveItems(["l0", "pcie1", "system"]),
    lambda t: SetAttribute("gpu2", "name", "Renamed"),
    lambda t: SetAttribute("l3", "count", 1),
    lambda t: SetAttribute("l3", "bandwidth_per_direction_Bps", 1e9),
    lambda t: ChangeLinkType("l20", "PCIe4"),
    lambda t: Move({"gpu0": (1, 2), "gpu1": (3, 4)}),
    lambda t: SetCollapsed("system", True),
    lambda t: Move(auto_layout(t)),
    lambda t: Macro([SetAttribute("gpu0", "name", "A"), RemoveItems(["gpu7"])], "two"),
    lambda t: paste_command(t, copy_selection(t, ["gpu0", "gpu1", "gpu2"]))[0],
])
def test_undo_redo_exact(make):
    topo = load_preset("dgx1-v100")
    roundtrip(topo, make(topo))


def test_paste_keeps_internal_links_and_fresh_ids():
    topo = load_preset("dgx1-v100")
    clip = copy_selection(topo, ["gpu0", "gpu1", "gpu3"])
    assert len(clip["links"]) == 3
    cmd, mapping = paste_command(topo, clip)
    cmd.do(topo)
    new_ids = [mapping[g] for g in ("gpu0", "gpu1", "gpu3")]
    assert all(i in topo.devices and i not in ("gpu0", "gpu1", "gpu3") for i in new_ids)
    between = [lk for lk in topo.links.values() if lk.a in new_ids and lk.b in new_ids]
    assert len(between) == 3 and sum(lk.count for lk in between) == 4


def test_copying_a_whole_system_copies_its_group():
    topo = load_preset("dgx-a100")
    clip = copy_selection(topo, list(topo.devices))
    cmd, mapping = paste_command(topo, clip)
    cmd.do(topo)
    assert len(topo.groups) == 2 and len(topo.gpus()) == 16
    assert len(topo.devices_in_group(mapping["system"])) == 29


def _groups_by_definition(topo, chosen):
    """The groups a copy must carry, straight from the definition (slow: every group asks for its
    devices at every depth)."""
    keep = set(chosen)
    out = []
    for gid in topo.groups:
        inside = topo.devices_in_group(gid)
        if inside and set(inside) <= keep:
            out.append(gid)
    return out


def test_copy_carries_exactly_the_groups_the_selection_fills():
    import random

    from dgxstudio.model.fabrics import build_fat_tree
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)   # a cluster group holding systems and the fabric
    systems = [g.id for g in topo.groups.values() if g.kind == "system"]
    assert all(topo.groups[s].parent == "cluster" for s in systems)
    one = topo.devices_in_group(systems[0])
    every_system = [d for s in systems for d in topo.devices_in_group(s)]
    rng = random.Random(7)
    selections = [
        list(topo.devices),                           # everything: the cluster and all it nests
        one,                                          # one whole system
        one[:-1],                                     # a system but one device: no group
        every_system,                                 # every system, not the fabric: not the cluster
        topo.devices_in_group("fabric") + one,        # the fabric and one system
        rng.sample(list(topo.devices), 60),           # scattered
        ["no-such-device"],                           # nothing that exists
    ]
    expected = [None, [systems[0]], [], systems, ["fabric", systems[0]]]
    for k, chosen in enumerate(selections):
        got = [g["id"] for g in copy_selection(topo, chosen)["groups"]]
        assert got == _groups_by_definition(topo, chosen)
        if k < len(expected) and expected[k] is not None:
            assert sorted(got) == sorted(expected[k])
    assert [g["id"] for g in copy_selection(topo, list(topo.devices))["groups"]] == list(topo.groups)
