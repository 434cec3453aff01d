"""Issue 16, failures 2, 6 and 9: quick fuzzing in the suite (inputs include huge numbers, NaN/inf,
surrogates, control characters and deep nesting, and whatever loads is saved and reloaded), and every
crasher the long fuzzer (benchmarks/fuzz.py) ever found, replayed."""

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import fuzz_oracles as F

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
CRASHERS = sorted((Path(__file__).parent / "crashers").glob("*.bin"))


@pytest.mark.parametrize("path", CRASHERS, ids=[p.name for p in CRASHERS])
def test_every_crasher_found_stays_fixed(path):
    target = path.name.rsplit("-", 1)[0]
    _, check = F.TARGETS[target]
    data = path.read_bytes()
    if target in ("nccl-xml", "graphml"):
        data = data.decode("utf-8", "surrogatepass")
    check(data)


@pytest.mark.parametrize("target", list(F.TARGETS))
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_fuzzed_inputs_load_cleanly_and_what_loads_saves_and_reloads(target, seed):
    make, check = F.TARGETS[target]
    check(make(random.Random(seed)))


json_leaf = (st.none() | st.booleans() | st.integers(-10**40, 10**40) | st.floats()
             | st.text(alphabet=st.characters(), max_size=12))
json_values = st.recursive(json_leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                           max_leaves=6)


@SETTINGS
@given(name=st.text(alphabet=st.characters(), max_size=30), props=st.dictionaries(st.text(max_size=6), json_values, max_size=3))
def test_any_name_and_properties_either_save_and_reload_or_are_refused(name, props):
    import math

    from dgxstudio.model import fileio
    topo = F.VALID_TOPOLOGY.copy()
    topo.devices["gpu0"].name = name
    topo.devices["gpu0"].properties = props
    try:
        text = fileio.checked_text(topo)
    except fileio.TopologyFileError as exc:
        assert "cannot be saved" in str(exc)
        return
    back = fileio.loads(text)
    assert back.devices["gpu0"].name == name
    assert fileio.dumps(back) == text
    F.check_exports(back)
