import json
import os
import time

import pytest

from dgxstudio.model import fileio
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.model.topology import Device


def test_save_load_save_gives_identical_bytes(tmp_path):
    topo = load_preset("dgx1-v100")
    first = tmp_path / "a.dgxs"
    fileio.save(topo, first)
    again = fileio.load(first)
    second = tmp_path / "b.dgxs"
    fileio.save(again, second)
    assert first.read_bytes() == second.read_bytes()
    assert set(again.devices) == set(topo.devices) and set(again.links) == set(topo.links)
    assert again.layout.positions == topo.layout.positions


def test_unicode_names_and_properties_round_trip(tmp_path):
    topo = load_preset("dgx-a100")
    topo.devices["gpu0"].name = "GPU «null» <script>"
    topo.devices["gpu0"].properties = {"rack": "B7", "serial": [1, 2]}
    path = tmp_path / "u.dgxs"
    fileio.save(topo, path)
    back = fileio.load(path)
    assert back.devices["gpu0"].name == "GPU «null» <script>"
    assert back.devices["gpu0"].properties == {"rack": "B7", "serial": [1, 2]}


def _doc():
    return fileio.topology_to_dict(load_preset("dgx1-p100"))


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d.update(format="something"), "format: not a DGX Studio topology"),
    (lambda d: d.update(schema_version=99), "schema_version: schema version 99 is newer"),
    (lambda d: d["links"][12].update(b="gpu9"), "links[12].b: no device 'gpu9'"),
    (lambda d: d["links"][3].update(count="two"), "links[3].count: expected a whole number"),
    (lambda d: d["links"][3].update(count=10**9), "links[3].count: 1000000000 is out of range"),
    (lambda d: d["devices"][2].pop("id"), "devices[2].id: expected text"),
    (lambda d: d["devices"][2].update(kind="toaster"), "devices[2].kind: unknown device kind"),
    (lambda d: d["devices"][3].update(id="gpu0"), "devices[3].id: duplicate id 'gpu0' (first used at devices[0].id)"),
    (lambda d: d["groups"][0]["devices"].append("ghost"), "groups[0].devices[19]: no device 'ghost'"),
    (lambda d: d["groups"][0].update(parent="system"), "groups[0].parent: group 'system' is inside itself"),
    (lambda d: d.update(devices={}), "devices: expected a list"),
    (lambda d: d["layout"]["positions"].update(gpu0=[1]), "layout.positions.gpu0: expected [x, y]"),
    (lambda d: d["links"][0].update(bandwidth_per_direction_Bps=-5), "links[0].bandwidth_per_direction_Bps: -5 is out of range"),
    (lambda d: d["links"][0].update(colour="red"), "links[0]: unknown field 'colour'"),
    # a blank name is what the inspector refuses too (it would label nothing in the drawing and reports)
    (lambda d: d["devices"][4].update(name=""), "devices[4].name: a name cannot be blank"),
    (lambda d: d["devices"][4].update(name="   "), "devices[4].name: a name cannot be blank"),
    (lambda d: d["groups"][0].update(name=" "), "groups[0].name: a name cannot be blank"),
    (lambda d: d.update(name=""), "name: a name cannot be blank"),
])
def test_bad_files_name_the_json_path(tmp_path, mutate, expected):
    doc = _doc()
    mutate(doc)
    path = tmp_path / "bad.dgxs"
    path.write_text(json.dumps(doc))
    with pytest.raises(fileio.TopologyFileError) as info:
        fileio.load(path)
    assert expected in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("content, expected", [
    (b"", "not valid JSON"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"[1, 2]", "expected an object"),
    (b'{"format": "dgxstudio-topology", "schema_version": 1, "devices": [], "x": NaN}', "not a number JSON allows"),
    (b"[" * 100000, "nested too deeply"),
])
def test_non_topologies_are_refused_cleanly(content, expected):
    with pytest.raises(fileio.TopologyFileError, match=expected):
        fileio.loads(content)


def test_an_empty_file_is_called_empty_not_a_column_of_it(tmp_path):
    # an empty or blank .dgxs (a save cut short elsewhere, a `touch`) read "Expecting value at line 1
    # column 1", or "column 3000001" for three million spaces
    path = tmp_path / "empty.dgxs"
    path.write_bytes(b"")
    with pytest.raises(fileio.TopologyFileError, match="the file is empty"):
        fileio.load(path)
    path.write_bytes(b" \n\t " * 1000)
    with pytest.raises(fileio.TopologyFileError, match="the file holds only white space") as info:
        fileio.load(path)
    assert "column" not in str(info.value)


def test_oversized_files_are_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(fileio, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.dgxs"
    path.write_bytes(b" " * 2000)
    with pytest.raises(fileio.TopologyFileError, match="over the limit of 1000"):
        fileio.load(path)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(fileio.TopologyFileError, match="no such file"):
        fileio.load(tmp_path / "none.dgxs")
    with pytest.raises(fileio.TopologyFileError, match="folder"):
        fileio.load(tmp_path)


def test_save_is_atomic_and_never_corrupts_the_old_file(tmp_path, monkeypatch):
    topo = load_preset("dgx1-v100")
    path = tmp_path / "keep.dgxs"
    fileio.save(topo, path)
    before = path.read_bytes()
    topo.add_device(Device("extra", "gpu", "tesla-v100-sxm2", "Extra"))

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError):
        fileio.save(topo, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.dgxs"]


def test_thousand_gpu_topology_loads_and_saves_quickly(tmp_path):
    topo = build_fat_tree(128, "dgx1-v100")
    assert len(topo.gpus()) == 1024
    path = tmp_path / "big.dgxs"
    t0 = time.perf_counter()
    fileio.save(topo, path)
    back = fileio.load(path)
    elapsed = time.perf_counter() - t0
    assert len(back.gpus()) == 1024
    # Generous bound: a regression guard, not the benchmark (that is benchmarks/).
    assert elapsed < 5.0
