"""The schedule a folded tree run simulates (``tree_fold.Fold.run``): the kept groups (the trees'
representatives and the groups outside the trees), each dependency renumbered to the kept group in
its place and listed once, built from the schedule's columns as one block of columns (``Lanes``)
rather than group by group.

At 16 GiB over 128 DGX H100 CollNet's representative rail is 37,000 groups, most of them columns
that the group-by-group build made into Group objects, copied and added one by one.
"""

from __future__ import annotations

import numpy as np

from .ragged import Ragged
from .schedule import Columns, Lanes, Schedule


def _renumbered(ptr: np.ndarray, flat: np.ndarray, kept: np.ndarray, new_id: np.ndarray) -> Ragged:
    """The dependencies of the groups ``kept``, renumbered by ``new_id``, each row's listed once in
    the order it first lists them (``tuple(dict.fromkeys(...))``)."""
    counts = ptr[kept + 1] - ptr[kept]
    total = int(counts.sum())
    at = np.arange(total, dtype=np.int64) + np.repeat(ptr[kept] - (np.cumsum(counts) - counts), counts)
    ids = new_id[flat[at]]
    row = np.repeat(np.arange(len(kept), dtype=np.int64), counts)
    width = int(ids.max()) + 1 if total else 1
    _, first = np.unique(row * width + ids, return_index=True)  # (each row's first of each id)
    first.sort()  # (back in listed order)
    return Ragged(np.bincount(row[first], minlength=len(kept)), ids[first])


def reduced(sched: Schedule, cols: Columns, kept: np.ndarray, new_id: np.ndarray) -> Schedule:
    """The groups ``kept`` (ascending) of ``sched`` (``cols``: its columns) with dependency d made
    ``new_id[d]``; names and meta read from ``sched``'s groups when asked."""
    out = Schedule([], sched.payload_bytes, sched.description, dict(sched.meta))
    if not len(kept):
        return out
    groups = sched.groups
    ids = kept.tolist()
    pattern = cols.pattern[kept]
    used = np.unique(pattern[pattern >= 0])
    local = np.full(len(cols.patterns) + 1, -1, dtype=np.int64)  # (index -1 stays -1: a compute group)
    local[used] = np.arange(len(used))
    out.add_lanes(Lanes(len(ids), lambda r: groups[ids[r]].name, [cols.patterns[k] for k in used.tolist()],
                        local[pattern], cols.bytes_each[kept], _renumbered(cols.done_ptr, cols.done_flat, kept, new_id),
                        _renumbered(cols.sent_ptr, cols.sent_flat, kept, new_id), cols.duration_s[kept],
                        cols.post_delay_s[kept], meta=lambda r: groups[ids[r]].meta))
    return out
