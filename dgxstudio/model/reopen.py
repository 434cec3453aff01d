"""The proof that a written topology file opens again, run in a process of its own.

``fileio.checked_text`` proves a text by loading it in this process: 2-3 s on a 30 MB design, of which
the JSON decoder holds the interpreter lock without a break for most of a second. A window's autosave
does that every minute while the design is modified, on a thread beside the GUI's, whose frames then
wait. ``prove_reopens`` loads the file as written, with ``fileio.load`` (what restoring it will do), in
a child Python process, which shares no lock with this one. No Qt here.

Run as ``python -m dgxstudio.model.reopen FILE``: exit 0 when FILE opens, ``DOES_NOT_OPEN`` with the
reason on stderr when it does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from . import fileio

DOES_NOT_OPEN = 3
POLL_S = 0.05


class ProofCancelled(Exception):
    """The caller gave up on the file while its proof ran (the child was stopped)."""


class ProofUnavailable(Exception):
    """No child process could give an answer (none could start, or it ended without one)."""


def _child_command(path: str) -> list[str]:
    return [sys.executable, "-m", "dgxstudio.model.reopen", path]


def can_prove_in_child() -> bool:
    """A frozen application's executable is the application, not a Python interpreter."""
    return not getattr(sys, "frozen", False) and bool(sys.executable)


def prove_reopens(path: str | os.PathLike, cancel: threading.Event | None = None,
                  timeout_s: float = 900.0) -> None:
    """Return when ``path`` opens with ``fileio.load`` in a child process; raise ``TopologyFileError``
    (with the loader's reason) when it does not, ``ProofCancelled`` when ``cancel`` is set meanwhile,
    ``ProofUnavailable`` when the child gives no answer."""
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.pop("PYTHONSTARTUP", None)
    try:
        child = subprocess.Popen(_child_command(os.fspath(path)), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    except OSError as exc:
        raise ProofUnavailable(f"cannot start {sys.executable}: {exc}") from None
    waited = 0.0
    try:
        while True:
            try:   # (read as it comes: a long message must not fill the pipe and stop the child)
                _out, err = child.communicate(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                waited += POLL_S
                if cancel is not None and cancel.is_set():
                    raise ProofCancelled() from None
                if waited > timeout_s:
                    raise ProofUnavailable(f"no answer in {timeout_s:.0f} s") from None
        why = err.decode("utf-8", "replace").strip()
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    if child.returncode == DOES_NOT_OPEN:
        try:
            reason = json.loads(why.splitlines()[-1])
            detail, where = str(reason["detail"]), str(reason["path"])
        except (ValueError, LookupError, TypeError):
            detail, where = why or "it does not open again", ""
        raise fileio.TopologyFileError(f"cannot be saved: {detail}", where)
    if child.returncode != 0:
        last = why.splitlines()[-1] if why else f"exit status {child.returncode}"
        raise ProofUnavailable(f"the check ended without an answer: {last}")


def prove_here(text: str) -> None:
    """The same proof in this process (where no child can answer): the text loads as a file would."""
    try:
        fileio.loads(text)
    except fileio.TopologyFileError as exc:
        raise fileio.TopologyFileError(f"cannot be saved: {exc.detail}", exc.path) from None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m dgxstudio.model.reopen FILE", file=sys.stderr)
        return 2
    try:
        fileio.load(argv[0])
    except fileio.TopologyFileError as exc:
        print(json.dumps({"detail": exc.detail, "path": exc.path}), file=sys.stderr)
        return DOES_NOT_OPEN
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
