"""The reason a hierarchical all-reduce carries (text and JSON ``reason``), as NCCL's algorithms carry
what its model picked: the lecture's algorithm through one leader GPU per system, whose ring across
systems leaves through the leader's NIC only. Without it, 7% of the bound on 4 DGX A100 (one of each
system's 8 NICs carries the network stage; NCCL's ring and tree use them all) went unexplained."""

from __future__ import annotations

from ..model.catalog import NETWORK_FAMILIES


def cabled_nics(router, gpu: str) -> int | None:
    """How many compute NICs of the system of ``gpu`` are cabled to the network (None: the GPU is in no
    system). An uncabled one (``generate fat-tree --nics-per-system 2``) is not one the run could use."""
    sid = router.system_of.get(gpu)
    if sid is None:
        return None
    topo = router.topo
    devices = topo.devices

    def cabled(nic: str) -> bool:
        return any((t := topo.link_type_of(link)) is not None and t.family in NETWORK_FAMILIES
                   for link in topo.links_of(nic))

    return sum(1 for d in router.system_devices(sid) if (dev := devices[d]).kind == "nic"
               and dev.properties.get("role", "compute") == "compute" and cabled(d))


def hierarchical_reason(router, leaders: list[str]) -> str:
    """``leaders``: each system's leader GPU (``sched.meta["leaders"]``, from ``collectives.hierarchical``)."""
    head = "hierarchical as requested: the lecture's hierarchical all-reduce through one leader GPU per system"
    if len(leaders) <= 1:
        return f"{head}; one system here, so a reduce to its leader and a broadcast back, with no network stage"
    counts = {cabled_nics(router, leader) for leader in leaders}
    # (no brackets: the report prints the reason in brackets after the algorithm's name)
    steps = (f" - each system reduces to its leader, the {len(leaders)} leaders run a ring across systems, "
             f"each leader broadcasts back")
    if None in counts or 0 in counts:
        return head + steps
    lo, hi = min(counts), max(counts)
    if hi == 1:
        return head + steps + " - so its network stage runs over each system's one NIC"
    of = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return (head + steps + f" - so its network stage runs over one NIC per system, of its {of} cabled ones, "
            f"where NCCL's ring and tree use them all")
