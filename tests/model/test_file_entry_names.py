"""A fault inside a file's device or link names that entry's id beside its JSON path: 'devices[41].part'
alone sent the reader counting entries (the review)."""

import json

import pytest

from dgxstudio.model.fileio import TopologyFileError, load


def _write(tmp_path, devices, links=()):
    path = tmp_path / "bad.dgxs"
    path.write_text(json.dumps({"format": "dgxstudio-topology", "schema_version": 1, "name": "x",
                                "devices": devices, "links": list(links)}))
    return path


def test_a_device_field_fault_names_the_device(tmp_path):
    path = _write(tmp_path, [{"id": "gpu0", "kind": "gpu", "part": "h100-sxm5-80gb"},
                             {"id": "g", "kind": "gpu", "part": None}])
    with pytest.raises(TopologyFileError) as exc:
        load(path)
    assert str(exc.value).endswith("devices[1].part: expected text, got null (device 'g')")
    assert exc.value.path == "devices[1].part"


def test_a_link_end_fault_names_the_link(tmp_path):
    path = _write(tmp_path, [{"id": "g", "kind": "gpu", "part": "h100-sxm5-80gb"}],
                  [{"id": "l1", "a": "g", "b": "zz", "type": "nvlink4"}])
    with pytest.raises(TopologyFileError) as exc:
        load(path)
    assert str(exc.value).endswith("links[0].b: no device 'zz' (link 'l1')")


@pytest.mark.parametrize("ident", [5, "", "a\nb"])
def test_an_entry_without_a_readable_id_is_named_by_its_path_alone(tmp_path, ident):
    path = _write(tmp_path, [{"id": ident, "kind": "gpu", "part": "x"}])
    with pytest.raises(TopologyFileError) as exc:
        load(path)
    assert "(device" not in str(exc.value) and "devices[0].id" in str(exc.value)
