"""A cancelled thread hands what its frames built to another thread and ends at once (issue 16)."""

import threading
import time

from dgxstudio.cancel import Cancelled
from dgxstudio.heap import release_later


class _Big:
    freed_on: list = []

    def __del__(self):
        time.sleep(0.3)  # as long as freeing a large analysis' tables
        _Big.freed_on.append(threading.current_thread().name)


def _work_that_is_cancelled():
    tables = {"rings": [_Big()]}  # noqa: F841 - held by this frame only
    raise Cancelled()


def test_a_cancelled_thread_ends_before_what_it_built_is_freed():
    _Big.freed_on.clear()
    ended = {}

    def worker():
        try:
            _work_that_is_cancelled()
        except Cancelled as exc:
            release_later(exc)
        ended["at"] = time.perf_counter()

    started = time.perf_counter()
    t = threading.Thread(target=worker, name="analysis")
    t.start()
    t.join(5)
    assert ended["at"] - started < 0.25 and _Big.freed_on == []  # did not wait for the freeing
    deadline = time.time() + 5
    while not _Big.freed_on and time.time() < deadline:
        time.sleep(0.01)
    assert _Big.freed_on == ["dgxstudio-release"]


def test_letting_go_takes_apart_only_what_nobody_else_holds():
    from dgxstudio.heap import _dismantle

    shared = {i: [i] for i in range(1000)}
    kept = shared[5]
    owned = [{i: (i, [i] * 3) for i in range(1000)}, list(range(500)), shared]
    _dismantle(owned)
    assert owned == [] and len(shared) == 1000 and kept == [5]  # what others hold is untouched


def test_the_collector_stays_paused_until_what_was_handed_over_is_let_go_of():
    import gc

    _Big.freed_on.clear()
    assert gc.isenabled()
    try:
        _work_that_is_cancelled()
    except Cancelled as exc:
        release_later(exc)
    assert not gc.isenabled() or _Big.freed_on  # no full pass over the tables while they wait
    deadline = time.time() + 5
    while (not _Big.freed_on or not gc.isenabled()) and time.time() < deadline:
        time.sleep(0.01)
    assert _Big.freed_on and gc.isenabled()
