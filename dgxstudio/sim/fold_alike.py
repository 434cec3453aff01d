"""Whether every tree of a schedule is a copy of the first, group for group, read from the schedule's
columns (``Schedule.columns``) rather than group by group: ``tree_fold.Fold.of``'s first check.

Tree t's i-th group must have tree 0's i-th group's bytes, duration and delay, a pattern where that
one has one, as many dependencies of each kind, each in the same place: a group of its own tree at
the same position in it as tree 0's group of tree 0 is in tree 0, or the very same group outside
every tree. Its patterns take roles by first use, and must take tree 0's roles position by position.

At 16 GiB over 2,048 DGX H100 CollNet's 8 rails are 295,000 groups, most of them columns
(``Lanes``) that the group-by-group check had to make into Group objects one by one (1.4 s).
"""

from __future__ import annotations

import numpy as np

from .schedule import Columns, Pattern


def _gather(ptr: np.ndarray, flat: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dependencies of ``rows``, one row after the other, and how many each row has."""
    counts = ptr[rows + 1] - ptr[rows]
    total = int(counts.sum())
    starts = np.repeat(ptr[rows] - (np.cumsum(counts) - counts), counts)
    return flat[np.arange(total, dtype=np.int64) + starts], counts


def role_patterns(cols: Columns, trees: list[np.ndarray], tree_of: np.ndarray,
                  pos: np.ndarray) -> list[list[Pattern]] | None:
    """Each tree's patterns in the order its groups first use them (its roles), or None when some
    tree is not a copy of tree 0 (see the module's note). ``trees``: each tree's group ids, all of
    one length; ``tree_of``, ``pos``: each group's tree (-1 outside) and place in it."""
    m = np.stack(trees)  # (trees, groups of a tree)
    n_trees = len(trees)
    first = m[0]
    for col in (cols.bytes_each, cols.duration_s, cols.post_delay_s):
        if not (col[m] == col[first]).all():
            return None
    pat = cols.pattern[m]
    if not ((pat >= 0) == (pat[0] >= 0)).all():
        return None
    rows = m.ravel()
    for ptr, flat in ((cols.done_ptr, cols.done_flat), (cols.sent_ptr, cols.sent_flat)):
        x, counts = _gather(ptr, flat, rows)
        y, ref_counts = _gather(ptr, flat, first)
        if not (counts == np.tile(ref_counts, n_trees)).all():
            return None
        y = np.tile(y, n_trees)  # (tree 0's dependencies, beside every tree's)
        t = np.repeat(np.repeat(np.arange(n_trees, dtype=np.int64), m.shape[1]), counts)  # each dependency's tree
        tx = tree_of[x]
        own = tx == t
        ok = np.where(own, (tree_of[y] == 0) & (pos[x] == pos[y]), (tx < 0) & (x == y))
        if not ok.all():
            return None
    out: list[list[Pattern]] = []
    role0 = None
    for t in range(n_trees):
        used = pat[t][pat[t] >= 0]
        uniq, at, inv = np.unique(used, return_index=True, return_inverse=True)
        order = np.argsort(at)  # (the patterns by first use)
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order] = np.arange(len(uniq))
        role = rank[inv.ravel()]
        if role0 is None:
            role0 = role
        elif not (role == role0).all():
            return None
        out.append([cols.patterns[k] for k in uniq[order].tolist()])
    return out
