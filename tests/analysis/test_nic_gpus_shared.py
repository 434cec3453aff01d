"""The channel plan and the router's rails both ask which GPU each NIC serves, for every system's
GPUs: the router keeps the last answer (``channels.nic_gpus_per_system``), so the second asks
nothing again (0.04 s over 2,048 DGX H100), and a different question is still worked out."""

from dgxstudio.analysis import channels
from dgxstudio.analysis.channels import group_by_system, nic_gpus_per_system, plan
from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree


def _counting(monkeypatch) -> list:
    calls = []
    real = channels._nic_gpus

    def spy(topo, fabric, members, *devices_of):
        calls.append(members[0] if members else None)
        return real(topo, fabric, members, *devices_of)

    monkeypatch.setattr(channels, "_nic_gpus", spy)
    return calls


def test_the_rails_read_the_channel_plans_answer(monkeypatch):
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True)
    fresh = Router(topo)._rails()
    calls = _counting(monkeypatch)
    router = Router(topo)
    gpus = [d.id for d in topo.gpus()]
    plan(topo, gpus, router.fabric, None, router.system_of, router)
    searched = len(calls)
    assert searched >= 1
    assert router._rails() == fresh
    assert len(calls) == searched  # nothing searched again
    systems = group_by_system(topo, gpus, router.system_of)
    assert nic_gpus_per_system(topo, router.fabric, systems, router) is router._nic_gpus_known[1]


def test_other_gpus_are_not_given_the_last_answer(monkeypatch):
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True)
    router = Router(topo)
    gpus = [d.id for d in topo.gpus()]
    systems = group_by_system(topo, gpus, router.system_of)
    whole = nic_gpus_per_system(topo, router.fabric, systems, router)
    fewer = [m[:4] for m in systems]
    answer = nic_gpus_per_system(topo, router.fabric, fewer, router)
    assert answer == [channels._nic_gpus(topo, router.fabric, m) for m in fewer] and answer != whole
    assert nic_gpus_per_system(topo, router.fabric, systems, router) == whole


def test_the_rails_read_each_nics_switch_where_the_ring_loads_found_it():
    """A NIC with one network link: its leaves are the switch ``_uplink`` found for the ring loads; one
    given a second link to another leaf: both, searched as before. Either way what a fresh router gives."""
    from dataclasses import replace

    from dgxstudio.analysis.channels import ring_rates

    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True)
    router = Router(topo)
    nic = next(d for d in topo.devices.values() if d.kind == "nic" and router._uplink(d.id) is not None)
    leaf = router._uplink(nic.id)
    link = next(lk for lk in topo.links.values() if {lk.a, lk.b} == {nic.id, leaf})
    other = next(d.id for d in topo.devices.values() if d.kind == "ib_switch" and d.id != leaf
                 and any(router._uplink(n) == d.id for n in router.fabric.adj[d.id]))
    topo.links["extra"] = replace(link, id="extra", a=nic.id, b=other)
    router, fresh = Router(topo), Router(topo)
    gpus = [d.id for d in topo.gpus()]
    ring_rates(plan(topo, gpus, router.fabric, None, router.system_of, router), router)
    assert router._uplinks and router._uplinks.get(nic.id, "absent") in (None, "absent")
    rails = router._rails()
    assert rails == fresh._rails()
    assert {leaves for n, leaves in rails.values() if n == nic.id} == {frozenset((leaf, other))}
    assert sum(len(leaves) == 1 and next(iter(leaves)) == router._uplinks.get(n) for n, leaves in rails.values()) > 80
