"""NCCL's structure on the drawn topology: NVSwitch planes, rail rings, protocols, per-call latency,
algorithm refusals (issue #13)."""

import pytest

from dgxstudio.analysis.rings import find_rings
from dgxstudio.cli import main
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import SimOptions, SimulationError, Simulator, simulate

GiB = 2**30


def gpus(topo):
    return [d.id for d in topo.gpus()]


def plane_bytes(topo, result):
    """Bytes each NVSwitch received from GPUs."""
    out = {}
    for c, (a, b) in enumerate(result.sim.channel_ends):
        if topo.devices[b].kind == "nvswitch" and topo.devices[a].kind == "gpu":
            out[b] = out.get(b, 0.0) + float(result.sim.channel_bytes[c])
    return out


def test_dgx_h100_traffic_spreads_over_all_four_planes_by_their_links():
    topo = load_preset("dgx-h100")
    sim = Simulator(topo, gpus(topo), SimOptions(achievable=True))
    r = sim.run("all-reduce", "ring", GiB)
    planes = plane_bytes(topo, r)
    assert len(planes) == 4 and all(v > 0 for v in planes.values())
    links = {}
    for lk in topo.links_of("gpu0"):
        other = lk.b if lk.a == "gpu0" else lk.a
        if topo.devices[other].kind == "nvswitch":
            links[other] = links.get(other, 0) + lk.count
    assert sorted(links.values()) == [4, 4, 5, 5]
    total_b, total_l = sum(planes.values()), sum(links.values())
    for sw, n in links.items():
        assert planes[sw] / total_b == pytest.approx(n / total_l, rel=1e-6)
    # and the ring reaches the 18-link bound, not the two cheapest planes
    assert r.busbw_Bps == pytest.approx(sim.plan_bound(), rel=0.02)
    assert sim.plan_bound() == pytest.approx(18 * 25e9 * 0.822, rel=1e-3)
    # the all-reduce bound counts NVLink SHARP: 2 B (P-1)/(P+1)
    assert r.bound_busbw_Bps == pytest.approx(18 * 25e9 * 0.822 * 14 / 9, rel=1e-3)


def test_gpus_joined_by_nvlink_never_talk_over_pcie():
    topo = load_preset("hgx-h800")
    sim = Simulator(topo, ["gpu0", "gpu1"], SimOptions(achievable=True))
    route = sim.router.routes("gpu0", "gpu1")
    kinds = {topo.devices[d].kind for p in route.paths for d in p[1:-1]}
    assert kinds == {"nvswitch"}


@pytest.mark.parametrize("systems", [2, 3, 4])
def test_rings_across_systems_use_every_nic_both_ways_and_reach_the_analysis_bound(systems):
    topo = build_fat_tree(systems, "dgx-a100")
    g = gpus(topo)
    sim = Simulator(topo, g, SimOptions(achievable=True))
    r = sim.run("all-reduce", "ring", 4 * GiB)
    analysis = find_rings(topo, g, achievable=True)
    assert sim.plan_bound() == pytest.approx(analysis.allreduce_busbw_bound_Bps, rel=1e-9)
    assert analysis.allreduce_busbw_bound_Bps == pytest.approx(8 * 200e9 / 8 * 0.96, rel=1e-6)
    assert r.busbw_Bps >= 0.95 * sim.plan_bound()
    # what reduces inside systems first can do better: the systems' NICs bound it; the HDR switches
    # reduce (SHARP), so CollNet sends each system's S once each way
    n = systems
    assert r.bound_busbw_Bps == pytest.approx(8 * 24e9 * 2 * (8 * n - 1) / (8 * n))
    assert sim._collnet_capable()
    util = r.sim.utilization()
    for c, (a, b) in enumerate(r.sim.channel_ends):
        for nic, other in ((a, b), (b, a)):
            dev = topo.devices[nic]
            if dev.kind == "nic" and dev.properties.get("role") == "compute" and topo.devices[other].kind == "ib_switch":
                assert util[c] > 0.5, f"{nic} -> {other} idle"
    assert r.channels == 16


def test_nics_per_system_set_the_rings():
    topo = build_fat_tree(2, "dgx-a100", nics_per_system=4)
    r = simulate(topo, "all-reduce", "ring", 4 * GiB, options=SimOptions(achievable=True))
    assert r.channels == 8
    assert r.busbw_Bps == pytest.approx(4 * 24e9, rel=0.03)


