"""NCCL's p2p channels for a network peer from the GPU's own NICs, and MoE's expert groups each planned
as its own NCCL call (issues #13 and #14, sim/nccl_p2p.py, sim/training.py).

A network peer got max(1, ceil(NIC GB/s / 14)) channels from the fastest NIC of a system; NCCL (graph/
paths.cc master 5067397:941-953) takes max(netCount, divUp(netBw, 14)) over the NICs the GPU's channels
rotate through, each at its path's bandwidth (a NIC behind a narrower PCIe link counts at the link's).
The MoE all-to-all planned every expert group as the first one and ignored --gpus-per-thread."""

import dataclasses

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import nccl_p2p
from dgxstudio.sim import training as TR
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.training import ModelSpec, train_iteration

MiB = 2**20
TINY = dict(layers=1, hidden=64, seq_len=8, top_k=1)


def _facts(topo, gpus):
    return nccl_p2p.facts_of(topo, Router(topo, achievable=True), gpus)


def test_a_nic_faster_than_its_pcie_link_counts_at_the_links_bandwidth():
    # DGX A100 with 400 Gb/s NICs (50 GB/s) on PCIe Gen4 x16 (NCCL: 16 x 120 / 80 = 24 GB/s): 2 channels, not 4
    topo = build_fat_tree(2, "dgx-a100", nic="connectx-7-ndr")
    gpus = [d.id for d in topo.gpus()]
    assert nccl_p2p.peer_channels(_facts(topo, gpus)) == (16, 2)
    r = Simulator(topo, gpus, SimOptions(achievable=True)).run("all-to-all", "auto", 1024 * MiB)
    assert r.p2p.channels_per_peer == 2
    # the presets' own NICs keep their counts (H100: 48 GB/s -> 4; A100: 24 -> 2; DGX-1: 12 -> 1)
    for system, want in (("dgx-h100", 4), ("dgx-a100", 2), ("dgx1-v100", 1)):
        topo = build_fat_tree(2, system)
        assert _facts(topo, [d.id for d in topo.gpus()]).net_channels == want, system


def test_a_gpu_alone_with_two_slow_nics_uses_both():
    # one GPU of each PCIe switch selected: its two 100 GbE NICs (12.5 GB/s each) are both local to it
    # (netsPerGpu = 2 / 1), and one does not reach its 24 GB/s to the CPU: netCount 2, 25 GB/s -> 2 channels
    topo = build_fat_tree(2, "dgx-a100", nic="nic-100gbe")
    gpus = [d.id for d in topo.gpus() if int(d.id.rsplit("gpu", 1)[1]) % 2 == 0]
    assert nccl_p2p.peer_channels(_facts(topo, gpus)) == (16, 2)
    # with both GPUs of a switch selected each takes one NIC: 12 GB/s -> 1 channel
    assert nccl_p2p.peer_channels(_facts(topo, [d.id for d in topo.gpus()])) == (16, 1)


def test_a_system_wired_alike_with_slower_nics_has_its_own_count():
    # eight DGX H100, the last one's compute NICs swapped for 200 Gb/s parts (25 GB/s: 2 channels, not 4):
    # the systems are wired alike (same graph, same inside links), but a NIC's speed is its part's, and
    # the reference system's answer was kept for all eight (4)
    topo = build_fat_tree(8, "dgx-h100", rail_optimized=True)
    last = [g for g in topo.groups.values() if g.kind == "system"][-1]
    router = Router(topo, achievable=True)
    for did in router.system_devices(last.id):
        if topo.devices[did].part == "connectx-7-ndr":
            topo.devices[did].part = "connectx-7-ndr200"
    gpus = [d.id for d in topo.gpus()]
    assert nccl_p2p.net_peer_channels(topo, Router(topo, achievable=True), gpus) == 2
    assert nccl_p2p.net_peer_channels(topo, Router(topo, achievable=True),
                                      [g for g in gpus if not g.startswith(last.id[:-len("system")])]) == 4


