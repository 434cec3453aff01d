"""Schedules kept as columns give the engine exactly what the group-by-group construction gave.

Builders add a lane's pieces as columns (``Lanes``) and piece-by-piece builders repeat their last
piece as columns once it shows its pattern (``Schedule.repeat_piece``), so that a 16 GiB run does not
build one Python object per piece. These tests compare each with the group-by-group construction:
every group's name, meta, pattern, bytes, delays and dependencies, the engine's columns, and the
simulated times.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives as C
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.ragged import Ragged
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.schedule import Group, Lanes, Pattern, Schedule

# hierarchical runs here are the engine's skip at work, not sim/chain_stages.py's recurrence
pytestmark = pytest.mark.usefixtures("events_only")


def fields(g: Group) -> tuple:
    return (g.name, id(g.pattern) if g.pattern is not None else None, g.bytes_each, tuple(g.deps_done),
            tuple(g.deps_sent), g.duration_s, g.post_delay_s, g.meta)


def assert_same_schedule(a: Schedule, b: Schedule) -> None:
    assert len(a.groups) == len(b.groups)
    for x, y in zip(a.groups, b.groups):
        assert fields(x) == fields(y)
    ca, cb = a.columns(), b.columns()
    for key in ("pattern", "bytes_each", "duration_s", "post_delay_s", "done_ptr", "done_flat", "sent_ptr", "sent_flat"):
        np.testing.assert_array_equal(getattr(ca, key), getattr(cb, key), err_msg=key)
    assert [id(p) for p in ca.patterns] == [id(p) for p in cb.patterns]


def ring_pass_by_groups(sched, ring, steps, segment, chunk, reduce_steps, reduce_s_per_byte, label, after=()):
    """The group-by-group ring pass the columns replaced (the reference)."""
    pattern = ring.pattern()
    n, piece = C.pieces(segment, chunk)
    prev_step, last_sent = [], None
    for k in range(steps):
        this_step = []
        for j in range(n):
            deps_done = (prev_step[j],) if prev_step else tuple(after)
            deps_sent = (last_sent,) if last_sent is not None else ()
            post = piece * reduce_s_per_byte if k < reduce_steps else 0.0
            gid = sched.add(Group(f"{label} step {k} piece {j}", pattern, piece, deps_done, deps_sent,
                                  post_delay_s=post, meta={"ring": label, "step": k, "piece": j}))
            this_step.append(gid)
            last_sent = gid
        prev_step = this_step
    return prev_step, pattern


@pytest.mark.parametrize("steps,segment,chunk,after", [(6, 10_000.0, 1_000.0, ()), (1, 5.0, 100.0, (0,)),
                                                       (4, 3_000.0, 1_000.0, (0, 1))])
def test_ring_pass_columns_equal_the_group_by_group_pass(monkeypatch, steps, segment, chunk, after):
    ring = C.RingSpec(["a", "b", "c", "d"])
    seen = []
    monkeypatch.setattr(C.RingSpec, "pattern", lambda self: seen[0])
    ref = Schedule([Group("x"), Group("y")])
    seen.append(Pattern([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]))
    last_ref, _ = ring_pass_by_groups(ref, ring, steps, segment, chunk, 2, 1e-9, "ring 0", after)
    new = Schedule([Group("x"), Group("y")])
    last_new = C._ring_pass(new, ring, steps, segment, chunk, 2, 1e-9, "ring 0", after)
    assert last_new == last_ref
    assert_same_schedule(ref, new)


def test_launch_latency_reaches_a_row_of_columns():
    sched = C.ring_collective("all-reduce", [C.RingSpec(["a", "b", "c"])], 3_000.0, 500.0, both=False)
    roots_before = [i for i, g in enumerate(sched.groups) if not g.deps_done and not g.deps_sent]
    C.with_launch(sched, 1e-6)
    launch = sched.meta["launch_group"]
    assert roots_before == [0]
    assert sched.groups[0].deps_done == (launch,)
    cols = sched.columns()
    assert cols.done_flat[cols.done_ptr[0]:cols.done_ptr[1]].tolist() == [launch]
    # the other rows keep theirs
    assert sched.groups[3].deps_done == (1,)  # step 1 piece 1 waits for step 0 piece 1


def test_extend_shifts_the_dependencies_of_columns():
    a = C.ring_collective("all-gather", [C.RingSpec(["a", "b"])], 2_000.0, 500.0, both=False)
    b = C.ring_collective("all-gather", [C.RingSpec(["c", "d"])], 2_000.0, 500.0, both=False)
    C.with_launch(b, 1e-6)
    before = [fields(g) for g in b.groups]
    merged = Schedule([])
    merged.extend(a)
    off = merged.extend(b)
    assert off == len(a.groups)
    for g, (name, _, _, done, sent, *_rest) in zip(merged.groups[off:], before):
        assert g.name == name
        assert g.deps_done == tuple(d + off for d in done)
        assert g.deps_sent == tuple(d + off for d in sent)


def nvls_tree(monkeypatch, columns: bool, n_systems=2, size=64 * 2**20, slots=4):
    if not columns:
        monkeypatch.setattr(Schedule, "repeat_piece", lambda self, *a, **k: False)
    systems = [[f"s{s}g{i}" for i in range(4)] for s in range(n_systems)]
    shares = [{f"s{s}sw{k}": 0.5 for k in range(2)} for s in range(n_systems)]
    out = C.nvls_tree_allreduce(systems, shares, size, 2 * 2**20, 1e-6, 5e-6, slots=slots)
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("n_systems,slots,size", [(2, 4, 64 * 2**20), (3, 4, 64 * 2**20), (2, 0, 64 * 2**20),
                                                   (33, 4, 20 * 2**20)])
def test_repeated_pieces_equal_the_piece_by_piece_build(monkeypatch, n_systems, slots, size):
    ref = nvls_tree(monkeypatch, False, n_systems, size, slots=slots)
    new = nvls_tree(monkeypatch, True, n_systems, size, slots=slots)
    # the patterns are distinct objects in the two builds: compare everything else, and the columns
    assert len(ref.groups) == len(new.groups)
    lanes = [c for c in new.groups._chunks if isinstance(c, Lanes)]
    assert lanes
    if n_systems == 33:  # a join waits for 66 switches' groups: one block, its rows kept flat (no 66-wide table)
        assert len(lanes) == 1 and isinstance(lanes[0].deps_done, Ragged) and lanes[0].deps_done.counts.max() == 66
    pat_ref, pat_new = {}, {}
    for x, y in zip(ref.groups, new.groups):
        fx, fy = fields(x), fields(y)
        assert fx[0] == fy[0] and fx[2:] == fy[2:]
        if x.pattern is not None:
            assert pat_ref.setdefault(id(x.pattern), len(pat_ref)) == pat_new.setdefault(id(y.pattern), len(pat_new))
            assert x.pattern.pairs == y.pattern.pairs
    ca, cb = ref.columns(), new.columns()
    for key in ("pattern", "bytes_each", "duration_s", "post_delay_s", "done_ptr", "done_flat", "sent_ptr", "sent_flat"):
        np.testing.assert_array_equal(getattr(ca, key), getattr(cb, key), err_msg=key)


def test_repeat_piece_refuses_pieces_that_are_not_images():
    sched = Schedule([])
    pat = Pattern([("a", "b")])
    for j in range(3):
        sched.add(Group(f"piece {j}", pat, 100.0 + (j == 2), (), (j - 1,) if j else ()))
    assert not sched.repeat_piece(1, 2, 5, 2)  # bytes differ
    assert len(sched.groups) == 3
    sched2 = Schedule([])
    for j in range(3):
        sched2.add(Group(f"piece {j}", pat, 100.0, (0,) if j == 2 else (), (j - 1,) if j else ()))
    assert not sched2.repeat_piece(1, 2, 5, 2)  # a dependency that is neither the same nor one on
    sched3 = Schedule([])
    for j in range(3):
        sched3.add(Group(f"piece {j}", pat, 100.0, (), (j - 1,) if j else ()))
    assert sched3.repeat_piece(1, 2, 5, 2)
    assert [g.name for g in sched3.groups] == [f"piece {j}" for j in range(8)]
    assert [g.deps_sent for g in sched3.groups][3:] == [(j - 1,) for j in range(3, 8)]


@pytest.mark.parametrize("system,alg", [("dgx-h100", "nvls-tree"), ("dgx-a100", "hierarchical"),
                                        ("dgx-a100", "ring")])
def test_columns_simulate_as_the_group_by_group_schedule(monkeypatch, system, alg):
    """The same run with the builders' columns turned back into Group objects: the same times."""
    topo = build_fat_tree(2, system, rail_optimized=system == "dgx-h100")
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    fast = sim.run("all-reduce", alg, 256 * 2**20)
    original = Engine.run

    def as_objects(self, schedule, *a, **k):
        plain = Schedule(list(schedule.groups), schedule.payload_bytes, schedule.description, schedule.meta)
        assert not any(isinstance(c, Lanes) for c in plain.groups._chunks)
        return original(self, plain, *a, **k)

    monkeypatch.setattr(Engine, "run", as_objects)
    slow = sim.run("all-reduce", alg, 256 * 2**20)
    assert fast.time_s == slow.time_s
    assert fast.busbw_Bps == slow.busbw_Bps
    np.testing.assert_array_equal(fast.sim.group_done, slow.sim.group_done)


