"""`simulate` on a terminal says what its setup is doing (routing, planning channels, building the
schedule, folding alike systems) before the engine's first report: on 2,048 DGX H100 the line sat
at "(0%)" for 2-4 s."""

import re

from dgxstudio.cli import main
from dgxstudio.model import fileio
from dgxstudio.model.fabrics import build_fat_tree
from tests.terminal import on_terminal


def test_simulate_names_its_setup_steps_on_a_terminal(monkeypatch, capsys, tmp_path):
    path = tmp_path / "h100-16.dgxs"
    fileio.save(build_fat_tree(16, "dgx-h100", rail_optimized=True), path)
    term = on_terminal(monkeypatch)
    assert main(["simulate", str(path), "--algorithm", "nvls-tree", "--size", "64MiB"]) == 0
    lines = [s.removesuffix(" \033[K") for s in term.getvalue().split("\r") if s.strip("\033[K")]
    assert re.fullmatch(r"simulating: loading h100-16.dgxs \(0%\), \d+ s", lines.pop(0))   # (the file's load, first)
    steps = [re.match(r"simulating on 128 GPUs: (.*) \((\d+)%\), \d+ s$", s) for s in lines]
    assert all(steps), lines
    said = [m.group(1) for m in steps]
    first = said.index("all-reduce nvls-tree 64 MiB")   # shown at once, as before
    setup = list(dict.fromkeys(said[first + 1:said.index("all-reduce nvls-tree 64 MiB", first + 1)]))
    assert setup == ["planning channels", "building the schedule", "folding alike systems"]
    assert said[0] == "routing"   # (the Simulator's own, before the run's first line)
    percent = [int(m.group(2)) for m in steps]
    assert percent == sorted(percent) and percent[-1] == 100 and 0 < percent[said.index("folding alike systems")] < 50
    assert max(len(s) for s in lines) <= 80
    # a sweep keeps its count beside the step's words
    term.truncate(0)
    term.seek(0)
    assert main(["simulate", str(path), "--algorithm", "ring", "--sweep", "1MiB:2MiB"]) == 0
    assert "simulating on 128 GPUs: building the schedule, 2/2 (" in term.getvalue()
    monkeypatch.undo()
    capsys.readouterr()
