"""An NVLS tree too large to build runs through its fold (sim/nvls_virtual.py, sim/virtual_rows.py,
issue #17): its later pieces are virtual rows that read as the columns they stand for, the folded
run of them gives the answer of the run built (and of the flow-by-flow run), and what does not
fold is refused with the reason."""

import dataclasses

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import collectives as C
from dgxstudio.sim import limits, nvls, nvls_virtual
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.schedule import Group, Schedule
from dgxstudio.sim.virtual_rows import Gathered, Piecewise, RepeatedLanes

from .test_tree_fold import _assert_same

MiB = 2**20


def _nvls_tree(n_systems=3, size=64 * MiB, slots=4, virtual=False):
    systems = [[f"s{s}g{i}" for i in range(4)] for s in range(n_systems)]
    shares = [{f"s{s}sw{k}": 0.5 for k in range(2)} for s in range(n_systems)]
    return C.with_launch(C.nvls_tree_allreduce(systems, shares, size, 2 * MiB, 1e-6, 5e-6, slots=slots,
                                               virtual=virtual), 3e-6)


def _fields(g: Group) -> tuple:
    """A group's fields, its pattern as its pairs (two builds make patterns of their own)."""
    return dataclasses.astuple(dataclasses.replace(g, pattern=None)) + (g.pattern and g.pattern.pairs,)


def test_virtual_rows_read_as_the_columns_they_stand_for(monkeypatch):
    built = _nvls_tree()
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", len(built.groups) - 2)  # (the launch comes after)
    virtual = _nvls_tree(virtual=True)
    monkeypatch.undo()
    chunks = [c for c in virtual.groups._chunks if isinstance(c, RepeatedLanes)]
    assert len(chunks) == 1 and chunks[0].n > 0.75 * len(built.groups)  # (most pieces not built)
    assert len(virtual.groups) == len(built.groups)
    assert virtual.roots() == built.roots()
    for x, y in zip(built.groups, virtual.groups):
        assert _fields(x) == _fields(y)
    assert [(p and p.pairs, m) for p, m in built.groups.patterns_and_metas()] == \
        [(p and p.pairs, m) for p, m in virtual.groups.patterns_and_metas()]
    assert _fields(virtual.groups[-1]) == _fields(built.groups[-1])
    # the first copies as columns
    first = virtual.groups._starts[virtual.groups._chunks.index(chunks[0])]
    lanes = chunks[0].materialized(3)
    assert [_fields(lanes.group(r)) for r in range(lanes.n)] == [_fields(built.groups[first + r]) for r in range(lanes.n)]
    # its columns: built as the limit allows (the columns of the pieces built), refused past it
    a, b = built.columns(), virtual.columns()
    for key in ("pattern", "bytes_each", "duration_s", "post_delay_s", "done_ptr", "done_flat", "sent_ptr", "sent_flat"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", len(built.groups) - 2)
    with pytest.raises(limits.TooLarge, match=f"{len(built.groups):,} or more flow groups"):
        virtual.columns()
    monkeypatch.undo()
    # appended to another schedule (which takes its groups, their ids moved on)
    both = Schedule([Group("before", duration_s=1e-6)])
    both.extend(virtual)
    assert _fields(both.groups[first + 1 + 5]) == _fields(
        dataclasses.replace(built.groups[first + 5], deps_done=tuple(d + 1 for d in built.groups[first + 5].deps_done),
                            deps_sent=tuple(d + 1 for d in built.groups[first + 5].deps_sent)))


def test_the_limit_counts_the_groups_built(monkeypatch):
    """Groups added after virtual rows (the launch) are counted with the groups built, not with the
    rows that stand for millions."""
    built = _nvls_tree()
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", len(built.groups) - 2)
    virtual = _nvls_tree(virtual=True)
    n = len(virtual.groups)
    for _ in range(4096 - n % 4096 + 1):  # (past a multiple of 4,096: where the count is checked)
        virtual.add(Group("after", duration_s=1e-6))
    assert len(virtual.groups) // 4096 > n // 4096
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", 4096 + 1)  # (the groups built do pass it: refused)
    with pytest.raises(limits.TooLarge):
        for _ in range(2 * 4096):
            virtual.add(Group("after", duration_s=1e-6))


def test_rows_built_in_place_count_against_the_limit(monkeypatch):
    """Virtual rows built where they stand (``GroupTable.build``: the run that does not fold) are no
    longer left out of the count the limit checks."""
    built = _nvls_tree()
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", len(built.groups) - 2)
    virtual = _nvls_tree(virtual=True)
    monkeypatch.undo()
    assert virtual.groups.unbuilt > 0
    virtual.groups.build(nvls_virtual.block(virtual)[0])
    assert virtual.groups.unbuilt == 0 and nvls_virtual.block(virtual) is None
    assert [_fields(g) for g in virtual.groups] == [_fields(g) for g in built.groups]


def test_virtual_rows_only_past_the_limit_or_where_the_run_folds(monkeypatch):
    """Under the limit and below 64 systems (where the NVLS tree runs flow by flow from 129 pieces
    on) the pieces are built as before; from 64 systems on they stay virtual rows."""
    assert not any(isinstance(c, RepeatedLanes) for c in _nvls_tree(virtual=True).groups._chunks)
    monkeypatch.setattr(nvls, "FOLD_SYSTEMS", 3)
    assert any(isinstance(c, RepeatedLanes) for c in _nvls_tree(virtual=True).groups._chunks)


def test_piecewise_numbers_read_like_the_array_they_stand_for():
    table = np.asarray([5, 6, 7, 10, 11, 12, 13, 20, 21, 22, 23, 30], dtype=np.int64)  # 2 of 4 copies built
    idx = Piecewise(table, 3, 4, 4, 2, 10, 20)
    full = np.concatenate([table[:3], table[3:7], table[3:7] + 10, table[3:7] + 20, table[3:7] + 30, [table[11] + 20]])
    assert len(idx) == len(full) == 20
    assert [idx[g] for g in range(20)] == full.tolist()
    assert idx[-1] == full[-1]
    np.testing.assert_array_equal(idx[np.asarray([19, 0, 13, 7])], full[[19, 0, 13, 7]])
    np.testing.assert_array_equal(idx[2:17:3], full[2:17:3])
    np.testing.assert_array_equal(np.asarray(idx), full)
    values = np.linspace(0, 1, 64)
    got = Gathered(values, idx)
    assert len(got) == 20 and got[4] == values[full[4]]
    np.testing.assert_array_equal(np.asarray(got), values[full])
    np.testing.assert_array_equal(got <= 0.4, values[full] <= 0.4)
    assert got.max() == values[full].max() and got.tolist() == values[full].tolist()
    with pytest.raises(IndexError):
        idx[20]


def _sim(topo, per_thread=1):
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True, gpus_per_thread=per_thread))


