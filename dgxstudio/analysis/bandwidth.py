"""Per-GPU bandwidth by link class (NVLink, PCIe, network) and its aggregate over a GPU set."""

from __future__ import annotations

from dataclasses import dataclass

from ..cancel import check_cancelled
from ..model.catalog import NETWORK_FAMILIES
from ..model.topology import Topology
from .fabric import system_devices, system_map


@dataclass
class GpuBandwidth:
    gpu: str
    nvlink_bidir_Bps: float
    pcie_bidir_Bps: float
    network_bidir_Bps: float


class _LinkFigures:
    """A link's family and both directions' bandwidth, looked up once per distinct (type, width,
    count, override): the same numbers as asking the topology link by link, which a cluster of
    thousands of systems does for a handful of distinct links."""

    def __init__(self, topo: Topology, achievable: bool):
        self.topo, self.achievable = topo, achievable
        self.known: dict[tuple, tuple[str | None, float]] = {}

    def __call__(self, lk) -> tuple[str | None, float]:
        spec = (lk.type, lk.width, lk.count, lk.bandwidth_per_direction_Bps)
        fig = self.known.get(spec)
        if fig is None:
            lt = self.topo.link_type_of(lk)
            fig = self.known[spec] = ((lt.family if lt is not None else None),
                                      2 * self.topo.link_bandwidth_per_direction_Bps(lk, self.achievable))
        return fig


def _network_share(topo: Topology, achievable: bool = False, figures: _LinkFigures | None = None) -> dict[str, float]:
    """Network bandwidth of each system's compute NICs divided among its GPUs."""
    per_system_bw: dict[str, float] = {}
    per_system_gpus: dict[str, int] = {}
    system_of = system_map(topo)
    figure = figures or _LinkFigures(topo, achievable)
    for dev in topo.devices.values():
        sid = system_of[dev.id]
        if sid is None:
            continue
        if dev.kind == "gpu":
            per_system_gpus[sid] = per_system_gpus.get(sid, 0) + 1
        elif dev.kind == "nic" and dev.properties.get("role", "compute") == "compute":
            for lk in topo.links_of(dev.id):
                family, both = figure(lk)
                if family in NETWORK_FAMILIES:
                    per_system_bw[sid] = per_system_bw.get(sid, 0.0) + both
    return {sid: per_system_bw.get(sid, 0.0) / n for sid, n in per_system_gpus.items() if n}


def compute_nic_ports(topo: Topology, gpu: str) -> list[dict]:
    """The network ports of the compute NICs of a GPU's system, cabled or not, by rate: what the
    system offers the network (a lone DGX H100: 8 ports of 400 Gb/s) even before it is wired to one."""
    system_of = system_map(topo)
    sid = system_of.get(gpu)
    if sid is None:
        return []
    by_rate: dict[float, list[int]] = {}
    for did in system_devices(topo, system_of).get(sid, []):
        dev = topo.devices[did]
        if dev.kind != "nic" or dev.properties.get("role", "compute") != "compute":
            continue
        part = topo.part_of(did)
        for pg in part.ports if part else []:
            lt = topo.catalog.link_type(pg.accepts[0]) if pg.accepts else None
            if lt is None or lt.family not in NETWORK_FAMILIES:
                continue
            cabled = sum(lk.count for lk in topo.links_of(did)
                         if (t := topo.link_type_of(lk)) is not None and t.family in NETWORK_FAMILIES)
            entry = by_rate.setdefault(lt.rate_bps_per_direction, [0, 0])
            entry[0] += pg.count
            entry[1] += min(cabled, pg.count)
    return [{"count": n, "cabled": c, "rate_bps_per_direction": rate} for rate, (n, c) in sorted(by_rate.items())]


def gpu_bandwidth(topo: Topology, gpus: list[str], achievable: bool = False) -> list[GpuBandwidth]:
    """Rated figures, or with ``achievable`` each link type's catalog efficiency (what NCCL reaches)."""
    figure = _LinkFigures(topo, achievable)
    share = _network_share(topo, achievable, figure)
    system_of = system_map(topo)
    out = []
    for k, gpu in enumerate(gpus):
        if not k & 1023:
            check_cancelled()
        by_family = {"nvlink": 0.0, "pcie": 0.0, "network": 0.0}
        for lk in topo.links_of(gpu):
            family, both = figure(lk)
            if family is None:  # (a link of an unknown type)
                continue
            key = "network" if family in NETWORK_FAMILIES else family
            if key in by_family:
                by_family[key] += both
        sid = system_of.get(gpu)
        if by_family["network"] == 0.0 and sid in share:
            by_family["network"] = share[sid]
        out.append(GpuBandwidth(gpu, by_family["nvlink"], by_family["pcie"], by_family["network"]))
    return out
