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
        self.known[pid] = True
        self.hash[0, pid], self.hash[1, pid] = hash_terms
        self.rate[pid] = rate

    def settle(self, changed: np.ndarray, comp_n: np.ndarray, comp_pid: np.ndarray, route_rate: np.ndarray,
               g_key: list[int]) -> np.ndarray:
        """Bring the ``changed`` one-route components whose patterns before and now are known here
        to their state (``comp_pid``, ``route_rate``, the hash sums ``g_key``); the changed
        components left to the engine."""
        one = self.single[changed]
        cs = changed[one]
        if not len(cs):
            return changed
        new = self.pid[self.at[cs] + np.minimum(comp_n[cs], MAX_FLOWS + 1)]
        old = comp_pid[cs]
        ok = (new >= -1) & self.known[old]  # (old -1, idle: the last place)
        move = ok & (old != new)
        if move.any():
            c_m, new_m, old_m = cs[move], new[move], old[move]
            # (uint64: wraps mod 2**64, as the engine's sums are read; idle's terms are 0)
            terms = ((self.hash[:, new_m] - self.hash[:, old_m]) * self.mul[c_m]).sum(axis=1, dtype=np.uint64)
            g_key[0] += int(terms[0])
            g_key[1] += int(terms[1])
            into = new_m >= 0
            g_key[2] += int(np.count_nonzero(into)) - int(np.count_nonzero(old_m >= 0))
            comp_pid[c_m] = new_m
            route_rate[self.route[c_m[into]]] = self.rate[new_m[into]]
        if ok.all():
            return changed[~one]
        left = np.ones(len(changed), dtype=bool)
        left[np.flatnonzero(one)[ok]] = False
        return changed[left]
