"""What the replay, its legend and the structures read of a run's groups, read once per class of
groups instead of once per group (no Qt here: it can run beside the simulation).

A class is a pattern and the values of the meta keys the replay reads (``KEYS``): the ring, tree or
phase that colours a group, the NVLS switch that reduces it, a compute task's device. A 16 GiB NVLS
tree over 128 DGX H100 systems is 2.56 million groups in a few thousand classes; reading each group's
meta (a new dict per virtual row) took 14 s of the GUI thread when the run was shown. The schedule
gives each block's classes from its columns (``Lanes.row_classes``); only a run of Group objects is
read group by group.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from ..cancel import cancellable, check_cancelled
from ..sim.schedule import classes_by_row
from .link_steps import busiest_steps

KEYS = ("ring", "tree", "phase", "switch", "device")


def series_key(meta: dict) -> str:
    """The colour key of a group: its ring, tree or phase (the replay colours chunks by this)."""
    return str(meta.get("ring", meta.get("tree", meta.get("phase", ""))))


def _blocks(groups):
    """(first group, each row's class, per class: first row, pattern, meta) for each block of groups."""
    if not hasattr(groups, "blocks"):   # a compacted or hand-made result's plain list
        groups = list(groups)
        yield (0, *classes_by_row([g.pattern for g in groups], [g.meta for g in groups], KEYS))
        return
    for first, chunk in groups.blocks():
        if hasattr(chunk, "row_classes"):
            yield first, *chunk.row_classes(KEYS)
        else:
            yield (first, *classes_by_row([g.pattern for g in chunk], [g.meta for g in chunk], KEYS))


class ReplayFacts:
    """Each group's class (``klass``, an int32 array) and per class, in the order the classes first
    appear among the groups: its pattern (None: a compute task), a meta of one of its groups, its
    colour key and colour index (the order keys first appear among groups with a pattern)."""

    def __init__(self, groups):
        self.klass = np.zeros(len(groups), dtype=np.int32)
        self.patterns: list = []
        self.metas: list[dict] = []
        index: dict[tuple, int] = {}
        for first, codes, _firsts, patterns, metas in _blocks(groups):
            check_cancelled()   # (a block at a time: Cancel acts while a run's groups are read)
            local = np.empty(len(patterns), dtype=np.int32)
            for j, (pattern, meta) in enumerate(zip(patterns, metas)):
                fact = (id(pattern), *((k in meta, meta.get(k)) for k in KEYS))
                c = index.get(fact)
                if c is None:
                    c = index[fact] = len(self.patterns)
                    self.patterns.append(pattern)
                    self.metas.append(meta)
                local[j] = c
            self.klass[first:first + len(codes)] = local[codes]
        self.labels: dict[str, int] = {}   # colour key (ring, tree or phase) -> index into the colours
        self.keys = [None if p is None else series_key(m) for p, m in zip(self.patterns, self.metas)]
        color = [0 if k is None else self.labels.setdefault(k, len(self.labels)) for k in self.keys]
        self.class_color = color   # per class

    timeline: Timeline | None = None   # (prepare: made in the worker with the facts)
    link_steps: list | None = None     # (prepare: the busiest links' plot, link_steps.busiest_steps)

    def classes(self):
        """(pattern, meta, colour key) of each class, in the order they first appear."""
        return zip(self.patterns, self.metas, self.keys)


class Timeline:
    """A run's group times as arrays (virtual rows' built once), the moments a step stops at, and the
    groups in flight at a moment found among those that start just before it instead of by comparing
    every group's times: a replay frame of 2.56 million groups compared seven arrays of them."""

    def __init__(self, sim):
        self.start, self.sent, self.done = (np.asarray(a) for a in (sim.group_start, sim.group_sent, sim.group_done))
        self.events = np.unique(np.concatenate([self.start, self.sent, self.done, [0.0, sim.time_s]]))
        # groups shorter than ``reach`` are found by their start, sorted; the longer ones are few
        # (launches, whole-run tasks) and always compared
        span = self.done - self.start
        self.reach = max(sim.time_s, 1e-30) / 256
        long = ~(span <= self.reach)
        self.long = np.flatnonzero(long)
        short = np.flatnonzero(~long)
        self.order = short[np.argsort(self.start[short], kind="stable")].astype(np.int32 if len(span) < 2**31 else np.int64)
        self.starts = self.start[self.order]

    def live(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """The groups started and not yet done at ``t`` (ascending), and which of them still send."""
        lo = np.searchsorted(self.starts, t - self.reach * 1.001, side="left")   # (a margin for rounding)
        hi = np.searchsorted(self.starts, t, side="right")
        g = np.sort(np.concatenate([self.order[lo:hi], self.long]))
        start, sent, done = self.start[g], self.sent[g], self.done[g]
        sending = (start <= t) & (sent > t)
        keep = sending | ((sent <= t) & (done > t))
        return g[keep], sending[keep]


@dataclass
class Preparing:
    """Progress of ``prepare`` (after the run's own, which ends at 1.0): ``fraction`` of the
    preparation done and the ``step`` under way (the last report: 1.0, "done")."""
    fraction: float
    step: str


STEPS = ("reading the groups", "the timeline", "the busiest links")


def prepare(result, progress=None, cancel=None) -> None:
    """In the worker thread that ran ``result``: what showing it would do on the GUI thread, done
    here and kept as ``result.replay_facts``: its groups read per class, its timeline and its busiest
    links' plot (0.5 s for the 2.56 million groups of a 16 GiB NVLS tree over 128 DGX H100 systems,
    seconds at 512 systems). ``cancel`` (an Event or a callable) is checked between the steps and
    inside their loops (``Cancelled``, nothing kept); ``progress`` gets a ``Preparing`` per step."""
    sim = getattr(result, "sim", None)
    if sim is None or not hasattr(sim, "group_start"):
        return
    with cancellable(cancel) if cancel is not None else nullcontext():   # (None: an outer flag holds)
        def step(i: int, frac: float = 0.0) -> None:
            check_cancelled()
            if progress is not None:
                progress(Preparing((i + frac) / len(STEPS), STEPS[i]))
        step(0)
        facts = ReplayFacts(sim.groups)
        step(1)
        facts.timeline = Timeline(sim)
        step(2)
        facts.link_steps = busiest_steps(sim, on_pattern=lambda f: step(2, f))
        check_cancelled()
    result.replay_facts = facts   # (only a whole preparation is kept)
    if progress is not None:
        progress(Preparing(1.0, "done"))   # (a job's last report is 1.0, as a run's is)
