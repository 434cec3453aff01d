"""Which document a run ran on: the design's name and a hash of its content.

The hash covers what a simulation sees (devices, their parts and properties, links, groups) and not
where things are drawn or what they are called, so moving or renaming a device keeps the runs that
belong to it, while any change the simulation would notice gives a new hash.
"""

from __future__ import annotations

import hashlib
import json

from ..model.fileio import topology_to_dict
from ..model.topology import Topology


def content_hash(topo: Topology) -> str:
    doc = topology_to_dict(topo)
    content = {
        "devices": [{k: v for k, v in d.items() if k != "name"} for d in doc["devices"]],
        "links": doc["links"],
        "groups": [{k: v for k, v in g.items() if k != "name"} for g in doc["groups"]],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=float).encode("utf-8")).hexdigest()


def document_ref(topo: Topology) -> dict:
    """What a run records about the document it ran on."""
    return {"name": topo.name, "sha256": content_hash(topo)}


def stamp(result, ref: dict):
    """Record on a result (or each row of a sweep) the document it ran on; returns the result."""
    for r in result if isinstance(result, list) else [result]:
        r.document = dict(ref)
    return result


def ran_on(result) -> dict | None:
    """The document a result (or a sweep's first row) records, or None when it records none."""
    first = result[0] if isinstance(result, list) and result else result
    return getattr(first, "document", None)
