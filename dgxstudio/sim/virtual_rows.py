"""A piece-by-piece builder's later pieces as images of the last one it built (``Schedule.repeat_piece``):
built as columns (``PieceImage.lanes``), or not built at all (``RepeatedLanes``, "virtual rows").

A 16 GiB NVLS tree over 2,048 DGX H100 systems is 34.3 million groups, 16,384 of every piece's 16,750
the systems' NVLink SHARP reduce and multicast. Its columns alone would take gigabytes, and the run
reads a few dozen groups a piece (its fold keeps one system per class and one tree per class,
``sim/nvls_virtual.py``). Virtual rows count in the schedule's length and read as Groups one at a
time, each from its copy number and its row of the piece; a run that needs their columns has them
built (``Schedule.columns``), or is refused past the group limit, as the limit would refuse them built.
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from . import ragged
from .ragged import Ragged
from .schedule import Group, Lanes, classes_by_row


class _Renumber:
    """A text with "piece <j>" in it, cut once, so that the text for another piece is one join.
    ``cut``: ``_cutter(piece)``, when the caller cuts many texts at the same piece."""

    __slots__ = ("parts",)

    def __init__(self, text: str, piece: int, cut=None):
        self.parts = (cut or _cutter(piece))(text)

    def __call__(self, piece: int) -> str:
        return f"piece {piece}".join(self.parts)


def _cutter(piece: int):
    """The split of a text at each "piece <piece>" (compiled once for a piece's many texts)."""
    return re.compile(rf"\bpiece {piece}\b").split


class PieceImage:
    """Piece ``piece``'s m groups as the pattern of every later piece: copy c (from 0) is piece
    ``piece`` + 1 + c, its dependencies that move with the piece shifted by (c + 1) m."""

    @classmethod
    def of(cls, a_groups: list[Group], b_groups: list[Group], prev_first: int, m: int,
           piece: int) -> "PieceImage | None":
        """The image of the last piece ``b_groups`` when the piece before, ``a_groups`` (from group
        ``prev_first``), shows that each is the other's shifted by m (see ``Schedule.repeat_piece``);
        None when it does not."""
        rows = {"done": [], "sent": []}  # per row: its dependencies, and which of them move with the piece
        # (a's name and meta strings with "piece <piece - 1>" made "piece <piece>": the split compiled once)
        cut_a, cut_b, label = _cutter(piece - 1), _cutter(piece), f"piece {piece}"
        for a, b in zip(a_groups, b_groups):
            if (a.pattern is not b.pattern or a.bytes_each != b.bytes_each or a.duration_s != b.duration_s
                    or a.post_delay_s != b.post_delay_s or label.join(cut_a(a.name)) != b.name
                    or {k: (v + 1 if k == "piece" and v == piece - 1 and type(v) is int else
                            label.join(cut_a(v)) if isinstance(v, str) else v) for k, v in a.meta.items()} != b.meta):
                return None
            for key, da, db in (("done", a.deps_done, b.deps_done), ("sent", a.deps_sent, b.deps_sent)):
                if len(da) != len(db):
                    return None
                moves = []  # (each the one m on, or the same group before the piece before)
                for x, y in zip(da, db):
                    if y == x + m:
                        moves.append(True)
                    elif y == x and x < prev_first:
                        moves.append(False)
                    else:
                        return None
                rows[key].append((db, tuple(moves)))
        out = cls.__new__(cls)
        out.m, out.piece = m, piece
        out.patterns = []
        index: dict[int, int] = {}
        which = []
        for b in b_groups:
            if b.pattern is None:
                which.append(-1)
                continue
            if id(b.pattern) not in index:
                index[id(b.pattern)] = len(out.patterns)
                out.patterns.append(b.pattern)
            which.append(index[id(b.pattern)])
        out.which = np.asarray(which, dtype=np.int64)
        # each name and meta string cut once where its piece number goes (a copy joins the parts)
        out.names = [_Renumber(b.name, piece, cut_b) for b in b_groups]
        out.metas = [{k: (_Renumber(v, piece, cut_b) if isinstance(v, str) else v) for k, v in b.meta.items()}
                     for b in b_groups]
        out.columns = {attr: np.asarray([getattr(b, attr) for b in b_groups], dtype=float)
                       for attr in ("bytes_each", "duration_s", "post_delay_s")}
        out.deps = {}
        for key in ("done", "sent"):
            counts = np.asarray([len(d) for d, _ in rows[key]], dtype=np.int64)
            flat = np.asarray([x for d, _ in rows[key] for x in d], dtype=np.int64)
            moves = np.asarray([x for _, mv in rows[key] for x in mv], dtype=bool)
            ptr = np.zeros(len(counts) + 1, dtype=np.int64)
            np.cumsum(counts, out=ptr[1:])
            out.deps[key] = (counts, flat, moves, ptr)
        return out

    def name(self, r: int) -> str:
        c, i = divmod(r, self.m)
        return self.names[i](self.piece + c + 1)

    def meta(self, r: int) -> dict:
        c, i = divmod(r, self.m)
        j = self.piece + c + 1
        return {k: (v(j) if type(v) is _Renumber else j if k == "piece" and v == self.piece and type(v) is int else v)
                for k, v in self.metas[i].items()}

    def row_classes(self, keys: tuple[str, ...], n: int):
        """``Lanes.row_classes`` for the first n rows of the copies, read from the piece's m rows when
        no value under ``keys`` holds the piece's number (each copy's rows then fall in its rows'
        classes); None when one does."""
        if "piece" in keys or any(type(v) is _Renumber and len(v.parts) > 1
                                  for meta in self.metas for v in map(meta.get, keys)):
            return None
        # (copy 0's rows: under ``keys`` their values are every copy's)
        local, firsts, patterns, metas = classes_by_row(
            [self.patterns[k] if k >= 0 else None for k in self.which.tolist()], map(self.meta, range(self.m)), keys)
        return np.tile(local, -(-n // self.m))[:n], firsts, patterns, metas

    def row_deps(self, key: str, r: int) -> tuple[int, ...]:
        """Row r's dependencies ("done" or "sent")."""
        c, i = divmod(r, self.m)
        _, flat, moves, ptr = self.deps[key]
        a, b = int(ptr[i]), int(ptr[i + 1])
        return tuple((flat[a:b] + moves[a:b] * ((c + 1) * self.m)).tolist())

    def lanes(self, copies: int) -> Lanes:
        """The first ``copies`` copies as columns."""
        # each copy's dependencies: the piece's, those that move with it shifted by the copy's offset
        # (kept flat: a join over every rail's trees would make a dense table as wide as it for every row)
        deps = {key: Ragged.repeated(counts, flat, moves, copies, self.m)
                for key, (counts, flat, moves, _) in self.deps.items()}
        col = lambda attr: np.tile(self.columns[attr], copies)  # noqa: E731
        return Lanes(copies * self.m, self.name, self.patterns, np.tile(self.which, copies), col("bytes_each"),
                     deps["done"], deps["sent"], col("duration_s"), col("post_delay_s"), self.meta)


class RepeatedLanes(Lanes):
    """``copies`` copies of a :class:`PieceImage` in a schedule, not built: row r is copy r // m's
    row r % m, its ids moved on by ``offset`` (a schedule appended to another). It reads as Groups
    (``group``, ``groups``, ``metas``, ``pattern_list``) but has no columns: ``materialized`` builds
    the first copies."""

    __slots__ = ("image", "copies", "offset")
    virtual = True

    def __init__(self, image: PieceImage, copies: int, offset: int = 0):
        self.image, self.copies, self.offset = image, copies, offset
        self.n = copies * image.m
        self.name, self.meta, self.patterns = image.name, image.meta, image.patterns
        self.overrides = {}

    def group(self, r: int) -> Group:
        ov = self.overrides.get(r)
        image, off = self.image, self.offset
        deps_done = ov["deps_done"] if ov else tuple(d + off for d in image.row_deps("done", r))
        i = r % image.m
        k = int(image.which[i])
        return Group(image.name(r), image.patterns[k] if k >= 0 else None, float(image.columns["bytes_each"][i]),
                     deps_done, tuple(d + off for d in image.row_deps("sent", r)),
                     float(image.columns["duration_s"][i]), float(image.columns["post_delay_s"][i]), image.meta(r))

    def groups(self):
        return map(self.group, range(self.n))

    def metas(self):
        return map(self.meta, range(self.n))

    def pattern_list(self):
        one = [self.patterns[k] if k >= 0 else None for k in self.image.which.tolist()]
        return itertools.chain.from_iterable(itertools.repeat(one, self.copies))

    def shifted(self, offset: int) -> "RepeatedLanes":
        out = RepeatedLanes(self.image, self.copies, self.offset + offset)
        out.overrides = {r: {"deps_done": tuple(d + offset for d in ov["deps_done"])}
                         for r, ov in self.overrides.items()}
        return out

    def roots(self) -> np.ndarray:
        """The rows that wait for nothing, ascending."""
        m = self.image.m
        n_done, n_sent = self.image.deps["done"][0], self.image.deps["sent"][0]
        free = np.flatnonzero((n_done == 0) & (n_sent == 0))
        rows = (np.arange(self.copies, dtype=np.int64)[:, None] * m + free[None, :]).ravel()
        if not self.overrides:
            return rows
        out = set(rows.tolist())
        for r, ov in self.overrides.items():
            if not ov["deps_done"] and not n_sent[r % m]:
                out.add(r)
            else:
                out.discard(r)
        return np.asarray(sorted(out), dtype=np.int64)

    def materialized(self, copies: int) -> Lanes:
        """The first ``copies`` copies as columns (the rows of a shorter schedule the fold is read from)."""
        out = self.image.lanes(copies)
        if self.offset:
            out.deps_done = ragged.shifted(out.deps_done, self.offset)
            out.deps_sent = ragged.shifted(out.deps_sent, self.offset)
        out.overrides = {r: ov for r, ov in self.overrides.items() if r < out.n}
        return out


class Piecewise:
    """Numbers for the groups of a schedule with virtual rows, read from ``table`` over a shorter one
    that built only ``built`` of the block's ``copies`` copies (m rows each, from ``start``): group g
    before the block reads ``table[g]``; row i of copy c reads copy 0's row i plus c ``step``; a
    group after the block reads its place in the shorter schedule plus ``tail_add``. Indexed like an
    array (an int, a slice or an array of ints)."""

    def __init__(self, table: np.ndarray, start: int, m: int, copies: int, built: int, step: int, tail_add: int):
        self.table, self.start, self.m, self.step, self.tail_add = table, start, m, step, tail_add
        self.end = start + copies * m
        self.cut = (copies - built) * m
        self.n = len(table) + self.cut

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            g = int(key) + (self.n if key < 0 else 0)
            if not 0 <= g < self.n:
                raise IndexError("group index out of range")
            if g < self.start:
                return int(self.table[g])
            if g < self.end:
                c, i = divmod(g - self.start, self.m)
                return int(self.table[self.start + i]) + c * self.step
            return int(self.table[g - self.cut]) + self.tail_add
        g = np.arange(self.n, dtype=np.int64)[key] if isinstance(key, slice) else np.asarray(key, dtype=np.int64)
        g = np.where(g < 0, g + self.n, g)
        c, i = np.divmod(g - self.start, self.m)
        inside = (g >= self.start) & (g < self.end)
        after = g >= self.end
        at = np.where(inside, self.start + i, np.where(after, g - self.cut, g))
        return self.table[at] + np.where(inside, c * self.step, np.where(after, self.tail_add, 0))

    def __array__(self, dtype=None, copy=None):
        out = self[slice(None)]
        return out if dtype is None else out.astype(dtype)


class Gathered(np.lib.mixins.NDArrayOperatorsMixin):
    """``values[index]`` for an ``index`` too long to build (a :class:`Piecewise`): read entry by
    entry or by slices, built whole only when numpy asks for an array."""

    def __init__(self, values: np.ndarray, index: Piecewise):
        self.values, self.index = values, index
        self._whole = None  # (built once numpy asks for it: a replay reads it at every frame)

    def __len__(self) -> int:
        return len(self.index)

    @property
    def shape(self) -> tuple[int]:
        return (len(self.index),)

    def __getitem__(self, key):
        return self.values[self.index[key]]

    def __array__(self, dtype=None, copy=None):
        if self._whole is None:
            self._whole = self.values[self.index[slice(None)]]
        return self._whole if dtype is None else self._whole.astype(dtype)

    def __getattr__(self, name: str):
        if name.startswith("_"):  # (never the array's: and no loop while the object is being made)
            raise AttributeError(name)
        return getattr(np.asarray(self), name)  # (max, tolist, tobytes ...: the array's own)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(np.asarray(x) if isinstance(x, Gathered) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)
