"""GPU-set specifications as the CLI and the UI accept them.

A spec is a comma-separated list of items: ``all``; a GPU id (``gpu3``); a range of ids that differ
only in a trailing number (``gpu0-gpu3`` or ``gpu0-3``); or a group, by id or name, optionally
written ``group:NAME`` (all GPUs inside it, at any depth).
"""

from __future__ import annotations

import re

from ..model.catalog import KIND_LABELS, with_article
from ..model.topology import Topology


class GpuSetError(ValueError):
    """A spec that selects nothing usable; the message says which item is at fault."""


def only_selected(n: int) -> str:
    """'the GPU set has only 1 GPU', '... only 3 GPUs': for a run that needs more. (It said "only 32
    GPUs are selected" of a design's every GPU, the default set, where nothing had been selected.)"""
    return f"the GPU set has only {n} GPU" + ("" if n == 1 else "s")


def kind_words(kind: str) -> str:
    """A device kind with its article, by display name: 'an NVSwitch', 'a NIC', 'an InfiniBand switch'."""
    return with_article(KIND_LABELS.get(kind, kind))


_RANGE = re.compile(r"^(?P<a>.*?)(?P<n>\d+)-(?P<b>.*?)(?P<m>\d+)$")


def _group_gpus(topo: Topology, key: str) -> list[str] | None:
    gid = key if key in topo.groups else next((g.id for g in topo.groups.values() if g.name == key), None)
    if gid is None:
        return None
    return [d for d in topo.devices_in_group(gid) if topo.devices[d].kind == "gpu"]


def _hint(topo: Topology, item: str) -> str:
    """What the user may have meant: groups whose id or name begins with the item (a system's id is
    ``s01.system``, not ``s01``), else a few systems as examples."""
    key = item.casefold()
    near = [g for g in topo.groups.values() if g.id.casefold().startswith(key) or g.name.casefold().startswith(key)]
    if near:
        shown = ", ".join(f"{g.id!r} ({g.name})" for g in near[:3])
        return f"; did you mean {shown}{' ...' if len(near) > 3 else ''}?"
    systems = [g for g in topo.groups.values() if g.kind == "system"]
    if not systems:
        return ""
    shown = ", ".join(f"{g.id!r} ({g.name})" for g in systems[:2])
    return f"; a group's id or name selects its GPUs, e.g. {shown}"


def select_gpus(topo: Topology, spec: str | None = "all") -> list[str]:
    """The GPU ids a spec selects, in document order, without duplicates."""
    all_gpus = [d.id for d in topo.devices.values() if d.kind == "gpu"]  # one pass (a Run's click on 115,000 devices)
    if spec is None or spec.strip() in ("", "all"):
        if not all_gpus:
            raise GpuSetError("the topology has no GPUs")
        return all_gpus
    chosen: set[str] = set()
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        if item == "all":
            chosen.update(all_gpus)
            continue
        if item.startswith("group:"):
            found = _group_gpus(topo, item[6:])
            if found is None:
                raise GpuSetError(f"no group {item[6:]!r}{_hint(topo, item[6:])}")
            chosen.update(found)
            continue
        if item in topo.devices:
            if topo.devices[item].kind != "gpu":
                raise GpuSetError(f"{item!r} is {kind_words(topo.devices[item].kind)}, not a GPU")
            chosen.add(item)
            continue
        found = _group_gpus(topo, item)
        if found is not None:
            chosen.update(found)
            continue
        m = _RANGE.match(item)
        if m:
            prefix, lo = m.group("a"), int(m.group("n"))
            prefix_b = m.group("b") or prefix
            hi = int(m.group("m"))
            if prefix_b != prefix:
                raise GpuSetError(f"range {item!r} mixes {prefix!r} and {prefix_b!r}")
            if hi < lo:
                raise GpuSetError(f"range {item!r} runs backwards")
            width = len(m.group("n"))
            ids = []
            for k in range(lo, hi + 1):
                candidates = [f"{prefix}{k}", f"{prefix}{k:0{width}d}"]
                hit = next((c for c in candidates if c in topo.devices), None)
                if hit is None:
                    raise GpuSetError(f"range {item!r}: no device {candidates[0]!r}")
                ids.append(hit)
            for d in ids:
                if topo.devices[d].kind != "gpu":
                    raise GpuSetError(f"range {item!r}: {d!r} is not a GPU")
            chosen.update(ids)
            continue
        raise GpuSetError(f"{item!r} is neither a GPU id, a range of ids, nor a group{_hint(topo, item)}")
    result = [g for g in all_gpus if g in chosen]
    if not result:
        raise GpuSetError(f"{spec!r} selects no GPUs")
    return result
