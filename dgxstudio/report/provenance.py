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
    """SHA-256 of ``json.dumps({"devices": ..., "groups": ..., "links": ...}, sort_keys=True)``.

    The text is encoded a few hundred entries at a time and fed to the hash piece by piece (the same
    bytes as one ``json.dumps``): the C encoder holds the interpreter lock for the whole call, which on
    a 59 MB cluster froze the GUI thread for seconds while a run's provenance was worked out beside it.
    """
    doc = topology_to_dict(topo)
    tables = {
        "devices": [{k: v for k, v in d.items() if k != "name"} for d in doc["devices"]],
        "groups": [{k: v for k, v in g.items() if k != "name"} for g in doc["groups"]],
        "links": doc["links"],
    }
    digest = hashlib.sha256()
    opening = "{"
    for key in sorted(tables):
        digest.update(f"{opening}{json.dumps(key)}: [".encode("utf-8"))
        rows = tables[key]
        for start in range(0, len(rows), _PIECE):
            text = json.dumps(rows[start:start + _PIECE], sort_keys=True, default=float)[1:-1]
            digest.update(((", " if start else "") + text).encode("utf-8"))
        digest.update(b"]")
        opening = ", "
    digest.update(b"}")
    return digest.hexdigest()


_PIECE = 256  # entries per json.dumps call: a millisecond or so with the interpreter lock held


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
