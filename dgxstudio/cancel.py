"""Cancelling core work from another thread (no Qt): the run in progress on a thread carries its
cancel check, so long loops anywhere in the core (ring search, schedule building, the engine) can
stop promptly without every function taking a flag."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar


class Cancelled(Exception):
    """The caller's cancel flag was set; the work stopped without a result."""


_check: ContextVar[Callable[[], bool] | None] = ContextVar("dgxstudio_cancel_check", default=None)


def as_check(cancel) -> Callable[[], bool] | None:
    """A threading.Event, a callable or None, as a callable (or None)."""
    if cancel is None:
        return None
    return cancel.is_set if hasattr(cancel, "is_set") else cancel


@contextmanager
def cancellable(cancel):
    token = _check.set(as_check(cancel))
    try:
        yield
    finally:
        _check.reset(token)


def check_cancelled() -> None:
    check = _check.get()
    if check is not None and check():
        raise Cancelled()