def test_a_row_of_columns_reads_as_a_group():
    pat = Pattern([("a", "b")])
    lanes = Lanes(4, lambda r: f"row {r}", [pat], 0, [1.0, 2.0, 3.0, 4.0], np.array([[-1], [0], [1], [2]]),
                  np.array([[-1], [-1], [-1], [-1]]), post_delay_s=0.5, meta={"k": "v", "r": np.arange(4)})
    sched = Schedule([Group("before")])
    first = sched.add_lanes(lanes)
    assert first == 1
    g = sched.groups[3]
    assert (g.name, g.pattern, g.bytes_each, g.deps_done, g.deps_sent, g.post_delay_s, g.meta) == \
        ("row 2", pat, 3.0, (1,), (), 0.5, {"k": "v", "r": 2})
    assert sched.groups[-1].name == "row 3"
    with pytest.raises(IndexError):
        sched.groups[5]
    assert math.isclose(sum(x.bytes_each for x in sched.groups), 10.0)


def test_bulk_reads_equal_row_by_row_reads(monkeypatch):
    """Iterating a schedule (and a replay's pattern/meta pass) gives what indexing each row gives."""
    sched = nvls_tree(monkeypatch, True, 2, size=32 * 2**20)
    C.with_launch(sched, 1e-6)
    merged = Schedule([Group("first")])
    merged.extend(sched)
    merged.extend(C.hierarchical([["a", "b"], ["c", "d"]], [C.RingSpec(["a", "b"]), C.RingSpec(["c", "d"])],
                                 8_000.0, 1_000.0))
    rows = [merged.groups[i] for i in range(len(merged.groups))]
    assert [fields(g) for g in merged.groups] == [fields(g) for g in rows]
    assert [(id(p), m) for p, m in merged.groups.patterns_and_metas()] == \
        [(id(g.pattern) if g.pattern is not None else id(None), g.meta) for g in rows]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_roots_read_from_the_columns_as_they_are(data):
    """``Schedule.roots`` (what a launch latency goes in front of) reads Lanes and Group runs as
    stored, rows changed after they were added included, and lists what the engine's columns list."""
    sched = Schedule()
    for _ in range(data.draw(st.integers(1, 5))):
        n = len(sched.groups)
        if data.draw(st.booleans()):
            m = data.draw(st.integers(1, 6))
            deps = data.draw(st.lists(st.integers(-1, n + m - 1), min_size=2 * m, max_size=2 * m))
            done = np.asarray([d if d < n else -1 for d in deps[:m]], dtype=np.int64)
            sent = np.asarray([d if d < n else -1 for d in deps[m:]], dtype=np.int64)
            sched.add_lanes(Lanes(m, lambda r: f"row {r}", [None], 0, 0.0, done, sent))
        else:
            deps = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=2)) if n else []
            sched.add(Group(f"g{n}", deps_done=tuple(deps)))
    for g in data.draw(st.lists(st.integers(0, len(sched.groups) - 1), max_size=3)):
        sched.set_deps_done(g, tuple(data.draw(st.lists(st.integers(0, len(sched.groups) - 1), max_size=1))))
    cols = sched.columns()
    expect = np.flatnonzero((np.diff(cols.done_ptr) == 0) & (np.diff(cols.sent_ptr) == 0)).tolist()
    assert sched.roots() == expect


