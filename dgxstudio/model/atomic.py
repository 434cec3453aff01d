"""Writes that never lie: every output file (native, exports, PNG, PDF, reports) goes through here.

The data goes to a hidden temporary file in the target's folder, is flushed and fsynced, and is then
renamed over the target, so a kill, a full disk or a failing writer leaves the old file intact.
A symlinked target is followed (the link stays a link, the file it points to is replaced). Temporary
files a killed save left behind for the same target are removed at the next save. No Qt here.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_prefix(target: Path) -> str:
    return f".{target.name}."


def resolve_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` must replace: symlinks followed; a folder is refused."""
    target = Path(os.path.realpath(os.fspath(path)))
    if target.is_dir():
        raise IsADirectoryError(21, "is a folder, not a file", os.fspath(path))
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "the folder does not exist", os.fspath(path))
    return target


def clean_stale_temps(target: Path, keep: str | None = None) -> int:
    """Remove temporary files an interrupted save of ``target`` left behind; returns how many."""
    removed = 0
    prefix = temp_prefix(target)
    try:
        names = os.listdir(target.parent)
    except OSError:
        return 0
    for name in names:
        if name.startswith(prefix) and name.endswith(TEMP_SUFFIX) and name != keep:
            with contextlib.suppress(OSError):
                os.unlink(target.parent / name)
                removed += 1
    return removed


def _permissions_for(tmp: str, target: Path) -> None:
    try:
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:  # a new file gets the usual permissions, not mkstemp's private 0600
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
    except OSError:
        pass


def _fsync_folder(folder: Path) -> None:
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, allow_empty: bool = False):
    """Yield a temporary file name to write to; on a clean exit it replaces ``path``.

    For writers that want a file name (Qt's image and PDF writers). The writer must leave a
    non-empty file; anything else (an exception, an empty file) keeps the old file and raises.
    """
    target = resolve_target(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=TEMP_SUFFIX, dir=target.parent)
    os.close(fd)
    try:
        clean_stale_temps(target, keep=os.path.basename(tmp))
        yield tmp
        if not allow_empty and os.path.getsize(tmp) == 0:
            raise OSError(5, "nothing was written", os.fspath(path))
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        _permissions_for(tmp, target)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(target.parent)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    with atomic_output(path, allow_empty=True) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
