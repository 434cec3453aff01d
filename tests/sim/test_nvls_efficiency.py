"""NCCL's NVLS efficiency (0.85 on Hopper, 0.74 on Blackwell) scales the NVLink SHARP path inside a
system only: NCCL's model multiplies the NVLS bandwidth by it (``intraBw``), never the network's
(``interBw``). The engine scaled every link of an NVLS tree by it, NICs included: 2 DGX B200 ran at
520 GB/s busbw where coreweave/nccl-tests PR #92 measured 690 and NCCL's own model gives about 703."""

import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import tuning as T
from dgxstudio.sim.results import SimOptions
from dgxstudio.sim.run import simulate

GiB = 2**30


def _nvls_channels(router):
    """Channels between a GPU and an NVSwitch (all of them do NVLink SHARP here), both ways."""
    kind = router.fabric.kind
    return {router.channel_index[e]
            for sw in kind if kind[sw] == "nvswitch"
            for g in router.fabric.adj[sw] if kind.get(g) == "gpu" for e in ((g, sw), (sw, g))}


def _at_a_nic(router, b) -> bool:
    return "nic" in (router.fabric.kind.get(b["from"]), router.fabric.kind.get(b["to"]))


@pytest.mark.parametrize("system, generation", [("dgx-b200", "blackwell"), ("dgx-h100", "hopper")])
def test_nvls_tree_scales_only_the_nvlink_sharp_path(system, generation):
    topo = build_fat_tree(2, system, rail_optimized=True)
    r = simulate(topo, "all-reduce", "nvls-tree", 1 * GiB, options=SimOptions(achievable=True))
    eff = T.tuning_data()["generations"][generation]["nvls_efficiency"]
    assert 0 < eff < 1
    router = Router(topo, achievable=True)
    nvls = _nvls_channels(router)
    assert len(nvls) == 2 * 2 * 8 * 4 if system == "dgx-h100" else nvls
    ratio = r.sim.capacity / router.capacity
    for c in range(len(ratio)):
        want = eff if c in nvls else 1.0
        assert abs(ratio[c] - want) <= 1e-12, (router.channel_ends[c], ratio[c], want)
    # every NIC link the run used reads its whole figure as usable
    nic = [b for b in r.sim.bottlenecks(len(ratio)) if _at_a_nic(router, b)]
    assert nic
    for b in nic:
        assert b["capacity_per_direction_Bps"] == b["link_capacity_per_direction_Bps"]


def test_two_dgx_b200_nvls_tree_runs_at_the_nics_rate():
    """Two systems: each system's 8 NICs carry the whole buffer out of it (its half of the reduce up
    the tree, the other system's half back down), so the NVLS tree's algbw is their figure, as
    NCCL's model puts it (interBw x 2 at two nodes); it was 0.74 of it."""
    topo = build_fat_tree(2, "dgx-b200", rail_optimized=True)
    r = simulate(topo, "all-reduce", "nvls-tree", 8 * GiB, options=SimOptions(achievable=True))
    router = Router(topo, achievable=True)
    b = r.sim.bottlenecks(1)[0]
    assert _at_a_nic(router, b)  # the network limits it
    kind = router.fabric.kind
    uplinks = [(n, v) for n, k in kind.items() if k == "nic" and n.startswith("s1.")
               for v in router.fabric.adj[n] if kind.get(v) == "ib_switch"]
    assert len(uplinks) == 8
    out_Bps = sum(router.capacity[router.channel_index[e]] for e in uplinks)
    algbw = 8 * GiB / r.time_s
    assert 0.97 * out_Bps <= algbw <= out_Bps


def test_single_system_nvls_keeps_the_efficiency_on_its_nvlinks():
    """One DGX H100: every channel NVLS uses is on its NVLink SHARP path, each at 0.85 of its figure."""
    r = simulate(load_preset("dgx-h100"), "all-reduce", "nvls", 1 * GiB, options=SimOptions(achievable=True))
    assert r.sim.bottlenecks(8)
    for b in r.sim.bottlenecks(8):
        link = b["link_capacity_per_direction_Bps"]
        assert abs(b["capacity_per_direction_Bps"] - 0.85 * link) <= 1e-9 * link
