"""Why CollNet cannot run on a topology, in words that name what is at fault and what to do: one
system (CollNet joins systems), no InfiniBand switch, or switches whose part does not reduce (SHARP)."""

from __future__ import annotations


def does_reduction(part) -> bool:
    """Whether a switch part reduces in the network (NVLink SHARP, SHARP): a catalog property."""
    if part is None:
        return False
    return bool(part.specs.get("in_network_reduction", part.extra.get("in_network_reduction")))


def collnet_refusal(topo, nodes: int) -> str | None:
    """None when CollNet can run: several systems, every InfiniBand switch reducing."""
    if nodes < 2:
        return ("collnet reduces across systems in SHARP InfiniBand switches; these GPUs are in one system"
                " (inside one system NCCL uses ring, tree or nvls)")
    switches = [d for d in topo.devices.values() if d.kind == "ib_switch"]
    if not switches:
        return "collnet reduces in SHARP InfiniBand switches; this topology has no InfiniBand switch"
    plain = [d for d in switches if not does_reduction(topo.part_of(d.id))]
    if not plain:
        return None
    part = topo.part_of(plain[0].id)
    capable = sorted(p.id for p in topo.catalog.parts.values() if p.kind == "ib_switch" and does_reduction(p))
    one = f"{plain[0].name} ({part.label if part else plain[0].part})"
    which = (f"its one, {one}, does not" if len(switches) == 1 else
             f"none of its {len(switches):,} does, e.g. {one}" if len(plain) == len(switches) else
             f"{len(plain):,} of its {len(switches):,} do not, e.g. {one}")
    return (f"collnet needs every InfiniBand switch to reduce in the network (SHARP); {which}"
            + (f"; generate the fabric with `generate fat-tree ... --switch PART`, PART one of {', '.join(capable)}"
               if capable else ""))
