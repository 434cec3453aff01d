"""tree_fold's colour refinement read per route and by counting, not per transfer slot by sorting.

A tree run's slots (every transfer of every tree) share routes: the two trees of a rail join the same
GPUs, and every piece of a level uses its pattern's routes. On 2,048 DGX H100 systems 524,256 slots
travel on 98,256 routes of 12.6 million entries (a hop spread over the spines loads 198 channels).
The refinement's rounds and its exact check walk those entries; this module walks them once per
route (a slot's sum is its route's, by segments of entries kept in route order), and numbers
channels and weights by counting and hashing instead of sorting.

Everything it computes is a sum over a slot's route entries, or over the slots on a channel, in
wrapping 64-bit arithmetic, whose sums do not depend on their order:

- a slot's signature is its route's (the same entries, summed the same way);
- a channel's signature sums, per route entry, the random words of the colours of the slots on that
  route: ``sum_s (word[col_s] * f + a) = (sum_s word[col_s]) * f + count * a``;
- the exact check compares each slot's route's sorted (channel colour, weight) row with its class
  representative's route's, and each channel's multiset of (slot colour, weight) as sorted
  (key, count) rows, the multiset's canonical form.

So the colours, the fold and its answer are the ones the slot-by-slot refinement found, bit for bit.
"""

from __future__ import annotations

import numpy as np

from .rates import RouteTable
from .relation_ids import DENSE, numbered


