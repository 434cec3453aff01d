"""The NVLink fabric around one system (``Fabric.around``) serves as the whole cluster's would (issue 17).

- Every device it holds has the neighbours (in the same order) and bundles (same figures, links and
  sums) the whole ``Fabric(topo, {"nvlink"})`` gives it, on a cluster with one system changed by hand
  (an NVLink slowed, its latency changed, one removed, one added) and with NVLink joining two systems.
- ``system_rings`` searching over it finds the rings it finds over the whole.
- Past its limit it gives None (the caller builds the whole).
"""

import pytest

from dgxstudio.analysis.fabric import Fabric
from dgxstudio.analysis.rings import system_rings
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.topology import Link

from .test_analyze_structure import ALTERATIONS, _odd_system_cluster


def _systems(topo):
    systems = {}
    for g in topo.gpus():
        systems.setdefault(topo.system_of(g.id) or g.id, []).append(g.id)
    return systems


def _same_as_whole(part, whole):
    assert part.adj and set(part.adj) <= set(whole.adj)
    for d, nbrs in part.adj.items():
        assert nbrs == whole.adj[d], d
        assert part.kind[d] == whole.kind[d] and part.hop_latency[d] == whole.hop_latency[d]
        for v in nbrs:
            b, w = part.bundle(d, v), whole.bundle(d, v)
            assert (b.a, b.b, b.units, b.unit_bw, b.latency_s, b.family, b.links, b.total_bw) == \
                   (w.a, w.b, w.units, w.unit_bw, w.latency_s, w.family, w.links, w.total_bw)
    assert all(k in whole.bundles for k in part.bundles)
    assert part.dropped <= whole.dropped


def _rings(result):
    return {sid: [(r.gpus, r.hops, r.bidir_Bps) for r in res.rings] + [res.method, res.exact, res.fabric]
            for sid, res in result.items()}


@pytest.mark.parametrize("alter", ALTERATIONS)
def test_the_fabric_around_a_system_is_the_whole_fabric_there(alter):
    topo, odd = _odd_system_cluster(alter)
    whole = Fabric(topo, {"nvlink"})
    systems = _systems(topo)
    for sid in (odd, next(s for s in systems if s != odd)):
        part = Fabric.around(topo, {"nvlink"}, systems[sid])
        assert part is not None and len(part.adj) < len(whole.adj) / 4  # one system's, not the cluster's
        assert all(topo.system_of(d) == sid for d in part.adj)
        _same_as_whole(part, whole)
    assert _rings(system_rings(topo, systems)) == _rings(system_rings(topo, systems, nv=whole))


def test_nvlink_between_two_systems_brings_both_in():
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    systems = _systems(topo)
    first, second = list(systems)[:2]
    nvl = next(lk for lk in topo.links.values() if lk.type == "NVLink4")
    topo.links["x-nvl"] = Link("x-nvl", systems[first][0], systems[second][-1], "NVLink4", count=nvl.count)
    topo._links_by_device = None
    whole = Fabric(topo, {"nvlink"})
    part = Fabric.around(topo, {"nvlink"}, systems[first])
    assert {topo.system_of(d) for d in part.adj} == {first, second}
    _same_as_whole(part, whole)
    assert Fabric.around(topo, {"nvlink"}, systems[first], limit=len(part.adj) - 1) is None
    assert _rings(system_rings(topo, systems)) == _rings(system_rings(topo, systems, nv=whole))


# ---- the GPUs nearest each NIC, once per class of systems wired alike ---------------------------

NIC_ALTERATIONS = ["none", "missing-link", "moved-gpu", "nic-role", "unplugged-nic", "leak", "subset"]


def _nic_cluster(alter):
    """12 DGX H100 (rail-optimized) with one system changed where the NICs' nearest GPUs are found."""
    topo, odd = _odd_system_cluster(alter if alter in ALTERATIONS else "none")
    p = odd.removesuffix("system")
    links = {(lk.a, lk.b): lk for lk in topo.links.values()}
    gpus = [d.id for d in topo.gpus()]
    if alter == "moved-gpu":  # gpu0 under the second PCIe switch: ib0's nearest GPU is gpu1 alone
        links[(p + "gpu0", p + "pcie0")].b = p + "pcie1"
    elif alter == "nic-role":
        topo.devices[p + "ib2"].properties["role"] = "storage"
    elif alter == "unplugged-nic":
        del topo.links[next(lk.id for (a, _), lk in links.items() if a == p + "ib3" and "leaf" in lk.b)]
    elif alter == "leak":  # a PCIe link out of the system: its NICs' searches may leave it
        sids = sorted({topo.system_of(g) for g in gpus})
        other = sids[sids.index(odd) + 1].removesuffix("system")
        topo.links["odd-leak"] = Link("odd-leak", p + "pcie0", other + "pcie0", "PCIe5")
    elif alter == "subset":
        gpus = [g for g in gpus if g != p + "gpu1"]
    topo._links_by_device = None
    return topo, odd, gpus


def _plan_fields(p):
    return (p.systems, p.rings, p.hops, p.channels, p.rails, p.via, p.tree_chains, p.notes)


