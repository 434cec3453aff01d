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
