"""Systems drawn as trays (GB200 NVL72: the rack's group holds its trays, the trays its devices) across
racks: their NICs are found, as a DGX's are."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator


def _two_racks():
    topo = build_fat_tree(2, "gb200-nvl72", rail_optimized=True)
    return Simulator(topo, [g.id for g in topo.gpus()], SimOptions(achievable=True))


def test_every_nic_of_a_rack_drawn_as_trays_is_a_rail():
    # the channel plan read only the devices the rack's own group holds (none: they are in its trays), so it
    # found no NIC, joined the racks by one ring over whatever route there was and ran 2 channels
    sim = _two_racks()
    plan = sim.channel_plan()
    assert plan.rails == 72 and len(plan.rings) == 36
    assert not any("no compute NIC" in n for n in plan.notes)
    assert plan.channels > 2


def test_the_bound_of_racks_drawn_as_trays_counts_their_nics():
    # the bound counted no network bandwidth for such a rack: 188 GB/s over 4 racks, which the NVLS tree
    # then "beat" at 105% of it
    sim = _two_racks()
    r = sim.run("all-reduce", "nvls-tree", 1 << 28)
    assert r.bound_busbw_Bps > 72 * 47e9  # the rack's 72 NICs at 47 GB/s achievable each, at the least
    assert r.busbw_Bps <= r.bound_busbw_Bps


def test_traffic_between_racks_drawn_as_trays_leaves_through_each_gpus_own_nic():
    # the router read the GPUs' own NICs (their rails) from the rack's group (no device): none had one, so
    # GPU 5's traffic to the other rack left through both NICs of its Grace (ib4 and ib5) and arrived
    # through both of the receiver's, crossing rails in the fabric, where NCCL keeps to each GPU's own NIC
    router = _two_racks().router
    rails = router._rails()
    assert len(rails) == 2 * 72 and len({nic for nic, _ in rails.values()}) == 2 * 72
    assert rails["s1.gpu5"][0] == "s1.ib5" and rails["s2.gpu7"][0] == "s2.ib7"
    paths = router.routes("s1.gpu5", "s2.gpu7").paths
    assert paths and all("s1.ib5" in p and "s2.ib7" in p for p in paths)
    assert not any(d in p for p in paths for d in ("s1.ib4", "s2.ib6"))



def test_racks_drawn_as_trays_run_no_more_trees_than_channels():
    # NCCL's tree graph has as many channels as its ring graph, at most MAXCHANNELS/2, one NIC each, doubled
    # into one channel per tree of a pair (src/init.cc). A pair for each of the rack's 72 rails made 144
    # trees for 32 channels, each a fifth of a channel through its 72-GPU chain with 3 or 4 pieces to fill
    # it: 53.6 GB/s busbw on two racks at 256 MiB, against the ring's 402.7
    sim = _two_racks()
    plan = sim.channel_plan()
    sched, _, nch = sim.nccl_schedule("all-reduce", "tree", "ll128", 1 << 28)
    trees = sched.meta["trees"]
    assert nch == plan.channels == 32 and len(trees) == 2 * 12  # 12 pairs: the largest divisor of 72 up to 16
    heads = {sched.groups[first].pattern.pairs[0] for first, _ in trees}
    assert len(heads) == len(trees)
    r = sim.run("all-reduce", "tree", 1 << 28)
    assert r.busbw_Bps > 150e9
