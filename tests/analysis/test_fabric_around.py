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
