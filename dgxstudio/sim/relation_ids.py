"""The ids symmetry.py numbers colours and system relations with, worked out on what differs.

``symmetry._Structure`` numbers the relation of every ordered pair of a pattern's systems: m x m
rows (4.2 million over 2,048 systems), each hashed and then numbered by ``np.unique``, which sorts
them all. Most systems are alike: those under the same switches (32 to a leaf group on a
rail-optimized fabric) relate to every other system the same way. So the relation is worked out
once per pair of distinct kinds of system (their switches, their colour, whether they are one
system, how many of the pattern's transfers join them) and read back into the m x m matrix. The
numbers are the ones ``np.unique`` gives over the whole matrix: the same sorted set of hashes.

Colour refinement's ``np.unique(..., axis=1)`` over (colour, signature) columns is numbered the
same way by ``row_ids`` (symmetry's and tree_fold's: one ``lexsort`` instead of a sort of
structured rows).
"""

from __future__ import annotations

import numpy as np

from ..cancel import check_cancelled

DENSE = 1 << 22  # integers below this are numbered by counting (a 32 MB table at most), not sorting


def row_ids(*cols) -> np.ndarray:
    """One small integer per distinct row of the given integer columns (their rank in lexicographic
    order: ``np.unique(axis=1)``'s, with one lexsort instead of its sort of structured rows)."""
    if len(cols) == 1:
        return numbered(np.ravel(cols[0]), DENSE)[1]
    order = np.lexsort(cols[::-1])
    new = np.zeros(len(order), dtype=bool)
    new[:1] = True
    for c in cols:
        c = np.asarray(c)[order]
        new[1:] |= c[1:] != c[:-1]
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.cumsum(new) - 1
    return out


def value_ids(values: np.ndarray, dense_limit: int) -> np.ndarray:
    """``np.unique(values, return_inverse=True)[1]`` (the shape of ``values``)."""
    return numbered(values.ravel(), dense_limit)[1].reshape(values.shape)


def numbered(flat: np.ndarray, dense_limit: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(flat, return_inverse=True)`` of a 1-D array: by counting when the values are
    integers in [0, dense_limit), by hashing and searching when they are other integers (numpy 2),
    else by sorting."""
    if flat.size and flat.dtype.kind in "iu" and flat.min() >= 0 and flat.max() < dense_limit:
        present = np.bincount(flat) > 0
        return np.flatnonzero(present), (np.cumsum(present) - 1)[flat]
    if flat.dtype.kind in "iu":
        # the distinct values (``distinct``), each value's rank by a search among them
        values = distinct(flat)
        return values, np.searchsorted(values, flat)
    values, inv = np.unique(flat, return_inverse=True)
    return values, inv.ravel()


def distinct(flat: np.ndarray) -> np.ndarray:
    """``np.unique(flat)`` of 1-D integers, by one sort: numpy 2's ``np.unique`` and
    ``np.unique_values`` hash instead, 10 to 40 times slower on this machine (1.6 million values:
    0.18-0.80 s against 0.02 s, measured with numpy 2.4)."""
    if not flat.size:
        return flat.copy()
    s = np.sort(flat)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    return s[new]


def relations(qid: np.ndarray, slot: np.ndarray, weights: np.ndarray, scolor: np.ndarray,
              between: np.ndarray, hash_rows) -> np.ndarray:
    """The relation id of every ordered pair of m systems (m x m), as ``_Structure`` defines it:
    the hash of (sum over port pairs k, l of qid[slot[a, k], slot[b, l]] * weights[k, l], and the
    small columns scolor[a], scolor[b], a == b, between[a, b]), numbered in sorted order.

    ``qid``: relation of each pair of switches ports plug into; ``slot``: m x ports, each system's
    ports' switches as rows of ``qid``; ``weights``: ports x ports random words; ``scolor``: each
    system's colour; ``between``: m x m transfers of the pattern joining two systems;
    ``hash_rows``: symmetry's row hash."""
    m = len(scolor)
    mp = slot.shape[1]
    # kinds of system: the same switches behind the same ports, and the same colour
    srow = np.unique(slot, axis=0, return_inverse=True)[1].ravel() if mp else np.zeros(m, dtype=np.int64)
    kind = row_ids(srow, scolor)
    nk = int(kind.max()) + 1
    first = np.full(nk, m, dtype=np.int64)
    np.minimum.at(first, kind, np.arange(m))
    uslot, kcolor = slot[first], scolor[first]
    # the ports' part of the relation, per pair of kinds (integer sums: their order does not matter)
    rel_k = np.zeros((nk, nk), dtype=np.int64)
    for a in range(nk):
        if a % 256 == 255:
            check_cancelled()
        if mp:
            rel_k[a] = np.einsum("kbl,kl->b", qid[uslot[a]][:, uslot], weights)
    bid = value_ids(between, DENSE)
    nb = int(bid.max()) + 1 if m else 1
    ns = int(scolor.max()) + 1 if m else 1
    # each pair of systems as a code of its kinds, sameness and transfers; one hash per code
    code = (kind[:, None] * nk + kind[None, :]) * 2
    code[np.arange(m), np.arange(m)] += 1
    code = code * nb + bid
    codes, at = numbered(code.ravel(), DENSE)
    rest, bidv = np.divmod(codes, nb)
    pair, same = np.divmod(rest, 2)
    ka, kb = np.divmod(pair, nk)
    small = ((kcolor[ka] * ns + kcolor[kb]) * 2 + same) * nb + bidv
    rid_of_code = np.unique(hash_rows([rel_k[ka, kb], small]), return_inverse=True)[1].ravel()
    return rid_of_code[at].reshape(m, m)