def test_the_simulator_and_the_p2p_facts_share_one_intra_class(monkeypatch):
    topo = build_fat_tree(2, "dgx-a100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    monkeypatch.setattr(nccl_p2p, "intra_class", lambda topo, gpus, counts=None: "pci")
    assert sim._intra_class() == "pci" and _facts(topo, sim.gpus).intra_class == "pci"


@pytest.fixture(scope="module")
def h100_pair():
    return build_fat_tree(2, "dgx-h100", rail_optimized=True)


def test_every_expert_group_is_planned_on_its_own_gpus(h100_pair):
    # ep=3 over 12 GPUs (8 + 4): groups 0, 1 and 3 stay in a system, group 2 (gpu6, gpu7 | s2.gpu0) crosses
    # the network: its call pays the network hop, which the first group's plan does not have
    topo = h100_pair
    gpus = [d.id for d in topo.gpus()][:12]
    tiny = ModelSpec(experts=6, **TINY)
    r = train_iteration(topo, gpus, 12, 1, 1, tiny, microbatches=1, ep=3)
    router = Router(topo, achievable=True)
    first = nccl_p2p.plan_call(nccl_p2p.facts_of(topo, router, gpus[0:3]), tiny.dispatch_bytes())
    across = nccl_p2p.plan_call(nccl_p2p.facts_of(topo, router, gpus[6:9]), tiny.dispatch_bytes())
    assert across.hop_s > first.hop_s
    assert r.details["ep_all_to_all_s"] >= across.launch_s + across.hop_s


def test_gpus_per_thread_is_honoured_as_the_collectives_take_it(h100_pair):
    topo = h100_pair
    gpus = [d.id for d in topo.gpus()]
    tiny = ModelSpec(experts=16, **TINY)
    one = train_iteration(topo, gpus, 16, 1, 1, tiny, microbatches=1, ep=8).details["ep_all_to_all_s"]
    eight = train_iteration(topo, gpus, 16, 1, 1, tiny, microbatches=1, ep=8, gpus_per_thread=8)
    assert eight.details["ep_all_to_all_s"] - one == pytest.approx(T.serial_launch(8), rel=1e-6)
    # a group with one GPU in each system: a thread drives the GPUs of its own system, one here
    gpus2 = [g for k in range(8) for g in (gpus[k], gpus[8 + k])]   # replicas alternate between the systems
    alone = train_iteration(topo, gpus2, 16, 1, 1, tiny, microbatches=1, ep=2).details["ep_all_to_all_s"]
    g8 = train_iteration(topo, gpus2, 16, 1, 1, tiny, microbatches=1, ep=2, gpus_per_thread=8)
    assert g8.details["ep_all_to_all_s"] == pytest.approx(alone, rel=1e-12)


@pytest.mark.parametrize("size", [1e3, 64 * MiB])   # LL and Simple
def test_groups_planned_apart_give_the_answer_of_one_plan(h100_pair, monkeypatch, size):
    """The branch for groups planned differently (each call its own launch, LL's wire bytes at the
    links' whole figure) gives the one-plan branch's answer when the plans agree."""
    topo = h100_pair
    gpus = [d.id for d in topo.gpus()]
    model = ModelSpec(experts=16, **TINY)
    monkeypatch.setattr(ModelSpec, "dispatch_bytes", lambda self: size)
    router = Router(topo, achievable=True)
    place = TR.grid(gpus, 16, 1, 1, "tp,pp,dp")
    same, _ = TR.expert_all_to_all(topo, router, place, 16, 1, 1, 8, model, 4 * MiB)
    real = TR._expert_calls

    def apart(*args):   # the same plans, told apart by a field the schedule does not read
        calls = real(*args)
        return [dataclasses.replace(c, classes=c.classes + ("x",) * k) for k, c in enumerate(calls)]

    monkeypatch.setattr(TR, "_expert_calls", apart)
    split, _ = TR.expert_all_to_all(topo, router, place, 16, 1, 1, 8, model, 4 * MiB)
    assert split == pytest.approx(same, rel=1e-9)
