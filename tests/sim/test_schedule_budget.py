"""A schedule that would take more flow groups than memory allows is refused with a message naming
it, even where the estimate from chunks and steps let it through (an algorithm's own multiples)."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import limits
from dgxstudio.sim.run import simulate


def test_a_schedule_over_the_group_budget_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", 5000)
    topo = build_fat_tree(2, "dgx-h100")
    with pytest.raises(ValueError, match=r"NVLS tree all-reduce .* flow groups to simulate, more than the limit of 5,000.*--chunk"):
        simulate(topo, "all-reduce", "nvls-tree", 2**33)
    # within the budget the same run goes ahead
    assert simulate(topo, "all-reduce", "nvls-tree", 2**24).time_s > 0


@pytest.mark.parametrize("limit, value, system, algorithm, size, said", [
    ("MAX_SCHEDULED_GROUPS", 5000, "dgx-h100", "nvls-tree", "8GiB", "flow groups"),  # refused before it starts
    ("MAX_FLOW_EVENTS", 1000, "dgx-a100", "tree", "64MiB", "budget"),              # stopped as it runs
])
def test_the_cli_says_why_and_exits_2(monkeypatch, capsys, tmp_path, limit, value, system, algorithm, size, said):
    from dgxstudio.cli import main
    from dgxstudio.model import fileio

    monkeypatch.setattr(limits, limit, value)
    path = tmp_path / "two.dgxs"
    fileio.save(build_fat_tree(2, system), str(path))
    assert main(["simulate", str(path), "--algorithm", algorithm, "--size", size]) == 2
    assert said in capsys.readouterr().err


def test_a_run_over_the_work_budget_is_stopped_with_the_numbers(monkeypatch):
    # A tree's few pieces per connection never settle into a repeating state, so every event re-times
    # its active flows; past the engine's budget the run stops and says what it was doing.
    topo = build_fat_tree(2, "dgx-a100")
    within = simulate(topo, "all-reduce", "tree", 2**22)
    assert within.sim.flow_events > 0
    monkeypatch.setattr(limits, "MAX_FLOW_EVENTS", within.sim.flow_events // 2)
    with pytest.raises(limits.TooLarge, match=r"tree.* stopped after [\d,]+ events .* flows at a time .* "
                                              r"budget .* ring"):
        simulate(topo, "all-reduce", "tree", 2**22)
    # a ring's steady state is skipped, so a far larger ring re-times hardly more flows (the tree's
    # alike trees fold, so its count is no yardstick: the budget counts the flows a run re-times)
    monkeypatch.undo()
    ring = [simulate(topo, "all-reduce", "ring", size).sim.flow_events for size in (2**22, 2**30)]
    assert ring[1] < 2 * ring[0]


def test_a_run_keeping_too_many_network_states_is_stopped(monkeypatch):
    topo = build_fat_tree(2, "dgx-a100")
    within = simulate(topo, "all-reduce", "tree", 2**22)
    assert within.sim.state_bytes > 0
    monkeypatch.setattr(limits, "MAX_STATE_BYTES", within.sim.state_bytes // 2)
    with pytest.raises(limits.TooLarge, match=r"keeps more than .* GB of network states"):
        simulate(topo, "all-reduce", "tree", 2**22)
