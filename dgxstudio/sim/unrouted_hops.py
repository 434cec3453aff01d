"""The other trees' hops inside systems and between systems under one leaf, as parts, not routed.

``TreeParts.of`` gives every slot of every tree as parts, so that tree_orbits can check the maps
between trees; only tree 0's routes are read by the folded run. A hop that is not spread over the
spines was, in every tree, asked of the engine's template: a ``LazyRoute`` made, an engine route
numbered and kept, its pair remembered by ``HopRoutes``, for 87,500 slots of trees 1-15 on 2,048
DGX H100 systems (about 1.2 s), where the check needs only the route's channels and weights.

Past tree 0, such a hop is the part ``HopRoutes.route`` would have made the route of, taken in the
same order of checks:

- GPUs of one system: ``Router.template_leg`` (the route another system's search found, moved by
  the channel offset): the template's channels plus the offset, its weights, its latency;
- GPUs of two systems, asked without waypoints (``_between_systems``): the via hop through each GPU's
  own NIC (``Router._rail_waypoints``); when its legs are one path each and the NICs share their leaf
  (``_Loads.via_legs``), the legs' channels and the two through the leaf, each of weight 1, its latency
  ``ViaLatency``'s;
- a GPU of a system and a device outside every system (CollNet's heads and their leaves, 28,700
  pairs of rails 1-7 on 2,048 DGX H100): ``ExitRoutes.route``, which ``Router.routes`` answers them
  with, not kept by the router.

A pair ``HopRoutes`` or the router already answered (kept), or one they would answer any other way,
is left to the engine's template, as before. Its part is equal, entry by entry, to the route the
template would give (tests/sim/test_unrouted_hops.py): the maps' check reads the same numbers.
"""

from __future__ import annotations

import math
from itertools import islice

import numpy as np

from ..analysis.exit_routes import ExitRoutes


