"""One copy of each distinct array the engine keeps per class pattern.

The engine keeps, for every class pattern it solves (a component's set of active routes with their
counts), the active local routes, their rates, the local channels they load and the loads, for as
long as the run lasts (the rates are read again whenever a component comes back to that pattern; the
channels and loads make the run's channel bytes and rate patterns). A run whose state keeps moving
(the NVLS tree over 2,048 DGX H100 at 16 GiB: 5,878 class patterns of about 4,000 routes each) kept
610 MB of them, although most are equal, element for element, to one kept before: the same routes
active with other counts load the same channels (549 distinct channel arrays of 5,878), and many
states share their loads (3,423 distinct). :class:`KeptArrays` hands back the array already kept
when a new one equals it (dtype, shape and every element's bits compared; a hash of them
only picks the candidates), so equal arrays are held once. Nothing reads them but to index or copy, so the answers
do not change.

The rates and loads of a class pattern take few distinct values (a max-min fair share is one of a
few fill levels: the 16 GiB NVLS tree over 2,048 systems has 2.8 distinct rates among ~3,250
routes on average, at most 8, and 9.3 distinct loads among ~3,900 channels, at most 25), yet they
were 258 MB of float64 that no two patterns shared. :class:`KeptLevels` holds each as its distinct
values and a one-byte index per element (:class:`Levels`, both parts through ``KeptArrays``), and
gives the array back, bit for bit, when read: the levels are told apart by their bits, so a -0.0
stays -0.0 and a NaN its own NaN. An array of more than 256 distinct values, or too short for the
index to save anything, is kept as it is.
"""

from __future__ import annotations

import numpy as np


class KeptArrays:
    """``keep(a)``: ``a``, or an array kept before equal to it (same dtype and elements); ``nbytes``:
    the bytes of the distinct arrays kept."""

    CANDIDATES = 8  # kept arrays compared at most per key (past it a new one is kept as it is)

    def __init__(self):
        # hash of (dtype, shape, bytes) -> the array kept under it, or a list of them (a collision)
        self._by_key: dict[int, np.ndarray | list[np.ndarray]] = {}
        self.nbytes = 0

    def keep(self, a: np.ndarray) -> np.ndarray:
        # the candidates: kept arrays whose dtype, shape and bytes hash alike. (A sum of the
        # elements' bits picked them before: route and channel lists of one length, the same
        # indices in another order or mix, summed alike, so a deep tree's states, 20 GB200 NVL72
        # racks, compared each new array with eight others that differed, a million comparisons.)
        # One int a key and the array itself as its value: a key per distinct array, not a tuple
        # and a list (24 MB more on those racks at 16 GiB).
        data = a.tobytes()
        key = hash((a.dtype.str, a.shape, data))
        alike = self._by_key.get(key)
        if alike is None:
            self._by_key[key] = a
        else:
            if isinstance(alike, np.ndarray):
                alike = [alike]
            for b in alike:
                if b.dtype == a.dtype and b.shape == a.shape and b.tobytes() == data:
                    return b  # (the same bits: interchangeable wherever the engine reads them)
            if len(alike) < self.CANDIDATES:
                self._by_key[key] = [*alike, a]
        self.nbytes += a.nbytes
        return a


class Levels:
    """An array as its distinct ``values`` (ascending by their bits as integers) and each element's
    place among them (``index``, uint8): the array is ``values[index]``, bit for bit."""

    __slots__ = ("values", "index")

    def __init__(self, values: np.ndarray, index: np.ndarray):
        self.values, self.index = values, index

    @classmethod
    def of(cls, a: np.ndarray) -> "Levels | None":
        """``a`` (one-dimensional, 8-byte elements) as levels; None where that would not make it
        smaller (more than 256 distinct values, or too few elements)."""
        if not _levelable(a):
            return None
        bits = np.ascontiguousarray(a).view(np.int64)  # (compared as bits: -0.0 is not 0.0, a NaN is itself)
        s = np.sort(bits)
        first = np.empty(len(s), dtype=bool)
        first[0] = True
        np.not_equal(s[1:], s[:-1], out=first[1:])
        u = s[first]
        if len(u) > 256 or u.nbytes + len(a) >= a.nbytes:
            return None
        if len(u) <= FEW_LEVELS:  # (a comparison per level is cheaper than a search per element)
            index = np.zeros(len(a), dtype=np.uint8)
            for v in u[1:].tolist():
                index += bits >= v
        else:
            index = np.searchsorted(u, bits).astype(np.uint8)
        return cls(u.view(a.dtype), index)

    def array(self) -> np.ndarray:
        return self.values.take(self.index)


class KeptLevels:
    """A list of arrays kept through ``kept``: each appended array is held as :class:`Levels` where
    that is smaller (its values and its index each kept once by ``kept``), else as it is; reading an
    entry gives the array, bit for bit (built again from its levels, a new array each time)."""

    __slots__ = ("_kept", "_items", "_by_key")

    def __init__(self, kept: KeptArrays):
        self._kept = kept
        self._items: list = []
        # the Levels held, by a hash of dtype, length and bytes (as KeptArrays picks its candidates):
        # an array equal to one held before, bit for bit, takes its Levels without working them out
        # again (a third of the loads of the 16 GiB NVLS tree over 2,048 systems)
        self._by_key: dict[int, list[Levels]] = {}

    def append(self, a: np.ndarray) -> None:
        if not _levelable(a):
            self._items.append(self._kept.keep(a))
            return
        bits = np.ascontiguousarray(a).view(np.int64)
        alike = self._by_key.setdefault(hash((a.dtype.str, len(a), bits.tobytes())), [])
        for lv in alike:
            if np.array_equal(lv.values.view(np.int64).take(lv.index), bits):
                self._items.append(lv)
                return
        lv = Levels.of(a)
        if lv is None:
            self._items.append(self._kept.keep(a))
            return
        lv = Levels(self._kept.keep(lv.values), self._kept.keep(lv.index))
        if len(alike) < KeptArrays.CANDIDATES:
            alike.append(lv)
        self._items.append(lv)

    def held(self, i: int):
        """Entry i as it is held: an array, or its :class:`Levels`."""
        return self._items[i]

    def __getitem__(self, i: int) -> np.ndarray:
        item = self._items[i]
        return item.array() if type(item) is Levels else item

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return map(self.__getitem__, range(len(self._items)))


def _levelable(a: np.ndarray) -> bool:
    """Whether ``a`` may be held as :class:`Levels` (one-dimensional, 8-byte elements, long enough)."""
    return a.ndim == 1 and a.dtype.itemsize == 8 and len(a) >= MIN_LEVELS_LEN


MIN_LEVELS_LEN = 64  # shorter arrays are kept as they are (the index and values would save little)
FEW_LEVELS = 16  # up to this many distinct values the index is made by a comparison per value