def _segment_sums(values: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Wrapping sums of consecutive segments of ``values`` of lengths ``lens`` (0 for an empty one)."""
    out = np.zeros(len(lens), dtype=np.int64)
    full = np.flatnonzero(lens > 0)
    if len(full):
        starts = (np.cumsum(lens) - lens)[full]
        out[full] = np.add.reduceat(values, starts)
    return out


def _pairs_equal(values: np.ndarray, lens: np.ndarray, a: np.ndarray, b: np.ndarray, chunk: int = 1 << 22) -> bool:
    """Whether row a[i] equals row b[i] for every i, rows being ``lens[r]`` consecutive ``values``
    (rows in order); a few million entries at a time."""
    la = lens[a]
    if not (la == lens[b]).all():
        return False
    starts = np.cumsum(lens) - lens
    ends = np.cumsum(la)
    i = 0
    while i < len(a):
        j = max(int(np.searchsorted(ends, ends[i] - la[i] + chunk, side="right")), i + 1)
        lc = la[i:j]
        within = np.arange(int(lc.sum())) - np.repeat(np.cumsum(lc) - lc, lc)
        if not (values[np.repeat(starts[a[i:j]], lc) + within] == values[np.repeat(starts[b[i:j]], lc) + within]).all():
            return False
        i = j
    return True


def _rows_equal(values: np.ndarray, lens: np.ndarray, owner_cls: np.ndarray) -> bool:
    """Whether every owner's row (``lens[i]`` consecutive ``values``, owners in order) equals the
    row of the first owner of its class (``owner_cls``)."""
    n = len(lens)
    first = np.full(int(owner_cls.max()) + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, owner_cls, np.arange(n))
    a = np.arange(n)
    b = first[owner_cls]
    return _pairs_equal(values, lens, a[a != b], b[a != b])


class RouteGraph:
    """The slots' routes, each once: their entries (route, channel, weight) in route order, and each
    slot's route."""

    def __init__(self, s_route: np.ndarray, table: RouteTable, mix: np.int64):
        """``s_route``: each slot's route id; ``table``: the engine's routes; ``mix``: tree_fold's
        odd word spreading a weight's id into a term."""
        routes, s_r = np.unique(s_route, return_inverse=True)
        self.s_r = s_r.ravel()
        self.n_r = len(routes)
        if self.n_r == len(table.lens):  # every route (the usual case): the table's own arrays
            lens, ch, w = table.lens, table.ch, table.w
        else:
            lens, ch, w = table.gather(routes)
        self.lens = lens
        self.e_route = np.repeat(np.arange(self.n_r, dtype=np.int32 if self.n_r < 2**31 else np.int64), lens)
        # channels and weights numbered as np.unique numbers them over every slot's entries (the
        # same values occur), by counting and by hashing
        self.uch, e_ch = numbered(ch, max(DENSE, int(ch.max()) + 1 if len(ch) else 0))
        self.e_ch = e_ch.astype(np.int32) if len(self.uch) < 2**31 else e_ch
        del e_ch
        wvals, e_w = numbered(np.ascontiguousarray(w, dtype=float).view(np.int64), DENSE)
        self.n_w = max(len(wvals), 1)
        self.e_w = e_w.astype(np.int32)
        del e_w
        # each weight as an odd factor and a term (tree_fold's signature words)
        self.wmul = 2 * np.arange(self.n_w, dtype=np.int64) + 1
        self.wadd = np.arange(self.n_w, dtype=np.int64) * mix
        # each entry's (channel, weight) as one number: its term in a slot's signature
        n_cw = len(self.uch) * self.n_w
        self.e_cw = self.e_ch.astype(np.int32 if n_cw < 2**31 else np.int64) * self.n_w + self.e_w
        # and its (route, weight): its term in a channel's signature
        n_rw = self.n_r * self.n_w
        self.e_rw = self.e_route.astype(np.int32 if n_rw < 2**31 else np.int64) * self.n_w + self.e_w
        self.slots_on = np.bincount(self.s_r, minlength=self.n_r)
        # slots whose route loads a channel: the words a channel's signature draws cover their colours
        self.loaded = lens[self.s_r] > 0
        self.s_by_route = np.argsort(self.s_r, kind="stable")

    def slot_signature(self, col_c: np.ndarray, seed: int) -> np.ndarray:
        """tree_fold's signature of every slot: the wrapping sum over its route's entries of a
        random word per (channel colour) times the weight's factor, plus the weight's term."""
        rng = np.random.default_rng(seed)
        k = int(col_c.max()) + 1 if len(col_c) else 1  # (every channel is some entry's)
        word = rng.integers(1, 2**62, size=k, dtype=np.int64)[col_c]
        # the term of each (channel, weight), then each entry's
        table = (word[:, None] * self.wmul[None, :] + self.wadd[None, :]).ravel()
        term = table[self.e_cw]
        return _segment_sums(term, self.lens)[self.s_r]

    def channel_signature(self, col_s: np.ndarray, seed: int) -> np.ndarray:
        """tree_fold's signature of every channel over the slots on it (every slot counted)."""
        rng = np.random.default_rng(seed)
        loaded = col_s[self.loaded]
        k = int(loaded.max()) + 1 if len(loaded) else 1
        word = rng.integers(1, 2**62, size=k, dtype=np.int64)
        # per route: the sum of its slots' words, and how many slots it carries
        # (a slot whose route loads nothing adds to a sum no entry reads; its colour may be past k)
        per_route = _segment_sums(word[np.where(self.loaded, col_s, 0)[self.s_by_route]], self.slots_on)
        table = (per_route[:, None] * self.wmul[None, :] + self.slots_on[:, None] * self.wadd[None, :]).ravel()
        term = table[self.e_rw]
        sig = np.zeros(len(self.uch), dtype=np.int64)
        np.add.at(sig, self.e_ch, term)
        return sig

    def exact(self, col_s: np.ndarray, col_c: np.ndarray) -> bool:
        """Whether slots of a class load each channel class alike and channels of a class carry
        each slot class alike, entry by entry."""
        return self._slots_alike(col_s, col_c) and self._channels_alike(col_s, col_c)

    def _slots_alike(self, col_s: np.ndarray, col_c: np.ndarray) -> bool:
        n_s = len(col_s)
        keys = col_c[self.e_ch]
        keys *= self.n_w
        keys += self.e_w
        span = int(keys.max()) + 1 if len(keys) else 1
        if self.n_r * span < 2**62:
            # entries stay in route order: sorting (route, key) numbers sorts each route's keys
            shift = self.e_route * np.int64(span)
            keys += shift
            keys.sort()
            keys -= shift
            del shift
        else:
            keys = keys[np.lexsort((keys, self.e_route))]
        # each slot's route against its class representative's: a route's class is its slots' (a
        # route whose slots lie in several classes is compared with each class's representative)
        first = np.full(int(col_s.max()) + 1 if n_s else 0, n_s, dtype=np.int64)
        np.minimum.at(first, col_s, np.arange(n_s))
        pairs = np.unique(self.s_r * self.n_r + self.s_r[first[col_s]])
        a, b = np.divmod(pairs, self.n_r)
        return _pairs_equal(keys, self.lens, a[a != b], b[a != b])

    def _channels_alike(self, col_s: np.ndarray, col_c: np.ndarray) -> bool:
        m_s = int(col_s.max()) + 1 if len(col_s) else 1
        # each route's slot colours with their counts
        rc, cnt = np.unique(self.s_r * m_s + col_s, return_counts=True)
        rc_route, rc_col = np.divmod(rc, m_s)
        per = np.bincount(rc_route, minlength=self.n_r)
        rc_start = np.cumsum(per) - per
        # every route entry once per colour of its route's slots: (channel, colour and weight, count);
        # most routes carry slots of one colour, so only the others' entries are repeated
        at, e_ch, e_w = rc_start[self.e_route], self.e_ch, self.e_w
        more = np.flatnonzero(per[self.e_route] > 1)
        if len(more):
            rep = per[self.e_route[more]] - 1
            nth = 1 + np.arange(int(rep.sum())) - np.repeat(np.cumsum(rep) - rep, rep)
            at = np.concatenate([at, np.repeat(at[more], rep) + nth])
            e_ch = np.concatenate([e_ch, np.repeat(e_ch[more], rep)])
            e_w = np.concatenate([e_w, np.repeat(e_w[more], rep)])
        key = rc_col[at]
        key *= self.n_w
        key += e_w
        span = int(key.max()) + 1 if len(key) else 1
        count = cnt[at]
        del at, e_w
        bits = int(count.max()).bit_length() if len(count) else 1
        if len(self.uch) * span < 2**(62 - bits):
            # (channel, key) and the count packed in one number: one sort of values brings each
            # channel's keys together in order, and equal keys' counts are added
            packed = e_ch * np.int64(span)
            packed += key
            del key
            packed <<= bits
            packed |= count
            del count
            packed.sort()
            new = np.empty(len(packed), dtype=bool)
            new[:1] = True
            np.not_equal(packed[1:] >> bits, packed[:-1] >> bits, out=new[1:])
            starts = np.flatnonzero(new)
            del new
            total = np.add.reduceat(packed & ((1 << bits) - 1), starts) if len(starts) else np.zeros(0, np.int64)
            owner, key = np.divmod(packed[starts] >> bits, span)
            del packed
        else:
            uk, inv = np.unique(e_ch * np.int64(span) + key, return_inverse=True)
            total = np.bincount(inv.ravel(), weights=count, minlength=len(uk)).astype(np.int64)
            owner, key = np.divmod(uk, span)
        # a channel's multiset of keys in canonical form: its (key, count) pairs, sorted by key
        return _rows_equal(key * (int(total.max()) + 1) + total, np.bincount(owner, minlength=len(self.uch)), col_c)
