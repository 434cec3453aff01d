"""tree_fold's first check (every tree a copy of tree 0, group for group) read from the schedule's
columns (sim/fold_alike.py): the same verdict and roles as the group-by-group check it replaced
(written out below as the reference), on the schedules that fold and on copies broken one way each."""

import copy

import numpy as np
import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim.run import SimOptions, Simulator  # (first: the modules import in its order)
from dgxstudio.sim import fold_alike, nvls

MiB = 2**20


def _reference(sched, trees, tree_of, pos):
    """The group-by-group check (tree_fold.Fold.of before fold_alike)."""
    roles, role_patterns = [], []
    first_tree = trees[0].tolist()
    groups = {g: sched.groups[g] for g in np.concatenate(trees).tolist()}
    for t, mem in enumerate(trees):
        mine, pats = {}, []
        for f, r in zip(mem.tolist(), first_tree):
            g, r = groups[f], groups[r]
            if (g.bytes_each != r.bytes_each or g.duration_s != r.duration_s or g.post_delay_s != r.post_delay_s
                    or (g.pattern is None) != (r.pattern is None)):
                return None
            for dg, dr in ((g.deps_done, r.deps_done), (g.deps_sent, r.deps_sent)):
                if len(dg) != len(dr):
                    return None
                for x, y in zip(dg, dr):
                    if tree_of[x] == t:
                        if tree_of[y] != 0 or pos[x] != pos[y]:
                            return None
                    elif tree_of[x] >= 0 or x != y:
                        return None
            if g.pattern is not None:
                role = mine.setdefault(id(g.pattern), len(mine))
                if role == len(pats):
                    pats.append(g.pattern)
                if t and roles[0].get(id(r.pattern)) != role:
                    return None
        roles.append(mine)
        role_patterns.append(pats)
    return role_patterns


def _trees(sched):
    trees = sched.meta["trees"]
    trees = [np.arange(*t) if isinstance(t, tuple) else np.asarray(t, dtype=np.int64) for t in trees]
    n = len(sched.groups)
    tree_of, pos = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    for t, mem in enumerate(trees):
        tree_of[mem] = t
        pos[mem] = np.arange(len(mem))
    return trees, tree_of, pos


def built(algorithm, build, size):
    """The simulator, the schedule of an all-reduce by ``algorithm`` (its trees listed) and its scale."""
    topo = build()
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", algorithm, "simple", size)
    if algorithm == "nvls-tree":
        sched.meta["trees"] = nvls.tree_units(sched)
    return sim, sched, scale


def _schedule(algorithm, build, size):
    return built(algorithm, build, size)[1]


def _same(sched):
    trees, tree_of, pos = _trees(sched)
    want = _reference(sched, trees, tree_of, pos)
    got = fold_alike.role_patterns(sched.columns(), trees, tree_of, pos)
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert [[id(p) for p in ps] for ps in got] == [[id(p) for p in ps] for ps in want]
    return want


SCHEDULES = [
    ("collnet", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2), 64 * MiB),
    ("collnet", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 1024 * MiB),  # with columns
    ("tree", lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True), 64 * MiB),
    ("tree", lambda: build_fat_tree(4, "dgx-a100"), 16 * MiB),
    ("nvls-tree", lambda: build_fat_tree(3, "dgx-h100", rail_optimized=True), 32 * MiB),
]


@pytest.mark.parametrize("algorithm, build, size", SCHEDULES)
def test_the_columns_give_the_group_by_group_verdict(algorithm, build, size):
    assert _same(_schedule(algorithm, build, size)) is not None  # (these fold)


def _replace(sched, g, **changes):
    broken = copy.deepcopy(sched)
    group = broken.groups[g]
    for k, v in changes.items():
        setattr(group, k, v)
    chunk, r = broken.groups._locate(g)
    chunk[r] = group
    return broken


@pytest.mark.parametrize("algorithm, build, size", SCHEDULES[:1] + SCHEDULES[2:3])
def test_a_tree_changed_one_way_is_refused_by_both(algorithm, build, size):
    sched = _schedule(algorithm, build, size)
    trees, tree_of, _ = _trees(sched)
    last = trees[-1].tolist()
    g = next(x for x in last if sched.groups[x].deps_done and sched.groups[x].pattern is not None)
    me = sched.groups[g]
    other = next(sched.groups[x].pattern for x in last
                 if sched.groups[x].pattern is not None and sched.groups[x].pattern is not me.pattern)
    dep = me.deps_done[0]
    broken = [
        dict(bytes_each=me.bytes_each * 2),
        dict(post_delay_s=me.post_delay_s + 1e-6),
        dict(duration_s=me.duration_s + 1e-6),
        dict(pattern=None),
        dict(pattern=other),  # another role
        dict(deps_done=me.deps_done + (dep,)),  # one more dependency
        dict(deps_done=(int(trees[0][0]),) + me.deps_done[1:]),  # on another tree
        dict(deps_sent=me.deps_sent + (int(trees[-1][0]),)),  # on its own tree, elsewhere
    ]
    assert tree_of[dep] in (-1, len(trees) - 1)
    for changes in broken:
        assert _same(_replace(sched, g, **changes)) is None, changes
