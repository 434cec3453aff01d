"""CollNet's and the NVLS tree's refusals name what is at fault and what to do. CollNet's read
"collnet needs several systems on InfiniBand switches that reduce in the network (SHARP); this
topology has none, or not only such switches" for one DGX H100 (whose fault is being one system) and
for an EDR fabric alike; the NVLS tree's did not say how uneven the systems were."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import SimulationError, simulate
from dgxstudio.sim.sharp_refusal import collnet_refusal

MiB = 2**20


def test_one_system_is_named_as_the_fault():
    with pytest.raises(SimulationError, match="collnet reduces across systems in SHARP InfiniBand switches; these GPUs"
                                              r" are in one system \(inside one system NCCL uses ring, tree or nvls\)"):
        simulate(load_preset("dgx-h100"), "all-reduce", "collnet", 16 * MiB)


def test_switches_without_sharp_are_named_with_the_parts_that_have_it():
    topo = build_fat_tree(4, "dgx-h100", switch="ib-switch-edr-36")
    with pytest.raises(SimulationError) as err:
        simulate(topo, "all-reduce", "collnet", 16 * MiB)
    text = str(err.value)
    assert "none of its" in text and "InfiniBand EDR switch" in text
    assert "--switch PART`, PART one of ib-switch-hdr-40, ib-switch-ndr-64, ib-switch-xdr-144" in text


def test_one_switch_without_sharp_among_many_is_counted():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    assert collnet_refusal(topo, 4) is None
    leaf = next(d for d in topo.devices.values() if d.kind == "ib_switch")
    leaf.part = "ib-switch-edr-36"
    switches = sum(1 for d in topo.devices.values() if d.kind == "ib_switch")
    assert f"1 of its {switches} do not, e.g. {leaf.name} (InfiniBand EDR switch" in collnet_refusal(topo, 4)


def test_nvls_tree_on_uneven_systems_says_how_uneven():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    gpus = ["s1.gpu0", "s1.gpu1", "s2.gpu0"]
    with pytest.raises(SimulationError, match="nvls-tree needs the same number of GPUs in every system; these are 1 to 2"
                                              " per system: select as many in each"):
        simulate(topo, "all-reduce", "nvls-tree", 16 * MiB, gpus)


def test_an_edr_fabric_is_refused_for_what_the_sharp_plugin_needs_not_for_lacking_sharp():
    # "collnet needs every InfiniBand switch to reduce in the network (SHARP); none of its 47 does" on the EDR
    # fat tree, though Switch-IB 2 (EDR) has SHARPv1: NCCL's SHARP plugin needs Quantum (HDR) and above
    # (NVIDIA SHARP docs, "Using NVIDIA SHARP with NVIDIA NCCL"; the catalog's sharp_source)
    text = collnet_refusal(load_preset("dgx1-fat-tree-124"), 124)
    assert text.startswith("collnet reduces in the switches through NCCL's SHARP plugin, which needs every InfiniBand"
                           " switch to be an NVIDIA Quantum (HDR) or later (SHARPv2 and above; EDR's SHARPv1 is not"
                           " supported); none of its 47 does, e.g. Leaf 1 (InfiniBand EDR switch (36 ports))"), text
    # DGX-1's ConnectX-4 NICs would be refused next: the hint names the --nic parts too, and only then
    assert "and `--nic PART`, PART one of connectx-6-hdr, connectx-6-hdr-dual, connectx-7-ndr" in text
    assert "--nic" not in collnet_refusal(build_fat_tree(4, "dgx-h100", switch="ib-switch-edr-36"), 4)
    edr = load_preset("dgx1-v100").catalog.parts["ib-switch-edr-36"]
    assert "Quantum HDR switches and above" in edr.extra["sharp_source"] and "docs.nvidia.com" in edr.extra["sharp_source"]


def test_adapters_the_sharp_plugin_does_not_drive_are_refused_by_name():
    # DGX-1's ConnectX-4 EDR NICs on Quantum HDR switches ran CollNet; the plugin needs ConnectX-6 HDR and above
    topo = build_fat_tree(4, "dgx1-v100", switch="ib-switch-hdr-40")
    with pytest.raises(SimulationError, match=r"collnet needs NICs that NCCL's SHARP plugin drives \(ConnectX-6 HDR"
                                              r" and above\); DGX-1 #1 IB0 \(ConnectX-4 EDR \(1 port\)\) joins Leaf 1"
                                              " and is not one"):
        simulate(topo, "all-reduce", "collnet", 16 * MiB)
    assert simulate(topo, "all-reduce", "auto", 16 * MiB).algorithm != "collnet"
    # a NIC joined to no InfiniBand switch does not count (the DGX A100's storage NIC, on PCIe only)
    a100 = build_fat_tree(2, "dgx-a100")
    assert collnet_refusal(a100, 2) is None
    nic = next(d for d in a100.devices.values() if d.kind == "nic" and all(
        a100.devices[lk.other(d.id)].kind != "ib_switch" for lk in a100.links_of(d.id)))
    nic.part = "connectx-4-edr"
    assert collnet_refusal(a100, 2) is None


@pytest.mark.parametrize("preset", ["dgx-a100", "dgx1-v100", "pcie-8gpu"])
def test_one_system_refusals_suggest_only_what_the_hardware_runs(preset):
    # `simulate --preset dgx-a100 --algorithm collnet` suggested "ring, tree or nvls", and nvls-tree
    # "inside one system NCCL uses nvls": a DGX A100's NVSwitches (gen2) do not reduce, nvls is refused there
    topo = load_preset(preset)
    with pytest.raises(SimulationError, match="these GPUs are in one system") as err:
        simulate(topo, "all-reduce", "collnet", 16 * MiB)
    assert str(err.value).endswith("(inside one system NCCL uses ring or tree)")
    with pytest.raises(SimulationError) as err:
        simulate(topo, "all-reduce", "nvls", 16 * MiB)   # (the reason nvls is left out)
    assert "nvls needs NVSwitches that reduce" in str(err.value)
    with pytest.raises(SimulationError) as err:
        simulate(topo, "all-reduce", "nvls-tree", 16 * MiB)
    assert "NCCL uses nvls" not in str(err.value) and "uses ring, tree or nvls" not in str(err.value)


def test_with_nvls_switched_off_the_one_system_refusal_leaves_it_out():
    from dgxstudio.sim.results import SimOptions

    h100 = load_preset("dgx-h100")
    with pytest.raises(SimulationError, match=r"\(inside one system NCCL uses ring or tree\)$"):
        simulate(h100, "all-reduce", "collnet", 16 * MiB, options=SimOptions(nvls_enable=False))
    with pytest.raises(SimulationError, match=r"inside one system NCCL uses nvls$"):
        simulate(h100, "all-reduce", "nvls-tree", 16 * MiB)
