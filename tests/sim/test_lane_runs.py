"""Lane order over runs of groups a constant step apart (``periods._runs``): an NVLS tree's lanes take
one group in each of its pieces, so a lane's groups sit a piece's worth of ids apart. The order,
places and reaches must be those of following every lane link by link, whatever the steps."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.sim.periods import _runs, lane_order


def follow(succ: np.ndarray, alike: np.ndarray):
    """The reference: every lane followed from its head, heads in id order."""
    n = len(succ)
    heads = sorted(set(range(n)) - set(succ[succ >= 0].tolist()))
    order = []
    for h in heads:
        g = h
        while g >= 0:
            order.append(g)
            g = int(succ[g])
    reach = []
    for g in range(n):
        count, x = 0, g
        while x >= 0 and alike[x]:
            count, x = count + 1, int(succ[x])
        reach.append(count)
    return order, reach


def check(succ: np.ndarray, alike: np.ndarray) -> None:
    order, idx, reach = lane_order(succ, alike)
    expect, expect_reach = follow(succ, alike)
    assert order.tolist() == expect
    assert (idx[order] == np.arange(len(succ))).all()
    assert reach.tolist() == expect_reach


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_lane_order_matches_following_every_lane(data):
    """Lanes in any order of ids (steps of every size: mostly runs of one)."""
    n = data.draw(st.integers(0, 40))
    consecutive = data.draw(st.booleans())
    perm = list(range(n)) if consecutive else data.draw(st.permutations(range(n)))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, n), max_size=5))) | {0, n})
    succ = np.full(n, -1, dtype=np.int64)
    for a, b in zip(cuts, cuts[1:]):
        lane = perm[a:b]
        for x, y in zip(lane, lane[1:]):
            succ[x] = y
    alike = (succ >= 0) & np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    check(succ, alike)


@st.composite
def piecewise(draw):
    """Groups built piece by piece: every piece has one group of each lane, in an order of its own
    for the first pieces and the same order from then on (so lanes step by the piece's size there);
    some lanes are cut in two, some links not alike, and ids may be laid out in reverse."""
    lanes = draw(st.integers(1, 6))
    pieces = draw(st.integers(1, 30))
    irregular = draw(st.integers(0, pieces))
    steady = draw(st.permutations(range(lanes)))
    layout = []
    for c in range(pieces):
        layout.append(list(steady) if c >= irregular else draw(st.permutations(range(lanes))))
    n = lanes * pieces
    ids = [[0] * pieces for _ in range(lanes)]  # ids[lane][piece]
    for c, perm in enumerate(layout):
        for pos, lane in enumerate(perm):
            ids[lane][c] = c * lanes + pos
    if draw(st.booleans()):  # the same shape with ids the other way round: steps go backwards
        ids = [[n - 1 - g for g in lane] for lane in ids]
    succ = np.full(n, -1, dtype=np.int64)
    cuts = set(draw(st.lists(st.tuples(st.integers(0, lanes - 1), st.integers(0, pieces - 1)), max_size=4)))
    for lane in range(lanes):
        for c in range(pieces - 1):
            if (lane, c) not in cuts:
                succ[ids[lane][c]] = ids[lane][c + 1]
    alike = (succ >= 0) & np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    if draw(st.booleans()):
        alike = succ >= 0
    return succ, alike


@settings(max_examples=300, deadline=None)
@given(piecewise())
def test_lane_order_over_strided_runs_matches_following_every_lane(case):
    check(*case)


def test_an_nvls_tree_like_layout_is_few_runs():
    """4 lanes of 2,000 pieces, the first 3 pieces in orders of their own: the steady pieces' groups
    make one run per lane (after the irregular start), not one run per group."""
    lanes, pieces = 4, 2000
    n = lanes * pieces
    succ = np.full(n, -1, dtype=np.int64)
    firsts = [[2, 0, 3, 1], [1, 3, 0, 2], [3, 2, 1, 0]]
    pos = lambda lane, c: c * lanes + (firsts[c].index(lane) if c < 3 else lane)  # noqa: E731
    for lane in range(lanes):
        for c in range(pieces - 1):
            succ[pos(lane, c)] = pos(lane, c + 1)
    starts, run_of, k, lens, step = _runs(succ)
    assert len(starts) == 5 * lanes  # pieces 0-3 alone (their steps differ), then one run
    assert lens.max() == pieces - 4 and step[np.argmax(lens)] == lanes
    alike = succ >= 0
    alike[pos(1, 1000)] = False
    check(succ, alike)


def test_lanes_of_consecutive_ids_are_runs_of_step_one():
    """A ring's lanes: long blocks of consecutive ids, a lane going on in another block (few runs:
    the runs of step 1 are taken as they are, without a table)."""
    n = 4000
    succ = np.full(n, -1, dtype=np.int64)
    for a, b in ((0, 999), (2000, 2999), (1000, 1999), (3000, 3999)):
        succ[a:b] = np.arange(a + 1, b + 1)
    succ[999] = 2000  # lane one: 0..999 then 2000..2999
    succ[1999] = 3000  # lane two: 1000..1999 then 3000..3999
    starts, run_of, k, lens, step = _runs(succ)
    assert starts.tolist() == [0, 1000, 2000, 3000] and (step == 1).all()
    alike = succ >= 0
    alike[2500] = False
    check(succ, alike)
