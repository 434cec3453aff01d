"""Issue 16, failure 4: a broken user catalog falls back to the built-in one with a message, and
catalog values of the wrong type cannot crash NCCL export or import."""

import json

import pytest

from dgxstudio.model import catalog as cat


@pytest.mark.parametrize("text, expected", [
    ('{"format": "dgxstudio-catalog", "catalog_version": ' + "7" * 5000 + "}", "digits"),
    ('{"format": "dgxstudio-catalog", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"format": "dgxstudio-catalog", "parts": {"g": {"kind": "gpu", "ports": [], "deep": '
     + '{"a": ' * 50 + "1" + "}" * 50 + "}}}", "nested deeper"),
    ('{"format": "dgxstudio-catalog", "catalog_version": 1e400}', "beyond what a double"),
    (b'\xff\xfe not utf-8', "utf-8"),
])
def test_broken_user_catalogs_fall_back_with_a_message(tmp_path, text, expected):
    path = tmp_path / "catalog.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    c = cat.load_catalog(path)
    assert c.part("tesla-v100-sxm2") is not None
    assert c.messages and expected in c.messages[-1].lower()


def _user_catalog_with(tmp_path, part_id, **fields):
    builtin = json.loads(cat.builtin_catalog_path().read_text())
    raw = dict(builtin["parts"][part_id])
    raw.update(fields)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"format": "dgxstudio-catalog", "parts": {part_id: raw}}))
    return cat.load_catalog(path)


def test_a_wrongly_typed_nccl_sm_is_refused_not_a_crash_in_nccl_import(tmp_path):
    c = _user_catalog_with(tmp_path, "tesla-v100-sxm2", nccl_sm="seventy")
    assert c.messages and "nccl_sm" in c.messages[-1]
    from dgxstudio.model.presets import load_preset
    from dgxstudio.report.nccl_xml import from_nccl_xml, to_nccl_xml

    xml = to_nccl_xml(load_preset("dgx1-v100"))
    topo, _ = from_nccl_xml(xml, catalog=c)
    assert len(topo.gpus()) == 8


def test_the_cli_runs_with_a_broken_user_catalog(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DGXSTUDIO_CONFIG_DIR", str(tmp_path))
    (tmp_path / cat.USER_CATALOG_NAME).write_text('{"format": "dgxstudio-catalog", "v": ' + "9" * 5000 + "}")
    cat.set_default_catalog(None)
    try:
        from dgxstudio.cli import main
        assert main(["info", "--preset", "dgx1-v100"]) == 0
        assert "user catalog ignored" in capsys.readouterr().err
    finally:
        cat.set_default_catalog(None)
