"""What the engine counts as flows end and when the run ends: the groups whose flows finished (their
sends, arrivals and per-flow end times) and the bytes every channel carried."""

from __future__ import annotations

import numpy as np

# The run's channel bytes sum each (component, class pattern) pair's time in a bin per possible pair
# while there are at most this many bins per pair seen plus this many (else by sorting the pairs).
PAIR_BINS = (4, 1_000_000)
# Entries (a pair's channels) expanded at a time when the pairs' loads are added up, and up to how
# many pairs they are added one pair at a time instead. (Blocks of 64k entries stay in the cache and
# reuse freed memory: at 1M entries a block's fresh pages cost more than its sums, 0.35 s of CPU
# instead of 0.22 s over the 22.6 million pairs of the 992-GPU DGX-1 tree; the sums and their
# order do not depend on it.)
CHUNK = 1 << 16
LOOP_PAIRS = 64
# Flows ending at once up to which ``finish_flows`` works on Python scalars (more: on arrays). At 64
# flows of 8 groups (the NVLS tree on 2 DGX H100) the scalars cost about 2/3 of the dozen array calls.
SCALAR_FLOWS = 128


def finish_flows(idx, a_group, a_pos, a_lat, t, outstanding, arrival, partial, flow_ends, open_ends,
                 templates, sent, post_delay, schedule_done, release, on_sent) -> list[int]:
    """Account for flows whose last byte left at time t, group by group. A group's flows sit
    together in the active arrays (added together, removed in order), so the finished ones of each
    group form one run. Usually a few flows end at a time (a tree's pieces end one connection at a
    time): those are done on Python scalars, a small numpy call costing more than its arithmetic.
    ``idx``: the places of the flows that finished among the active ones, ascending (the engine
    finds them once for this, its flow counts and ``ActiveFlows.drop``)."""
    if len(idx) > SCALAR_FLOWS:
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
            end = t + (max(lat[i:j]) if j - i > 1 else lat[i])
            if end > arrival.item(g):  # (.item: a Python scalar, cheaper than numpy's)
                arrival[g] = end
            left = outstanding.item(g)
            if j - i < left or partial.item(g):
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
        if partial.item(g) and g in open_ends:
            recorded = open_ends.pop(g)
            recorded[np.isnan(recorded)] = t
            flow_ends.store(g, recorded)
        schedule_done(g, arrival.item(g) + post_delay.item(g))  # (Python floats: the same sum, cheaper)
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
                  comp_ch: list[np.ndarray], cp_lch: list[np.ndarray], cp_load: list[np.ndarray],
                  comp_class: np.ndarray | None = None, cp_class: np.ndarray | None = None) -> np.ndarray:
    """Bytes each channel carried: the time spent in each (component, class pattern) pair of every
    network state (``global_parts[i]`` lists state i's pairs, ``pattern_time[i]`` its time), times
    that class pattern's loads on the component's channels. ``comp_class``/``cp_class``: each
    component's class and each class pattern's (a pattern serves only its class's components), so
    that a pair's bin is numbered among the pairs that can occur."""
    out = np.zeros(n_channels)
    if not global_parts:
        return out
    n_cp = len(cp_lch)
    if not n_cp:   # (no class pattern: no pair names one)
        return out
    counts = [p.shape[1] for p in global_parts]
    if comp_class is None or cp_class is None:   # no classes given: any pattern may serve any component
        comp_class, cp_class = np.zeros(n_comp, dtype=np.int64), np.zeros(n_cp, dtype=np.int64)
    # bins numbered component by component, each over its class's patterns in their order: the same
    # order of pairs as component * n_cp + pattern, in a few MB instead of n_comp x n_cp bins (3,969 x
    # 3,639 on a 992-GPU tree, each a cache miss)
    cp_class = np.asarray(cp_class, dtype=np.int64)
    n_cls = int(max(cp_class.max(), comp_class.max())) + 1
    by_class = np.argsort(cp_class, kind="stable")
    cls_ptr = np.concatenate([[0], np.cumsum(np.bincount(cp_class, minlength=n_cls))])
    rank = np.empty(n_cp, dtype=np.int64)
    rank[by_class] = np.arange(n_cp) - cls_ptr[cp_class[by_class]]
    comp_base = np.concatenate([[0], np.cumsum(np.diff(cls_ptr)[comp_class])])
    n_keys = int(comp_base[-1])
    n_pairs = sum(counts)
    if n_keys <= PAIR_BINS[0] * n_pairs + PAIR_BINS[1]:
        # a bin per possible pair, the states' pairs added to them in order a block at a time (``add.at``
        # adds one after another, as ``bincount`` does: 17 million pairs on a 992-GPU tree are never
        # held at once)
        spent_all = np.zeros(n_keys)
        i = 0
        while i < len(global_parts):
            j, n = i, 0
            while j < len(global_parts) and n < CHUNK:
                n += counts[j]
                j += 1
            block = np.concatenate(global_parts[i:j], axis=1)
            np.add.at(spent_all, comp_base[block[0]] + rank[block[1]],
                      np.repeat(np.asarray(pattern_time[i:j]), counts[i:j]))
            i = j
        uk = np.flatnonzero(spent_all)
        spent = spent_all[uk]
    else:
        pairs = np.concatenate(global_parts, axis=1)
        times = np.repeat(np.asarray(pattern_time), counts)
        uk, inv = np.unique(comp_base[pairs[0]] + rank[pairs[1]], return_inverse=True)
        spent = np.bincount(inv, weights=times)
    live = spent > 0
    uk, spent = uk[live], spent[live]
    comps = np.searchsorted(comp_base, uk, side="right") - 1
    cps = by_class[cls_ptr[comp_class[comps]] + uk - comp_base[comps]]
    if len(uk) <= LOOP_PAIRS:  # a few pairs (a small run): one after another
        for c, q, dt in zip(comps.tolist(), cps.tolist(), spent.tolist()):
            out[comp_ch[c][cp_lch[q]]] += cp_load[q] * dt
        return out
    # Every pair's channels and loads times its time, pair after pair (ascending component, then
    # pattern), added into ``out`` one element after another (``np.add.at``; a pattern names each
    # channel once): the sums and order of a loop doing ``out[chans] += loads * dt`` per pair.
    comp_len = np.fromiter((len(x) for x in comp_ch), dtype=np.int64, count=len(comp_ch))
    comp_ptr = np.concatenate([[0], np.cumsum(comp_len)])
    comp_flat = np.concatenate(comp_ch) if comp_ch else np.zeros(0, np.int64)
    cps_l = cps.tolist()
    i = 0
    while i < len(cps_l):  # a block of pairs of about CHUNK entries at a time
        j, n = i, 0
        while j < len(cps_l) and n < CHUNK:
            n += len(cp_lch[cps_l[j]])
            j += 1
        qs = cps_l[i:j]
        n_b = [len(cp_lch[q]) for q in qs]
        chans = comp_flat[np.repeat(comp_ptr[comps[i:j]], n_b) + np.concatenate([cp_lch[q] for q in qs])]
        np.add.at(out, chans, np.concatenate([cp_load[q] for q in qs]) * np.repeat(spent[i:j], n_b))
        i = j
    return out
