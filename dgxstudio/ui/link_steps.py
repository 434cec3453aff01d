"""The busiest links' utilization over a run as steps to plot (no Qt here: the worker thread that
ran the collective makes them with it, ``replay_facts.prepare``; a folded run builds each rate
pattern it is asked for, 2 s of 2,135 patterns for a 512-system NVLS tree)."""

from __future__ import annotations

import numpy as np

UTIL_CURVES = 5  # busiest links plotted after a run
PATTERNS_PER_CALL = 32  # rate patterns read between two calls of busiest_steps' on_pattern (~30 ms at 512 systems)


def busiest_steps(sim, top: int = UTIL_CURVES, on_pattern=None) -> list[tuple[dict, np.ndarray, np.ndarray]]:
    """(bottleneck, times, utilizations) of the run's ``top`` busiest links, a step per change.
    ``on_pattern(fraction)`` is called every ``PATTERNS_PER_CALL`` rate patterns read (the loop that
    takes seconds at 512 systems: a caller checks its cancel flag and reports progress there)."""
    busiest = sim.bottlenecks(top)
    if not busiest or not sim.segments:
        return []
    out = []
    seg = np.asarray(sim.segments, dtype=float)
    pids = seg[:, 2].astype(np.int64)
    used = np.unique(pids)
    chan_of = {ends: c for c, ends in enumerate(sim.channel_ends)}
    chans = [chan_of.get((bneck["from"], bneck["to"])) for bneck in busiest]
    # each rate pattern's load on these channels, looked up once per pattern, not per segment nor
    # per channel (a folded run builds a pattern on each look-up: 0.7 s of the GUI thread for five
    # channels of a 128-system NVLS tree); a pattern lists its channels component by component,
    # not in order: no binary search
    loads = np.zeros((len(busiest), int(pids.max()) + 1))
    for k, pid in enumerate(used.tolist()):
        if on_pattern is not None and k % PATTERNS_PER_CALL == 0:
            on_pattern(k / len(used))
        rp = sim.rate_patterns[pid]
        for i, chan in enumerate(chans):
            if chan is not None:
                loads[i, pid] = rp.load_Bps[rp.channels == chan].sum()
    for i, bneck in enumerate(busiest):
        chan = chans[i]
        if chan is None:
            continue
        u = loads[i][pids] / sim.capacity[chan]
        # one step per change of utilization (or gap in time), not one per segment
        keep = np.flatnonzero(np.r_[True, (np.diff(u) != 0) | (seg[1:, 0] != seg[:-1, 1])])
        t0 = seg[keep, 0]
        t1 = seg[np.r_[keep[1:] - 1, len(seg) - 1], 1]
        uk = u[keep]
        # between segments nothing moves (a launch, a hop's latency): the link is idle there
        gap = np.flatnonzero(t0[1:] > t1[:-1])
        if len(gap):
            order = np.argsort(np.r_[t0, t1[gap]], kind="stable")
            t0, t1, uk = (np.r_[t0, t1[gap]][order], np.r_[t1, t0[gap + 1]][order],
                          np.r_[uk, np.zeros(len(gap))][order])
        xs = np.column_stack([t0, t1]).ravel()
        ys = np.repeat(uk, 2)
        out.append((bneck, xs, ys))
    return out