@pytest.mark.parametrize("label, build, size, per_thread", [
    ("4 DGX H100, two systems a leaf", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2),
     96 * MiB, 1),
    ("4 DGX H100, a thread per 4 GPUs (a launch group after the pieces)",
     lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2), 64 * MiB, 4),
    ("5 DGX H100, uneven leaves oversubscribed 2:1",
     lambda: build_fat_tree(5, "dgx-h100", rail_optimized=True, oversubscription=2, per_leaf=2), 64 * MiB, 1),
])
@pytest.mark.parametrize("why", ["past the limit", "folds"])
def test_virtual_rows_run_folded_with_the_built_answer(monkeypatch, label, build, size, per_thread, why):
    topo = build()
    ref = _sim(topo, per_thread).run("all-reduce", "nvls-tree", size)  # built, folded
    sched, scale, _ = _sim(topo, per_thread).nccl_schedule("all-reduce", "nvls-tree", "simple", size)
    full = Engine(_sim(topo, per_thread).router, scale).run(sched)  # built, flow by flow
    n = len(ref.schedule.groups)
    if why == "folds":  # (from 64 systems on the NVLS tree folds, and its pieces stay virtual rows)
        monkeypatch.setattr(nvls, "FOLD_SYSTEMS", 2)
    else:
        monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", n - 2)
    got = _sim(topo, per_thread).run("all-reduce", "nvls-tree", size)
    assert nvls_virtual.block(got.schedule) is not None, label  # (it did go through virtual rows)
    launch = [g for g in got.schedule.groups._chunks[-1] if g.meta.get("phase") == "launch"] \
        if isinstance(got.schedule.groups._chunks[-1], list) else []
    assert bool(launch) == (per_thread > 1)
    assert len(got.schedule.groups) == n and got.as_dict()["transfer_groups"] == n
    assert got.time_s == ref.time_s
    for name in ("group_start", "group_sent", "group_done"):
        np.testing.assert_array_equal(np.asarray(getattr(got.sim, name)), getattr(ref.sim, name), err_msg=name)
    np.testing.assert_array_equal(got.sim.channel_bytes, ref.sim.channel_bytes)
    assert got.sim.events == ref.sim.events
    a, b = got.as_dict(), ref.as_dict()
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b
    _assert_same(got.sim, full, n)
    for g in (n - 2, n // 2, 7):  # a group's transfers, as the report reads them
        assert [(x["src"], x["dst"], x["end_s"]) for x in got.sim.transfers(g)] == \
            [(x["src"], x["dst"], x["end_s"]) for x in ref.sim.transfers(g)]


def test_what_does_not_fold_is_built_under_the_limit_and_refused_past_it(monkeypatch):
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    ref = _sim(topo).run("all-reduce", "nvls-tree", 64 * MiB)  # built, folded
    n = len(ref.schedule.groups)
    monkeypatch.setattr(nvls, "FOLD_SYSTEMS", 2)
    # a fold the first pieces cannot stand for: the rows are built, and the run is the one built
    monkeypatch.setattr(nvls_virtual, "shorter", lambda *args: None)
    got = _sim(topo).run("all-reduce", "nvls-tree", 64 * MiB)
    assert nvls_virtual.block(got.schedule) is None and len(got.schedule.groups) == n
    a, b = got.as_dict(), ref.as_dict()
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b
    np.testing.assert_array_equal(got.sim.group_done, ref.sim.group_done)
    # past the limit, refused with the reason
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", n - 2)
    with pytest.raises(limits.TooLarge, match=f"takes {n:,} flow groups to simulate, more than the limit of {n - 2:,}; "
                                              "only a folded run of its alike systems and trees fits, and its "
                                              "groups after the pieces wait for them"):
        _sim(topo).run("all-reduce", "nvls-tree", 64 * MiB)
    # a run that does not fold at all (here: one the simulator runs flow by flow) reads its virtual
    # rows' columns, which the limit refuses as it refused them built
    monkeypatch.undo()
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", n - 2)
    monkeypatch.setattr(nvls, "FOLD_PIECES", 0)
    with pytest.raises(limits.TooLarge, match=f"{n:,} or more flow groups"):
        _sim(topo).run("all-reduce", "nvls-tree", 64 * MiB)


def test_the_folded_run_is_held_to_the_flows_it_re_times(monkeypatch):
    """Issue 17's regression: over 512 DGX H100 the folded NVLS tree re-times about 1,050 flows an event,
    each for 36 alike ones or more, and its state repeats only after about 8,000 events (with the NVLS
    efficiency on the NVLink SHARP channels alone, the NICs at their whole figure, its transient decays
    geometrically and a skip needs the state to the last bit). Counted as the flows they stand for,
    the budget refused it from 512 MiB up, though it ends in 3.3 s. Here a budget the flow-by-flow run
    exceeds lets the folded run through with the flow-by-flow answer."""
    topo = build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2)
    sched, scale, _ = _sim(topo).nccl_schedule("all-reduce", "nvls-tree", "simple", 96 * MiB)
    full = Engine(_sim(topo).router, scale).run(sched)  # built, flow by flow
    monkeypatch.setattr(nvls, "FOLD_SYSTEMS", 2)
    monkeypatch.setattr(limits, "MAX_FLOW_EVENTS", full.flow_events // 2)
    with pytest.raises(limits.TooLarge, match="the engine's budget"):
        Engine(_sim(topo).router, scale).run(sched)
    got = _sim(topo).run("all-reduce", "nvls-tree", 96 * MiB)
    assert nvls_virtual.block(got.schedule) is not None  # (it went through virtual rows and the fold)
    assert got.sim.flow_events < full.flow_events // 2
    assert got.time_s == full.time_s
    _assert_same(got.sim, full, len(sched.groups))
