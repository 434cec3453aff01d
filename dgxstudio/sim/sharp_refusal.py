"""Why CollNet cannot run on a topology, in words that name what is at fault and what to do: one
system (CollNet joins systems), no InfiniBand switch, switches whose part does not reduce (SHARP), or
adapters NCCL's SHARP plugin does not drive. What the plugin needs (NVIDIA Quantum HDR switches and
ConnectX-6 HDR adapters and above) is catalog data with its source (`sharp_source`)."""

from __future__ import annotations


def does_reduction(part) -> bool:
    """Whether a switch part reduces in the network (NVLink SHARP, SHARP): a catalog property."""
    if part is None:
        return False
    return bool(part.specs.get("in_network_reduction", part.extra.get("in_network_reduction")))


def does_collnet(part) -> bool:
    """Whether a NIC part is one NCCL's SHARP plugin drives (ConnectX-6 HDR and above): a catalog property."""
    return part is not None and bool(part.specs.get("sharp_collnet"))


def inside_one_system(runs, prefer: str | None = None) -> str:
    """NCCL's algorithms inside one system that ``runs`` (algorithm -> bool) lets these GPUs take, in
    words: "ring, tree or nvls" on a DGX H100, "ring or tree" where the NVSwitches do not reduce (DGX A100);
    ``prefer`` alone where it runs (nvls for the NVLS tree)."""
    if prefer and runs(prefer):
        return prefer
    names = [a for a in ("ring", "tree", "nvls") if runs(a)]
    return " or ".join(filter(None, (", ".join(names[:-1]), names[-1])))


def collnet_refusal(topo, nodes: int, runs=None) -> str | None:
    """None when CollNet can run: several systems, every InfiniBand switch reducing, every NIC that
    joins one an adapter the SHARP plugin drives. ``runs`` (algorithm -> bool) says which of NCCL's
    algorithms these GPUs can take instead, for the one-system refusal to suggest only those."""
    if nodes < 2:
        return ("collnet reduces across systems in SHARP InfiniBand switches; these GPUs are in one system"
                + (f" (inside one system NCCL uses {inside_one_system(runs)})" if runs else ""))
    switches = [d for d in topo.devices.values() if d.kind == "ib_switch"]
    if not switches:
        return "collnet reduces in SHARP InfiniBand switches; this topology has no InfiniBand switch"
    plain = [d for d in switches if not does_reduction(topo.part_of(d.id))]
    if not plain:
        return _adapter_refusal(topo)
    part = topo.part_of(plain[0].id)
    capable = sorted(p.id for p in topo.catalog.parts.values() if p.kind == "ib_switch" and does_reduction(p))
    one = f"{plain[0].name} ({part.label if part else plain[0].part})"
    which = (f"its one, {one}, does not" if len(switches) == 1 else
             f"none of its {len(switches):,} does, e.g. {one}" if len(plain) == len(switches) else
             f"{len(plain):,} of its {len(switches):,} do not, e.g. {one}")
    # Switch-IB 2 (EDR) has SHARPv1, but NCCL's SHARP plugin needs Quantum (HDR) switches and above
    return (f"collnet reduces in the switches through NCCL's SHARP plugin, which needs every InfiniBand switch to be "
            f"an NVIDIA Quantum (HDR) or later (SHARPv2 and above; EDR's SHARPv1 is not supported); {which}"
            + (f"; generate the fabric with `generate fat-tree ... --switch PART`, PART one of {', '.join(capable)}"
               + _nic_hint(topo) if capable else ""))


def _nic_hint(topo) -> str:
    """When the NICs would be refused next (DGX-1's ConnectX-4 on EDR), the --nic parts the plugin drives."""
    if _adapter_refusal(topo) is None:
        return ""
    nics = sorted(p.id for p in topo.catalog.parts.values() if p.kind == "nic" and does_collnet(p))
    return f", and `--nic PART`, PART one of {', '.join(nics)} (the SHARP plugin needs ConnectX-6 HDR and above)"


def _adapter_refusal(topo) -> str | None:
    """The first NIC joined to an InfiniBand switch that the SHARP plugin does not drive, in words."""
    nics = topo.devices_of_kind("nic")
    if all(does_collnet(topo.part_of(d.id)) for d in nics):   # the usual case, without a look at the links
        return None
    for lk in topo.links.values():
        for a, b in ((lk.a, lk.b), (lk.b, lk.a)):
            nic, switch = topo.devices.get(a), topo.devices.get(b)
            if (nic is not None and switch is not None and nic.kind == "nic" and switch.kind == "ib_switch"
                    and not does_collnet(topo.part_of(nic.id))):
                part = topo.part_of(nic.id)
                return (f"collnet needs NICs that NCCL's SHARP plugin drives (ConnectX-6 HDR and above); "
                        f"{nic.name} ({part.label if part else nic.part}) joins {switch.name} and is not one")
    return None
