"""Issue 16, failures 3, 6 and 7: files that open can be saved, saves never lie, bad numbers are refused."""

import json
import re
import os

import pytest

from dgxstudio.model import fileio
from dgxstudio.model.atomic import atomic_write_text
from dgxstudio.model.presets import load_preset


def _saved_doc(tmp_path, mutate):
    doc = fileio.topology_to_dict(load_preset("dgx1-p100"))
    mutate(doc)
    path = tmp_path / "x.dgxs"
    path.write_text(json.dumps(doc, ensure_ascii=True))
    return path


def _deep(n):
    v = {}
    for _ in range(n):
        v = {"a": v}
    return v


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["devices"][0].update(name="gpu\ud800"), "devices[0].name: holds a lone surrogate"),
    (lambda d: d["devices"][0].update(name="gpu\x00"), "devices[0].name: holds the control character U+0000"),
])
def test_loads_refuse_text_no_format_can_carry(tmp_path, mutate, expected):
    path = _saved_doc(tmp_path, mutate)
    with pytest.raises(fileio.TopologyFileError, match=re.escape(expected)):
        fileio.load(path)


@pytest.mark.parametrize("raw, expected", [
    ('"properties": {"x": 1e400}', r"devices\[0\].properties.x: inf is not a number a file can hold"),
    ('"properties": {"x": ' + "9" * 5000 + "}", "more than 4300 digits"),
    ('"properties": {"x": ' + "9" * 40 + "}", "longer than 30 digits"),
    ('"properties": ' + '{"a": ' * 990 + "1" + "}" * 990, "nested"),
    ('"properties": ' + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_numbers_and_nesting_beyond_limits_are_refused_with_a_message(tmp_path, raw, expected):
    text = fileio.dumps(load_preset("dgx1-p100"))
    text = text.replace('"name": "GPU0"', '"name": "GPU0", ' + raw, 1)
    assert raw in text
    path = tmp_path / "big.dgxs"
    path.write_text(text)
    with pytest.raises(fileio.TopologyFileError, match=expected):
        fileio.load(path)


def test_group_whose_grandparent_is_missing_is_a_message_not_a_keyerror(tmp_path):
    def mutate(d):
        d["groups"].append({"id": "child", "name": "c", "kind": "rack", "parent": "mid", "devices": []})
        d["groups"].append({"id": "mid", "name": "m", "kind": "rack", "parent": "ghost", "devices": []})
    with pytest.raises(fileio.TopologyFileError, match="no group 'ghost'"):
        fileio.load(_saved_doc(tmp_path, mutate))


@pytest.mark.parametrize("poison, rule", [
    (lambda t: setattr(t.devices["gpu0"], "name", "bad\udc80"), "lone surrogate"),
    (lambda t: t.devices["gpu0"].properties.update(x=float("inf")), "cannot be saved"),
    (lambda t: t.devices["gpu0"].properties.update(x=_deep(986)), "nested deeper"),
])
def test_save_refuses_what_would_not_reopen_and_keeps_the_old_file(tmp_path, poison, rule):
    topo = load_preset("dgx1-p100")
    path = tmp_path / "keep.dgxs"
    fileio.save(topo, path)
    before = path.read_bytes()
    poison(topo)
    with pytest.raises(fileio.TopologyFileError, match=rule):
        fileio.save(topo, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["keep.dgxs"]


def test_save_follows_a_symlink_and_keeps_it(tmp_path):
    real = tmp_path / "real.dgxs"
    link = tmp_path / "link.dgxs"
    fileio.save(load_preset("dgx1-p100"), real)
    link.symlink_to(real)
    fileio.save(load_preset("dgx1-v100"), link)
    assert link.is_symlink()
    assert "V100" in fileio.load(real).name or fileio.load(real).name != "dgx1-p100"


def test_stale_temporary_files_are_removed_by_the_next_save(tmp_path):
    target = tmp_path / "t.dgxs"
    for i in range(3):
        (tmp_path / f".t.dgxs.killed{i}.tmp").write_bytes(b"x" * 100)
    (tmp_path / ".other.dgxs.abc.tmp").write_bytes(b"keep")
    fileio.save(load_preset("dgx1-p100"), target)
    assert sorted(os.listdir(tmp_path)) == [".other.dgxs.abc.tmp", "t.dgxs"]


def test_writing_to_a_folder_is_an_error(tmp_path):
    folder = tmp_path / "x.pdf"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write_text(folder, "hello")


def test_report_to_a_folder_named_pdf_fails_with_exit_2(tmp_path, capsys):
    from dgxstudio.cli import main

    folder = tmp_path / "x.pdf"
    folder.mkdir()
    code = main(["report", "--preset", "dgx1-p100", "--size", "", "-o", str(folder)])
    out, err = capsys.readouterr()
    assert code == 2 and "wrote" not in out and "folder" in err


def test_png_writer_failure_keeps_the_old_file(tmp_path, monkeypatch):
    from PySide6.QtGui import QImage

    from dgxstudio.report.exports import write_export

    target = tmp_path / "t.png"
    write_export(load_preset("dgx1-p100"), "png", str(target), None)
    before = target.read_bytes()
    assert before[:8] == b"\x89PNG\r\n\x1a\n"

    def full_disk(self, path, fmt=None, *a):  # a full disk: half a file, then failure
        with open(path, "wb") as fh:
            fh.write(b"\x89PNG")
        return False
    monkeypatch.setattr(QImage, "save", full_disk)
    with pytest.raises(OSError):
        write_export(load_preset("dgx1-v100"), "png", str(target), None)
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["t.png"]


def test_names_survive_graphml_and_dot():
    from dgxstudio.report import formats

    topo = load_preset("dgx1-p100")
    topo.devices["gpu0"].name = "C:\\gpus\\"
    topo.devices["gpu1"].name = 'quote " and <tag> & amp'
    topo.description = "line one\r\nline two\rthree"
    back = formats.from_graphml(formats.to_graphml(topo))
    assert back.description == topo.description
    assert back.devices["gpu0"].name == "C:\\gpus\\" and back.devices["gpu1"].name == topo.devices["gpu1"].name
    dot = formats.to_dot(topo)
    assert "label=<C:\\gpus\\>" in dot            # an HTML string: the trailing backslash stays
    assert 'label="quote \\" and <tag> & amp"' in dot


def test_a_topology_too_large_to_reopen_is_not_saved(tmp_path, monkeypatch):
    topo = load_preset("dgx-a100")  # 12 KB of file text
    monkeypatch.setattr(fileio, "MAX_FILE_BYTES", 10_000)
    with pytest.raises(fileio.TopologyFileError, match="over the limit of 10,000 that opening a file accepts"):
        fileio.save(topo, tmp_path / "big.dgxs")
    assert not (tmp_path / "big.dgxs").exists()
