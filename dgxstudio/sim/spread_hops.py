"""Hops spread over the spines taken in parts many at once, for tree_parts.py.

``TreeParts.of`` has every tree's slots in parts; a hop between GPUs of two systems under different
leaves came, pair by pair through the router's Python (``HopRoutes.route``, ``_between_systems``,
``_rail_waypoints``, ``via_legs``, ``_single_path_via``, ``Router._spread_parts``), as the parts
``Router.via_loads`` would join: 64,500 such hops on 2,048 DGX H100 systems, about 1.5 s. Those
parts depend on little: the first leg and the link out of the NIC are the source GPU's (the leg
inside its system to its own NIC, the cable from that NIC to its leaf), the link into the NIC and
the last leg the destination GPU's, the spread its leaf pair's. So the router is asked once per
GPU (``Router._leg_loads``, ``_uplink``, the rails) and once per leaf pair (``Router._leaf_spread``),
and each hop is put together from them. The checks the router makes on the way are made on the
ends' numbers (each device's system, NIC and leaf looked up once; the cache look-ups per pair left;
the channels met twice or in the spread with numpy), and a hop
any of them would answer otherwise (a route kept for the pair or the way, PXN, GPUs of one system,
NICs under one leaf or in no system, a leg of several paths or of weights other than 1, a channel
met twice or in the spread) is left to the engine's template, pair by pair as before.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..analysis.ring_segments import HopRoutes


class SpreadHops:
    """The hops of some pairs taken in parts; made for one ``TreeParts.of`` (its per-GPU answers
    are the router's at that time)."""

    def __init__(self, engine, names: list[str] | None = None):
        self.router = router = engine.router
        # (the engine's template asks ``HopRoutes`` only with templates on, and never under PXN)
        self.hops = HopRoutes.of(router) if engine.templates and not router.pxn else None
        self._sides: dict[str, tuple | None] = {}
        # devices by number (``names``: the trees' slots' ends, TreeParts.ends; others numbered
        # as they come): each one's system (numbered, -1 none) and ``_nic``'s fields (-2: not
        # looked at yet; the NIC's system and leaf numbered, -1 none, both -1 where ``_nic`` is None)
        self._number: dict[str, int] = {}
        self._names: list[str] = []
        self._ids: dict[str, int] = {}
        self._sys = np.zeros(0, dtype=np.int64)
        self._head = np.zeros((0, 3), dtype=np.int64)  # (has a NIC: 1, 0 or -2; the NIC's system; its leaf)
        self._nic_name: list[str | None] = []
        if names is not None:
            self._add(names)

    def _add(self, names) -> None:
        number, system, ids = self._number, self.router._system, self._ids
        new = [x for x in dict.fromkeys(names) if x not in number]
        if not new:
            return
        number.update(zip(new, range(len(self._names), len(self._names) + len(new))))
        self._names.extend(new)
        self._nic_name.extend([None] * len(new))
        sys_num = np.fromiter((-1 if (sid := system.get(x)) is None else ids.setdefault(sid, len(ids)) for x in new),
                              dtype=np.int64, count=len(new))
        self._sys = np.concatenate([self._sys, sys_num])
        self._head = np.concatenate([self._head, np.full((len(new), 3), -2, dtype=np.int64)])

    def _heads(self, devs: np.ndarray) -> np.ndarray:
        """``_nic`` of devices ``devs`` (numbers) as rows (see ``_head``), each looked up once."""
        head = self._head
        ask = np.unique(devs[head[devs, 0] == -2]).tolist()
        if ask:
            names, ids, nic_name = self._names, self._ids, self._nic_name
            rows = []
            for g in ask:
                got = self._nic(names[g])
                if got is None:
                    rows.append((0, -1, -1))
                    continue
                nic_name[g] = got[0]
                rows.append((1, -1 if got[1] is None else ids.setdefault(got[1], len(ids)),
                             -1 if got[2] is None else ids.setdefault(got[2], len(ids))))
            head[ask] = rows
        return head[devs]

    def _nic(self, g: str) -> tuple | None:
        """The first three fields of GPU ``g``'s side (its NIC, the NIC's system, the NIC's leaf),
        without the legs: most pairs ``taken`` reads are told apart by these alone (GPUs of systems
        under one leaf), and a leg is a template look-up each way, for every GPU of the cluster."""
        router = self.router
        rail = router._rails()
        if g in router._gpus and g in rail and router._system.get(g) is not None:
            nic = rail[g][0]
            return nic, router._system.get(nic), router._uplink(nic)
        return None

    def _side(self, g: str) -> tuple | None:
        """GPU ``g``'s side of a hop: (its NIC, the NIC's system, the NIC's leaf, the leg to the NIC,
        the leg from it, the link out of the NIC to its leaf, the link into it; the legs None where
        they are not one path of weights 1, the links -1 without a leaf); None where the router
        gives ``g`` no rail waypoints."""
        known = self._sides.get(g, self)
        if known is not self:
            return known
        router = self.router
        head = self._nic(g)
        got = None
        if head is not None:
            nic = head[0]
            legs = []
            for a, b in ((g, nic), (nic, g)):
                fast = router._leg_loads(a, b)
                ok = fast is not None and fast[2] == 1 and router._unit_weights(fast[1])
                legs.append(fast[0] if ok else None)
            up = head[2]
            links = (-1, -1) if up is None else (router.channel_index[(nic, up)], router.channel_index[(up, nic)])
            got = (*head, *legs, *links)
        self._sides[g] = got
        return got

    def taken(self, pairs: list[tuple[str, str]], nums: np.ndarray | None = None) -> list[tuple]:
        """The hops among ``pairs`` the engine's template would give as the router's
        ``_spread_parts`` were their ends' channels apart (``parts`` checks that): (place, the
        source's side, the destination's, their numbers). ``nums``: the pairs' devices as numbers (``names``'
        order), if known. The checks on systems, NICs and leaves are made on numbers, the
        router's dictionaries (a route kept for the pair, the way or the NICs) looked at for the
        pairs left, and the legs looked up last, for the hops left then."""
        if self.hops is None or not pairs:
            return []
        router = self.router
        known, cache = self.hops._known, router._cache
        if nums is None:
            flat = [x for pair in pairs for x in pair]
            self._add(flat)
            nums = np.fromiter(map(self._number.__getitem__, flat), dtype=np.int64, count=len(flat)).reshape(-1, 2)
        s, d = nums[:, 0], nums[:, 1]
        # GPUs of two systems (a device of no system is None, as the other's may be)
        cand = np.flatnonzero(self._sys[s] != self._sys[d])
        a, b = self._heads(s[cand]), self._heads(d[cand])
        # both with their own NICs, of two systems, under two leaves
        ok = ((a[:, 0] == 1) & (b[:, 0] == 1) & (a[:, 1] >= 0) & (a[:, 1] != b[:, 1])
              & (a[:, 2] >= 0) & (b[:, 2] >= 0) & (a[:, 2] != b[:, 2]))
        cand = cand[ok]
        nic = self._nic_name
        out = []
        side, sides = self._side, self._sides
        for k, x, y in zip(cand.tolist(), s[cand].tolist(), d[cand].tolist()):
            pair = pairs[k]
            if pair in known or pair in cache:
                continue
            n0, n1 = nic[x], nic[y]
            way = ("via", pair[0], n0, n1, pair[1])
            if way in known or way in cache or (n0, n1) in cache:
                continue
            # (the legs last: the same hops are taken, their ends' legs looked up for them only)
            src, dst = pair
            a = sides[src] if src in sides else side(src)
            b = sides[dst] if dst in sides else side(dst)
            if a[3] is None or b[4] is None:
                continue
            out.append((k, a, b, x, y))
        return out

    def parts(self, hops: list[tuple[int, tuple, tuple]]) -> "Hops":
        """For hops ``hops`` (``taken``): their ends' sides and leaf pairs' spreads, numbered, and
        whether each hop's ends' channels (first leg, NIC links, last leg) are apart from each
        other and from its spread, as ``Router._spread_parts`` requires (a hop where they are not
        is the template's)."""
        router = self.router
        # leaf pairs and sides numbered in the order the hops first come (by the ends' numbers:
        # a GPU's side is one tuple, its leaf one number)
        x = np.fromiter((h[3] for h in hops), dtype=np.int64, count=len(hops))
        y = np.fromiter((h[4] for h in hops), dtype=np.int64, count=len(hops))
        head = self._head
        spread_i, first = _first_come(head[x, 2] * (len(self._ids) + 1) + head[y, 2])
        spread_of = spread_i.tolist()
        every_spread = [router._leaf_spread(hops[i][1][2], hops[i][2][2]) for i in first.tolist()]
        # each hop's ends: the first leg and the link out, the link in and the last leg, read from
        # each GPU's side (padded apart: -1 and -2 are no channel)
        src, src_i, e0 = _by_side(hops, x, 1, 3, 5, -1)
        dst, dst_i, e1 = _by_side(hops, y, 2, 4, 6, -2)
        e0, e1 = e0[src_i], e1[dst_i]
        ok = (e0[:, :, None] != e1[:, None, :]).all(axis=(1, 2))
        for e in (e0, e1):  # (a side's own channels apart)
            s = np.sort(e, axis=1)
            ok &= ((s[:, 1:] != s[:, :-1]) | (s[:, 1:] < 0)).all(axis=1)
        # apart from the spread: looked at hop by hop only where some spread has one of its ends
        top = max(int(e0.max(initial=0)), int(e1.max(initial=0)))
        every = np.zeros(top + 1, dtype=bool)
        for spread in every_spread:
            every[[c for c in spread[5] if c <= top]] = True
        near = ok & ((every[np.maximum(e0, 0)] & (e0 >= 0)).any(axis=1)
                     | (every[np.maximum(e1, 0)] & (e1 >= 0)).any(axis=1))
        for k in np.flatnonzero(near).tolist():
            ends = [*e0[k][e0[k] >= 0].tolist(), *e1[k][e1[k] >= 0].tolist()]
            ok[k] = every_spread[spread_of[k]][5].isdisjoint(ends)
        return Hops(src, src_i, dst, dst_i, every_spread, spread_i, ok)


class Hops(NamedTuple):
    """Hops taken many at once: ``src``, ``dst`` the distinct sides of their sources and
    destinations, ``src_i``, ``dst_i`` each hop's; ``spreads`` the leaf pairs' spreads,
    ``spread`` each hop's; ``ok`` whether the hop is taken so."""

    src: list
    src_i: np.ndarray
    dst: list
    dst_i: np.ndarray
    spreads: list
    spread: np.ndarray
    ok: np.ndarray


def _first_come(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``keys`` numbered by its value, values numbered in the order they first come; and
    where each value first comes."""
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inv.ravel()], first[order]


def _by_side(hops: list[tuple], devs: np.ndarray, at: int, leg: int, link: int, pad: int) -> tuple[list, np.ndarray, np.ndarray]:
    """The distinct sides (field ``at`` of ``hops``, one per device of ``devs``), each hop's
    side's number (in the order they first come), and their leg (field ``leg``) with their link
    (field ``link``) after it as rows padded with ``pad``."""
    which, first_at = _first_come(devs)
    first = [hops[i][at] for i in first_at.tolist()]
    width = max((len(x[leg]) for x in first), default=-1) + 1
    out = np.full((len(first), width), pad, dtype=np.int64)
    for i, x in enumerate(first):
        n = len(x[leg])
        out[i, :n] = x[leg]
        out[i, n] = x[link]
    return first, which, out
