"""What the engine counts as flows end and when the run ends: the groups whose flows finished (their
sends, arrivals and per-flow end times) and the bytes every channel carried."""

from __future__ import annotations

import numpy as np

# The run's channel bytes sum each (component, class pattern) pair's time in a bin per possible pair
# while there are at most this many bins per pair seen plus this many (else by sorting the pairs).
PAIR_BINS = (4, 1_000_000)


def finish_flows(finished, a_group, a_pos, a_lat, t, outstanding, arrival, partial, flow_ends, open_ends,
                 templates, sent, post_delay, schedule_done, release, on_sent) -> list[int]:
    """Account for flows whose last byte left at time t, group by group. A group's flows sit
    together in the active arrays (added together, removed in order), so the finished ones of each
    group form one run. Usually a few flows end at a time (a tree's pieces end one connection at a
    time): those are done on Python scalars, a small numpy call costing more than its arithmetic."""
    idx = finished.nonzero()[0]
    if len(idx) > 32:
        completed = _finish_groups(idx, a_group, a_pos, a_lat, t, outstanding, arrival, partial, open_ends, templates)
    else:
        fg = a_group[idx].tolist()
        lat = a_lat[idx].tolist()
        completed = []
        i, n_f = 0, len(fg)
        while i < n_f:
            g = fg[i]
            j = i + 1
            while j < n_f and fg[j] == g:
                j += 1
            end = t + max(lat[i:j])
            if end > arrival[g]:
                arrival[g] = end
            left = int(outstanding[g])
            if j - i < left or partial[g]:
                if g not in open_ends:
                    open_ends[g] = np.full(len(templates[g]["route"]), np.nan)
                open_ends[g][a_pos[idx[i:j]]] = t
                partial[g] = True
            outstanding[g] = left - (j - i)
            if j - i == left:
                completed.append(g)
            i = j
    for g in completed:
        sent[g] = t
        if partial[g] and g in open_ends:
            recorded = open_ends.pop(g)
            recorded[np.isnan(recorded)] = t
            flow_ends.store(g, recorded)
        schedule_done(g, arrival[g] + post_delay[g])
        release(on_sent[g])
    return completed


def _finish_groups(idx, a_group, a_pos, a_lat, t, outstanding, arrival, partial, open_ends, templates) -> list[int]:
    """``finish_flows`` on arrays, when many flows ended at once (``idx``): the groups it completes."""
    fg = a_group[idx]
    fpos = a_pos[idx]
    starts = np.concatenate(([0], (fg[1:] != fg[:-1]).nonzero()[0] + 1))
    ends = np.append(starts[1:], len(fg))
    ug = fg[starts]
    arrival[ug] = np.maximum(arrival[ug], t + np.maximum.reduceat(a_lat[idx], starts))
    counts = ends - starts
    uneven = (counts < outstanding[ug]) | partial[ug]
    for j in np.flatnonzero(uneven).tolist():
        g = int(ug[j])
        if g not in open_ends:
            open_ends[g] = np.full(len(templates[g]["route"]), np.nan)
        open_ends[g][fpos[starts[j]:ends[j]]] = t
        partial[g] = True
    outstanding[ug] -= counts
    return ug[outstanding[ug] == 0].tolist()


def channel_bytes(n_channels: int, global_parts: list[np.ndarray], pattern_time: list[float], n_comp: int,
                  comp_ch: list[np.ndarray], cp_lch: list[np.ndarray], cp_load: list[np.ndarray]) -> np.ndarray:
    """Bytes each channel carried: the time spent in each (component, class pattern) pair of every
    network state (``global_parts[i]`` lists state i's pairs, ``pattern_time[i]`` its time), times
    that class pattern's loads on the component's channels."""
    out = np.zeros(n_channels)
    if not global_parts:
        return out
    per = max(1, len(cp_lch))
    pairs = np.concatenate(global_parts, axis=1)
    times = np.repeat(np.asarray(pattern_time), [p.shape[1] for p in global_parts])
    keys = pairs[0] * per + pairs[1]
    n_keys = n_comp * per
    if n_keys <= PAIR_BINS[0] * len(keys) + PAIR_BINS[1]:
        # a bin per possible pair (no sort of 22 million pairs on a 992-GPU tree; the same sums, each
        # taken in the pairs' order, as by unique's inverse)
        spent_all = np.bincount(keys, weights=times, minlength=n_keys)
        uk = np.flatnonzero(spent_all)
        spent = spent_all[uk]
    else:
        uk, inv = np.unique(keys, return_inverse=True)
        spent = np.bincount(inv, weights=times)
    for key, dt in zip(uk.tolist(), spent.tolist()):
        if dt > 0:
            c, q = divmod(key, per)
            out[comp_ch[c][cp_lch[q]]] += cp_load[q] * dt
    return out
