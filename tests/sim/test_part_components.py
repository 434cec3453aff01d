"""The engine's components made of the solver's parts (sim/part_components.py; issue #13's 992-GPU
tree): once the split pays, the run starts again with one component per part, channels that cannot
bind shared by the parts that cross them, and gives the joint solve's answer per group, flow and
channel (the loads of a shared channel added over its parts)."""

import numpy as np

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import engine as engine_mod, part_components, split_solve
from tests.sim.test_split_solve import _tree
from tests.sim.test_tree_fold import _assert_same

MiB = 2**20


def _spied(monkeypatch):
    made = []

    class Spy(part_components.PartShapes):
        def __init__(self, *a):
            super().__init__(*a)
            made.append(self)

    monkeypatch.setattr(engine_mod, "PartShapes", Spy)
    return made


def _shared_channels(shape) -> set[int]:
    seen, shared = set(), set()
    for chans in shape.comp_ch:
        mine = set(chans.tolist())
        shared |= seen & mine
        seen |= mine
    return shared


def test_the_parts_become_the_engines_components_with_the_joint_answer(monkeypatch):
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    made = _spied(monkeypatch)
    sched, router, new, never, _ = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    # the run was done again with the parts as components, some spine planes shared among them
    assert len(made) == 1
    shape = made[0]
    shared = _shared_channels(shape)
    assert shared and never[sorted(shared)].all()
    assert any("spine" in " ".join(router.channel_ends[c]) for c in shared)
    _, _, ref, _, _ = _tree(topo, 8 * MiB, monkeypatch, reference=True)
    assert len(made) == 1  # (no parts without channels that cannot bind)
    _assert_same(new, ref, len(sched.groups))
    # a shared channel is named once per network state, with every part's load on it
    for pid in range(len(new.rate_patterns)):
        chans = new.rate_patterns[pid].channels
        assert len(np.unique(chans)) == len(chans)


def test_without_the_restart_the_split_solve_gives_the_same_answer(monkeypatch):
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    made = _spied(monkeypatch)
    sched, _, new, _, _ = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    monkeypatch.setattr(split_solve, "RESTART_TRIAL", -1)  # never: the solver splits, as before
    _, _, old, _, split = _tree(topo, 8 * MiB, monkeypatch, reference=False)
    assert len(made) == 1 and split is not None and split.solves > 16
    _assert_same(new, old, len(sched.groups))


def test_local_indices_of_a_components_channels(monkeypatch):
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    made = _spied(monkeypatch)
    _tree(topo, 8 * MiB, monkeypatch, reference=False)
    shape = made[0]
    assert shape.n_comp >= 2
    for c in range(shape.n_comp):
        chans = np.sort(shape.comp_ch[c])
        local = shape.local(c, chans)
        np.testing.assert_array_equal(shape.comp_ch[c][local], chans)  # every channel
        some = chans[::3]
        np.testing.assert_array_equal(shape.comp_ch[c][shape.local(c, some)], some)  # a few of them


def test_the_run_again_keeps_the_first_attempts_table_unless_routes_were_added():
    from dgxstudio.sim.rates import RouteTable

    ch = [np.array([0, 1]), np.array([1, 2])]
    w = [np.array([1.0, 1.0]), np.array([1.0, 0.5])]
    first = RouteTable(ch, w)
    first.never_binds = np.array([False, True, False])
    table, never = part_components.table_again(first, ch, w)
    assert table is first and table.parts is None and never is first.never_binds
    more_ch, more_w = ch + [np.array([2])], w + [np.array([1.0])]
    table, never = part_components.table_again(first, more_ch, more_w)
    assert table is not first and len(table.lens) == 3 and table.never_binds is never
    assert table.ch.tolist() == [0, 1, 1, 2, 2]
    assert part_components.table_again(None, ch, w)[1] is None


def test_a_run_started_again_reports_progress_that_never_steps_back(monkeypatch):
    """The restart with parts must not send the window's bar and live plots back to the start."""
    from dgxstudio.sim.engine import Engine
    from dgxstudio.sim.run import SimOptions, Simulator
    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    made = _spied(monkeypatch)
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", 8 * MiB)
    monkeypatch.setattr(split_solve, "PART_ROUTES", 4)
    monkeypatch.setattr(split_solve, "WORTH", 0.0)
    seen = []
    Engine(sim.router, scale).run(sched, progress=seen.append, progress_interval_s=0.0)
    assert len(made) == 1                      # the run did start again with its parts
    times = [p.sim_time_s for p in seen]
    fractions = [p.fraction for p in seen]
    assert len(seen) > 2 and times == sorted(times) and fractions == sorted(fractions)
    assert fractions[-1] == 1.0


def test_local_indices_kept_per_array_are_each_components_own(monkeypatch):
    """``local`` keeps its answer per channel array a repaired solve hands out (one per set of classes
    in use): every answer, kept or not, is what the component's channels give, and one array asked
    for by two components gets each its own indices."""
    from dgxstudio.sim import repair_solve

    topo = build_fat_tree(8, "dgx1-v100", per_leaf=2)
    made = _spied(monkeypatch)
    monkeypatch.setattr(repair_solve, "MIN_ROUTES", 8)  # this small cluster's parts are small
    asked = []
    real = part_components.PartShapes.local

    def spy(self, c, channels):
        out = real(self, c, channels)
        asked.append((c, channels, out))
        return out

    monkeypatch.setattr(part_components.PartShapes, "local", spy)
    found = []
    uncached = part_components.PartShapes._local
    monkeypatch.setattr(part_components.PartShapes, "_local", lambda self, *a: found.append(1) or uncached(self, *a))
    _tree(topo, 8 * MiB, monkeypatch, reference=False)
    shape = made[-1]
    assert shape.repair.repaired > 50
    for c, channels, out in asked:
        np.testing.assert_array_equal(shape.comp_ch[c][out], channels)
    assert len(found) < len(asked) / 2  # most answers were kept ones
    # one array asked for by two components that list its channels at other places: each its own
    shape = part_components.PartShapes.__new__(part_components.PartShapes)
    shape.comp_ch = [np.array([5, 7, 9]), np.array([9, 5])]
    shape._sorted, shape._local_of = {}, {}
    both = np.array([5, 9])
    assert [shape.local(c, both).tolist() for c in (0, 1, 0, 1)] == [[0, 2], [1, 0], [0, 2], [1, 0]]
