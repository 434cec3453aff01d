"""An NVLS tree run through its fold without building the pieces it does not run (issue #17): 16 GiB
over 512 and 2,048 DGX H100 systems is 9.0 and 34.3 million groups, where the limit is 3 million,
and its folded run simulates a few dozen groups a piece (one system per class of systems wired
alike, one tree per class of trees: ``sim/system_fold.py``, ``sim/tree_fold.py``). From 64 systems
on (``nvls.FOLD_SYSTEMS``, where the NVLS tree folds) its pieces stay virtual rows below the limit
too: 16 GiB over 128 systems built 2.56 million groups (2.2 s CPU, 841 MB) to run 51,200.

The schedule keeps its later pieces as virtual rows (``virtual_rows.RepeatedLanes``), images of the
last piece built. The fold is found on a shorter schedule: the pieces built, then the first
``built`` copies of the block as columns, then what follows the block (the launch), its ids moved
down. The folded schedule of the whole run is that shorter schedule's, reduced, with its last
copies repeated (``Schedule.repeat_piece``, which checks that its last two copies are images) and
its tail after them; it is counted against the group limit as it is built.

Why the shorter schedule's fold is the whole one's. A copy's row differs from the same row of the
copy before only in its dependencies that move with the piece, shifted by m; the others are groups
of the pieces built, the same in every copy. A dependency moves at most ``reach`` pieces back, so
from copy ``reach`` + 1 on, a copy and all its dependencies lie in the copies or are the same fixed
groups, and every later copy, with its dependencies, is that copy's image shifted by a whole number
of pieces. The fold's checks are made group by group on patterns (shared by every piece), bytes,
delays and dependencies read through each group's representative, whose numbers are checked here
to move with the copies (kept rows the same in every copy built, each copy's representatives m on),
so every check the fold made on the last built copy holds on each later one. The folded run is
given back per group through the same numbers, without building them (``virtual_rows.Piecewise``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import fold_reduced, limits, ragged, tree_fold
from .engine import Engine
from .schedule import Group, Lanes, Schedule, SimResult
from . import setup_steps
from .tree_fold import Fold, _FoldedEnds, _FoldedPatterns
from .virtual_rows import Gathered, Piecewise, RepeatedLanes


def block(sched: Schedule) -> tuple[int, int] | None:
    """The place of ``sched``'s virtual rows (chunk index, first group id), or None without."""
    table = sched.groups
    found = [(k, first) for k, (chunk, first) in enumerate(zip(table._chunks, table._starts))
             if isinstance(chunk, RepeatedLanes)]
    return found[0] if len(found) == 1 else None


class _NoFold(Exception):
    """Why the shorter schedule's fold cannot stand for the whole run."""


def _refuse(sched: Schedule, why: str):
    raise limits.TooLarge(f"{sched.description} takes {len(sched.groups):,} flow groups to simulate, more than the "
                          f"limit of {limits.MAX_SCHEDULED_GROUPS:,}; only a folded run of its alike systems and "
                          f"trees fits, and {why}: use a smaller size or fewer GPUs")


def reach_back(chunk: RepeatedLanes, first: int) -> int:
    """How many pieces back a row's dependencies that move with the piece reach (at least 1)."""
    image = chunk.image
    base = first - image.m  # (the piece the copies are images of)
    far = 0
    for counts, flat, moves, _ in image.deps.values():
        moving = flat[moves] - chunk.offset
        if len(moving):
            far = max(far, int(math.ceil((base - int(moving.min())) / image.m)))
    return max(far, 1)


