"""CollNet's other rails' hops between a head and its leaf as parts, not routed (sim/unrouted_hops.py,
``Unrouted._exit``): each part is what ``Router.routes`` gives that pair (``ExitRoutes``' renamed
route), slot for slot, and the router keeps no route for them."""

import numpy as np

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tree_fold
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.tree_parts import TreeParts

from .test_collnet_fold import _collnet
from .test_unrouted_hops import _assert_same_parts, _end_names

MiB = 2**20


def test_other_rails_exit_hops_in_parts_equal_their_routes():
    # 12 rail-optimized DGX H100 systems, 4 per leaf: every rail's heads send to their leaf and back
    topo = build_fat_tree(12, "dgx-h100", rail_optimized=True, per_leaf=4)
    sim, sched, scale = _collnet(topo, 8 * MiB)
    fold = tree_fold.Fold.of(Engine(sim.router, scale), sched)
    assert fold is not None
    patterns = [p for pats in fold.role_patterns for p in pats]
    n_roles = len(fold.role_patterns[0])
    system = sim.router._system
    fast_eng = Engine(sim.router, scale)
    fast = TreeParts.of(fast_eng, patterns, n_roles)
    exits = {(a, b) for p in patterns[n_roles:] for a, b in p.pairs if (system.get(a) is None) != (system.get(b) is None)}
    assert len(exits) > 100 and not exits & set(sim.router._cache)  # taken as parts: no route kept
    slow_eng = Engine(sim.router, scale)
    slow = TreeParts.of(slow_eng, patterns)  # (every tree routed: now the router keeps them)
    assert exits <= set(sim.router._cache)
    per_tree = len(fast.rows) // len(fold.role_patterns)
    alone = (fast.rows[:, 0] >= fast.n_routes) & (fast.rows[:, 1:] == fast.n_routes).all(axis=1)
    by_number = _end_names(patterns)
    apart = np.array([(system.get(by_number[a]) is None) != (system.get(by_number[b]) is None)
                      for a, b in fast.ends.tolist()])
    assert not alone[:per_tree].any() and (alone & apart).sum() > 100
    assert len(fast_eng.route_ch) < len(slow_eng.route_ch)
    _assert_same_parts(fast, slow)
