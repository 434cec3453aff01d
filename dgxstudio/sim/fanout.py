"""A group whose end releases many groups at once: a stage barrier's fan-out, counted down in numpy.

The engine releases a finished group's dependents one by one (a count down each, the ready ones
queued, the others kept as partly released). Most groups release one or two. A few release one group
per piece (the leaders' ring of a hierarchical all-reduce waits for every piece of the reduction
inside the systems: 4,096 on two systems at 16 GiB), and the one-by-one loop then costs a few
milliseconds that grow with the message. ``release_many`` does the same counting on arrays, with the
same outcome: the same counts, the same ready groups in the same order, the same partly released
groups in the same order.
"""

from __future__ import annotations

import numpy as np

MANY = 64  # longer lists are released at once


def release(dependents: list[int], deps_left: np.ndarray, ready: list[int], frontier: dict) -> None:
    """Release ``dependents``: the one-by-one loop, or a long strictly increasing list at once."""
    if len(dependents) > MANY and release_many(dependents, deps_left, ready, frontier):
        return
    release_one_by_one(dependents, deps_left, ready, frontier)


def release_one_by_one(dependents: list[int], deps_left: np.ndarray, ready: list[int], frontier: dict) -> None:
    """Each dependent waits for one thing less: a ready one is queued and leaves ``frontier``, the
    others (some but not all of their dependencies met) are kept in it, in the order released."""
    for d in dependents:
        left = deps_left.item(d) - 1  # (a Python int: numpy's scalar reads and compares cost twice as much)
        deps_left[d] = left
        if left == 0:
            ready.append(d)
            frontier.pop(d, None)
        else:
            frontier[d] = None


def release_many(dependents: list[int], deps_left: np.ndarray, ready: list[int], frontier: dict) -> bool:
    """Release ``dependents`` (each waits for one thing less): ready ones are queued in list order
    and leave ``frontier``, the others join it in list order. False, and nothing done, when the list
    is not strictly increasing (a group named twice: its two releases in turn, the caller's loop)."""
    arr = np.asarray(dependents, dtype=np.int64)
    if len(arr) > 1 and not (arr[1:] > arr[:-1]).all():
        return False
    left = deps_left[arr] - 1
    deps_left[arr] = left
    zero = left == 0
    now = arr[zero].tolist()
    ready.extend(now)
    for d in now:
        frontier.pop(d, None)
    frontier.update(dict.fromkeys(arr[~zero].tolist()))
    return True
