"""Issue 17: a run's result is shown with work per class of groups, not per group (ui/replay_facts.py):
the structures, legend colours, each group's colour and pattern, and the replay's frames are those of
reading every group one by one, as the window did before (the oracle below is that reading)."""

import numpy as np
import pytest
from PySide6.QtCore import Qt

from dgxstudio.sim import limits
from dgxstudio.sim.schedule import Group, Lanes, Pattern, Schedule
from dgxstudio.ui.replay_facts import ReplayFacts, Timeline, series_key
from dgxstudio.ui.replay_structure import structures
from dgxstudio.ui.style import RING_COLORS

from ..sim.test_nvls_virtual import _nvls_tree
from .test_simulation_gui import configure


def _per_group(groups):
    """Each group's (pattern, colour index, device) and the structures, read group by group: the
    window's reading before issue 17 (kept here as the oracle)."""
    labels, rows = {}, []
    found, seen, done = {}, {}, set()
    for g in groups:
        meta, pattern = g.meta, g.pattern
        if pattern is None:
            rows.append((None, 0, meta.get("device")))
            continue
        key = series_key(meta)
        rows.append((pattern, labels.setdefault(key, len(labels)), meta.get("device")))
        kind = "tree" if "tree" in meta else "ring" if "ring" in meta else "fan"
        s = found.setdefault(key, {"kind": kind, "hubs": []})
        edges = seen.setdefault(key, {})
        if "switch" in meta and meta["switch"] not in s["hubs"]:
            s["hubs"].append(meta["switch"])
        flip = kind == "tree" and meta.get("phase", "up") != "up"
        if (id(pattern), flip, key) in done:
            continue
        done.add((id(pattern), flip, key))
        for a, b in pattern.pairs:
            if kind == "fan" and len(edges) >= 4096:
                break
            edges.setdefault((b, a) if flip else (a, b), None)
    return rows, labels, [(key, s["kind"], s["hubs"], list(seen[key])) for key, s in found.items()]


def _assert_facts_read_per_group(facts: ReplayFacts, groups):
    rows, labels, structs = _per_group(groups)
    assert len(facts.klass) == len(rows)
    klass = facts.klass.tolist()
    for g, (k, (pattern, color, device)) in enumerate(zip(klass, rows)):
        assert facts.patterns[k] is pattern, g
        assert (facts.class_color[k] if pattern is not None else 0) == color, g
        assert facts.metas[k].get("device") == device, g
    assert facts.labels == labels
    return structs


def _shape(structs):
    return [(s.label if s.label != "transfers" else "", s.kind, s.hubs, s.edges) for s in structs]


def test_virtual_rows_read_per_class_as_group_by_group(monkeypatch):
    built = _nvls_tree()
    monkeypatch.setattr(limits, "MAX_SCHEDULED_GROUPS", len(built.groups) - 2)  # (its later pieces virtual)
    sched = _nvls_tree(virtual=True)
    monkeypatch.undo()
    assert sched.groups.unbuilt > len(sched.groups) / 2
    facts = ReplayFacts(sched.groups)
    assert len(facts.patterns) < len(sched.groups) / 20   # classes, not groups
    expected = _assert_facts_read_per_group(facts, sched.groups)

    class Run:
        groups = sched.groups
    assert _shape(structures(Run, facts=facts)) == expected == _shape(structures(Run))