def test_two_system_ring_pays_network_latency_only_where_it_crosses():
    topo = build_fat_tree(2, "dgx-a100")
    r = simulate(topo, "all-reduce", "ring", 8, options=SimOptions(achievable=True, protocol="ll"))
    steps = 2 * (16 - 1)
    every_step_network = T.base_latency("ring", "ll") + steps * T.hop_latency("net", "ring", "ll")
    assert r.time_s < every_step_network
    # NCCL's own estimate for this call is the reference the latency model follows
    assert r.time_s == pytest.approx(T.base_latency("ring", "ll") + 28 * T.net_overhead("amd", "ll")
                                     + 2 * T.hop_latency("net", "ring", "ll"), rel=0.15)


def test_protocol_flips_from_ll_to_ll128_to_simple_as_size_grows():
    topo = load_preset("dgx-a100")
    sim = Simulator(topo, gpus(topo), SimOptions(achievable=True))
    chosen = [sim.run("all-reduce", "auto", s).protocol for s in (1024, 16 * 2**20, GiB)]
    assert chosen == ["ll", "ll128", "simple"]
    small = sim.run("all-reduce", "auto", 32)
    assert small.time_s >= T.base_latency("ring", "ll")
    launch = small.schedule.meta["launch_group"]
    assert small.sim.group_done[launch] == pytest.approx(T.base_latency("ring", "ll"))


def test_forced_protocol_and_results_carry_algorithm_protocol_channels():
    topo = load_preset("dgx-a100")
    r = simulate(topo, "all-reduce", "ring", 2**20, options=SimOptions(achievable=True, protocol="simple"))
    d = r.as_dict()
    assert d["algorithm"] == "ring" and d["protocol"] == "Simple" and d["channels"] == 24
    ll = simulate(topo, "all-reduce", "ring", 2**20, options=SimOptions(achievable=True, protocol="ll"))
    # LL moves 8 data bytes per 16 and is capped by NCCL's LL ceiling: slower in bandwidth
    assert ll.sim.time_s > 0 and ll.protocol == "ll"


def test_single_ring_keeps_the_textbook_formula():
    topo = load_preset("dgx-a100")
    r = simulate(topo, "all-reduce", "single-ring", 64 * 2**20, options=SimOptions(chunk=64 * 2**20))
    assert r.protocol is None and len(r.rings) == 1


def test_nvls_is_refused_on_a100_with_the_reason():
    topo = load_preset("dgx-a100")
    with pytest.raises(SimulationError, match="NVLink SHARP"):
        simulate(topo, "all-reduce", "nvls", GiB)


def test_nvls_runs_on_h100_and_beats_the_ring():
    topo = load_preset("dgx-h100")
    sim = Simulator(topo, gpus(topo), SimOptions(achievable=True))
    nvls = sim.run("all-reduce", "nvls", GiB)
    ring = sim.run("all-reduce", "ring", GiB)
    assert nvls.protocol == "simple" and nvls.busbw_Bps > 1.2 * ring.busbw_Bps
    assert sim.run("all-reduce", "auto", GiB).algorithm == "nvls"


def test_collnet_is_refused_without_sharp_switches():
    topo = build_fat_tree(2, "dgx1-v100")
    with pytest.raises(SimulationError, match="SHARP"):
        simulate(topo, "all-reduce", "collnet", GiB)


