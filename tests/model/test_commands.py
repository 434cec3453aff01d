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
