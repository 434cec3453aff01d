"""A compact graph of a topology for path searches: parallel links merged into bundles.

A bundle between two devices has ``units`` physical links of ``unit_bw`` bytes/s per direction each.
Routes run through switches, NICs and CPUs but never through a GPU: GPUs are only ends of routes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..model.graph import to_graph
from ..model.topology import Topology


@dataclass
class Bundle:
    a: str
    b: str
    units: int
    unit_bw: float
    latency_s: float
    family: str | None
    links: list[str] = field(default_factory=list)

    @property
    def bandwidth(self) -> float:
        return self.units * self.unit_bw


def bundle_key(u: str, v: str) -> tuple[str, str]:
    return (u, v) if u <= v else (v, u)


class Fabric:
    def __init__(self, topo: Topology, families: set[str] | None = None, achievable: bool = False):
        self.topo = topo
        self.kind = {d.id: d.kind for d in topo.devices.values()}
        self.hop_latency = {d.id: topo.device_hop_latency_s(d.id) for d in topo.devices.values()}
        self.bundles: dict[tuple[str, str], Bundle] = {}
        self.adj: dict[str, list[str]] = {d: [] for d in topo.devices}
        for u, v, e in to_graph(topo, achievable, families).edges(data=True):
            if e["bandwidth_per_direction_Bps"] <= 0:
                continue
            key = bundle_key(u, v)
            self.bundles[key] = Bundle(key[0], key[1], e["count"], e["bandwidth_per_direction_Bps"] / e["count"],
                                       e["latency_s"], e["family"], list(e["links"]))
            self.adj[u].append(v)
            self.adj[v].append(u)

    def is_gpu(self, node: str) -> bool:
        return self.kind.get(node) == "gpu"

    def bundle(self, u: str, v: str) -> Bundle:
        return self.bundles[bundle_key(u, v)]

    def route(self, src: str, dst: str, residual: dict | None = None, need: int = 1,
              owner: dict[str, str] | None = None, allowed_owners: tuple = ()) -> list[str] | None:
        """Fewest-hop route from src to dst through non-GPU devices (BFS), or None.

        With ``residual`` (units left per bundle key) only bundles with at least ``need`` units are used;
        with ``owner`` (device -> system), devices of systems other than ``allowed_owners`` are not entered.
        """
        if src == dst:
            return [src]
        prev = {src: None}
        queue = deque([src])
        while queue:
            u = queue.popleft()
            for v in self.adj[u]:
                if v in prev or (owner is not None and v in owner and owner[v] not in allowed_owners):
                    continue
                if residual is not None and residual.get(bundle_key(u, v), 0) < need:
                    continue
                if v == dst:
                    path = [v, u]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1]
                prev[v] = u
                if not self.is_gpu(v):
                    queue.append(v)
        return None

    def reachable_gpus(self, src: str, residual: dict | None = None) -> list[str]:
        """GPUs reachable from src through non-GPU devices, nearest first (BFS order)."""
        seen = {src}
        out = []
        queue = deque([src])
        while queue:
            u = queue.popleft()
            for v in self.adj[u]:
                if v in seen:
                    continue
                if residual is not None and residual.get(bundle_key(u, v), 0) < 1:
                    continue
                seen.add(v)
                if self.is_gpu(v):
                    out.append(v)
                else:
                    queue.append(v)
        return out

    def path_bundles(self, path: list[str]) -> list[tuple[str, str]]:
        return [bundle_key(path[i], path[i + 1]) for i in range(len(path) - 1)]
