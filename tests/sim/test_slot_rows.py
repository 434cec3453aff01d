"""The trees' slots numbered once (sim/slot_rows.py): device numbers in the order they first come,
and each pair asked by its first slot among patterns alike, against the walk with dicts that
``TreeParts.of`` and ``Fold._slot_ends`` made before, on random patterns."""

import numpy as np
import pytest

from dgxstudio.sim import slot_rows
from dgxstudio.sim.schedule import Pattern


def _walked(patterns, kinds):
    """Rows as the dict walk gave them: (which slots ask, each slot's row)."""
    row_of: dict = {}
    asks, rows, n_rows = [], [], 0
    for p, kind in zip(patterns, kinds):
        if kind is None:
            asks += [True] * len(p.pairs)
            rows += list(range(n_rows, n_rows + len(p.pairs)))
            n_rows += len(p.pairs)
            continue
        seen = row_of.setdefault(kind, {})
        for pair in p.pairs:
            if pair in seen:
                asks.append(False)
            else:
                seen[pair] = n_rows
                n_rows += 1
                asks.append(True)
            rows.append(seen[pair])
    return np.asarray(asks), np.asarray(rows)


@pytest.mark.parametrize("seed", range(12))
def test_rows_are_the_dict_walks(seed):
    rng = np.random.default_rng(seed)
    gpus = [f"s{i}.gpu{k}" for i in range(5) for k in range(4)]
    patterns, kinds = [], []
    for _ in range(int(rng.integers(1, 9))):
        n = int(rng.integers(0, 30))
        pairs = [(gpus[a], gpus[b]) for a, b in rng.integers(0, len(gpus) if seed % 3 else 4, size=(n, 2))]
        patterns.append(Pattern(pairs))
        kinds.append(None if rng.random() < 0.2 else int(rng.integers(0, 2)))
    ends = slot_rows.slot_ends(patterns)
    names = [x for p in patterns for pair in p.pairs for x in pair]
    order = list(dict.fromkeys(names))
    assert ends.ravel().tolist() == [order.index(x) for x in names]
    sizes = [len(p.pairs) for p in patterns]
    group = np.repeat(np.asarray([-1 if k is None else k for k in kinds], dtype=np.int64), sizes)
    asks, rows = slot_rows.first_slots(ends.reshape(-1, 2), group)
    want_asks, want_rows = _walked(patterns, kinds)
    assert asks.tolist() == want_asks.tolist() and rows.tolist() == want_rows.tolist()


def test_a_pair_asked_again_in_another_kind_of_pattern_is_asked_there_too():
    p = Pattern([("a", "b"), ("b", "a"), ("a", "b")])
    ends = slot_rows.slot_ends([p, p])
    asks, rows = slot_rows.first_slots(ends, np.array([0, 0, 0, 1, 1, 1]))
    assert asks.tolist() == [True, True, False, True, True, False] and rows.tolist() == [0, 1, 0, 2, 3, 2]
