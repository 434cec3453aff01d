"""``validation.errors``: a run's refusal without the checks that only warn (and, for a topology just
read from a file, without those its reader already made): the same errors in the same order."""

import pytest

from dgxstudio.model import Device, Group, Link, Topology, fileio, validation
from dgxstudio.model.presets import build_preset
from dgxstudio.model.validation import ERROR, errors, validate


def _errors_of_validate(t):
    return [f for f in validate(t) if f.severity == ERROR]


def _broken(catalog):
    """A topology with an error of every check that makes errors, and warnings besides."""
    t = Topology("t", catalog)
    for i in range(3):
        t.add_device(Device(f"g{i}", "gpu", "tesla-v100-sxm2", f"GPU{i}"))
    t.add_device(Device("lonely", "gpu", "tesla-v100-sxm2", "Lonely"))   # isolated-gpu (warning)
    t.add_device(Device("nic", "nic", "connectx-4-edr", "NIC"))
    t.add_device(Device("u", "gpu", "flux-capacitor", "U"))              # unknown-part
    t.add_link(Link("a", "g0", "g1", "NVLink2", 4))
    t.add_link(Link("b", "g0", "g2", "NVLink2", 3))                      # ports-over-budget (7 of 6)
    t.add_link(Link("x", "g1", "nic", "NVLink2"))                        # incompatible-link
    t.links["s"] = Link("s", "g2", "g2", "NVLink2")                      # self-link
    t.groups["g0"] = Group("g0", "clash")                                # duplicate-id
    t.groups["two"] = Group("two", "Two", devices=["g1"])
    t.groups["three"] = Group("three", "Three", devices=["g1"])          # multiple-groups
    return t


def test_errors_are_validates_errors_in_its_order(catalog):
    t = _broken(catalog)
    expected = _errors_of_validate(t)
    assert {f.code for f in expected} >= {"unknown-part", "ports-over-budget", "incompatible-link", "self-link",
                                         "duplicate-id", "multiple-groups"}
    assert any(f.severity != ERROR for f in validate(t))  # (warnings there, left out)
    assert errors(t) == expected


def test_errors_skip_the_checks_that_only_warn(catalog, monkeypatch):
    t = _broken(catalog)
    expected = _errors_of_validate(t)

    def not_run(topo):
        raise AssertionError("a check that only warns was run")

    # every check that only warns replaced by one that fails the test when run
    only_warn = validation.WARNING_ONLY
    monkeypatch.setattr(validation, "CHECKS", tuple(not_run if c in only_warn else c for c in validation.CHECKS))
    monkeypatch.setattr(validation, "WARNING_ONLY", (not_run,))
    assert errors(t) == expected


def test_the_checks_that_only_warn_make_no_errors(catalog):
    """What ``errors`` rests on: on designs with every kind of fault, those checks give warnings only."""
    t = _broken(catalog)
    t.add_link(Link("slow", "nic", "g0", "IB-EDR"))
    for check in validation.WARNING_ONLY:
        assert all(f.severity != ERROR for f in check(t))
    assert any(f.code == "isolated-gpu" for f in validation._check_connectivity(t))


def test_a_file_just_read_has_nothing_for_the_readers_checks(tmp_path, catalog):
    """``as_read``: whatever ``_check_ids`` and ``_check_groups`` would name, the reader refuses first,
    so a topology as read gives the same errors without them."""
    t = build_preset("dgx-a100")
    # errors the reader does not refuse: a catalog fault and ports over budget
    gpu = next(d.id for d in t.gpus())
    other = [d.id for d in t.gpus()][1]
    t.add_link(Link("extra", gpu, other, "NVLink3", 12))
    path = tmp_path / "t.dgxs"
    fileio.save(t, path)
    read = fileio.load(path)
    expected = _errors_of_validate(read)
    assert any(f.code == "ports-over-budget" for f in expected)
    assert errors(read, as_read=True) == expected
    for check in validation.READER_REFUSES:
        assert check(read) == []


@pytest.mark.parametrize("entry", [
    '{"id": "g0", "name": "clash", "devices": []}',                     # an id a device has
    '{"id": "two", "name": "Two", "devices": ["%s"]}',                  # a device already in a group
    '{"id": "two", "name": "Two", "parent": "nowhere", "devices": []}',  # a missing parent
])
def test_the_reader_refuses_what_those_checks_find(tmp_path, entry):
    t = build_preset("dgx-a100")
    gpu = next(d.id for d in t.gpus())
    path = tmp_path / "t.dgxs"
    fileio.save(t, path)
    text = path.read_text()
    entry = entry.replace("g0", gpu).replace("%s", gpu)
    text = text.replace('"groups": [', '"groups": [' + entry + ", ", 1)
    path.write_text(text)
    with pytest.raises(fileio.TopologyFileError):
        fileio.load(path)


def test_a_simulator_still_refuses_a_design_with_errors():
    """The simulator's own check (a caller that has not validated) reads ``errors``: a design error
    is refused, naming it, and a warning alone is not."""
    from dgxstudio.sim.run import SimulationError, Simulator

    t = build_preset("dgx-a100")
    gpus = [d.id for d in t.gpus()]
    Simulator(t, gpus)  # (clean: runs)
    t.add_link(Link("extra", gpus[0], gpus[1], "NVLink3", 12))
    with pytest.raises(SimulationError, match="ports"):
        Simulator(t, gpus)
