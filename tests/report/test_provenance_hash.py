"""The provenance hash is encoded piece by piece (so it never holds the interpreter lock for seconds)
and gives exactly the digest of the whole document encoded at once."""

import hashlib
import json

from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.fileio import topology_to_dict
from dgxstudio.model.presets import load_preset
from dgxstudio.model.topology import Topology
from dgxstudio.report import provenance


def _whole(topo):
    doc = topology_to_dict(topo)
    content = {"devices": [{k: v for k, v in d.items() if k != "name"} for d in doc["devices"]],
               "links": doc["links"],
               "groups": [{k: v for k, v in g.items() if k != "name"} for g in doc["groups"]]}
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=float).encode("utf-8")).hexdigest()


def test_piecewise_hash_equals_the_hash_of_the_whole_text(monkeypatch):
    monkeypatch.setattr(provenance, "_PIECE", 7)  # many pieces, a partial last one
    odd = load_preset("dgx-a100")
    gpu = next(iter(odd.gpus()))
    odd.set_attribute(gpu.id, "properties", {"note": "ünïcode \"quoted\"", "z": 1.5, "a": [3, {"b": None}]})
    for topo in (odd, load_preset("dgx1-v100"), build_fat_tree(9, "dgx-h100", rail_optimized=True), Topology("empty")):
        assert provenance.content_hash(topo) == _whole(topo), topo.name
    assert provenance.content_hash(odd) != provenance.content_hash(load_preset("dgx-a100"))
