"""System-to-system latency with every class of systems searched at once (issues 12/16) equals one
search per class: the same worst and best figures, the same worst pair and its switch hops."""

import pytest

from dgxstudio.analysis import paths
from dgxstudio.analysis.fabric import Fabric
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.topology import Link
from tests.analysis.test_analysis_speed_same import NETWORKS


def _zero_latency_corner():
    """Links and a switch of zero latency (sums that do not grow), and a second uplink per NIC."""
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4)
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    for lk in ib[::7]:
        lk.latency_s = 0.0
    nic = next(e for lk in ib[3:] for e in (lk.a, lk.b) if topo.devices[e].kind == "nic")
    far = next(e for lk in ib[len(ib) // 2:] for e in (lk.a, lk.b) if topo.devices[e].kind == "ib_switch")
    topo.links["extra-nic-link"] = Link("extra-nic-link", nic, far, ib[0].type)
    topo._links_by_device = None
    return topo


CASES = NETWORKS + [lambda: build_fat_tree(64, "dgx-h100", rail_optimized=True),
                    lambda: build_fat_tree(24, "dgx-a100", oversubscription=3),
                    lambda: build_fat_tree(16),
                    _zero_latency_corner]


@pytest.mark.parametrize("make", CASES)
def test_batched_classes_equal_one_search_per_class(make, monkeypatch):
    topo = make()
    fab = Fabric(topo)
    batched = paths.system_to_system_latency(topo, fab=fab)
    monkeypatch.setattr(paths, "BATCH_CLASSES", 10 ** 9)
    one_by_one = paths.system_to_system_latency(topo, fab=fab)
    assert batched == one_by_one
    assert batched is not None and batched.max_s >= batched.min_s > 0


def test_a_subset_of_systems_and_a_zero_hop_switch(monkeypatch):
    topo = build_fat_tree(40)
    fab = Fabric(topo)
    switch = next(d for d, k in fab.kind.items() if k == "ib_switch")
    fab.hop_latency[switch] = 0.0
    systems = sorted(g for g, grp in topo.groups.items() if grp.kind == "system")[3:15]
    batched = paths.system_to_system_latency(topo, systems, fab=fab)
    monkeypatch.setattr(paths, "BATCH_CLASSES", 10 ** 9)
    assert batched == paths.system_to_system_latency(topo, systems, fab=fab)


@pytest.mark.parametrize("make", CASES[:3] + CASES[-2:])
def test_one_search_to_several_gpus_equals_one_search_each(make):
    from dgxstudio.model.topology import Device
    topo = make()
    topo.devices["lonely-gpu"] = Device("lonely-gpu", "gpu", topo.devices[topo.gpus()[0].id].part, "alone")
    fab = Fabric(topo)
    gpus = [d.id for d in topo.gpus()]
    others = [gpus[len(gpus) // 2], gpus[-1], gpus[1], gpus[0], "lonely-gpu", gpus[-1]]
    got = paths.path_latencies(topo, gpus[0], others, fab)
    for dst, info in zip(others, got):
        dist, prev = paths._dijkstra(fab, [gpus[0]], {dst})   # a search that stops at dst
        if dst not in dist:
            assert info is None
            continue
        route = [dst]
        while prev[route[-1]] is not None:
            route.append(prev[route[-1]])
        assert (info.latency_s, info.path, info.hops) == (dist[dst], route[::-1], len(route) - 1)
    assert got[4] is None and got[0].hops > 2


def test_dead_end_nics_behind_one_switch_with_other_figures(monkeypatch):
    """The batched search keeps one dead-end NIC per (system, switch, link, hop) - the least id: NICs of
    one system on one leaf with other link latencies or hop latencies, and ties at equal distance, must
    still give the one-by-one figures and pair."""
    topo = build_fat_tree(24, "dgx-h100", per_leaf=4)
    fab = Fabric(topo)
    nic_links = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")
                        and "nic" in (topo.devices[lk.a].kind, topo.devices[lk.b].kind)), key=lambda lk: lk.id)
    for k, lk in enumerate(nic_links[::5]):
        fab.bundle(lk.a, lk.b).latency_s *= (0.5, 2.0, 0.0)[k % 3]
    for lk in nic_links[1::9]:
        nic = lk.a if topo.devices[lk.a].kind == "nic" else lk.b
        fab.hop_latency[nic] *= 0.25
    batched = paths.system_to_system_latency(topo, fab=fab)
    monkeypatch.setattr(paths, "BATCH_CLASSES", 10 ** 9)
    assert batched == paths.system_to_system_latency(topo, fab=fab)


@pytest.mark.parametrize("make", CASES[:2] + CASES[-2:])
def test_least_pushes_search_equals_the_plain_search(make):
    """path_latencies' search pushes a node only when it improves on what was pushed for it: every
    distance and predecessor equals the plain search's, whole and stopped at targets."""
    topo = make()
    fab = Fabric(topo)
    gpus = [d.id for d in topo.gpus()]
    for src, targets in ((gpus[0], None), (gpus[-1], {gpus[1], gpus[len(gpus) // 2]}), (gpus[3], {gpus[4]})):
        assert paths._dijkstra(fab, [src], targets, least_pushes=True) == paths._dijkstra(fab, [src], targets)


@pytest.mark.parametrize("make", CASES[:2] + CASES[-2:])
def test_a_search_that_skips_gpus_other_than_its_targets_keeps_every_other_figure(make):
    """path_latencies' search never pushes a GPU it does not look for (a route only ends at one): every
    other node's distance and predecessor are the plain search's, and no other GPU is reached."""
    topo = make()
    fab = Fabric(topo)
    gpus = [d.id for d in topo.gpus()]
    for src, targets in ((gpus[0], {gpus[len(gpus) // 2], gpus[-1]}), (gpus[-1], {gpus[1]}),
                         (gpus[3], {gpus[4], gpus[3]})):
        dist, prev = paths._dijkstra(fab, [src], targets, least_pushes=True, targets_only_gpus=True)
        plain_dist, plain_prev = paths._dijkstra(fab, [src], targets)
        kept = {n for n in plain_dist if not fab.is_gpu(n) or n in targets or n == src}
        assert set(dist) == kept
        assert dist == {n: plain_dist[n] for n in kept} and prev == {n: plain_prev[n] for n in kept}
    with pytest.raises(ValueError):
        paths._dijkstra(fab, [gpus[0]], None, targets_only_gpus=True)


def _hanging_but_one():
    """Systems whose NICs all reach one leaf (each hangs off the fabric by that leaf), zero-latency
    links among them, and one system given a link to a second leaf: it no longer hangs, and a route
    between two leaves may now pass through it."""
    topo = build_fat_tree(16, "dgx-h100", per_leaf=4)
    ib = sorted((lk for lk in topo.links.values() if lk.type.startswith("IB")), key=lambda lk: lk.id)
    for lk in ib[::5]:
        lk.latency_s = 0.0
    nic = next(e for lk in ib for e in (lk.a, lk.b) if topo.devices[e].kind == "nic" and e.startswith("s05."))
    leaves = sorted(d for d in topo.devices if d.startswith("leaf"))
    topo.links["extra-nic-link"] = Link("extra-nic-link", nic, leaves[-1], ib[0].type, latency_s=0.0)
    topo._links_by_device = None
    return topo


@pytest.mark.parametrize("make", [_hanging_but_one, lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True),
                                  _zero_latency_corner])
def test_a_search_that_leaves_out_hanging_systems_gives_each_destination_its_route(make):
    """path_latencies does not enter a system that hangs off the fabric by one device (unless it holds
    an end): every destination, inside such a system or past it, gets the plain search's latency and
    route."""
    from dgxstudio.analysis.fabric import system_map
    topo = make()
    fab = Fabric(topo)
    gpus = [d.id for d in topo.gpus()]
    hanging = paths._outside_hanging_systems(fab, system_map(topo), {None})
    if make is _hanging_but_one:
        assert hanging is not None and len(hanging.hanging) == 15 and "s05.system" not in hanging.hanging
    else:
        assert hanging is None  # rail-optimized: every system reaches several leaves
    for src in (gpus[0], gpus[-1], gpus[40]):
        dsts = [gpus[len(gpus) // 2], gpus[-1], gpus[9], gpus[41], gpus[0]]
        for dst, info in zip(dsts, paths.path_latencies(topo, src, dsts, fab)):
            dist, prev = paths._dijkstra(fab, [src], {dst})
            route = [dst]
            while prev[route[-1]] is not None:
                route.append(prev[route[-1]])
            assert (info.latency_s, info.path, info.hops) == (dist[dst], route[::-1], len(route) - 1)


def _leaf_twins_with_an_odd_one():
    """Systems on leaves of one pod under the same spines (twins); one system's NIC links slower, so its
    class starts with other figures and cannot share its twins' relaxation."""
    topo = build_fat_tree(48, "dgx-h100", per_leaf=2)
    for lk in topo.links.values():
        if lk.type.startswith("IB") and lk.a.startswith("s07."):
            lk.latency_s = 7.5e-7
    return topo


@pytest.mark.parametrize("make", CASES + [_leaf_twins_with_an_odd_one])
def test_classes_alike_up_to_twins_share_one_relaxation(make, monkeypatch):
    """Relaxing once per class alike up to twin switches and reading the others permuted gives every
    class the figures of its own relaxation, bit for bit; on fat trees with systems hanging off their
    leaves, far fewer relaxations are made than there are classes."""
    topo = make()
    fab = Fabric(topo)
    columns = []
    relax = paths._relax

    def counting(starts, *args):
        columns.append(len(starts))
        return relax(starts, *args)

    monkeypatch.setattr(paths, "_relax", counting)
    found = []
    batched = paths._batched_nearest

    def keep(*args):
        found.append(batched(*args))
        return found[-1]

    monkeypatch.setattr(paths, "_batched_nearest", keep)
    shared = paths.system_to_system_latency(topo, fab=fab)
    shared_columns = sum(columns)
    monkeypatch.setattr(paths, "_twin_groups", lambda n_nodes, *rest: list(range(n_nodes)))
    columns.clear()
    alone = paths.system_to_system_latency(topo, fab=fab)
    assert shared == alone
    if not found:  # (too few classes to search them together)
        return
    assert repr(found[0]) == repr(found[1])  # every class's least, greatest and farthest system
    classes = len(found[0])
    assert shared_columns <= sum(columns) <= classes  # (classes with the very same start share one)
    if make is _leaf_twins_with_an_odd_one:
        assert shared_columns == 2 and classes == 25  # the 24 leaves' classes, the odd system's
