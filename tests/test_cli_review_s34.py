"""A new user's review of main at ebf93db: what the command line said wrong or left out."""

import io
import json
import sys

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_simulate_shows_progress_on_a_terminal(monkeypatch, capsys):
    # `simulate` over 512 DGX H100 (nvls-tree, 1 GiB) ran 10 s, 2,048 of them 14 s, with nothing on
    # the terminal; analyze, train and scaling show their progress there
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(["simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--size", "64MiB"]) == 0
    shown = term.getvalue()
    assert "\rsimulating on DGX H100: all-reduce ring 64 MiB (0%)" in shown
    assert "(100%)" in shown and shown.endswith("\r\033[K")   # the line is cleared before the table
    term.truncate(0)
    assert main(["simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--sweep", "1MiB:2MiB"]) == 0
    assert "all-reduce ring 2 MiB, size 2 of 2 (50%)" in term.getvalue()
    monkeypatch.undo()
    capsys.readouterr()
    code, out, err = run(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--size", "64MiB", "--json")
    assert code == 0 and err == "" and json.loads(out)["algorithm"] == "ring"   # piped: nothing on stderr