def test_groups_that_share_a_pattern_keep_their_own_keys_switches_and_devices():
    """Rows of one pattern in different rings (a Lanes' column), switches or devices: each its own class."""
    a, b = Pattern([("g0", "g1"), ("g1", "g2")]), Pattern([("g2", "g0")])
    sched = Schedule()
    sched.add(Group("task", duration_s=1e-6, meta={"device": "g0", "kind": "F"}))
    sched.add(Group("red0", a, 1.0, meta={"phase": "nvls-reduce", "switch": "sw0", "piece": 0}))
    sched.add(Group("red1", a, 1.0, meta={"phase": "nvls-reduce", "switch": "sw1", "piece": 0}))
    sched.add(Group("task", duration_s=1e-6, meta={"device": "g2", "kind": "B"}))
    n = 6
    sched.add_lanes(Lanes(n, lambda r: f"step {r}", [a, b], np.array([0, 1, 0, 0, 1, 0]), 1.0,
                          np.full((n, 1), -1), np.full((n, 1), -1),
                          meta={"ring": np.array([3, 3, 1, 2, 1, 3]), "step": np.arange(n)}))
    sched.add_lanes(Lanes(2, lambda r: f"tree {r}", [b], 0, 1.0, np.full((2, 1), -1), np.full((2, 1), -1),
                          meta=lambda r: {"tree": "tree 0", "phase": ("up", "down")[r]}))
    facts = ReplayFacts(sched.groups)
    expected = _assert_facts_read_per_group(facts, sched.groups)
    assert [k for k, *_ in expected] == ["nvls-reduce", "3", "1", "2", "tree 0"]
    assert expected[0][2] == ["sw0", "sw1"]

    class Run:
        groups = sched.groups
    assert _shape(structures(Run, facts=facts)) == expected


@pytest.mark.parametrize("preset, algorithm", [("dgx-h100", "ring"), ("dgx-h100", "tree"), ("dgx-h100", "nvls"),
                                               ("dgx1-v100", "ring")])
def test_a_run_from_the_dock_shows_what_reading_every_group_shows(make_window, qtbot, preset, algorithm):
    w = make_window(preset)
    w.sim_panel.show_rings.setChecked(True)
    p = configure(w, algorithm=algorithm, size="64MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    result = blocker.args[1]
    qtbot.waitUntil(lambda: w.replayer.sim is result.sim, timeout=10000)
    assert not hasattr(result, "replay_facts")   # the worker's reading went to the replay, not the session
    r = w.replayer
    expected = _assert_facts_read_per_group(r.facts, result.sim.groups)
    assert _shape(w._structs) == expected
    # the legend's colours are the replay's, in the order the keys first appear
    assert [r.color_for(s.label).name() for s in w._structs] == \
        [r.color_for(key).name() for key, *_ in expected]
    # a frame colours each chunk by its group's key: those in flight now, from the per-group reading
    rows = _per_group(result.sim.groups)[0]
    r.set_time(r.duration * 0.4)
    live = np.flatnonzero((result.sim.group_start <= r.t) & (result.sim.group_sent > r.t)).tolist()
    assert live and r._dots_shown > 0
    shown = {r._dots[i].brush().color().name() for i in range(r._dots_shown)}
    assert shown <= {RING_COLORS[rows[g][1] % len(RING_COLORS)].name() for g in live if rows[g][0] is not None}


def test_the_groups_in_flight_are_those_every_groups_times_show():
    """Timeline.live (groups found by their start) against comparing every group's times, with long
    groups (a launch, a whole-run task), groups of no length and moments on their edges."""
    rng = np.random.default_rng(7)
    n = 5000
    start = np.round(rng.uniform(0, 1.0, n), 3)
    sent = start + np.where(rng.random(n) < 0.05, rng.uniform(0, 0.8, n), rng.uniform(0, 0.003, n))
    done = sent + np.where(rng.random(n) < 0.1, 0.0, rng.uniform(0, 0.002, n))

    class Run:
        group_start, group_sent, group_done, time_s = start, sent, done, float(done.max())
    times = Timeline(Run)
    assert 0 < len(times.long) < n / 10
    for t in [0.0, *rng.uniform(0, Run.time_s, 200), *start[:50], *sent[:50], *done[:50], Run.time_s]:
        sending = (start <= t) & (sent > t)
        live = np.flatnonzero(sending | ((sent <= t) & (done > t)))
        got, got_sending = times.live(t)
        np.testing.assert_array_equal(got, live)
        np.testing.assert_array_equal(got_sending, sending[live])
