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

    def spy(topo, fabric, members):
        calls.append(members[0] if members else None)
        return real(topo, fabric, members)

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
