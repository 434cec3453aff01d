"""One-route components moved all at once (sim/single_routes.py; issue #13's 992-GPU tree): the same
pattern ids, rates and network-state hash sums as the engine's component-by-component loop, and a
tree all-reduce whose chain hops are moved so gives the run's answer bit for bit."""

import numpy as np

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import single_routes
from dgxstudio.sim.engine import Engine
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.single_routes import SingleRoutes

MiB = 2**20
M64 = (1 << 64) - 1


class _Loop:
    """The engine's loop over changed components, for one-route ones: a component with n flows is in
    its class's pattern of n flows (made when first met), idle with none."""

    def __init__(self, comp_class, comp_mul, rng):
        self.cls, self.mul, self.rng = comp_class, comp_mul, rng
        self.pids: dict[tuple[int, int], int] = {}
        self.hash: list[tuple[int, int]] = []
        self.rate: list[float] = []

    def pattern(self, c: int, n: int) -> int:
        key = (int(self.cls[c]), n)
        if key not in self.pids:
            self.pids[key] = len(self.hash)
            self.hash.append((int(self.rng.integers(0, 2**62)), int(self.rng.integers(0, 2**62))))
            self.rate.append(float(self.rng.uniform(1, 10)) / n)
        return self.pids[key]

    def move(self, c: int, n: int, comp_pid, pid_of, route_rate, route, g_key) -> None:
        old = pid_of[c]
        new = -1 if n == 0 else self.pattern(c, n)
        if old == new:
            return
        m = self.mul[c]
        if old >= 0:
            g_key[0] -= self.hash[old][0] * m
            g_key[1] -= self.hash[old][1] * m
            g_key[2] -= 1
        if new >= 0:
            g_key[0] += self.hash[new][0] * m
            g_key[1] += self.hash[new][1] * m
            g_key[2] += 1
            route_rate[route[c]] = self.rate[new]
        comp_pid[c] = pid_of[c] = new


def test_settle_moves_components_as_the_engines_loop_does():
    rng = np.random.default_rng(7)
    n_comp = 400
    sizes = np.where(rng.random(n_comp) < 0.8, 1, rng.integers(2, 5, n_comp))  # most of one route
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    by_comp = rng.permutation(int(bounds[-1])).astype(np.int64)
    comp_class = rng.integers(0, 6, n_comp)
    comp_mul = [int(x) | 1 for x in rng.integers(0, 2**63 - 1, n_comp, dtype=np.int64)]
    route = np.full(n_comp, -1)
    route[sizes == 1] = by_comp[bounds[:-1][sizes == 1]]
    singles = SingleRoutes(bounds, by_comp, comp_class, comp_mul)
    ref = _Loop(comp_class, comp_mul, np.random.default_rng(1))
    # the engine's state under test (settle, then the loop for what it leaves) and the loop's alone
    comp_n = np.zeros(n_comp, dtype=np.int64)
    comp_pid = np.full(n_comp, -1, dtype=np.int64)
    pid_of = [-1] * n_comp
    rate = np.zeros(int(bounds[-1]))
    g_key = [0, 0, 0]
    ref_pid, ref_of, ref_rate, ref_key = comp_pid.copy(), [-1] * n_comp, rate.copy(), [0, 0, 0]
    moved = 0
    for _ in range(300):
        changed = np.unique(rng.choice(n_comp, rng.integers(1, 40)))
        changed = changed[sizes[changed] == 1]
        comp_n[changed] = np.where(rng.random(len(changed)) < 0.3, 0, rng.integers(1, 20, len(changed)))
        left = singles.settle(changed, comp_n, comp_pid, rate, g_key)
        moved += len(changed) - len(left)
        for c in left.tolist():  # as the engine does: its own loop, then what it learned
            pid_of[c] = int(comp_pid[c])
            ref.move(c, int(comp_n[c]), comp_pid, pid_of, rate, route, g_key)
            if pid_of[c] >= 0:
                singles.learn(c, int(comp_n[c]), pid_of[c], ref.hash[pid_of[c]], ref.rate[pid_of[c]])
        for c in changed.tolist():
            ref.move(c, int(comp_n[c]), ref_pid, ref_of, ref_rate, route, ref_key)
        np.testing.assert_array_equal(comp_pid, ref_pid)
        np.testing.assert_array_equal(rate, ref_rate)
        assert [g_key[0] & M64, g_key[1] & M64, g_key[2]] == [ref_key[0] & M64, ref_key[1] & M64, ref_key[2]]
    assert moved > 3000  # most moves were made all at once, not by the loop


