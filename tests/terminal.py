"""Standard error as a terminal, for tests of the CLI's progress line (it shows only on a terminal)."""

import io
import sys


class Terminal(io.StringIO):
    def isatty(self):
        return True


def on_terminal(monkeypatch) -> Terminal:
    """``sys.stderr`` replaced by a terminal until ``monkeypatch`` undoes it; returns the terminal.
    (Call it in the test's body: capsys puts its own stderr back after the fixtures are set up.)"""
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    return term
