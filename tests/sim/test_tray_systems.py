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
