"""The cyclic garbage collector paused around work that allocates millions of small objects.

Analysis and simulation of a large cluster build millions of small tables, tuples and arrays with no
reference cycles. With the collector on, every generation-2 pass walks the whole topology again
(150,000 links and their dictionaries on 2,048 DGX H100): a third of ``analyze`` at 1,024 systems and
two fifths of a hierarchical all-reduce's CPU time at 16,384 GPUs. Nothing here keeps cycles alive
that would not be collected once the collector runs again.
"""

from __future__ import annotations

import gc
import queue
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while the body runs, then restored as it was.

    Nested and concurrent uses (a worker thread's run while the GUI analyzes) keep it paused until the
    last one ends.
    """
    _pause()
    try:
        yield
    finally:
        _resume()


def _pause() -> None:
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1


def _resume() -> None:
    global _gc_depth
    with _gc_lock:
        _gc_depth -= 1
        if _gc_depth == 0 and _gc_was_enabled:
            gc.enable()


_releases: "queue.SimpleQueue | None" = None
_releases_lock = threading.Lock()
RELEASE_PAUSE_S = 0.001  # between frames let go of: other threads (the GUI's) get the interpreter lock


def release_later(obj) -> None:
    """Hand the last references to ``obj`` to a daemon thread that lets go of them there.

    A cancelled analysis of a 59 MB cluster stops at its next cancel check, but its thread then spent
    0.2-1.15 s freeing the tables it had built (the frames of the ``Cancelled`` it raised hold them).
    Called with that exception, its thread ends at once; the frames are cleared there, and what they
    held taken apart piece by piece. The collector stays paused from this call until that is done:
    re-enabled between, its next full pass would walk every one of those tables with the interpreter
    lock held (a second on that cluster, on whichever thread allocates, the GUI's included). The
    caller must drop its own references (leave the ``except``)."""
    global _releases
    with _releases_lock:
        if _releases is None:
            _releases = queue.SimpleQueue()
            threading.Thread(target=_release_loop, args=(_releases,), name="dgxstudio-release", daemon=True).start()
    _pause()  # resumed by the release thread once it has let go
    with _outstanding:
        _outstanding.count += 1
    _releases.put(obj)


class _Outstanding(threading.Condition):
    count = 0


_outstanding = _Outstanding()


def wait_released(timeout: float | None = None) -> bool:
    """Wait until everything handed to ``release_later`` is let go of (the collector as it was)."""
    with _outstanding:
        return _outstanding.wait_for(lambda: _outstanding.count == 0, timeout)


def _release_loop(pending: "queue.SimpleQueue") -> None:
    while True:
        obj = pending.get()
        try:
            _let_go(obj)
        except Exception:  # noqa: BLE001 - letting go must never end this thread
            pass
        del obj
        _resume()  # the pause release_later took
        with _outstanding:
            _outstanding.count -= 1
            _outstanding.notify_all()


def _let_go(obj) -> None:
    if not isinstance(obj, BaseException):
        return
    frames = []
    seen = set()
    while obj is not None and id(obj) not in seen:  # the exception and what it was raised from
        seen.add(id(obj))
        tb = obj.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        obj.__traceback__ = None
        obj = obj.__cause__ or obj.__context__
    values: list = []
    names = None
    for frame in reversed(frames):  # innermost (the biggest tables) first
        try:
            names = frame.f_locals
            values.extend(names.values())
            names.clear()
            frame.clear()
        except RuntimeError:
            pass  # still running (the thread that raised it, on its way out): freed when it ends
    del frames, names
    _dismantle(values)


def free_in_pieces(work: list) -> None:
    """Let go of what ``work`` holds (the caller keeps no other reference) on this thread, a little at
    a time, as ``release_later`` does on its own: a worker thread's large temporary tables are freed
    without one deallocation holding the interpreter lock for a tenth of a second."""
    _dismantle(work)


_SMALL = 64        # containers this small are freed whole
_YIELD_EVERY = 20_000


def _dismantle(work: list) -> None:
    """Free what ``work`` holds a little at a time: a container held by nothing else (its reference
    count says so) is emptied into ``work`` first, so no single deallocation frees millions of objects
    with the interpreter lock held. Anything still referenced elsewhere is only let go of."""
    done = 0
    while work:
        v = work.pop()
        t = type(v)
        if sys.getrefcount(v) == 2:  # this name and the call's argument: ours alone
            if t is dict:
                if len(v) > _SMALL:
                    while v:
                        work.append(v.popitem()[1])
            elif t is list or t is set:
                if len(v) > _SMALL:
                    work.extend(v)
                    v.clear()
            elif t is tuple:
                if len(v) > _SMALL:
                    work.extend(v)
            elif (getattr(t, "__module__", "").startswith("dgxstudio.") and isinstance(getattr(v, "__dict__", None), dict)
                  and weakref.getweakrefcount(v) == 0):  # a weak cache could still hand it out
                attrs = v.__dict__
                work.extend(attrs.values())
                attrs.clear()
                del attrs
        del v
        done += 1
        if done % _YIELD_EVERY == 0:
            time.sleep(0)
