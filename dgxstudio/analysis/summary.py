"""All graph facts about a GPU set in one JSON-ready dictionary (what ``dgxstudio analyze`` prints)."""

from __future__ import annotations

from collections.abc import Callable

from ..cancel import Cancelled
from ..heap import paused_gc, release_later
from ..model.systems import power_summary
from ..model.topology import Topology
from .bandwidth import compute_nic_ports, gpu_bandwidth
from .bisection import bisection_bandwidth
from .fabric import Fabric, sharing_system_map, system_map
from .paths import path_latencies, system_to_system_latency
from .rings import find_rings


def analyze(topo: Topology, gpus: list[str], progress: Callable[[float, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> dict:
    with paused_gc(), sharing_system_map(topo):
        try:
            return _analyze(topo, gpus, progress, cancelled)
        except Cancelled as exc:
            # The traceback holds every table built so far (freeing them took this thread 0.2-1.15 s
            # on 4,000 DGX H100): a daemon thread lets go of them piece by piece, with the collector
            # paused meanwhile (re-enabled first, its next pass would walk them all), and this
            # thread ends at once.
            release_later(exc)
    raise Cancelled()


def _analyze(topo: Topology, gpus: list[str], progress: Callable[[float, str], None] | None,
             cancelled: Callable[[], bool] | None) -> dict:
    steps = ["bandwidth", "rings", "bisection", "latency"]

    def step(i: int) -> None:
        if cancelled and cancelled():
            raise Cancelled()
        if progress:
            progress(i / len(steps), steps[i] if i < len(steps) else "done")

    step(0)
    bws = gpu_bandwidth(topo, gpus)
    per_gpu_nv = [b.nvlink_bidir_Bps for b in bws]
    step(1)
    fab = Fabric(topo)
    rings = find_rings(topo, gpus, fabric=fab)
    step(2)
    bis = bisection_bandwidth(topo, gpus, fabric=fab)
    step(3)
    sys_lat = system_to_system_latency(topo, fab=fab)
    gpu_pair = None
    if len(gpus) >= 2:
        worst = None
        # Latency from the first GPU to every other: the set's diameter seen from one end.
        others = gpus[1:] if len(gpus) <= 64 else [gpus[len(gpus) // 2], gpus[-1]]
        for info in path_latencies(topo, gpus[0], others, fab):
            if info is not None and (worst is None or info.latency_s > worst.latency_s):
                worst = info
        gpu_pair = worst
    if progress:
        progress(1.0, "done")
    power_W, unpowered, power_basis = power_summary(topo, system_map(topo))
    return {
        "topology": topo.name,
        "gpus": len(gpus),
        "gpu_ids": gpus if len(gpus) <= 64 else gpus[:8] + ["..."] + gpus[-8:],
        "bisection": {
            "bidir_Bps": bis.bidir_Bps,
            "exact": bis.exact,
            "method": bis.method,
            "half_a": bis.half_a,
            "half_b": bis.half_b,
            # the heuristic's refinement: cuts measured and max-flow work (arcs x phases) spent within
            # its budget, and whether the budget ended it (the search, not the machine, decides)
            "refinement": None if bis.refinement is None else {
                "cuts": bis.refinement.cuts,
                "work": bis.refinement.work,
                "work_budget": bis.refinement.budget,
                "ended_by_budget": bis.refinement.ended_by_budget,
            },
        },
        "rings": {
            "count": rings.count,
            "fabric": rings.fabric,
            "method": rings.method,
            "exact": rings.exact,
            "link_disjoint": rings.link_disjoint,
            "allreduce_busbw_bound_Bps": rings.allreduce_busbw_bound_Bps,
            "ring_bidir_Bps": [r.bidir_Bps for r in rings.rings],
            "rings": [r.gpus for r in rings.rings],
        },
        "nvlink_bw_per_gpu_bidir_Bps": max(per_gpu_nv) if per_gpu_nv else 0.0,
        "nvlink_bw_per_gpu_min_bidir_Bps": min(per_gpu_nv) if per_gpu_nv else 0.0,
        "aggregate_nvlink_bw_bidir_Bps": sum(per_gpu_nv),
        "pcie_bw_per_gpu_bidir_Bps": max((b.pcie_bidir_Bps for b in bws), default=0.0),
        "network_bw_per_gpu_bidir_Bps": max((b.network_bidir_Bps for b in bws), default=0.0),
        "aggregate_network_bw_bidir_Bps": sum(b.network_bidir_Bps for b in bws),
        "compute_nic_ports_first_system": compute_nic_ports(topo, gpus[0]) if gpus else [],
        "power": {"published_W": power_W, "without_published_figure": unpowered, "basis": power_basis},
        "latency": {
            "max_system_to_system_s": sys_lat.max_s if sys_lat else None,
            "min_system_to_system_s": sys_lat.min_s if sys_lat else None,
            "worst_system_pair": list(sys_lat.worst_pair) if sys_lat else None,
            "switch_hops_worst": sys_lat.switch_hops_worst if sys_lat else None,
            "from_first_gpu_max_s": gpu_pair.latency_s if gpu_pair else None,
            "from_first_gpu_max_pair": [gpu_pair.src, gpu_pair.dst] if gpu_pair else None,
            "from_first_gpu_max_hops": gpu_pair.hops if gpu_pair else None,
        },
    }
