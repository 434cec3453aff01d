"""CollNet over one GPU per system: no chain inside any system, so SHARP's reduce starts from the
GPUs themselves (it was an internal error, a KeyError on the chain's missing last hop)."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import simulate

MiB = 2**20


def test_collnet_with_one_gpu_per_system_runs_at_the_nics_speed():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    gpus = [f"s{i}.gpu0" for i in (1, 2, 3)]
    assert all(g in topo.devices for g in gpus)
    r = simulate(topo, "all-reduce", "collnet", 256 * MiB, gpus)
    assert r.algorithm == "collnet" and r.time_s > 0
    # every byte leaves each GPU once and comes back once, through its own NIC: that NIC is the bottleneck
    top = r.sim.bottlenecks(1)[0]
    assert top["utilization"] > 0.9
    assert r.time_s * top["capacity_per_direction_Bps"] >= 256 * MiB
