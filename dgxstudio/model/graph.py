"""networkx views of a topology for the analysis and simulation code."""

from __future__ import annotations

import networkx as nx

from .topology import Topology


def to_multigraph(topo: Topology, achievable: bool = False) -> nx.MultiGraph:
    """One node per device, one edge per link (keyed by link id) with its figures as attributes."""
    g = nx.MultiGraph(name=topo.name)
    for d in topo.devices.values():
        g.add_node(d.id, kind=d.kind, part=d.part, name=d.name,
                   hop_latency_s=topo.device_hop_latency_s(d.id))
    for lk in topo.links.values():
        if lk.a not in topo.devices or lk.b not in topo.devices:
            continue
        lt = topo.link_type_of(lk)
        g.add_edge(lk.a, lk.b, key=lk.id, link=lk.id, type=lk.type, family=lt.family if lt else None,
                   count=lk.count, latency_s=topo.link_latency_s(lk),
                   bandwidth_per_direction_Bps=topo.link_bandwidth_per_direction_Bps(lk, achievable))
    return g


def to_graph(topo: Topology, achievable: bool = False, families: set[str] | None = None) -> nx.Graph:
    """A simple graph: parallel links between one pair merged, capacities added.

    ``families`` keeps only links of those families (e.g. ``{"nvlink"}``). Each edge carries
    ``bandwidth_per_direction_Bps``, ``count`` (physical links) and ``links`` (their ids).
    """
    g = nx.Graph(name=topo.name)
    for d in topo.devices.values():
        g.add_node(d.id, kind=d.kind, part=d.part, name=d.name,
                   hop_latency_s=topo.device_hop_latency_s(d.id))
    for lk in topo.links.values():
        if lk.a not in topo.devices or lk.b not in topo.devices or lk.a == lk.b:
            continue
        lt = topo.link_type_of(lk)
        family = lt.family if lt else None
        if families is not None and family not in families:
            continue
        bw = topo.link_bandwidth_per_direction_Bps(lk, achievable)
        lat = topo.link_latency_s(lk)
        if g.has_edge(lk.a, lk.b):
            e = g.edges[lk.a, lk.b]
            e["bandwidth_per_direction_Bps"] += bw
            e["count"] += lk.count
            e["links"].append(lk.id)
            e["latency_s"] = min(e["latency_s"], lat)
        else:
            g.add_edge(lk.a, lk.b, bandwidth_per_direction_Bps=bw, count=lk.count, links=[lk.id],
                       family=family, latency_s=lat)
    return g
