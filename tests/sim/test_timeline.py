"""A run's segments and delivery curve keep a steady state's repeats as one block (sim/timeline.py).

What a reader gets must be, value for value and type for type, the list the engine wrote out before:
the period's rows with the k shifts added by numpy (``(row[None, :] + (arange(1, k + 1) * T)[:, None])
.ravel().tolist()``), whether the rows are read one at a time, by slices, whole, or through numpy;
and the engine's own edits (append, replacing the last row, which may be a block's) land where a
list's would. An engine run reads the same either way (its figures are compared in
test_engine_periods.py; this compares the timelines of real runs with the written-out form).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.timeline import Timeline

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def written_out(rows, steps, k):
    """The old engine's rows for k repeats (numpy arithmetic, then Python values)."""
    if not rows:
        return []
    cols = []
    for c, s in enumerate(steps):
        vals = [r[c] for r in rows]
        if s is None:
            cols.append(vals * k)
        else:
            shifts = np.arange(1, k + 1, dtype=float)[:, None] * s
            cols.append((np.asarray(vals, dtype=float)[None, :] + shifts).ravel().tolist())
    return list(zip(*cols))


def stretched(ref, start, end, key):
    """``Timeline.stretch`` on a list: the last row made to end at ``end`` when it is (s, start, key),
    else a row of its own."""
    if ref and ref[-1][2] == key and ref[-1][1] == start:
        ref[-1] = (ref[-1][0], end, key)
    else:
        ref.append((start, end, key))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_timeline_reads_as_the_list_written_out(data):
    tl, ref = Timeline(), []
    if data.draw(st.booleans()):
        tl, ref = Timeline([(0.0, 0.0, 0)]), [(0.0, 0.0, 0)]
    for _ in range(data.draw(st.integers(1, 8))):
        op = data.draw(st.sampled_from(["append", "repeat", "set_last", "stretch"]))
        if op == "stretch":  # the engine's step: the last segment made longer, or a new one
            start, key = data.draw(finite), data.draw(st.integers(0, 9))
            if ref and data.draw(st.booleans()):  # (most often it follows on from the last row)
                start, key = ref[-1][1], (ref[-1][2] if data.draw(st.booleans()) else key)
            end = data.draw(finite)
            tl.stretch(start, end, key)
            stretched(ref, start, end, key)
        elif op == "append":
            row = (data.draw(finite), data.draw(finite), data.draw(st.integers(0, 9)))
            tl.append(row)
            ref.append(row)
        elif op == "repeat":
            rows = data.draw(st.lists(st.tuples(finite, finite, st.integers(0, 9)), max_size=4))
            k = data.draw(st.integers(0, 5))
            steps = (data.draw(finite), data.draw(finite), None)
            tl.repeat(rows, steps, k)
            ref.extend(written_out(rows, steps, k))
        elif ref:
            row = (data.draw(finite), data.draw(finite), data.draw(st.integers(0, 9)))
            tl[-1] = row
            ref[-1] = row
        assert len(tl) == len(ref) and bool(tl) == bool(ref)
        if ref:  # single rows, types and all, from the blocks themselves (nothing written out yet)
            for i in {0, len(ref) - 1, data.draw(st.integers(0, len(ref) - 1)), -1, -len(ref)}:
                assert tl[i] == ref[i] and [type(x) for x in tl[i]] == [type(x) for x in ref[i]]
            a = data.draw(st.integers(0, len(ref)))
            assert tl[a:] == ref[a:]
            b = data.draw(st.integers(0, len(ref)))
            assert tl[min(a, b):max(a, b)] == ref[min(a, b):max(a, b)]
    assert list(tl) == ref and tl == ref
    np.testing.assert_array_equal(np.asarray(tl, dtype=float).reshape(-1, 3) if ref else np.zeros((0, 3)),
                                  np.asarray(ref, dtype=float).reshape(-1, 3))
    with pytest.raises(IndexError):
        tl[len(ref)]


@pytest.mark.parametrize("algorithm", ["ring", "nvls-tree", "hierarchical"])
def test_a_skipping_run_keeps_the_timelines_it_wrote_out_before(monkeypatch, algorithm):
    """Real skips (16 GiB on two DGX H100): the blocks read as the rows written out at the skip."""
    original = Timeline.repeat
    shadows: dict[int, list] = {}

    def repeat(self, rows, steps, copies):  # the written-out list beside each timeline, kept in step
        shadows.setdefault(id(self), list(self)).extend(written_out(list(rows), steps, copies))
        original(self, rows, steps, copies)

    monkeypatch.setattr(Timeline, "repeat", repeat)
    inside = []  # the engine's own edits only (replacing or stretching a block's last row edits inside)
    for name in ("append", "__setitem__", "stretch"):
        plain = getattr(Timeline, name)

        def edit(self, *args, _plain=plain, _name=name):
            if id(self) in shadows and not inside:
                ref = shadows[id(self)]
                stretched(ref, *args) if _name == "stretch" else getattr(ref, _name)(*args)
            inside.append(1)
            try:
                _plain(self, *args)
            finally:
                inside.pop()
        monkeypatch.setattr(Timeline, name, edit)
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    res = sim.run("all-reduce", algorithm, 16 * 2**30).sim
    assert res.periods_skipped > 0
    assert id(res.segments) in shadows and id(res.delivered) in shadows
    for tl in (res.segments, res.delivered):
        ref = shadows[id(tl)]
        assert len(tl) == len(ref)
        assert [tl[i] for i in range(0, len(ref), 97)] == ref[::97]
        assert list(tl) == ref
