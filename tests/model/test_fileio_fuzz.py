"""Random bytes and random mutations of a valid file give a clean error or a topology, nothing else."""

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.model import fileio
from dgxstudio.model.presets import load_preset
from dgxstudio.model.validation import validate

VALID = fileio.topology_to_dict(load_preset("dgx1-p100"))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load_cleanly(data):
    try:
        topo = fileio.loads(data)
    except fileio.TopologyFileError as exc:
        assert str(exc)
        return
    validate(topo)
    fileio.dumps(topo)


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes(data):
    _load_cleanly(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=8,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


ALL_PATHS = [p for p in _paths(VALID) if p]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), st.sampled_from(["replace", "delete"]), json_values),
                min_size=1, max_size=4))
def test_random_mutations_of_a_valid_file(mutations):
    doc = copy.deepcopy(VALID)
    for path, action, value in mutations:
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            if action == "delete":
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    _load_cleanly(json.dumps(doc))