def shorter(sched: Schedule, k: int, first: int, built: int) -> Schedule | None:
    """``sched`` with only the first ``built`` copies of its virtual rows (chunk ``k``, from group
    ``first``), as columns; the groups after them moved down. None where a group after the block
    waits for a copy not built, or a block of columns for a group after the block."""
    table = sched.groups
    chunk = table._chunks[k]
    end = first + chunk.n
    cut = (chunk.copies - built) * chunk.image.m
    out = Schedule([], sched.payload_bytes, sched.description, dict(sched.meta))

    def moved(deps: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(d - cut if d >= end else d for d in deps)

    unbuilt = first + built * chunk.image.m  # (the copies from here on are not in the shorter schedule)
    for c, item in enumerate(table._chunks):
        if c == k:
            out.add_lanes(item.materialized(built))
        elif isinstance(item, Lanes):
            flats = [ragged.counts_and_flat(item.deps_done)[1], ragged.counts_and_flat(item.deps_sent)[1]]
            flats += [np.asarray(ov["deps_done"], dtype=np.int64) for ov in item.overrides.values()]
            if item.virtual or any((f >= unbuilt).any() for f in flats):
                return None
            out.add_lanes(item)
        else:
            for g in item:
                deps = (*g.deps_done, *g.deps_sent)
                if any(unbuilt <= d < end for d in deps):
                    return None
                if any(d >= end for d in deps):
                    g = dataclasses.replace(g, deps_done=moved(g.deps_done), deps_sent=moved(g.deps_sent))
                out.add(g)
    spans = sched.meta.get("tree_spans")
    if spans is not None:
        out.meta["tree_spans"] = (spans[0], (spans[1][0], built))
    return out


def run(router, sched: Schedule, capacity_scale: float, progress=None, cancel=None) -> SimResult:
    """The run of an NVLS tree schedule with virtual rows (see the module's note). Where its fold
    cannot be read from the shorter schedule, the rows are built and the schedule runs as it would
    have (``tree_fold.run``), or, past the group limit, the run is refused (``limits.TooLarge``), as
    it is where its folded schedule is over the limit too."""
    try:
        return _folded(router, sched, capacity_scale, progress, cancel)
    except _NoFold as exc:
        if len(sched.groups) > limits.MAX_SCHEDULED_GROUPS:
            _refuse(sched, str(exc))
    from .nvls import tree_units  # (nvls and collectives import each other: collectives first)

    sched.groups.build(block(sched)[0])  # (the columns repeat_piece builds)
    cols = sched.columns()
    for p in cols.patterns:  # (as a schedule built whole comes: routed by the run's own engine)
        p._template = None
    sched.meta["trees"] = tree_units(sched)
    return tree_fold.run(router, sched, capacity_scale, progress, cancel)


def _folded(router, sched: Schedule, capacity_scale: float, progress, cancel) -> SimResult:
    at = block(sched)
    if at is None:
        raise _NoFold("its pieces are not one block of images")
    k, first = at
    chunk = sched.groups._chunks[k]
    m, copies = chunk.image.m, chunk.copies
    built = min(copies, reach_back(chunk, first) + 2)
    short = shorter(sched, k, first, built)
    if short is None:
        raise _NoFold("its groups after the pieces wait for them")
    from .nvls import tree_units  # (nvls and collectives import each other: collectives first)

    short.meta["trees"] = tree_units(short)
    setup_steps.step("folding alike systems")  # (1.7 s of 2,048 DGX H100's NVLS tree)
    fold = Fold.of(Engine(router, capacity_scale), short)
    if fold is None:
        raise _NoFold("its systems or trees are not all wired alike here")
    kept, new_id = fold.kept()
    n = len(short.groups)
    mask = np.zeros(n, dtype=bool)
    mask[kept] = True
    end = first + built * m
    rows = mask[first:end].reshape(built, m)
    step = int(rows[0].sum())
    ids = new_id[first:end].reshape(built, m)
    if not ((rows == rows[0]).all() and (ids - ids[0] == np.arange(built)[:, None] * step).all()):
        raise _NoFold("its fold is not the same in every piece")
    more = (copies - built) * step
    renamed = new_id.copy()
    renamed[end:] += more  # (the tail's groups come after every copy's)
    head, tail = kept[kept < end], kept[kept >= end]
    reduced = fold_reduced.reduced(short, short.columns(), head, renamed)
    k0 = int(mask[:first].sum())
    if copies > built and not reduced.repeat_piece(k0 + (built - 2) * step, k0 + (built - 1) * step, copies - built,
                                                   chunk.image.piece + built):
        raise _NoFold("its folded pieces are not images of each other")
    for g in tail.tolist():
        grp = short.groups[g]
        if len(reduced.groups) != renamed[g]:
            raise _NoFold("its groups after the pieces do not fold")
        reduced.add(Group(grp.name, grp.pattern, grp.bytes_each, tuple(dict.fromkeys(renamed[list(grp.deps_done)].tolist())),
                          tuple(dict.fromkeys(renamed[list(grp.deps_sent)].tolist())), grp.duration_s,
                          grp.post_delay_s, grp.meta))
    sim = fold.run_reduced(reduced, progress, cancel)
    # every group reads its representative's row, through numbers that are not built
    idx = Piecewise(new_id, first, m, copies, built, step, more)
    place = Piecewise(np.arange(n, dtype=np.int64), first, m, copies, built, 0, 0)
    return dataclasses.replace(
        sim, group_start=Gathered(sim.group_start, idx), group_sent=Gathered(sim.group_sent, idx),
        group_done=Gathered(sim.group_done, idx), groups=sched.groups,
        flow_ends=_FoldedEnds(fold, sim.flow_ends, idx, place), channel_bytes=fold.channel_bytes(sim),
        rate_patterns=_FoldedPatterns(fold, sim.rate_patterns), routes=fold.eng0.routes)
