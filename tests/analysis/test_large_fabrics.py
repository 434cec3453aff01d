"""The searches that make 1,000-system clusters answer quickly give the figures the plain searches give."""

import random

import networkx as nx
import pytest

from dgxstudio.analysis.fabric import Fabric, bundle_key
from dgxstudio.analysis.paths import system_to_system_latency
from dgxstudio.model.builders import build_fat_tree


@pytest.fixture(scope="module")
def cluster():
    return build_fat_tree(160, "dgx-h100", rail_optimized=True, tiers=3)  # 40 leaves: two pods


def test_search_from_both_ends_finds_routes_as_short_as_the_one_ended_search(cluster):
    fab = Fabric(cluster)
    gpus = [d.id for d in cluster.gpus()]
    owner = {d: cluster.system_of(d) for d in cluster.devices if cluster.system_of(d)}
    rng = random.Random(7)
    residual = {k: b.units for k, b in fab.bundles.items()}
    for k in rng.sample(sorted(residual), 400):  # some links already used up
        residual[k] = 0
    for _ in range(60):
        a, b = rng.sample(gpus, 2)
        allowed = (owner[a], owner[b])
        plain = fab.route(a, b, residual, owner=owner, allowed_owners=allowed)
        meet = fab.route_meet(a, b, residual, owner=owner, allowed_owners=allowed)
        assert (plain is None) == (meet is None)
        if plain is None:
            continue
        assert len(meet) == len(plain) and meet[0] == a and meet[-1] == b
        assert all(residual[bundle_key(u, v)] >= 1 for u, v in zip(meet, meet[1:]))
        assert not any(fab.is_gpu(n) for n in meet[1:-1])
        assert all(owner.get(n) in (None, *allowed) for n in meet)


def test_system_to_system_latency_equals_a_search_over_every_network_node(cluster):
    fab = Fabric(cluster)
    lat = system_to_system_latency(cluster, fab=fab)
    # reference: Dijkstra over NICs and switches, latency = links + every device's hop latency
    g = nx.Graph()
    for (u, v), b in fab.bundles.items():
        if b.family == "infiniband":
            g.add_edge(u, v, w=b.latency_s + (fab.hop_latency[u] + fab.hop_latency[v]) / 2)
    nics = {}
    for n in g:
        if fab.kind[n] == "nic":
            nics.setdefault(cluster.system_of(n), []).append(n)
    systems = sorted(nics)
    worst = 0.0
    for s in systems[:: 31]:  # one system of each unit
        dist = nx.multi_source_dijkstra_path_length(g, nics[s], weight="w")
        for t in systems:
            if t != s:
                d = min(dist[n] for n in nics[t])
                worst = max(worst, d + (fab.hop_latency[nics[s][0]] + fab.hop_latency[nics[t][0]]) / 2)
    assert lat.max_s == pytest.approx(worst)
    assert lat.switch_hops_worst == 5