def test_ragged_dependencies_read_as_the_dense_table():
    """A block whose rows list their dependencies flat (Ragged) gives the same groups, columns, roots
    and shifted copy as the dense table with -1 where a row has fewer."""
    dense_done = np.array([[-1, -1, -1], [0, -1, -1], [0, 1, 2], [-1, -1, -1], [3, 1, -1]])
    dense_sent = np.array([[-1], [0], [1], [-1], [3]])
    ragged_done = Ragged([0, 1, 3, 0, 2], [0, 0, 1, 2, 3, 1])
    ragged_sent = Ragged([0, 1, 1, 0, 1], [0, 1, 3])
    pat = Pattern([("a", "b")])
    built = []
    for done, sent in ((dense_done, dense_sent), (ragged_done, ragged_sent)):
        sched = Schedule([Group("before")])
        sched.add_lanes(Lanes(5, lambda r: f"row {r}", [pat], 0, 1.0, np.where(done >= 0, done + 1, -1)
                              if isinstance(done, np.ndarray) else Ragged(done.counts, done.flat + 1),
                              np.where(sent >= 0, sent + 1, -1) if isinstance(sent, np.ndarray)
                              else Ragged(sent.counts, sent.flat + 1)))
        sched.set_deps_done(3, (1,))
        other = Schedule([Group("x"), Group("y")])
        other.extend(sched)
        built.append((sched, other))
    (a, a2), (b, b2) = built
    assert_same_schedule(a, b)
    assert [fields(g) for g in a2.groups] == [fields(g) for g in b2.groups]
    assert a.roots() == b.roots() == [0, 1, 4]
    assert b.groups[3].deps_done == (1,)  # set after it was added
    assert b.groups[5].deps_done == (4, 2) and b.groups[5].deps_sent == (4,)
    assert Ragged.repeated([1, 2], [5, 0, 6], [True, False, True], 2, 10).flat.tolist() == [15, 0, 16, 25, 0, 26]
    with pytest.raises(ValueError):
        Ragged([1, 2], [0, 1])
