"""NCCL's path types between a GPU and a NIC on the drawn topology (src/graph/paths.cc), and the worst
of them over the NICs a call's channels leave their systems through: NCCL's ``typeInter``, which its
LL128 rule reads (``ll128_rule`` in resources/nccl_tuning.json, where the types, their order and the
sources are).

A GPU reaches a NIC over PCIe, NVLink-C2C and CPU links, never through another GPU or an NVSwitch
(only NVLink paths pass a GPU in NCCL). Each hop has a type (a PCIe link PIX, one between two PCIe
switches PXB, one at a CPU PHB, a link between CPUs SYS, a GPU's C2C link to its CPU C2C); a path is
as bad as its worst hop, and the least such path counts, as ncclTopoSetPaths keeps it. A GPU on C2C
whose NIC hangs off that CPU is P2C. With PXN, a GPU whose own path goes through a CPU reaches the NIC
through an NVLink peer that reaches it within ``pxn.peer_max``: PXN.

Which NICs the channels use: each system's first ``plan.rails`` (NIC, GPU) pairs of
``channels.nic_gpus_per_system``, the pairs the rings enter and leave by and the trees' chains start at.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..model.names import device_words
from ..sim.tuning import ll128_refusal, tuning_data
from .channels import ChannelPlan, nic_gpus_per_system


def _rule() -> dict:
    return tuning_data()["ll128_rule"]


def rank(path_type: str) -> int:
    """A path type's place in NCCL's order (lower is closer)."""
    return _rule()["path_types"].index(path_type)


@dataclass(frozen=True)
class NetPath:
    """The worst GPU-NIC path of a call's channels: its type and where it is (empty on one system)."""

    type: str = "PIX"
    gpu: str = ""
    nic: str = ""

    def where(self, topo=None) -> str:
        """The GPU and NIC in words: by id, or with ``topo`` as the canvas names them ("DGX H100 #1 GPU0
        to DGX H100 #1 IB0"), which is what a refusal shows."""
        if not self.gpu:
            return ""
        gpu, nic = (self.gpu, self.nic) if topo is None else (device_words(topo, self.gpu), device_words(topo, self.nic))
        return f"{gpu} to {nic}" if self.nic else f"no compute NIC near {gpu}"


def ll128_left_out(shape) -> str:
    """What auto's reason adds when NCCL's rule (``ll128_refusal``) took LL128 away from its choice: an
    architect seeing LL or Simple picked on Hopper asked why not LL128."""
    why = ll128_refusal(shape)
    return f"; LL128 left out, as NCCL does not enable it here: {why}" if why else ""


def sm_range(topo, gpus: list[str]) -> tuple[int, int] | None:
    """The GPUs' least and greatest SM version (their parts' ``nccl_sm``), NCCL's minCompCap and
    maxCompCap; None where the catalog gives none."""
    parts = [topo.catalog.part(p) for p in {topo.devices[g].part for g in gpus}]
    sms = [int(s) for p in parts if p is not None and isinstance(s := p.extra.get("nccl_sm"), (int, float))]
    return (min(sms), max(sms)) if sms else None


def _hop_type(fabric, u: str, v: str, hop: dict) -> str | None:
    family = fabric.bundles[(u, v) if u <= v else (v, u)].family
    ku, kv = fabric.kind.get(u), fabric.kind.get(v)
    if family == "pcie":
        if "cpu" in (ku, kv):
            return hop["pcie_at_cpu"]
        return hop["pcie_switch_to_switch"] if ku == kv == "pcie_switch" else hop["pcie"]
    if family == "cpu":
        if ku == kv == "cpu":
            return hop["cpu_to_cpu"]
        if {ku, kv} == {"gpu", "cpu"}:
            return hop["gpu_to_cpu"]
        return hop["pcie_at_cpu"]
    return None


