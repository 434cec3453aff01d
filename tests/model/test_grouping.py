"""Group: a new group around selected devices or groups, exactly undone (the editor's Ctrl+Alt+G)."""

import pytest

from dgxstudio.model import dumps
from dgxstudio.model.grouping import GroupItems, grouping_plan
from dgxstudio.model.presets import load_preset
from dgxstudio.model.systems import add_dgx1
from dgxstudio.model.topology import Device, ModelError, Topology


def _loose_gpus(n=4):
    topo = Topology("hand-drawn")
    for i in range(n):
        topo.add_device(Device(f"gpu{i}", "gpu", "h100-sxm5-80gb", f"GPU{i}"), (100.0 * i, 0.0))
    return topo


def test_loose_devices_become_a_system_and_undo_gives_the_file_back():
    topo = _loose_gpus()
    before = dumps(topo)
    cmd = GroupItems(["gpu2", "gpu0", "gpu1"], "system0", "System 1")
    cmd.do(topo)
    g = topo.groups["system0"]
    assert g.kind == "system" and g.parent is None and g.devices == ["gpu0", "gpu1", "gpu2"]
    assert topo.system_of("gpu1") == "system0" and topo.frame_of("gpu3") is None
    after = dumps(topo)
    cmd.undo(topo)
    assert dumps(topo) == before
    cmd.do(topo)   # redo
    assert dumps(topo) == after


def test_devices_inside_a_system_make_a_plain_group_and_the_systems_members_come_back_in_order():
    topo = load_preset("dgx1-v100")
    (sysg,) = topo.groups
    before, members = dumps(topo), list(topo.groups[sysg].devices)
    cmd = GroupItems(["gpu4", "gpu5"], "group0", "Group 1")
    cmd.do(topo)
    assert topo.groups["group0"].kind == "group" and topo.groups["group0"].parent == sysg
    assert topo.group_of("gpu4").id == "group0" and "gpu4" not in topo.groups[sysg].devices
    assert topo.system_of("gpu4") == sysg            # still in its system
    assert len(topo.devices_in_group(sysg)) == len(members)
    cmd.undo(topo)
    assert dumps(topo) == before and topo.groups[sysg].devices == members


def test_a_selected_group_takes_what_is_inside_it_and_groups_of_systems_are_plain():
    topo = Topology("two")
    ga = add_dgx1(topo, prefix="a.", name="A")
    gb = add_dgx1(topo, prefix="b.", name="B", origin=(900.0, 0.0))
    devices, groups, container = grouping_plan(topo, [ga, *topo.groups[ga].devices[:3], gb])
    assert devices == [] and groups == [ga, gb] and container is None
    before = dumps(topo)
    cmd = GroupItems([ga, gb], "group0", "Pod")
    cmd.do(topo)
    assert topo.groups["group0"].kind == "group" and topo.groups[ga].parent == "group0"
    cmd.undo(topo)
    assert dumps(topo) == before


def test_items_of_different_groups_are_refused_naming_both_and_nothing_changes():
    topo = Topology("two")
    add_dgx1(topo, prefix="a.", name="A")
    add_dgx1(topo, prefix="b.", name="B", origin=(900.0, 0.0))
    before = dumps(topo)
    with pytest.raises(ModelError, match=r"cannot group 'a.gpu0' \(in group 'A'\) with 'b.gpu0' \(in group 'B'\)"):
        GroupItems(["a.gpu0", "b.gpu0"], "group0", "G").do(topo)
    with pytest.raises(ModelError, match="select devices or groups"):
        GroupItems(["l0"], "group0", "G").do(topo)
    assert dumps(topo) == before
