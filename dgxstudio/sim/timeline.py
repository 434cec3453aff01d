"""A run's timelines (its rate-pattern segments and its bytes-delivered curve) with the repeats of a
steady state kept as one periodic description.

When the engine skips k periods of a steady state (sim/steady.py), the skipped periods' rows are the
period's rows shifted in time (and in bytes delivered) by j periods, j = 1..k. Writing them out costs
a Python tuple per row: on a 16 GiB ring or NVLS tree, 10,000-25,000 tuples, and a pass of the cyclic
garbage collector over them, more than the rest of the skip. A :class:`Timeline` keeps such a block
as the period's rows and the shift per period, and gives every row on reading it, computed as the
written-out rows were (``row + (j + 1.0) * step``, the same floating-point operations): a run's
figures do not change, and a run that nobody replays never writes its repeats out.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np


class _Block:
    """``copies`` repeats of a period's rows: row (j, i) is row i with column c moved on by
    (j + 1) ``steps[c]`` (None: column c as it is). ``size`` rows of the k p are kept (the last ones
    may be taken out, when the engine merges the last row with the next)."""

    __slots__ = ("base", "steps", "copies", "p", "size")

    def __init__(self, rows: list[tuple], steps: tuple, copies: int):
        self.base = rows
        self.steps = steps
        self.copies = copies
        self.p = len(rows)
        self.size = copies * self.p

    def row(self, r: int) -> tuple:
        j, i = divmod(r, self.p)
        shift = j + 1.0
        return tuple(v if s is None else v + shift * s for v, s in zip(self.base[i], self.steps))

    def rows(self, a: int, b: int) -> list[tuple]:
        """Rows a..b-1, written out column by column as one table (the values ``row`` gives)."""
        if b <= a:
            return []
        j0, j1 = a // self.p, (b - 1) // self.p + 1
        shifts = np.arange(j0 + 1, j1 + 1, dtype=float)[:, None]
        cols = []
        for c, s in enumerate(self.steps):
            vals = [x[c] for x in self.base]
            if s is None:
                cols.append(vals * (j1 - j0))
            else:
                cols.append((np.asarray(vals, dtype=float)[None, :] + shifts * s).ravel().tolist())
        out = list(zip(*cols))
        off = a - j0 * self.p
        return out[off:off + b - a]


class Timeline(Sequence):
    """A list of rows (tuples), some of them kept as periodic blocks (see the module's note). Reads
    like a list; the engine appends to it, replaces its last row and adds blocks (``repeat``)."""

    __slots__ = ("_layout", "_n")

    def __init__(self, rows=()):
        # (parts, where each starts): one attribute, so that a reader on another thread sees either
        # the blocks or the list written out from them, never half of each
        self._layout: tuple[list[list | _Block], list[int]] = ([list(rows)], [0])
        self._n = len(self._layout[0][0])

    # ---- what the engine does while it runs
    def append(self, row: tuple) -> None:
        parts, starts = self._layout
        last = parts[-1]
        if type(last) is list:
            last.append(row)
        else:
            parts.append([row])
            starts.append(self._n)
        self._n += 1

    def stretch(self, start: float, end: float, key) -> None:
        """A segment (start, end, key): the last row made to end at ``end`` when it is (s, start,
        key), else a row of its own (the engine's step: one call instead of a read of the last row
        and a write)."""
        last = self._layout[0][-1]
        if type(last) is list and last:
            row = last[-1]
            if row[2] == key and row[1] == start:
                last[-1] = (row[0], end, key)
                return
        elif self._n and type(last) is not list:
            row = last.row(last.size - 1)
            if row[2] == key and row[1] == start:
                self[-1] = (row[0], end, key)
                return
        self.append((start, end, key))

    def repeat(self, rows: list[tuple], steps: tuple, copies: int) -> None:
        """Add ``copies`` repeats of ``rows``, repeat j (from 0) with column c moved on by
        (j + 1) ``steps[c]`` (None: as it is)."""
        if not rows or copies <= 0:
            return
        # the moving columns as Python floats: the values a row gives are those written out before
        rows = [tuple(v if st is None else float(v) for v, st in zip(row, steps)) for row in rows]
        steps = tuple(None if st is None else float(st) for st in steps)
        parts, starts = self._layout
        parts.append(_Block(rows, steps, copies))
        starts.append(self._n)
        self._n += copies * len(rows)

    def __setitem__(self, index: int, row: tuple) -> None:
        if not self._n:
            raise IndexError("timeline assignment index out of range")
        if index != -1 and index != self._n - 1:
            self._flatten()
            self._layout[0][0][index] = row
            return
        parts, starts = self._layout
        last = parts[-1]
        if type(last) is list and last:
            last[-1] = row
            return
        # the last row of a block: taken out of it, the new row follows as a row of its own
        last.size -= 1
        self._n -= 1
        if last.size == 0:
            parts.pop()
            starts.pop()
        self.append(row)

    # ---- reading
    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __getitem__(self, index):
        if isinstance(index, slice):
            a, b, step = index.indices(self._n)
            if step != 1:
                return self._rows(0, self._n)[index]
            return self._rows(a, b)
        i = int(index)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("timeline index out of range")
        # the last part starting at or before i (only the first part can be empty: a part that
        # starts where it does follows it)
        parts, starts = self._layout
        k = bisect.bisect_right(starts, i) - 1 if len(parts) > 1 else 0
        part, r = parts[k], i - starts[k]
        return part[r] if type(part) is list else part.row(r)

    def _rows(self, a: int, b: int) -> list[tuple]:
        out: list[tuple] = []
        for part, s in zip(*self._layout):
            size = len(part) if type(part) is list else part.size
            lo, hi = max(a, s), min(b, s + size)
            if hi <= lo:
                continue
            if type(part) is list:
                out.extend(part[lo - s:hi - s])
            else:
                out.extend(part.rows(lo - s, hi - s))
        return out

    def _flatten(self) -> list[tuple]:
        """Every row as one list, kept as the timeline's only part from then on."""
        parts = self._layout[0]
        if len(parts) > 1 or type(parts[0]) is not list:
            self._layout = ([self._rows(0, self._n)], [0])
        return self._layout[0][0]

    def __iter__(self):
        return iter(self._flatten())  # read whole: written out once, a list from then on

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._flatten(), dtype=dtype)

    def __eq__(self, other) -> bool:
        if isinstance(other, (Timeline, list)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Timeline({list(self)!r})"

    def __reduce__(self):
        return (Timeline, (list(self),))