def test_cli_simulate_reports_protocol_and_channels(capsys):
    assert main(["simulate", "--preset", "dgx-a100", "--size", "1KiB", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "ring" and out["protocol"] == "LL" and out["figures"] == "achievable"
    assert main(["simulate", "--preset", "dgx-a100", "--algorithm", "nvls"]) == 2
    assert "NVLink SHARP" in capsys.readouterr().err


def test_white_paper_ranges_hold_with_achievable_figures():
    for preset, lo, hi in (("dgx1-v100", 130e9, 150e9), ("dgx1-p100", 60e9, 80e9)):
        topo = load_preset(preset)
        sim = Simulator(topo, gpus(topo), SimOptions(achievable=True))
        for coll in ("broadcast", "reduce", "all-reduce"):
            r = sim.run(coll, "ring", GiB)
            assert lo <= r.busbw_Bps <= hi, (preset, coll, r.busbw_Bps)
        peak = Simulator(topo, gpus(topo)).run("all-reduce", "ring", GiB)
        assert peak.bound_busbw_Bps == pytest.approx(hi)


def test_pxn_sends_through_the_nvlink_peer_on_the_destination_rail():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    g = gpus(topo)
    plain = Simulator(topo, g, SimOptions(achievable=True)).router.routes("s1.gpu0", "s2.gpu3")
    pxn = Simulator(topo, g, SimOptions(achievable=True, pxn=True)).router.routes("s1.gpu0", "s2.gpu3")
    assert all("s1.ib0" in p for p in plain.paths)          # the NIC closest to the sender
    assert any(topo.devices[d].kind == "ib_switch" and d.startswith("spine") for d in plain.paths[0])
    for p in pxn.paths:
        assert p[1].startswith("s1.nvswitch") and p[2] == "s1.gpu3" and "s1.ib3" in p
        assert not any(d.startswith("spine") for d in p)     # stays on its rail


def test_nvls_tree_joins_h100_systems_and_is_refused_where_it_cannot_run():
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, gpus(topo), SimOptions(achievable=True))
    r = sim.run("all-reduce", "nvls-tree", GiB)
    assert r.algorithm == "nvls-tree" and r.protocol == "simple"
    assert r.busbw_Bps > sim.run("all-reduce", "ring", GiB).busbw_Bps
    with pytest.raises(SimulationError, match="across systems use nvls-tree"):
        sim.run("all-reduce", "nvls", GiB)
    with pytest.raises(SimulationError, match="inside one system NCCL uses nvls"):
        simulate(load_preset("dgx-h100"), "all-reduce", "nvls-tree", GiB)
    with pytest.raises(SimulationError, match="NVLink SHARP"):
        simulate(build_fat_tree(2, "dgx-a100"), "all-reduce", "nvls-tree", GiB)


@pytest.mark.parametrize("size", [2**20, 2**24, 2**28])
@pytest.mark.parametrize("proto", ["ll128", "simple"])
def test_tree_pipelines_as_ncclS_chunks_do_and_lands_near_ncclS_own_estimate(size, proto):
    """NCCL halves a tree's chunk until every channel has depth x 8 pieces; with one piece per
    connection a 16 MiB tree on one DGX A100 took 3x NCCL's own estimate of it."""
    from dgxstudio.model.presets import load_preset
    from dgxstudio.sim.run import SimOptions, Simulator

    topo = load_preset("dgx-a100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True, protocol=proto))
    r = sim.run("all-reduce", "tree", size)
    sim.options.protocol = "auto"
    estimate = sim.run("all-reduce", "auto", size).model_estimates["tree/" + {"ll128": "LL128", "simple": "Simple"}[proto]]
    assert r.time_s == pytest.approx(estimate, rel=0.3)
    pieces = {g.meta.get("piece") for g in r.schedule.groups if "piece" in g.meta}
    assert len(pieces) > 1


def test_tree_chunk_follows_ncclS_halving_rule():
    from dgxstudio.sim import tuning as T

    assert T.tree_depth(8, 1) == 7 and T.tree_depth(32, 4) == 9
    # 16 MiB over 24 channels, depth 7: 512 KiB -> 128 KiB (depth x 8) -> 64 KiB (depth x 4), then stop
    assert T.tree_chunk_bytes("simple", 16 * 2**20, 24, 7) == 65536
    # big messages keep a whole step a chunk, up to the simulator's piece budget
    assert T.tree_chunk_bytes("simple", 2**30, 24, 7) == max(524288, 2**30 / 24 / 16)


def test_one_system_tree_runs_each_channel_pair_along_its_own_ring():
    """On one system NCCL searches the tree's chains as it searches rings, one per channel: a DGX-1's
    chains then spread over the NVLinks its rings use. One chain for every channel put all of them
    on the same links (the review found the DGX-1 V100 tree at 32 GB/s against the ring's 144)."""
    topo = load_preset("dgx1-v100")
    gpus = [d.id for d in topo.gpus()]
    sim = Simulator(topo, gpus, SimOptions(achievable=True))
    plan = sim.channel_plan()
    tree = sim.run("all-reduce", "tree", 2**28)
    ring = sim.run("all-reduce", "ring", 2**28)
    chains = {g.meta["tree"] for g in tree.schedule.groups if "tree" in g.meta}
    assert len(chains) == 2 * len(plan.rings) > 2
    assert tree.busbw_Bps > 0.5 * ring.busbw_Bps


@pytest.mark.parametrize("algorithm", ["auto", "ring", "single-ring"])
def test_a_root_outside_the_run_is_refused_by_the_simulator(algorithm):
    """The CLI refused `--root` outside the selected GPUs, but the GUI and scripts reached NCCL's
    rooted schedule, which failed looking for the root in its ring (ValueError: not in list)."""
    topo = load_preset("dgx-a100")
    gpus = [d.id for d in topo.gpus()]
    with pytest.raises(SimulationError, match="the root 'gpu6' is not one of the 4 GPUs of this run"):
        Simulator(topo, gpus[:4], SimOptions(root="gpu6")).run("broadcast", algorithm, 2**20)
