"""The engine's components of one route, brought up to date all at once instead of one by one.

Why. Most of a tree all-reduce's components are one route each: a chain hop over an NVLink that no
other hop of the run crosses (3,968 of the 3,971 components of the 992-GPU DGX-1 tree). A piece
starting or ending at one level changes up to 124 of them, so an event changed 34 components on
average, each costing the engine's Python bookkeeping (its key, the cache, the network state's hash
sums, the route's rate) although all that changes is a flow coming or going.

How. A one-route component's state is the number of flows on its route: idle, or its class's
pattern of that many flows (components wired alike share a class, and so those patterns). Once the
engine has met a class's pattern of n flows (``learn``), ``settle`` moves every component of the
class between the states it knows in a few array operations: it writes the same pattern ids, the
same rates and the same network-state hash sums (mod 2**64, as the engine reduces them) as the
engine's loop would, so the run is the same bit for bit. Anything else (a pattern not met yet, more
than ``MAX_FLOWS`` flows, a component of several routes) is left to the engine.
"""

from __future__ import annotations

import numpy as np


# flows on one route up to which its patterns are tabled per class (more: left to the engine)
MAX_FLOWS = 15
# ``settle`` remembers what it did for a set of changed components of up to this many (their flows
# and patterns before: the key), until ``learn`` tables something new; it stops remembering after
# ``CACHE_TRIAL`` calls of which fewer than a quarter were met again (states that never repeat)
CACHE_CHANGED = 256
CACHE_TRIAL = 256
CACHE_ENTRIES = 4096


class SingleRoutes:
    """The one-route components of a run's components (``bounds``: where each one's routes start in
    ``by_comp``; ``comp_class``: its class; ``comp_mul``: its multiplier in the network state's hash)."""

    def __init__(self, bounds: np.ndarray, by_comp: np.ndarray, comp_class: np.ndarray, comp_mul: list[int]):
        self.single = np.diff(bounds) == 1
        self.route = np.full(len(self.single), -1, dtype=np.int64)
        self.route[self.single] = by_comp[bounds[:-1][self.single]]
        cls = np.asarray(comp_class, dtype=np.int64)
        n_cls = int(cls.max()) + 1 if len(cls) else 0
        # per class and number of flows 0 .. MAX_FLOWS + 1, flat: its class pattern (-1 with no
        # flow; -2: not met yet, and always past MAX_FLOWS); ``at``: where a component's class starts
        self.pid = np.full(n_cls * (MAX_FLOWS + 2), -2, dtype=np.int64)
        self.pid[::MAX_FLOWS + 2] = -1
        self.at = cls * (MAX_FLOWS + 2)
        self.cls = cls
        self.mul = np.asarray(comp_mul, dtype=np.uint64)
        # per class pattern met here: known, its two hash terms and the route's rate in it; the last
        # place stands for idle (pattern -1): known, no hash terms
        self.known = np.zeros(65, dtype=bool)
        self.known[-1] = True
        self.hash = np.zeros((2, 65), dtype=np.uint64)
        self.rate = np.zeros(65)
        self.any = bool(self.single.any())
        # what ``settle`` did per key (changed components, their flows, their patterns before)
        self._done: dict[tuple[bytes, bytes, bytes], tuple] = {}
        self._calls = self._hits = 0
        self._remember = True

    def learn(self, c: int, n: int, pid: int, hash_terms: tuple[int, int], rate: float) -> None:
        """One-route component ``c`` with ``n`` flows is in class pattern ``pid``, in which its route's
        rate is ``rate``."""
        at = self.at[c] + n
        if n > MAX_FLOWS or self.pid[at] != -2:
            return
        room = len(self.known) - 1
        if pid >= room:
            grow = max(2 * room, pid + 1) - room
            self.known = np.concatenate([self.known[:-1], np.zeros(grow, dtype=bool), [True]])
            self.hash = np.concatenate([self.hash[:, :-1], np.zeros((2, grow + 1), dtype=np.uint64)], axis=1)
            self.rate = np.concatenate([self.rate[:-1], np.zeros(grow + 1)])
        self.pid[at] = pid
        self._done.clear()  # (what settle remembered may have left this component to the engine)
        self.known[pid] = True
        self.hash[0, pid], self.hash[1, pid] = hash_terms
        self.rate[pid] = rate

    def settle(self, changed: np.ndarray, comp_n: np.ndarray, comp_pid: np.ndarray, route_rate: np.ndarray,
               g_key: list[int]) -> np.ndarray:
        """Bring the ``changed`` one-route components whose patterns before and now are known here
        to their state (``comp_pid``, ``route_rate``, the hash sums ``g_key``); the changed
        components left to the engine. A set of changed components met again in the same state (a
        pipeline's pieces starting and ending alike) takes what was done then: the same writes."""
        key = None
        if self._remember and len(changed) <= CACHE_CHANGED:
            key = (changed.tobytes(), comp_n[changed].tobytes(), comp_pid[changed].tobytes())
            done = self._done.get(key)
            self._calls += 1
            if done is not None:
                self._hits += 1
                c_m, new_m, d0, d1, d2, r_into, rate_into, left = done
                if d2 is not None:
                    g_key[0] += d0
                    g_key[1] += d1
                    g_key[2] += d2
                    comp_pid[c_m] = new_m
                    route_rate[r_into] = rate_into
                return left
            if self._calls >= CACHE_TRIAL and 4 * self._hits < self._calls:
                self._remember = False
                self._done.clear()
            elif len(self._done) >= CACHE_ENTRIES:
                self._done.clear()
        left = self._settle(changed, comp_n, comp_pid, route_rate, g_key, key)
        return left

    def _settle(self, changed, comp_n, comp_pid, route_rate, g_key, key) -> np.ndarray:
        one = self.single[changed]
        cs = changed[one]
        if not len(cs):
            if key is not None:
                self._done[key] = (None, None, 0, 0, None, None, None, changed)
            return changed
        new = self.pid[self.at[cs] + np.minimum(comp_n[cs], MAX_FLOWS + 1)]
        old = comp_pid[cs]
        ok = (new >= -1) & self.known[old]  # (old -1, idle: the last place)
        move = ok & (old != new)
        done = (None, None, 0, 0, None, None, None)
        if move.any():
            c_m, new_m, old_m = cs[move], new[move], old[move]
            # (uint64: wraps mod 2**64, as the engine's sums are read; idle's terms are 0)
            terms = ((self.hash[:, new_m] - self.hash[:, old_m]) * self.mul[c_m]).sum(axis=1, dtype=np.uint64)
            d0, d1 = int(terms[0]), int(terms[1])
            into = new_m >= 0
            d2 = int(np.count_nonzero(into)) - int(np.count_nonzero(old_m >= 0))
            r_into, rate_into = self.route[c_m[into]], self.rate[new_m[into]]
            g_key[0] += d0
            g_key[1] += d1
            g_key[2] += d2
            comp_pid[c_m] = new_m
            route_rate[r_into] = rate_into
            done = (c_m, new_m, d0, d1, d2, r_into, rate_into)
        if ok.all():
            left = changed[~one]
        else:
            keep = np.ones(len(changed), dtype=bool)
            keep[np.flatnonzero(one)[ok]] = False
            left = changed[keep]
        if key is not None:
            self._done[key] = done + (left,)
        return left
