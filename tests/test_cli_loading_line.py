"""`simulate` on a terminal says it is loading its file: a 2,048-system file takes about a second to
load and check before the progress line said anything. Terminal only; stdout (the JSON) is unchanged."""

import json
import re

from dgxstudio.cli import main
from dgxstudio.model import fileio
from dgxstudio.model.presets import load_preset
from tests.terminal import on_terminal


def _lines(term):
    return [s.removesuffix(" \033[K") for s in term.getvalue().split("\r") if s.strip("\033[K")]


def test_the_progress_line_names_the_file_while_loading_it(monkeypatch, capsys, tmp_path):
    name = "a-cluster-file-whose-name-alone-would-fill-most-of-a-terminal-line.dgxs"
    path = tmp_path / name
    fileio.save(load_preset("dgx-a100"), path)
    capsys.readouterr()
    term = on_terminal(monkeypatch)
    assert main(["simulate", str(path), "--algorithm", "ring", "--size", "1MiB", "--json"]) == 0
    lines = _lines(term)
    assert re.fullmatch(r"simulating: loading a-cluster-file-whose-name-alone-would\.\.\. \(0%\), \d+ s", lines[0])
    assert all(s.startswith("simulating on 8 GPUs: ") for s in lines[1:]) and len(lines) > 1
    assert max(len(s) for s in lines) <= 80
    assert term.getvalue().endswith("\r\033[K")   # taken back at the end
    out = capsys.readouterr().out
    monkeypatch.undo()
    assert main(["simulate", str(path), "--algorithm", "ring", "--size", "1MiB", "--json"]) == 0
    plain = capsys.readouterr()
    assert plain.err == ""   # not a terminal: nothing, as before
    drop = lambda d: {k: v for k, v in d.items() if k != "wall_s"}   # noqa: E731 (the run's own clock)
    assert drop(json.loads(out)) == drop(json.loads(plain.out))


def test_a_file_that_cannot_be_read_takes_the_line_back(monkeypatch, capsys, tmp_path):
    term = on_terminal(monkeypatch)
    assert main(["simulate", str(tmp_path / "missing.dgxs")]) == 2
    assert _lines(term)[0].startswith("simulating: loading missing.dgxs")
    assert "\r\033[Kdgxstudio: error: " in term.getvalue()   # the error on a clean line


def test_a_preset_loads_without_a_loading_line(monkeypatch, capsys):
    term = on_terminal(monkeypatch)
    assert main(["simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--size", "1MiB"]) == 0
    assert not any("loading" in s for s in _lines(term))