def _tree_run(topo, size):
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, scale, _ = sim.nccl_schedule("all-reduce", "tree", "simple", size)
    return Engine(sim.router, scale).run(sched)


def test_a_dgx1_tree_with_its_chain_hops_moved_at_once_is_the_same_bit_for_bit(monkeypatch):
    topo = build_fat_tree(6, "dgx1-v100", per_leaf=2)
    settled = []
    real = SingleRoutes.settle

    def counted(self, changed, *a):
        left = real(self, changed, *a)
        settled.append(len(changed) - len(left))
        return left

    monkeypatch.setattr(SingleRoutes, "settle", counted)
    new = _tree_run(topo, 8 * MiB)
    assert sum(settled) > 1000
    monkeypatch.setattr(SingleRoutes, "settle", lambda self, changed, *a: changed)  # the engine's loop alone
    old = _tree_run(topo, 8 * MiB)
    assert new.time_s == old.time_s and new.events == old.events
    for name in ("group_start", "group_sent", "group_done", "channel_bytes"):
        np.testing.assert_array_equal(getattr(new, name), getattr(old, name), err_msg=name)
    assert list(new.segments) == list(old.segments)
    assert len(new.rate_patterns) == len(old.rate_patterns)
    for pid in range(0, len(old.rate_patterns), 7):
        a, b = new.rate_patterns[pid], old.rate_patterns[pid]
        np.testing.assert_array_equal(a.channels, b.channels)
        np.testing.assert_array_equal(a.load_Bps, b.load_Bps)
    assert list(new.delivered) == list(old.delivered)


def test_more_flows_than_tabled_are_left_to_the_engine():
    singles = SingleRoutes(np.array([0, 1, 2]), np.array([0, 1]), np.array([0, 0]), [3, 5])
    singles.learn(0, 1, 0, (11, 13), 2.0)
    comp_n = np.array([single_routes.MAX_FLOWS + 1, 1])
    comp_pid = np.full(2, -1)
    g_key = [0, 0, 0]
    left = singles.settle(np.array([0, 1]), comp_n, comp_pid, np.zeros(2), g_key)
    assert left.tolist() == [0] and comp_pid.tolist() == [-1, 0] and g_key == [11 * 5, 13 * 5, 1]


def test_settle_met_again_makes_the_same_writes_as_settling_afresh():
    """``settle`` remembers what it did for a set of changed components in one state (their flows
    and patterns before) until ``learn`` tables something: pieces starting and ending alike take
    those writes again, the same as settling afresh (a SingleRoutes that remembers nothing)."""
    rng = np.random.default_rng(11)
    n_comp = 60
    bounds = np.arange(n_comp + 1)
    by_comp = rng.permutation(n_comp).astype(np.int64)
    comp_class = rng.integers(0, 3, n_comp)
    comp_mul = [int(x) | 1 for x in rng.integers(0, 2**63 - 1, n_comp, dtype=np.int64)]
    remembers, afresh = SingleRoutes(bounds, by_comp, comp_class, comp_mul), SingleRoutes(bounds, by_comp, comp_class, comp_mul)
    afresh._remember = False
    for c in range(n_comp):  # every class's patterns of 1..3 flows tabled
        for n in (1, 2, 3):
            pid = int(comp_class[c]) * 3 + n - 1
            for s in (remembers, afresh):
                s.learn(c, n, pid, (pid * 7 + 1, pid * 11 + 3), 1.0 / (n + pid))
    sets = [np.sort(rng.choice(n_comp, 12, replace=False)) for _ in range(4)]
    states = []
    for s in (remembers, afresh):
        comp_n = np.zeros(n_comp, dtype=np.int64)
        comp_pid = np.full(n_comp, -1, dtype=np.int64)
        rate = np.zeros(n_comp)
        g_key = [0, 0, 0]
        for step in range(200):  # a pipeline: the same sets gain and lose a flow in turn
            changed = sets[step % 4]
            comp_n[changed] = (step // 4) % 3 + (step % 2)
            left = s.settle(changed, comp_n, comp_pid, rate, g_key)
            assert len(left) == 0
        states.append((comp_pid.copy(), rate.copy(), [g_key[0] & M64, g_key[1] & M64, g_key[2]]))
    np.testing.assert_array_equal(states[0][0], states[1][0])
    np.testing.assert_array_equal(states[0][1], states[1][1])
    assert states[0][2] == states[1][2]
    assert remembers._hits > 100 and afresh._hits == 0
