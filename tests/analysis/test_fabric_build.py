"""The Fabric built in one pass over the links and one over the pairs (issue #16) equals merging the
links pair by pair as ``to_graph`` orders them: the same bundles (figures, links, order), adjacency
and dropped pairs, for every family filter and with achievable figures."""

import pytest

from dgxstudio.analysis.fabric import Fabric
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import build_preset
from dgxstudio.model.topology import Link


def _reference(topo, families, achievable):
    """Bundles and adjacency as the Fabric made them before: a list per pair, then Bundle figures."""
    merged, nbrs, devices = {}, {d: [] for d in topo.devices}, topo.devices
    for lk in topo.links.values():
        a, b = lk.a, lk.b
        if a not in devices or b not in devices or a == b:
            continue
        lt = topo.link_type_of(lk)
        family = lt.family if lt else None
        if families is not None and family not in families:
            continue
        bw, lat = topo.link_bandwidth_per_direction_Bps(lk, achievable), topo.link_latency_s(lk)
        key = (a, b) if a <= b else (b, a)
        e = merged.get(key)
        if e is None:
            merged[key] = [bw, lk.count, [lk.id], lat, family]
            nbrs[a].append(b)
            nbrs[b].append(a)
        else:
            e[0] += bw
            e[1] += lk.count
            e[2].append(lk.id)
            e[3] = min(e[3], lat)
    bundles, adj, dropped, seen = {}, {d: [] for d in devices}, 0, set()
    for n in devices:
        for m in nbrs[n]:
            if m in seen:
                continue
            bw, count, links, lat, family = merged[(n, m) if n <= m else (m, n)]
            if bw <= 0:
                dropped += 1
                continue
            key = (n, m) if n <= m else (m, n)
            bundles[key] = (key[0], key[1], count, bw / count, lat, family, links, bw)
            adj[n].append(m)
            adj[m].append(n)
        seen.add(n)
    return bundles, adj, dropped


def _edited():
    """Parallel links of other latencies and counts, a link of an unknown type (no bandwidth: dropped),
    a self link, a dangling link and links written from either end."""
    topo = build_fat_tree(6, "dgx-h100", rail_optimized=True, per_leaf=2)
    links = list(topo.links.values())
    for k, lk in enumerate(links[::17]):
        new_id = f"{lk.id}.twin{k}"
        topo.links[new_id] = Link(new_id, lk.b, lk.a, lk.type, lk.count + 1, latency_s=(k % 3) * 1e-7,
                                  bandwidth_per_direction_Bps=1e9 * (k + 1))
    lk = links[5]
    gpus = [g.id for g in topo.gpus()]
    topo.links["odd-type"] = Link("odd-type", gpus[0], gpus[-1], "no-such-type")  # a pair of its own
    topo.links["self"] = Link("self", lk.a, lk.a, lk.type)
    topo.links["dangling"] = Link("dangling", lk.a, "missing", lk.type)
    topo._invalidate()
    return topo


@pytest.mark.parametrize("make", [lambda: build_preset("dgx-a100"), lambda: build_preset("gb200-nvl72"),
                                  lambda: build_preset("dgx1-v100"), _edited])
@pytest.mark.parametrize("families", [None, {"nvlink"}, {"infiniband", "ethernet"}, {"pcie", "nvlink"}])
@pytest.mark.parametrize("achievable", [False, True])
def test_fabric_equals_merging_pair_by_pair(make, families, achievable):
    topo = make()
    fab = Fabric(topo, families, achievable)
    bundles, adj, dropped = _reference(topo, families, achievable)
    got = {k: (b.a, b.b, b.units, b.unit_bw, b.latency_s, b.family, b.links, b.total_bw) for k, b in fab.bundles.items()}
    assert list(got) == list(bundles) and got == bundles
    assert fab.adj == adj and fab.dropped == dropped
    if make is _edited and families is None:
        assert dropped == 1 and any(len(b.links) > 1 for b in fab.bundles.values())
