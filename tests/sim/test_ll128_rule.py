"""NCCL's LL128 rule (tuning.cc; ``ll128_rule`` in resources/nccl_tuning.json): across systems LL128
follows the path from each GPU to its NIC, not the GPU generation (issue #13)."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.model.topology import Device, Link
from dgxstudio.sim.run import SimOptions, SimulationError, Simulator

MiB = 2**20


def nics_on_cpu(topo, systems=None):
    """Each compute NIC of ``systems`` (all: None) moved from its GPUs' PCIe switch to a PCIe switch of
    its own on that switch's CPU: GPU and NIC then meet only at the CPU's host bridge (NCCL's PHB)."""
    devices = topo.devices
    for link in list(topo.links.values()):
        a, b = devices[link.a], devices[link.b]
        if {a.kind, b.kind} != {"nic", "pcie_switch"} or (systems and topo.system_of(a.id) not in systems):
            continue
        nic, sw = (a, b) if a.kind == "nic" else (b, a)
        cpu = next(end for l in topo.links.values() if sw.id in (l.a, l.b)
                   for end in (l.a, l.b) if devices[end].kind == "cpu")
        host = cpu + "_nics"
        if host not in devices:
            topo.add_device(Device(host, "pcie_switch", sw.part, host), group=topo.group_of(cpu).id)
            topo.add_link(Link(host + "_up", host, cpu, link.type, width=link.width))
        topo.remove_link(link.id)
        topo.add_link(Link(link.id, nic.id, host, link.type, link.count, width=link.width))
    return topo


def gpus(topo):
    return [d.id for d in topo.gpus()]


def ll128_candidates(topo, size=4 * MiB):
    r = Simulator(topo, gpus(topo)).run("all-reduce", "auto", size)
    return sorted(k for k in r.model_estimates if k.endswith("/LL128"))


@pytest.mark.parametrize("system", ["dgx-a100", "dgx1-v100"])
def test_systems_whose_nics_share_the_gpus_pcie_switches_get_ll128_across_nodes(system):
    # NCCL: typeInter <= PATH_PXB on sm70/sm80 (the simulator gave LL128 across nodes to sm90+ only)
    assert ll128_candidates(build_fat_tree(2, system)) == ["ring/LL128", "tree/LL128"]


def test_h100_systems_whose_nics_hang_off_the_cpu_get_no_ll128():
    assert ll128_candidates(build_fat_tree(2, "dgx-h100", rail_optimized=True)) == ["ring/LL128", "tree/LL128"]
    topo = nics_on_cpu(build_fat_tree(2, "dgx-h100", rail_optimized=True))
    assert ll128_candidates(topo) == []
    r = Simulator(topo, gpus(topo)).run("all-reduce", "auto", 4 * MiB)
    assert "with LL128" not in r.reason and r.protocol != "ll128" and "LL128 left out" in r.reason


def test_a_forced_ll128_is_refused_with_the_gpu_and_nic_at_fault():
    topo = nics_on_cpu(build_fat_tree(2, "dgx-h100", rail_optimized=True))
    sim = Simulator(topo, gpus(topo), SimOptions(protocol="ll128"))
    # the GPU and NIC as the canvas names them (issue #17), not by id ("s1.gpu0 to s1.ib0")
    with pytest.raises(SimulationError, match=r"NCCL does not enable LL128 here: .*PATH_PXN.*"
                                              r"; DGX H100 #1 GPU\d to DGX H100 #1 IB\d: PATH_PHB, "
                                              r"through a CPU's host bridge$"):
        sim.run("all-reduce", "ring", 4 * MiB)
    # auto with --protocol ll128 has nothing to pick: the protocol as NCCL spells it, no nested brackets
    with pytest.raises(SimulationError, match=r"^NCCL's model offers no algorithm for all-reduce on these GPUs "
                                              r"with the LL128 protocol, as NCCL does not enable LL128 here: "
                                              r"[^()]*\([^()]*\); DGX H100 #1 GPU"):
        sim.run("all-reduce", "auto", 4 * MiB)
    # one system of the same drawing keeps it: no network path is used
    one = [g for g in gpus(topo) if g.startswith("s1.")]
    assert Simulator(topo, one, SimOptions(protocol="ll128")).run("all-reduce", "ring", 4 * MiB).protocol == "ll128"


def test_pascal_gets_no_ll128_even_on_one_system():
    # NCCL: off below sm70 (master: !(minCompCap < 70 ...); v2.18.5-1: the switch's default case)
    topo = load_preset("dgx1-p100")
    assert ll128_candidates(topo) == []
    with pytest.raises(SimulationError, match=r"sm70 or later \(these GPUs are sm60\)"):
        Simulator(topo, gpus(topo), SimOptions(protocol="ll128")).run("all-reduce", "ring", 4 * MiB)


def test_mixed_sm_versions_need_hopper_and_a_gpu_without_an_sm_keeps_its_class():
    from dataclasses import replace

    from dgxstudio.sim import tuning as T

    shape = T.CallShape("all-reduce", 16, 1, "ampere", 24, 1e11, 1e11, "nvlink")
    assert T.ll128_refusal(shape) is None                                 # no SM in the catalog: its class
    # what NCCL requires in plain words ("GPUs of different SM versions (sm80 to sm90) need sm90 or later" was
    # hard to parse), then the range these GPUs span
    assert T.ll128_refusal(replace(shape, sms=(80, 90))) == ("on mixed GPU generations it is enabled only when every "
                                                             "GPU is sm90 or later; these GPUs range from sm80 to sm90")
    assert T.ll128_refusal(replace(shape, generation="hopper", sms=(90, 100))) is None  # master: from sm90


def test_auto_says_why_ll128_was_left_out():
    # an architect seeing auto pick LL or Simple on H100s asked why not LL128: the reason said only what
    # the model picked, as a forced ring's "LL: NCCL's cost model's choice" did
    topo = nics_on_cpu(build_fat_tree(2, "dgx-h100", rail_optimized=True))
    why = ("; LL128 left out, as NCCL does not enable it here: across systems on sm90 each GPU must reach its NIC "
           "within PATH_PXN")
    for algorithm in ("auto", "ring"):
        r = Simulator(topo, gpus(topo)).run("all-reduce", algorithm, 4 * MiB)
        assert why in r.reason and "DGX H100 #1 GPU" in r.reason, (algorithm, r.reason)
    p100 = Simulator(load_preset("dgx1-p100"), gpus(load_preset("dgx1-p100"))).run("all-reduce", "auto", 4 * MiB)
    assert p100.reason.endswith("; LL128 left out, as NCCL does not enable it here: it needs sm70 or later "
                                "(these GPUs are sm60)"), p100.reason
    enabled = build_fat_tree(2, "dgx-a100")   # where NCCL enables it, nothing is said
    assert "LL128 left out" not in Simulator(enabled, gpus(enabled)).run("all-reduce", "auto", 4 * MiB).reason
    forced = Simulator(topo, gpus(topo), SimOptions(protocol="simple")).run("all-reduce", "ring", 4 * MiB)
    assert forced.reason == "ring with Simple as requested"    # the user chose: nothing left to explain
