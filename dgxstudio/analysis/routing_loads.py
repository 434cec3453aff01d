"""Routes' channel loads without their device paths: what ``Router`` gives for ring hops inside
systems wired alike (one search's shape moved by a channel offset) and for hops forced through NICs.
Part of ``Router`` (``routing.py``); every function returns the arrays its full route would have."""

from __future__ import annotations

from itertools import chain

import numpy as np

from ..cancel import check_cancelled
from .twin_spreads import add_rep, twin_spread


class TemplateLoads:
    """Loads of ``Router``: mixed into it, using its tables and caches."""

    def channel_loads(self, src: str, dst: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """The channels and weights of ``routes(src, dst)`` and its number of paths, without building
        its device paths, when that route is a shape another system's search already found, moved to
        this system's channels (what ``routes`` returns for it, minus the renamed paths); None when
        ``routes`` would do anything else (then call it)."""
        leg = self.template_leg(src, dst)
        if leg is None:
            return None
        first, delta = leg
        return first.channels + delta, first.weights, len(first.paths)

    def _leg_rel_of(self, device: str, sid: str) -> tuple | bool:
        """((builder, size), the id after its system's prefix) of a device of system ``sid``, as
        ``_shape_key`` splits it (False when it gives no key: a system without a signature, an id
        without the prefix); works the system's signature out once, as ``_shape_key`` does, and keeps
        the answer for ``template_leg``."""
        sig = self._system_signature(sid)
        got = ((sig[0], sig[1]), device[len(sig[2]):]) if sig and device.startswith(sig[2]) else False
        if got:  # one tuple per (builder and size, id after the prefix), shared by every system's device
            got = self._leg_shared.setdefault(got, got)
        self._leg_rel[device] = got
        return got

    def template_leg(self, src: str, dst: str):
        """``routes(src, dst)`` as (the route another system's search found, the channel offset that
        moves it to this system), or None when ``routes`` would do anything else."""
        if src == dst or (src, dst) in self._cache or self.spread != "even":
            return None
        system = self._system
        sid = system.get(src)
        if sid is None or sid != system.get(dst):
            return None
        # each end's (builder and size, id after the prefix), kept per device: the key _shape_key
        # gives is then made of strings already hashed, not sliced again for every pair
        rel = self._leg_rel
        at_src = rel.get(src)
        if at_src is None:
            at_src = self._leg_rel_of(src, sid)
        if not at_src:
            return None
        at_dst = rel.get(dst)
        if at_dst is None:
            at_dst = self._leg_rel_of(dst, sid)
        if not at_dst:
            return None
        template = self._shapes.get((at_src[0], at_src[1], at_dst[1]))  # the key _shape_key gives
        if template is None:
            return None
        first, first_sid = template[2], template[3]
        if first_sid == sid:
            return first, 0
        # _channel_offset, with its look-ups inlined (it runs once per ring hop)
        offsets = self._offsets
        a = offsets[first_sid] if first_sid in offsets else self._offset_from_reference(first_sid)
        b = offsets[sid] if sid in offsets else self._offset_from_reference(sid)
        if a is None or b is None:
            return None
        return first, b - a

    def run_loads(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray] | None:
        """``channel_loads`` of consecutive transfers inside one system (a ring's hops through it),
        concatenated, or None (then ask pair by pair). Systems wired alike share the concatenation:
        kept once with the system's channel offset taken out (exact integers), it is each hop's
        template moved to this system, the arrays ``channel_loads`` gives hop by hop."""
        if self.spread != "even" or not pairs:
            return None
        system, cache = self._system, self._cache
        sid = system.get(pairs[0][0])
        if sid is None:
            return None
        sig = self._signatures.get(sid)
        if sig is None:
            self._shape_key(*pairs[0])
            sig = self._signatures.get(sid)
        if not sig:
            return None
        prefix = sig[2]
        n = len(prefix)
        rel = []
        for a, b in pairs:
            if (a == b or system.get(a) != sid or system.get(b) != sid or (a, b) in cache
                    or not a.startswith(prefix) or not b.startswith(prefix)):
                return None
            rel.append((a[n:], b[n:]))
        offset = self._offsets[sid] if sid in self._offsets else self._offset_from_reference(sid)
        if offset is None:
            return None
        key = (sig[0], sig[1], tuple(rel))
        hit = self._runs.get(key)
        if hit is not None:
            return hit[0] + offset, hit[1]
        parts = [self.channel_loads(a, b) for a, b in pairs]
        if any(part is None for part in parts):
            return None
        chans = np.concatenate([part[0] for part in parts])
        weights = np.concatenate([part[1] for part in parts])
        self._runs[key] = (chans - offset, weights)
        return chans, weights

    def _leg_loads(self, src: str, dst: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """``channel_loads(src, dst)``, or where the router already keeps that leg's route (a
        parameter server's own leg, asked once by every worker's hop) that route's channels, weights
        and number of paths: what ``_leg_channels`` reads path by path for it, so the legs
        ``via_loads`` joins are the same either way."""
        fast = self.channel_loads(src, dst)
        if fast is None:
            hit = self._cache.get((src, dst))
            if hit is not None:
                return hit.channels, hit.weights, len(hit.paths)
        return fast

    def _single_path_via(self, waypoints: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """``via_loads`` when every leg is one path (a GPU to its NIC, one leaf between two NICs,
        the NIC to its GPU): the legs' channels one after the other, each carrying the whole
        transfer (a share of 1.0 added once), provided no channel comes twice; else None."""
        if len(waypoints) == 4:
            # NICs of two systems under different switches (a hop spread over the spines): the
            # middle leg below returns None, so no leg is looked up first
            n0, n1 = waypoints[1], waypoints[2]
            s0 = self._system.get(n0)
            if (s0 is not None and s0 != self._system.get(n1) and (n0, n1) not in self._cache
                    and ((up := self._uplink(n0)) is None or up != self._uplink(n1))):
                return None
        legs = []
        index = self.channel_index
        for a, b in zip(waypoints, waypoints[1:]):
            fast = self._leg_loads(a, b)
            if fast is not None:
                if fast[2] != 1 or not self._unit_weights(fast[1]):
                    return None
                legs.append(fast[0])
                continue
            if ((a, b) in self._cache or a == b or self._system.get(a) == self._system.get(b)):
                return None
            up = self._uplink(a)
            if up is None or up != self._uplink(b):
                return None
            legs.append(np.array([index[(a, up)], index[(up, b)]], dtype=np.int64))  # _edge_route's one path
        chans = np.concatenate(legs)
        if len(set(chans.tolist())) != len(chans):
            return None
        return chans, np.ones(len(chans))

    def _spread_parts(self, waypoints: list[str]) -> tuple | None:
        """``via_loads`` of a GPU, its NIC, another leaf's NIC and its GPU, when the two GPU legs are
        one path each: the N paths share the legs and the NICs' links, so the loads the even split adds
        up are known per leaf pair. In first-seen order: the first leg, the first NIC link, the first
        path's middle, the last NIC link, the last leg, then the other paths' new middle channels;
        a channel on m of the N paths carries 1/N added m times, the sums ``via_loads`` makes."""
        if len(waypoints) != 4:
            return None
        g0, n0, n1, g1 = waypoints
        legs = []
        for a, b in ((g0, n0), (n1, g1)):
            fast = self._leg_loads(a, b)
            if fast is None or fast[2] != 1 or not self._unit_weights(fast[1]):
                return None
            legs.append(fast[0])
        if (n0, n1) in self._cache or self._system.get(n0) == self._system.get(n1):
            return None
        a, b = self._uplink(n0), self._uplink(n1)
        if a is None or b is None or a == b:
            return None
        spread = self._leaf_spread(a, b)
        index = self.channel_index
        out_link, in_link = index[(n0, a)], index[(b, n1)]
        ends = legs[0].tolist() + [out_link, in_link] + legs[1].tolist()
        if len(set(ends)) != len(ends) or not spread[5].isdisjoint(ends):
            return None
        return legs[0], out_link, (a, b), spread, in_link, legs[1]

    def _leaf_spread(self, a: str, b: str) -> tuple:
        """Leaves ``a`` to ``b``'s spread that ``_spread_parts`` joins (sim/spread_hops.py: per leaf pair)."""
        spread = self._spreads.get((a, b))
        if spread is None:
            spread = self._twin_spread(a, b)
            if spread is not None:
                self._spreads[(a, b)] = spread
        if spread is None and self.routes(a, b).thinned:
            spread = self._spreads[(a, b)] = self._thinned_spread(self.routes(a, b))
            self._note_spread_rep(a, b)
        if spread is None:
            middle = self._middle.get((a, b))
            if middle is None:
                middle = self._middle[(a, b)] = [self._path_channels(p) for p in self.routes(a, b).paths]
            n = len(middle)
            sums = [0.0]
            for _ in range(n):
                sums.append(sums[-1] + 1.0 / n)
            count: dict[int, int] = {}
            for m in middle:
                for c in m:
                    count[c] = count.get(c, 0) + 1
            first = list(middle[0])
            seen_first = set(first)
            later = [c for c in count if c not in seen_first]  # dict order: first seen, path by path
            spread = self._spreads[(a, b)] = (
                sums[n], np.asarray(first, dtype=np.int64), np.asarray([sums[count[c]] for c in first]),
                np.asarray(later, dtype=np.int64), np.asarray([sums[count[c]] for c in later]), set(count))
            self._note_spread_rep(a, b)
        return spread

    def _note_spread_rep(self, a: str, b: str) -> None:
        if (a, b) in self._route_inner and self.spread == "even" and self._uniform_outside():
            # a leaf pair of its twin classes worked out: the others read from it
            add_rep(self, a, b)

    def _thinned_spread(self, route) -> tuple:
        """``_leaf_spread`` of leaves whose route keeps a sample of its paths: the loads of every
        path (the route's weights, see ``Router._route``), the NIC links carrying the whole (1.0), as
        ``Router._edge_route`` and ``via`` join them; the first kept path's channels first."""
        share = dict(zip(route.channels.tolist(), route.weights.tolist()))
        first = self._path_channels(route.paths[0])
        seen = set(first)
        later = [c for c in share if c not in seen]
        return (1.0, np.asarray(first, dtype=np.int64), np.asarray([share[c] for c in first]),
                np.asarray(later, dtype=np.int64), np.asarray([share[c] for c in later]), set(share))

    def _spread_via(self, waypoints: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """``via_loads`` of a hop spread over the spines: ``_spread_parts`` joined. The parts: the
        first leg's channels, the channel out of its NIC, the leaf pair, its spread, the channel
        into the last NIC, the last leg's channels."""
        parts = self._spread_parts(waypoints)
        if parts is None:
            return None
        leg0, out_link, (a, b), (whole, first, first_w, later, later_w, _), in_link, leg1 = parts
        chans = np.concatenate([leg0, [out_link], first, [in_link], leg1, later])
        k0, k1 = len(leg0) + 1, len(leg1) + 1
        # one weights array per leaf pair and leg lengths, shared by its hops (read, never written:
        # 65,000 copies of 200 weights on 2,048 DGX H100 systems were 96 MB)
        weights = self._spread_weights.get((a, b, k0, k1))
        if weights is None:
            weights = self._spread_weights[(a, b, k0, k1)] = np.concatenate(
                [np.full(k0, whole), first_w, np.full(k1, whole), later_w])
            weights.flags.writeable = False
        return chans, weights

    def _twin_spread(self, a: str, b: str) -> tuple | None:
        """The spread of leaves ``a`` to ``b`` read from a pair of their twins, or None
        (``twin_spreads.twin_spread``)."""
        return twin_spread(self, a, b)

    def _unit_weights(self, weights: np.ndarray) -> bool:
        """Every weight 1.0 (one path, each channel crossed once); remembered per template array."""
        key = id(weights)
        known = self._unit.get(key)
        if known is None or known[0] is not weights:
            known = self._unit[key] = (weights, bool((weights == 1.0).all()))
        return known[1]

    def _thinned_leg(self, src: str, dst: str) -> bool:
        """Whether ``routes(src, dst)``, just read by ``_leg_channels``, keeps a sample of its paths
        (between two NICs: the route between their leaves)."""
        hit = self._cache.get((src, dst))
        if hit is not None:
            return hit.thinned
        a, b = self._uplink(src), self._uplink(dst)
        if a is not None and b is not None and a != b and self._system.get(src) != self._system.get(dst):
            return self.routes(a, b).thinned
        return False

    def _leg_channels(self, src: str, dst: str) -> list[list[int]]:
        """The channels of each path of ``routes(src, dst)``, in its path order, reading them from a
        shape already found (one path) or from the switches' route between two NICs where it can."""
        fast = self.channel_loads(src, dst)
        if fast is not None and fast[2] == 1 and (fast[1] == 1.0).all():
            return [fast[0].tolist()]  # one path crossing each channel once: its channels in order
        if (src, dst) not in self._cache and src != dst and self._system.get(src) != self._system.get(dst):
            a, b = self._uplink(src), self._uplink(dst)
            if a is not None and b is not None:  # what _edge_route builds, channel by channel
                index = self.channel_index
                if a == b:
                    return [[index[(src, a)], index[(a, dst)]]]
                middle = self._middle.get((a, b))
                if middle is None:
                    middle = self._middle[(a, b)] = [self._path_channels(p) for p in self.routes(a, b).paths]
                first, last = index[(src, a)], index[(b, dst)]
                return [[first, *m, last] for m in middle]
        return [self._path_channels(p) for p in self.routes(src, dst).paths]

    def via_loads(self, waypoints: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``via(waypoints).channels`` and ``.weights`` without building its device paths: the same
        legs joined path by path, the same thinning past ``max_paths`` and the same even split,
        added up channel by channel in the same order."""
        hit = self._cache.get(("via", *waypoints))
        if hit is not None:
            return hit.channels, hit.weights
        single = self._single_path_via(waypoints)
        if single is not None:
            return single
        spread = self._spread_via(waypoints)
        if spread is not None:
            return spread
        paths: list[list[int]] = [[]]
        for a, b in zip(waypoints, waypoints[1:]):
            leg = self._leg_channels(a, b)
            paths = [p + q for p in paths for q in leg]
            if len(paths) > self.max_paths or self._thinned_leg(a, b):
                route = self.via(waypoints)  # (its loads are every path's, not the sample's)
                return route.channels, route.weights
        share = 1.0 / len(paths)
        load: dict[int, float] = {}
        for p in paths:
            for c in p:
                load[c] = load.get(c, 0.0) + share
        return (np.fromiter(load, dtype=np.int64, count=len(load)),
                np.fromiter(load.values(), dtype=float, count=len(load)))

    def _channel_offset(self, first: str, sid: str) -> int | None:
        """How far system ``sid``'s channel numbers sit from system ``first``'s when the two are wired
        alike (see ``_offset_from_reference``), or None (routes are then built path by path)."""
        if first == sid:
            return 0
        a, b = self._offset_from_reference(first), self._offset_from_reference(sid)
        return None if a is None or b is None else b - a

    def _offset_from_reference(self, sid: str) -> int | None:
        """Every channel inside the first system of ``sid``'s builder signature has its counterpart (same
        ids after the prefix) inside ``sid`` at one fixed distance, with the same capacity and latency,
        between devices of the same hop latency: that distance, else None. One check per system."""
        if sid in self._offsets:
            return self._offsets[sid]
        self._internal_channels()
        sig = self._signatures[sid]
        ref = self._reference.setdefault(sig[:2], sid)
        mine, theirs = self._internal.get(ref, []), self._internal.get(sid, [])
        delta = None
        if len(mine) == len(theirs):
            pf, ps = self._signatures[ref][2], sig[2]
            n = len(pf)
            ends = self.channel_ends
            delta = theirs[0] - mine[0] if mine else 0
            if mine:
                # Channel c + delta joins the devices that c joins, renamed (so it is the channel the
                # index gives for them), with the same capacity and latency and devices of the same
                # hop latency: checked for all of them at once.
                c = np.asarray(mine, dtype=np.int64)
                d = c + delta
                if d[0] < 0 or d[-1] >= len(ends):
                    delta = None
                else:
                    figures = self._channel_figures()
                    if not (figures[d] == figures[c]).all() or not self._renamed_ends(ref, n, d.tolist(), ps):
                        delta = None
        self._offsets[sid] = delta
        return delta

    def _bundle_ends(self):
        """(devices in the Fabric's order, device -> its number, each bundle's two ends' numbers as
        rows of an array, each device's system number (-1 outside systems), the systems)."""
        if self._ends is None:
            devices = list(self.fabric.adj)
            at = dict(zip(devices, range(len(devices))))
            check_cancelled()
            ends = np.fromiter(map(at.__getitem__, chain.from_iterable(self.fabric.bundles)), dtype=np.int64,
                               count=2 * len(self.fabric.bundles)).reshape(-1, 2)
            check_cancelled()
            number: dict[str, int] = {}
            system = self._system
            owner = np.fromiter((-1 if (sid := system.get(d)) is None else number.setdefault(sid, len(number))
                                 for d in devices), dtype=np.int64, count=len(devices))
            self._ends = devices, at, ends, owner, list(number)
        return self._ends

    def _internal_channels(self) -> dict[str, list[int]]:
        """Each system's inside channels, ascending: bundle i gives 2i, 2i + 1 (systems in the order
        of their first inside bundle)."""
        if self._internal is None:
            _, _, ends, owner, names = self._bundle_ends()
            su, sv = owner[ends[:, 0]], owner[ends[:, 1]]
            inside = np.flatnonzero((su >= 0) & (su == sv))
            who = su[inside]
            by_system = np.argsort(who, kind="stable")  # each system's bundles, still ascending
            sorted_who = who[by_system]
            starts = np.flatnonzero(np.r_[True, sorted_who[1:] != sorted_who[:-1]]) if len(who) else np.zeros(0, int)
            stops = np.r_[starts[1:], len(who)]
            firsts = inside[by_system][starts]  # each system's first inside bundle
            self._internal = {}
            for k in np.argsort(firsts, kind="stable").tolist():
                bundles = inside[by_system[starts[k]:stops[k]]]
                channels = np.empty(2 * len(bundles), dtype=np.int64)
                channels[0::2], channels[1::2] = 2 * bundles, 2 * bundles + 1
                self._internal[names[int(sorted_who[starts[k]])]] = channels.tolist()
        return self._internal

    def offsets_in_bulk(self, sids: list[str]) -> None:
        """``_offset_from_reference`` of many systems at once, in this order (the first of each builder
        signature becomes its reference, as asking one by one in this order makes it). The check runs
        for all the systems of a reference together, on numbers instead of names: each device is
        written as (its system's prefix, the rest of its id), so channel c + delta joins the devices
        channel c joins, renamed, exactly when those pairs agree. A system that fails it is checked
        again one by one, so every offset is what ``_offset_from_reference`` gives."""
        sigs = [(sid, self._system_signature(sid)) for sid in sids if sid not in self._offsets]
        sigs = [(sid, sig) for sid, sig in sigs if sig]
        if len(sigs) < 8:
            return
        internal = self._internal_channels()
        by_ref: dict[str, list[str]] = {}
        for sid, sig in sigs:
            ref = self._reference.setdefault(sig[:2], sid)
            if sid != ref:
                by_ref.setdefault(ref, []).append(sid)
            elif sid not in self._offsets:
                self._offset_from_reference(sid)
        if not by_ref:
            return
        check_cancelled()
        tail_dev, head_dev, pfx, rel = self._renaming_tables()
        figures = self._channel_figures()
        n_channels = len(self.channel_ends)
        for ref, members in by_ref.items():
            check_cancelled()
            mine = internal.get(ref, [])
            pf = self._prefix_ids.get(self._signatures[ref][2], -1)
            c = np.asarray(mine, dtype=np.int64)
            same = [sid for sid in members if len(internal.get(sid, [])) == len(mine)]
            if not mine or not same or pf < 0 or (pfx[tail_dev[c]] != pf).any() or (pfx[head_dev[c]] != pf).any():
                continue  # left to the check one by one
            delta = np.asarray([internal[sid][0] for sid in same], dtype=np.int64) - c[0]
            want = np.asarray([self._prefix_ids.get(self._signatures[sid][2], -2) for sid in same], dtype=np.int64)
            ok = (delta + c[0] >= 0) & (delta + c[-1] < n_channels)
            d = np.clip(c[None, :] + delta[:, None], 0, n_channels - 1)
            fc = figures[c]
            for col in range(fc.shape[1]):
                ok &= (figures[d, col] == fc[None, :, col]).all(axis=1)
            for dev in (tail_dev, head_dev):
                ends = dev[d]
                ok &= (pfx[ends] == want[:, None]).all(axis=1) & (rel[ends] == rel[dev[c]][None, :]).all(axis=1)
            for sid, good, dt in zip(same, ok.tolist(), delta.tolist()):
                if good:
                    self._offsets[sid] = dt
        for sid, _ in sigs:
            if sid not in self._offsets:
                self._offset_from_reference(sid)

    def local_twin(self, sid: str, topo) -> str | None:
        """The system whose NICs' nearest GPUs (``channels._nic_gpus``) are ``sid``'s renamed, or None.

        That is the first system of ``sid``'s builder signature (``_reference``, worked out by
        ``offsets_in_bulk`` beforehand) when, with each id's prefix swapped for the other's:
        - every inside bundle of one is an inside bundle of the other (``_offset_from_reference``),
          of the same network family or not, between devices of the same kinds;
        - neither has a link that is not network leading out of it (a search from a NIC over such
          links stays inside its system);
        - its group lists the same devices in the same order, with the same kinds and NIC roles,
          and each NIC has network links or not alike;
        - both prefixes end in a character that is not a digit (natural order of ids is then that
          of the ids without their prefix).
        A breadth-first search from a NIC then sees the same graph, renamed. ``sid`` itself when it
        is its class's first (then its answer may be kept for the others)."""
        sig = self._signatures.get(sid)
        if not sig or sid not in self._offsets or self._offsets[sid] is None or not sig[2] or sig[2][-1].isdigit():
            return None
        ref = self._reference.get(sig[:2])
        if ref is None or self._offsets.get(ref) is None:
            return None
        self._internal_channels()
        leaky, net_count, kinds, is_net = self._local_tables(topo)
        if sid in leaky or ref in leaky:
            return None
        mine = self._local_list(ref, topo)
        if mine is None:
            return None
        if sid == ref:
            return ref
        theirs = self._local_list(sid, topo)
        if (theirs is None or theirs[0] != mine[0] or (kinds[theirs[1]] != kinds[mine[1]]).any()
                or ((net_count[theirs[1]] > 0) != (net_count[mine[1]] > 0)).any()):
            return None
        c = self._local_lists.get(("inside", ref))
        if c is None:
            c = self._local_lists[("inside", ref)] = np.asarray(self._internal.get(ref, []), dtype=np.int64)
        if len(c):
            d = c + (self._offsets[sid] - self._offsets[ref])
            tail_dev, head_dev, _, _ = self._renaming_tables()
            if ((is_net[c // 2] != is_net[d // 2]).any() or (kinds[tail_dev[c]] != kinds[tail_dev[d]]).any()
                    or (kinds[head_dev[c]] != kinds[head_dev[d]]).any()):
                return None
        return ref

    def prefix_length(self, sid: str) -> int:
        """How many characters of a device id name system ``sid`` (its devices' common prefix)."""
        return len(self._signatures[sid][2])

    def local_twins(self, sids: list[str | None], topo) -> list[str | None]:
        """``local_twin`` of each of ``sids`` (None for None), the same answers: the checks on numbers
        made for all the systems of a class at once (2,048 DGX H100: one set of array comparisons
        instead of 2,048 of a dozen small ones each)."""
        out: list[str | None] = [None] * len(sids)
        by_ref: dict[str, list[int]] = {}
        signatures, offsets, reference = self._signatures, self._offsets, self._reference
        for i, sid in enumerate(sids):
            sig = signatures.get(sid) if sid is not None else None
            if not sig or offsets.get(sid) is None or not sig[2] or sig[2][-1].isdigit():
                continue
            ref = reference.get(sig[:2])
            if ref is not None and offsets.get(ref) is not None:
                by_ref.setdefault(ref, []).append(i)
        if not by_ref:
            return out
        self._internal_channels()
        leaky, net_count, kinds, is_net = self._local_tables(topo)
        at = self._bundle_ends()[1]
        for ref, positions in by_ref.items():
            if ref in leaky:
                continue
            mine = self._local_list(ref, topo)
            if mine is None:
                continue
            rest, numbers, deltas = [], [], []
            for i in positions:
                sid = sids[i]
                if sid in leaky:
                    continue
                if sid == ref:
                    out[i] = ref
                    continue
                if sid not in topo.groups:  # (``_local_list``'s None)
                    continue
                devices = self.system_devices(sid)
                n = len(signatures[sid][2])
                if [d[n:] for d in devices] != mine[0] or not all(d in at for d in devices):
                    continue
                rest.append(i)
                numbers.extend(map(at.__getitem__, devices))
                deltas.append(offsets[sid] - offsets[ref])
            if not rest:
                continue
            theirs = np.asarray(numbers, dtype=np.int64).reshape(len(rest), -1)
            ok = (kinds[theirs] == kinds[mine[1]][None, :]).all(axis=1)
            ok &= ((net_count[theirs] > 0) == (net_count[mine[1]] > 0)[None, :]).all(axis=1)
            c = np.asarray(self._internal.get(ref, []), dtype=np.int64)
            if len(c):
                d = c[None, :] + np.asarray(deltas, dtype=np.int64)[:, None]
                tail_dev, head_dev, _, _ = self._renaming_tables()
                ok &= (is_net[d // 2] == is_net[c // 2][None, :]).all(axis=1)
                ok &= (kinds[tail_dev[d]] == kinds[tail_dev[c]][None, :]).all(axis=1)
                ok &= (kinds[head_dev[d]] == kinds[head_dev[c]][None, :]).all(axis=1)
            for i, good in zip(rest, ok.tolist()):
                if good:
                    out[i] = ref
        return out

    def _local_list(self, sid: str, topo):
        """(the system's group's devices without its prefix, their numbers in ``_bundle_ends``), kept."""
        known = self._local_lists.get(sid)
        if known is None:
            if sid not in topo.groups:
                return None
            devices = self.system_devices(sid)  # (a rack drawn as trays: its trays' devices)
            n = self.prefix_length(sid)
            at = self._bundle_ends()[1]
            if not all(d in at for d in devices):
                return None
            known = self._local_lists[sid] = ([d[n:] for d in devices],
                                              np.fromiter((at[d] for d in devices), dtype=np.int64,
                                                          count=len(devices)))
        return known

    def _local_tables(self, topo):
        """(systems with a link that is not network leading out, each device's count of network
        bundles, each device's kind (with its role, for a NIC) as a number, each bundle: network or
        not), worked out once."""
        if self._local is None:
            devices, _, ends, owner, names = self._bundle_ends()
            is_net = np.fromiter((b.family in ("infiniband", "ethernet") for b in self.fabric.bundles.values()),
                                 dtype=bool, count=len(ends))
            ou, ov = owner[ends[:, 0]], owner[ends[:, 1]]
            out = (ou != ov) & ~is_net
            leaky = {names[i] for i in np.unique(np.concatenate([ou[out], ov[out]])).tolist() if i >= 0}
            net_count = np.bincount(ends[is_net].reshape(-1), minlength=len(devices))
            codes: dict[tuple, int] = {}
            kind, everything = self.fabric.kind, topo.devices
            kinds = np.fromiter((codes.setdefault((k, everything[d].properties.get("role", "compute") if k == "nic"
                                                   else None), len(codes))
                                 for d in devices for k in (kind.get(d),)), dtype=np.int64, count=len(devices))
            self._local = (leaky, net_count, kinds, is_net)
        return self._local

    def _renaming_tables(self):
        """Per channel, its tail and head device numbers; per device, the number of its system's prefix
        when its id starts with it (else -1) and the number of the rest of its id (else -1)."""
        if self._renaming is None:
            self._renaming = self._make_renaming_tables()
        return self._renaming

    def _make_renaming_tables(self):
        devices = self._bundle_ends()[0]
        tail_dev, head_dev, _ = self.channel_devices()
        check_cancelled()
        prefix_ids: dict[str, int] = {}
        rest_ids: dict[str, int] = {}
        pfx = np.full(len(devices), -1, dtype=np.int64)
        rel = np.full(len(devices), -1, dtype=np.int64)
        system = self._system
        prefix_of: dict[str, tuple[str, int] | None] = {}  # system -> (prefix, its number)
        for i, d in enumerate(devices):
            sid = system.get(d)
            if sid is None:
                continue
            known = prefix_of.get(sid, False)
            if known is False:
                sig = self._system_signature(sid)
                known = prefix_of[sid] = (sig[2], prefix_ids.setdefault(sig[2], len(prefix_ids))) if sig else None
            if known is not None and d.startswith(known[0]):
                pfx[i] = known[1]
                rel[i] = rest_ids.setdefault(d[len(known[0]):], len(rest_ids))
        self._prefix_ids = prefix_ids
        return tail_dev, head_dev, pfx, rel

    def _renamed_ends(self, ref: str, n: int, theirs: list[int], prefix: str) -> bool:
        """Channels ``theirs`` join, in order, the devices the reference system's inside channels join
        with its ``n``-character prefix replaced by ``prefix``."""
        rel = self._relative_ends.get(ref)
        if rel is None:
            rel = self._relative_ends[ref] = [(u[n:], v[n:]) for u, v in
                                              (self.channel_ends[c] for c in self._internal[ref])]
        m = len(prefix)
        ends = [self.channel_ends[j] for j in theirs]
        return (all(u.startswith(prefix) and v.startswith(prefix) for u, v in ends)
                and [(u[m:], v[m:]) for u, v in ends] == rel)

    def _channel_figures(self) -> np.ndarray:
        """Per channel: capacity, latency and its two devices' hop latencies (one row each)."""
        if self._figures is None:
            hop = self.fabric.hop_latency
            check_cancelled()  # (between the steps: each a fraction of a second on a large fabric)
            # bundle i's two ends' hop latencies, once each: channel 2i runs from the first to the
            # second, channel 2i + 1 back
            devices, _, numbers, _, _ = self._bundle_ends()
            ends = np.fromiter(map(hop.__getitem__, devices), dtype=float, count=len(devices))[numbers]
            check_cancelled()
            tails = ends.reshape(-1)
            heads = ends[:, ::-1].reshape(-1)
            check_cancelled()
            self._figures = np.column_stack([
                self.capacity, np.asarray(self._channel_latency, dtype=float), tails, heads])
        return self._figures
