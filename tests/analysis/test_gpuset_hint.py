"""A GPU set that names nothing says what the user may have meant: on a generated cluster a system's
GPUs are the group 's01.system' ('DGX H100 #1'), and 's01', the prefix of its GPUs' ids, is not one."""

import pytest

from dgxstudio.analysis.gpuset import GpuSetError, select_gpus
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset


def test_a_prefix_of_a_system_points_at_its_group():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    system = next(g for g in topo.groups.values() if g.kind == "system")
    prefix = system.id.split(".")[0]
    assert prefix not in topo.groups and prefix not in topo.devices
    with pytest.raises(GpuSetError) as err:
        select_gpus(topo, prefix)
    assert f"did you mean {system.id!r} ({system.name})" in str(err.value)
    assert len(select_gpus(topo, system.id)) == 8   # (what it points at works)


def test_a_name_matching_nothing_gives_a_system_group_as_an_example():
    with pytest.raises(GpuSetError, match=r"neither a GPU id.*e\.g\. 'system' \(DGX-1 \(V100\)\)"):
        select_gpus(load_preset("dgx1-v100"), "foo")


def test_group_prefix_that_names_nothing_gets_the_same_hint():
    with pytest.raises(GpuSetError, match=r"no group 'DGX H100'; did you mean 's1.system' \(DGX H100 #1\)"):
        select_gpus(build_fat_tree(2, "dgx-h100", rail_optimized=True), "group:DGX H100")
