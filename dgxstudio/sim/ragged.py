"""Rows of different lengths (each group's dependencies) kept flat, and the dense tables they replace.

A block of groups added at once (``schedule.Lanes``) lists each row's dependencies either as a dense
(rows, width) table of group ids, -1 where a row has fewer, or as a :class:`Ragged`: the ids one
row after the other with a count per row. Dense suits narrow rows (a ring's pieces wait for one or
two groups); Ragged suits blocks where a few rows wait for many (an NVLS tree's joins wait for every
rail's tree, 32 groups on two DGX H100, while most rows wait for one), whose dense table would be
the widest row times every row: 3.3 million entries for a 16 GiB NVLS tree's 104,448 groups.
The helpers below read either form the same way.
"""

from __future__ import annotations

import numpy as np


class Ragged:
    """Row r is ``flat[ptr[r]:ptr[r + 1]]`` (``counts[r]`` ids, every one >= 0), in listed order."""

    __slots__ = ("counts", "flat", "ptr")

    def __init__(self, counts: np.ndarray, flat: np.ndarray, ptr: np.ndarray | None = None):
        self.counts = np.asarray(counts, dtype=np.int64)
        self.flat = np.asarray(flat, dtype=np.int64)
        if ptr is None:  # (``repeated`` has it at hand: a cumsum over a 16 GiB NVLS tree's rows costs it a third of a ms)
            ptr = np.zeros(len(self.counts) + 1, dtype=np.int64)
            np.cumsum(self.counts, out=ptr[1:])
        self.ptr = ptr
        if self.ptr[-1] != len(self.flat):
            raise ValueError(f"{len(self.flat)} ids for rows that count {int(self.ptr[-1])}")

    @classmethod
    def repeated(cls, counts: np.ndarray, flat: np.ndarray, moves: np.ndarray, copies: int, step: int) -> "Ragged":
        """``copies`` copies of the rows (``counts``, ``flat``), copy c (from 0) with the ids where
        ``moves`` is true shifted by (c + 1) ``step`` and the others as they are."""
        counts = np.asarray(counts, dtype=np.int64)
        flat = np.asarray(flat, dtype=np.int64)
        moves = np.asarray(moves, dtype=bool)
        shift = (np.arange(1, copies + 1, dtype=np.int64) * step)[:, None]  # copy c's row of the (copies, ids) table
        table = flat[None, :] + shift  # every id moved (most do: a piece's own), then the few that stay
        stay = np.flatnonzero(~moves)
        if len(stay):
            table[:, stay] = flat[stay]
        # each copy's row ends: the piece's, moved on by the ids of the copies before it
        ptr = np.empty(copies * len(counts) + 1, dtype=np.int64)
        ptr[0] = 0
        np.add((np.arange(copies, dtype=np.int64) * len(flat))[:, None], np.cumsum(counts)[None, :],
               out=ptr[1:].reshape(copies, len(counts)))
        return cls(np.tile(counts, copies), table.ravel(), ptr)

    def __len__(self) -> int:
        return len(self.counts)


def counts_and_flat(deps) -> tuple[np.ndarray, np.ndarray]:
    """How many ids each row has, and every row's ids one after the other."""
    if isinstance(deps, Ragged):
        return deps.counts.copy(), deps.flat
    ok = deps >= 0
    out = np.zeros(len(deps), dtype=np.int64)
    for j in range(deps.shape[1]):  # a column at a time: numpy's sum(axis=1) over a few columns costs more
        out += ok[:, j]
    return out, deps[ok]


def row(deps, r: int) -> tuple[int, ...]:
    if isinstance(deps, Ragged):
        return tuple(deps.flat[deps.ptr[r]:deps.ptr[r + 1]].tolist())
    x = deps[r]
    return tuple(x[x >= 0].tolist())


def rows(deps) -> list[tuple[int, ...]]:
    """Every row as a tuple, read in bulk."""
    if isinstance(deps, Ragged):
        flat, ptr = deps.flat.tolist(), deps.ptr.tolist()
        return [tuple(flat[a:b]) for a, b in zip(ptr, ptr[1:])]
    if deps.shape[1] == 1:
        return [(d,) if d >= 0 else () for d in deps[:, 0].tolist()]
    counts, _ = counts_and_flat(deps)  # a row's -1 come last
    return [tuple(x[:c]) for x, c in zip(deps.tolist(), counts.tolist())]


def shifted(deps, offset: int):
    """Every id moved on by ``offset`` (-1 stays -1 in a dense table)."""
    if isinstance(deps, Ragged):
        return Ragged(deps.counts, deps.flat + offset)
    return np.where(deps >= 0, deps + offset, -1)