class Unrouted:
    """The hops of some pairs taken as parts (``take``), made for one ``TreeParts.of``: what it
    remembers of the router stays true while the run routes other pairs (a leg's template, once
    found, is kept by the router, its NICs' uplinks and rails do not change; whether a pair has
    been routed since is checked pair by pair, as ``HopRoutes`` checks it). ``hops``: the router's
    ``HopRoutes``, on an engine whose template reads it. ``names``: devices already numbered (the
    trees' slots' ends, ``TreeParts.ends``), whose numbers ``take`` may be given.

    A pattern's pairs are told apart with numpy over numbers of their devices (each device's
    system, and whether it is a GPU with a rail, worked out once per device, not per pair), and the
    parts of the pairs taken are put together as rows of arrays; only the look-ups of the router's
    dictionaries (a pair or way it keeps, a leg's template) stay pair by pair, for the pairs that
    reach them, in the order the checks above list."""

    def __init__(self, hops, names: list[str] | None = None):
        self.hops = hops
        self.router = router = hops.router
        self._cache_seen: tuple[int, set] = (0, set())  # see _touched
        self._ones: dict[int, np.ndarray] = {}
        self._between = not router.pxn  # (_between_systems leaves every hop between systems to the router under PXN)
        self._exits = ExitRoutes.of(router)
        # devices by number: their names, systems (numbered; -1 none) and whether a via hop may
        # leave or reach them (a GPU with a rail, without PXN)
        self._number: dict[str, int] = {}
        self._names: list[str] = []
        self._sys_ids: dict[str, int] = {}  # (systems, of devices and of NICs, numbered)
        self._up_ids: dict[str, int] = {}   # (uplinks numbered)
        self._sys = np.zeros(0, dtype=np.int64)
        self._via = np.zeros(0, dtype=bool)
        # a GPU's side of a via hop out of it (True) and into it (False), its NIC, and its leg's
        # channels as rows padded with -1 (see _sides)
        self._side_at = {True: np.zeros((0, 4), dtype=np.int64), False: np.zeros((0, 4), dtype=np.int64)}
        self._nic: list[str | None] = []
        self._legs = {True: np.zeros((0, 0), dtype=np.int64), False: np.zeros((0, 0), dtype=np.int64)}
        self._leg_n = {True: np.zeros(0, dtype=np.int64), False: np.zeros(0, dtype=np.int64)}
        if names is not None:
            self._add(names)

    def _add(self, names) -> None:
        """Number ``names`` not numbered yet, after the others."""
        number, system = self._number, self.router._system
        new = [x for x in dict.fromkeys(names) if x not in number]
        if not new:
            return
        for x in new:
            number[x] = len(self._names)
            self._names.append(x)
        ids = self._sys_ids
        sys_of = [system.get(x) for x in new]
        sys_num = np.fromiter((-1 if sid is None else ids.setdefault(sid, len(ids)) for sid in sys_of),
                              dtype=np.int64, count=len(new))
        if self._between:
            gpus, rail = self.router._gpus, self.router._rails()
            via = np.fromiter((x in gpus and x in rail for x in new), dtype=bool, count=len(new))
        else:
            via = np.zeros(len(new), dtype=bool)
        self._sys = np.concatenate([self._sys, sys_num])
        self._via = np.concatenate([self._via, via & (sys_num >= 0)])
        self._nic.extend([None] * len(new))
        for out in (True, False):  # (a side not looked at yet: its up, NIC's system, link, leg state -2)
            self._side_at[out] = np.concatenate([self._side_at[out], np.full((len(new), 4), -2, dtype=np.int64)])
            self._legs[out] = np.concatenate([self._legs[out], np.full((len(new), self._legs[out].shape[1]), -1,
                                                                       dtype=np.int64)])
            self._leg_n[out] = np.concatenate([self._leg_n[out], np.zeros(len(new), dtype=np.int64)])

    def _numbers(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """``pairs``' devices as numbers, (pairs, 2), numbering the new ones."""
        flat = [x for pair in pairs for x in pair]
        self._add(flat)
        number = self._number
        return np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat)).reshape(-1, 2)

    def _sides(self, devs: np.ndarray, out: bool) -> np.ndarray:
        """GPUs ``devs``' (numbers) sides of a via hop through their own NICs, out of them or into
        them: rows of (the NIC's uplink, the NIC's system, numbered, -1 none; the channel between
        NIC and uplink, -1 none; the leg's state: 1 its channels kept (``_legs``), 0 not one path
        of weights 1, -1 no template leg yet, asked again next time), each looked up once it is
        asked (``_look``)."""
        at = self._side_at[out]
        ask = np.unique(devs[at[devs, 3] < 0])
        if len(ask):
            self._look(ask.tolist(), out)
        return at[devs]

    def _look(self, ask: list[int], out: bool) -> None:
        """The sides of GPUs ``ask`` not looked at yet, and their legs not known yet, as
        ``_Loads.via_legs`` reads them: the NIC (the GPU's rail), its uplink and the link between
        them, once a GPU; the leg's template (``Router.template_leg``) while it has none, its
        channels (``unit_list``, once per template route) moved by each GPU's offset."""
        router = self.router
        at = self._side_at[out]
        names, nic = self._names, self._nic
        new = [g for g in ask if at[g, 3] == -2]
        if new:  # (both ways at once: the NIC, its uplink and system are the GPU's either way)
            rails, uplinks, index, system = router._rails(), router._uplinks, router.channel_index, router._system
            ids, ups = self._sys_ids, self._up_ids
            rows = []
            for g in new:
                n = nic[g] = rails[names[g]][0]
                up = uplinks[n] if n in uplinks else router._uplink(n)
                sid = system.get(n)
                if up is None:
                    rows.append((-1, -1 if sid is None else ids.setdefault(sid, len(ids)), -1, -1))
                else:
                    rows.append((ups.setdefault(up, len(ups)), -1 if sid is None else ids.setdefault(sid, len(ids)),
                                 index[(n, up)], index[(up, n)]))
            rows = np.array(rows, dtype=np.int64)
            for way, col in ((True, 2), (False, 3)):
                side = self._side_at[way]
                fresh = side[new, 3] == -2  # (not looked at that way yet)
                side[np.asarray(new)[fresh]] = np.column_stack([rows[fresh, :2], rows[fresh, col],
                                                                np.full(int(fresh.sum()), -1)])
        template_leg = router.template_leg
        legs = ([template_leg(names[g], nic[g]) for g in ask] if out
                else [template_leg(nic[g], names[g]) for g in ask])
        by_first: dict[int, list[int]] = {}
        for i, leg in enumerate(legs):
            if leg is not None:
                by_first.setdefault(id(leg[0]), []).append(i)
        unit_list = self.hops.loads.unit_list
        for group in by_first.values():
            gs = np.asarray([ask[i] for i in group], dtype=np.int64)
            units = unit_list(legs[group[0]][0])
            if units is None:
                at[gs, 3] = 0
                continue
            delta = np.fromiter((legs[i][1] for i in group), dtype=np.int64, count=len(group))
            self._put_legs(out, gs, np.asarray(units, dtype=np.int64)[None, :] + delta[:, None])
            at[gs, 3] = 1

    def _put_legs(self, out: bool, gs: np.ndarray, rows: np.ndarray) -> None:
        """Legs ``rows`` (one a GPU of ``gs``) kept, padded with -1."""
        legs, width = self._legs[out], rows.shape[1]
        if width > legs.shape[1]:
            legs = self._legs[out] = np.pad(legs, ((0, 0), (0, width - legs.shape[1])), constant_values=-1)
        legs[gs, :width] = rows
        legs[gs, width:] = -1
        self._leg_n[out][gs] = width

    def take(self, pairs: list[tuple[str, str]], at: list[int], latency_s: float | None, nums: np.ndarray | None = None):
        """The pairs of ``pairs`` at ``at`` taken as parts: (their places, each one's channels, weights
        and latency; ``latency_s`` where given, as the template takes it). Called for a pattern
        without waypoints or paths. ``nums``: those pairs' devices as numbers (``names``' order),
        (len(at), 2), if known."""
        hops, router = self.hops, self.router
        known, cache = hops._known, router._cache
        sel = [pairs[k] for k in at]
        if not sel:
            return [], [], [], []
        nums = self._numbers(sel) if nums is None else nums
        at = np.asarray(at, dtype=np.int64)
        fresh = np.fromiter((pair not in known for pair in sel), dtype=bool, count=len(sel))
        sa, sb = self._sys[nums[:, 0]], self._sys[nums[:, 1]]
        places: list[np.ndarray] = []
        chans: list[np.ndarray] = []
        weights: list = []
        lat: list = []
        # GPUs of one system (HopRoutes._route: a leg inside a system read from a template;
        # template_leg is None for GPUs of no system or of two)
        inside = np.flatnonzero(fresh & (sa >= 0) & (sa == sb)).tolist()
        if inside:
            template_leg = router.template_leg
            legs = [template_leg(*sel[i]) for i in inside]
            by_first: dict[int, list[int]] = {}
            for i, leg in enumerate(legs):
                if leg is not None:
                    by_first.setdefault(id(leg[0]), []).append(i)
            for group in by_first.values():
                first = legs[group[0]][0]
                delta = np.fromiter((legs[i][1] for i in group), dtype=np.int64, count=len(group))
                places.append(np.asarray([inside[i] for i in group], dtype=np.int64))
                chans.extend(first.channels[None, :] + delta[:, None])
                weights.extend([first.weights] * len(group))
                lat.extend([first.latency_s if latency_s is None else latency_s] * len(group))
        # a GPU of a system and a device outside every system
        exits = np.flatnonzero(fresh & ((sa < 0) != (sb < 0))).tolist()
        if exits:
            system = router._system
            got = [(i, self._exit(*sel[i], system.get(sel[i][0]), cache)) for i in exits]
            got = [(i, r) for i, r in got if r is not None]
            if got:
                places.append(np.asarray([i for i, _ in got], dtype=np.int64))
                chans.extend(r.channels for _, r in got)
                weights.extend(r.weights for _, r in got)
                lat.extend(r.latency_s if latency_s is None else latency_s for _, r in got)
        # HopRoutes._between_systems: the via hop Router._rail_waypoints gives (without PXN)
        via = np.flatnonzero(fresh & (sa >= 0) & (sb >= 0) & (sa != sb)
                             & self._via[nums[:, 0]] & self._via[nums[:, 1]])
        if len(via):
            self._via_hops(sel, nums, via, latency_s, places, chans, weights, lat)
        if not places:
            return [], [], [], []
        where = np.concatenate(places)  # (places in ``at``, in the order the pairs come there)
        order = np.argsort(where, kind="stable")
        ordered = order.tolist()
        return (at[where[order]].tolist(), [chans[i] for i in ordered], [weights[i] for i in ordered],
                [lat[i] for i in ordered])

    def _via_hops(self, sel, nums, via, latency_s, places, chans, weights, lat) -> None:
        """``take``'s hops between GPUs of two systems under one leaf (see ``take``), added to its lists."""
        hops, router = self.hops, self.router
        known, cache = hops._known, router._cache
        s, d = nums[via, 0], nums[via, 1]
        a, b = self._sides(s, True), self._sides(d, False)
        # then its HopRoutes.route and _route: _Loads.via_legs' checks (any order: each one fails
        # alike), its channels one path per leg
        ok = (a[:, 0] >= 0) & (a[:, 0] == b[:, 0]) & (a[:, 1] >= 0) & (b[:, 1] >= 0) & (a[:, 1] != b[:, 1])
        keep = np.flatnonzero(ok).tolist()
        if not keep:
            return
        touched = self._touched(cache)
        nic = self._nic
        live = []
        s_at, d_at, via_at = s.tolist(), d.tolist(), via.tolist()
        for j in keep:
            src, dst = sel[via_at[j]]
            n0, n1 = nic[s_at[j]], nic[d_at[j]]
            if ("via", src, n0, n1, dst) in known:
                continue
            # (the router's routes name these devices, if any: nothing kept, nothing to look up)
            if (src in touched or dst in touched or n0 in touched or n1 in touched) and (
                    (src, dst) in cache or ("via", src, n0, n1, dst) in cache or (n0, n1) in cache
                    or (src, n0) in cache or (n1, dst) in cache):
                continue
            live.append(j)
        if not live:
            return
        live = np.asarray(live, dtype=np.int64)
        # a leg not known yet asked again (as _Loads.via_legs asks it while it has none)
        for devs, out, side in ((s, True, a), (d, False, b)):
            if (side[live, 3] < 0).any():
                side[live] = self._sides(devs[live], out)
        live = live[(a[live, 3] == 1) & (b[live, 3] == 1)]
        if not len(live):
            return
        s, d = s[live], d[live]
        n0, n1 = self._leg_n[True][s], self._leg_n[False][d]
        w0, w1 = int(n0.max()), int(n1.max())
        # each hop's channels in order (first leg, link out, link in, last leg), padded with
        # distinct negatives (no pad equals another entry): no channel may come twice
        rows = np.concatenate([self._legs[True][s, :w0], a[live, 2:3], b[live, 2:3], self._legs[False][d, :w1]],
                              axis=1)
        pad = rows < 0
        if pad.any():
            rows[pad] = (-1 - np.arange(rows.shape[1]))[np.nonzero(pad)[1]]
        srt = np.sort(rows, axis=1)
        apart = (srt[:, 1:] != srt[:, :-1]).all(axis=1)
        rows, live, n = rows[apart], live[apart], (n0 + n1 + 2)[apart]
        if not len(live):
            return
        every = list(rows) if (n == rows.shape[1]).all() else np.split(rows[rows >= 0], np.cumsum(n)[:-1])
        ones = self._ones
        for m in np.unique(n).tolist():
            if m not in ones:
                ones[m] = np.ones(m)
        places.append(via[live])
        chans.extend(every)
        weights.extend(ones[m] for m in n.tolist())
        if latency_s is None:
            lat.extend(hops.via_latency([src, nic[x], nic[y], dst])
                       for (src, dst), x, y in zip((sel[via[j]] for j in live.tolist()), s[apart].tolist(),
                                                   d[apart].tolist()))
        else:
            lat.extend([latency_s] * len(live))

    def _exit(self, s: str, d: str, sa: str | None, cache: dict):
        """The route ``Router.routes`` gives a GPU of a system and a device outside every system (a
        CollNet head and its leaf, either way) that ``ExitRoutes`` answers, or None. HopRoutes
        answers such a pair with None (no template leg across systems, no rail waypoints to a
        device not a GPU), and so do ``Router._edge_route`` (a GPU has no uplink) and
        ``_rail_waypoints``: the router's answer is ``ExitRoutes.route``'s, which is not kept."""
        if (s, d) in cache or (s if sa is not None else d) not in self.router._gpus:
            return None
        got = self._exits.route(s, d)
        return got if got is not None and got.cap_Bps == math.inf else None

    def _touched(self, cache: dict) -> set:
        """Every device some route the router keeps names in its key (a pair, or a via hop's
        waypoints): a look-up of a key with none of them cannot hit. The router only adds routes
        (a dict: new keys come last), so the keys added since the last call are read, not all
        (CollNet's router keeps 30,000 routes by then, and a take follows each of rail 0's patterns)."""
        seen, names = self._cache_seen
        if len(cache) < seen:  # (emptied: read again from the start)
            seen, names = 0, set()
        if len(cache) != seen:
            names.update(x for key in islice(cache, seen, None) for x in key)
            self._cache_seen = (len(cache), names)
        return names