@pytest.mark.parametrize("alter", NIC_ALTERATIONS)
def test_nic_gpus_per_class_equal_those_searched_system_by_system(alter):
    from dgxstudio.analysis.channels import _nic_gpus, group_by_system, nic_gpus_per_system, plan
    from dgxstudio.analysis.routing import Router

    topo, odd, gpus = _nic_cluster(alter)
    router = Router(topo)
    systems = group_by_system(topo, gpus, router.system_of)
    searched = [_nic_gpus(topo, router.fabric, m) for m in systems]
    assert nic_gpus_per_system(topo, router.fabric, systems, router) == searched
    assert nic_gpus_per_system(topo, router.fabric, systems) == searched
    twins = [router.local_twin(router.system_of[m[0]], topo) for m in systems]
    assert sum(t is not None for t in twins) >= 10  # the shortcut answers the systems wired alike
    if alter != "none":
        at = [router.system_of[m[0]] for m in systems].index(odd)
        first = router.system_of[systems[0][0]]
        renamed = [(a.replace(first.removesuffix("system"), odd.removesuffix("system")),
                    b.replace(first.removesuffix("system"), odd.removesuffix("system"))) for a, b in searched[0]]
        if alter not in ("missing-link", "leak"):  # (these two change nothing the NICs see, but are not read)
            assert searched[at] != renamed  # the odd system's answer is its own
        assert twins[at] is None or alter == "subset"
        if alter == "leak":
            assert twins[at + 1] is None
    whole = plan(topo, gpus, Router(topo).fabric, None)
    assert _plan_fields(plan(topo, gpus, router.fabric, None, router=router)) == _plan_fields(whole)


@pytest.mark.parametrize("alter", NIC_ALTERATIONS)
def test_each_gpus_own_nic_per_class_equals_system_by_system(alter, monkeypatch):
    from dgxstudio.analysis import channels
    from dgxstudio.analysis.routing import Router

    topo, _, _ = _nic_cluster(alter)
    fast = Router(topo)._rails()
    original = channels.nic_gpus_per_system
    monkeypatch.setattr(channels, "nic_gpus_per_system", lambda t, f, systems, router=None: original(t, f, systems))
    assert Router(topo)._rails() == fast and len(fast) >= 90


@pytest.mark.parametrize("make", [lambda: build_fat_tree(60, "dgx-a100", per_leaf=20, rail_optimized=True, tiers=3),
                                  lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True),
                                  lambda: build_fat_tree(8, "dgx-h100", rail_optimized=True, oversubscription=2)])
def test_uniform_costs_outside_systems_read_from_numbered_ends_equal_the_walk(make):
    from dgxstudio.analysis.routing import Router

    topo = make()
    walked, numbered = Router(topo), Router(topo)
    numbered._bundle_ends()
    assert numbered._ends is not None and walked._ends is None
    assert walked._uniform_outside() == numbered._uniform_outside()
    assert (walked._lcm, walked._cheapest) == (numbered._lcm, numbered._cheapest) and walked._lcm > 0


def test_systems_of_many_kinds_share_one_whole_fabric_past_a_few(monkeypatch):
    """Each cut of the fabric reads every link once: past four classes of systems the whole NVLink
    fabric is built once and serves the rest (the same rings)."""
    topo = build_fat_tree(8, "dgx-h100", rail_optimized=True)
    systems = _systems(topo)
    for k, sid in enumerate(list(systems)[:6]):  # six systems each wired its own way
        inside = sorted((lk for lk in topo.links.values() if lk.type == "NVLink4" and topo.system_of(lk.a) == sid),
                        key=lambda lk: lk.id)
        inside[k].count += 1
    built = []
    original = Fabric.__init__
    monkeypatch.setattr(Fabric, "__init__", lambda self, *a, **kw: built.append(kw.get("_part") is None) or
                        original(self, *a, **kw))
    found = system_rings(topo, systems)
    assert built.count(False) == 4 and built.count(True) == 1
    assert _rings(found) == _rings(system_rings(topo, systems, nv=Fabric(topo, {"nvlink"})))


@pytest.mark.parametrize("alter", NIC_ALTERATIONS + ["renamed"])
def test_local_twins_at_once_equal_one_by_one(alter):
    """``local_twins`` checks a class's systems together on arrays: the same answer as ``local_twin``
    asked system by system, the altered system (and a system whose devices were renamed) included."""
    from dgxstudio.analysis.channels import group_by_system
    from dgxstudio.analysis.routing import Router

    topo, odd, gpus = _nic_cluster("none" if alter == "renamed" else alter)
    if alter == "renamed":  # one device of the odd system under another name: not a twin
        p = odd.removesuffix("system")
        dev = topo.devices.pop(p + "cpu1")
        dev.id = p + "cpuX"
        topo.devices[dev.id] = dev
        for lk in topo.links.values():
            lk.a, lk.b = (dev.id if e == p + "cpu1" else e for e in (lk.a, lk.b))
        group = topo.groups[odd]
        group.devices = [dev.id if d == p + "cpu1" else d for d in group.devices]
        topo._links_by_device = topo._group_by_device = None
    router = Router(topo)
    systems = group_by_system(topo, gpus, router.system_of)
    sids = [router.system_of.get(m[0]) for m in systems] + [None, "no-such-system"]
    router.offsets_in_bulk([s for s in sids[:-2]])
    at_once = router.local_twins(sids, topo)
    assert at_once == [router.local_twin(s, topo) if s is not None else None for s in sids]
    assert sum(t is not None for t in at_once) >= 10
    if alter in ("moved-gpu", "nic-role", "unplugged-nic", "leak", "renamed"):
        assert at_once[sids.index(odd)] is None
