"""NCCL's GPU-to-NIC path types on the drawn topology (analysis/nccl_paths.py; issue #13, LL128's rule)."""

from dgxstudio.analysis.fabric import Fabric
from dgxstudio.analysis.nccl_paths import NetPath, gpu_nic_path, inter_node_path, pair_path
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import Simulator
from tests.sim.test_ll128_rule import nics_on_cpu


def test_each_path_kind_gets_nccls_type():
    h100 = Fabric(load_preset("dgx-h100"))
    assert gpu_nic_path(h100, "gpu0", "ib0") == "PIX"      # one PCIe switch (the GPUs' own)
    assert gpu_nic_path(h100, "gpu0", "ib2") == "PHB"      # the next switch, through CPU0
    assert gpu_nic_path(h100, "gpu0", "ib4") == "SYS"      # the other socket's, over UPI
    moved = Fabric(nics_on_cpu(load_preset("dgx-h100")))
    assert gpu_nic_path(moved, "gpu0", "ib0") == "PHB"     # its switch and the NICs' meet at CPU0
    gb200 = build_fat_tree(2, "gb200-nvl72", rail_optimized=True)
    fab = Fabric(gb200)
    assert gpu_nic_path(fab, "s1.gpu0", "s1.ib0") == "P2C"  # NVLink-C2C to Grace, PCIe to the NIC


def test_pxn_reaches_a_far_nic_through_an_nvlink_peer_beside_it():
    fab = Fabric(load_preset("dgx-h100"))
    members = [f"gpu{i}" for i in range(8)]
    assert pair_path(fab, "gpu0", "ib4", members, pxn=False) == "SYS"
    assert pair_path(fab, "gpu0", "ib4", members, pxn=True) == "PXN"     # gpu4 sits on ib4's switch
    assert pair_path(fab, "gpu0", "ib4", ["gpu0", "gpu1"], pxn=True) == "SYS"  # no such peer selected
    assert pair_path(fab, "gpu0", "ib0", members, pxn=True) == "PIX"     # its own is better


def _worst(topo, twins=True):
    sim = Simulator(topo, [d.id for d in topo.gpus()])
    return inter_node_path(topo, sim.router.fabric, sim.channel_plan(), sim.router if twins else None)


def test_the_worst_channel_path_names_its_gpu_and_nic_and_twins_do_not_hide_a_rewired_system():
    assert _worst(build_fat_tree(2, "dgx-a100")).type == "PIX"
    assert _worst(load_preset("dgx-a100")) == NetPath()   # one system: NCCL's search start
    topo = nics_on_cpu(build_fat_tree(8, "dgx-h100", rail_optimized=True), systems={"s6.system"})
    worst = _worst(topo)
    assert (worst.type, worst.gpu[:3], worst.nic[:3]) == ("PHB", "s6.", "s6.")
    assert worst == _worst(topo, twins=False)              # read through the router's twins or not
    assert worst.where().startswith("s6.gpu") and " to s6.ib" in worst.where()
