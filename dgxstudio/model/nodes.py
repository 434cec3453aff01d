"""Which system (NCCL's node: one host) a GPU drawn outside every system frame is in.

NCCL's node is a host: one process space, one hostname. A drawing with system frames says which
host each GPU is in. A GPU outside every frame is read as the host its in-node links reach: the
devices outside frames joined by NVLink (directly or through NVSwitches), PCIe (switches, CPUs,
the NICs on them) or CPU links (UPI/xGMI, NVLink-C2C) form one system with no frame, so traffic
between them never leaves through a NIC. Network links (InfiniBand, Ethernet) do not join systems.
Such a system's id is its first GPU's id in document order (a lone GPU is its own system, as
before). Devices inside frames are never joined to one outside: frames decide alone where drawn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping

from .catalog import LinkFamilies

if TYPE_CHECKING:
    from .topology import Topology

#: link families that stay inside one host
NODE_FAMILIES = frozenset({"nvlink", "pcie", "cpu"})
#: device kinds with network ports only (in no host)
NETWORK_SWITCHES = frozenset({"ib_switch", "eth_switch"})


def _joined(topo: "Topology", start: str, loose: Callable[[str], bool],
            family: LinkFamilies | None = None) -> set[str]:
    """The devices outside frames that ``start`` reaches over in-node links. ``family``: link type ->
    its family, filled as types are met (shared across calls)."""
    seen, todo = {start}, [start]
    family = LinkFamilies(topo.catalog) if family is None else family
    while todo:
        d = todo.pop()
        for lk in topo.links_of(d):
            if family[lk.type] not in NODE_FAMILIES:
                continue
            other = lk.b if lk.a == d else lk.a
            if other not in seen and other in topo.devices and loose(other):
                seen.add(other)
                todo.append(other)
    return seen


def _first_gpu(topo: "Topology", members: set[str]) -> str | None:
    gpus = {d for d in members if topo.devices[d].kind == "gpu"}
    if len(gpus) <= 1:  # (no walk over the document for a network switch alone)
        return next(iter(gpus), None)
    return next(d for d in topo.devices if d in gpus)


def loose_system(topo: "Topology", device_id: str, loose: Callable[[str], bool]) -> str | None:
    """The system of a device outside every frame (``loose(d)``: d is outside every frame): its
    first GPU's id, None when the device reaches no GPU over in-node links (a network switch)."""
    if topo.devices[device_id].kind in NETWORK_SWITCHES:
        return None
    return _first_gpu(topo, _joined(topo, device_id, loose))


def loose_systems(topo: "Topology", frame_of: Mapping[str, str | None]) -> dict[str, str]:
    """``loose_system`` of every device ``frame_of`` (device -> its frame, None outside) leaves
    outside, in one pass: each device outside frames that reaches a GPU, and its system."""
    out: dict[str, str] = {}
    devices = topo.devices  # (network switches have network ports only: no walk over their cables)
    loose = [d for d, sid in frame_of.items() if sid is None and devices[d].kind not in NETWORK_SWITCHES]
    if not loose:
        return out
    outside = {d for d, sid in frame_of.items() if sid is None}
    done: set[str] = set()
    family = LinkFamilies(topo.catalog)
    for d in loose:
        if d in done:
            continue
        members = _joined(topo, d, outside.__contains__, family)
        done |= members
        first = _first_gpu(topo, members)
        if first is not None:
            out.update(dict.fromkeys(members, first))
    return out