def gpu_nic_path(fabric, gpu: str, nic: str) -> str | None:
    """NCCL's path type from ``gpu`` to ``nic`` without PXN (None: no such path)."""
    rule = _rule()
    order, hop = rule["path_types"], rule["hop_types"]
    # least (worst hop's rank, hops) first, as ncclTopoSetPaths keeps the least type
    best: dict[str, tuple[int, int]] = {gpu: (-1, 0)}
    heap = [(-1, 0, gpu, False)]
    while heap:
        worst, hops, u, c2c = heapq.heappop(heap)
        if best.get(u, (99, 0)) < (worst, hops):
            continue
        if u == nic:
            found = order[worst]
            p2c = rule["merges"].get(f"{hop['gpu_to_cpu']}+{found}")
            return p2c if c2c and p2c else found
        for v in fabric.adj.get(u, ()):
            kv = fabric.kind.get(v)
            if kv in ("gpu", "nvswitch") or (kv == "nic" and v != nic):
                continue
            t = _hop_type(fabric, u, v, hop)
            if t is None:
                continue
            key = (max(worst, order.index(t)), hops + 1)
            if key < best.get(v, (99, 0)):
                best[v] = key
                heapq.heappush(heap, (*key, v, c2c or (u == gpu and t == hop["gpu_to_cpu"])))
    return None


def _nvlink_joined(fabric, a: str, b: str) -> bool:
    """A direct NVLink or a shared NVSwitch (NCCL's PATH_NVL between two GPUs)."""
    def nv(u):
        return {v for v in fabric.adj.get(u, ()) if fabric.bundles[(u, v) if u <= v else (v, u)].family == "nvlink"}
    near = nv(a)
    return b in near or any(fabric.kind.get(v) == "nvswitch" and b in nv(v) for v in near)


def pair_path(fabric, gpu: str, nic: str, members: list[str], pxn: bool) -> str:
    """``gpu_nic_path``, or PXN where PXN is on, the GPU's own path is worse than PXN and one of
    ``members`` (the selected GPUs of its system) is NVLink-joined to it and reaches the NIC within
    ``pxn.peer_max`` (paths.cc's rule, its bandwidth branch left out)."""
    rule = _rule()
    own = gpu_nic_path(fabric, gpu, nic) or "SYS"
    p = rule["pxn"]
    if not pxn or rank(own) <= rank(p["above"]):
        return own
    for peer in members:
        if peer != gpu and _nvlink_joined(fabric, gpu, peer):
            t = gpu_nic_path(fabric, peer, nic)
            if t is not None and rank(t) <= rank(p["peer_max"]):
                return p["becomes"]
    return own


def inter_node_path(topo, fabric, plan: ChannelPlan, router=None, pxn: bool = False) -> NetPath:
    """The worst path type between a GPU and the NIC it uses over the channels of ``plan``. One system:
    NCCL's search start (PIX). A system with no NIC near its GPUs: SYS, the search's end."""
    if plan.nodes <= 1:
        return NetPath()
    pairs_of = nic_gpus_per_system(topo, fabric, plan.systems, router)
    if plan.rails == 0:
        s = next(i for i, x in enumerate(pairs_of) if not x)
        return NetPath("SYS", plan.systems[s][0] if plan.systems[s] else "")
    worst = NetPath("PIX")
    # systems wired alike (``Router.local_twin``) with the same GPUs selected have the same types, renamed
    known: dict[tuple, str] = {}
    for members, pairs in zip(plan.systems, pairs_of):
        sid = router.system_of.get(members[0]) if router is not None and members else None
        twin = router.local_twin(sid, topo) if sid is not None and len(plan.systems) >= 8 else None
        n = len(router._signatures[sid][2]) if twin is not None else 0
        selected = (twin, tuple(g[n:] for g in members))
        for nic, gpu in pairs[:plan.rails]:
            key = (selected, nic[n:], gpu[n:]) if twin is not None else None
            t = known.get(key) if key is not None else None
            if t is None:
                t = pair_path(fabric, gpu, nic, members, pxn)
                if key is not None:
                    known[key] = t
            if rank(t) > rank(worst.type):
                worst = NetPath(t, gpu, nic)
    return worst
