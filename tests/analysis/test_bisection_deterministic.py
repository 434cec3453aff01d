"""The bisection is the same answer on every run (issue #16): the same topology gives the same bytes
under any PYTHONHASHSEED (networkx's max-flow used to add floats in set order, so the DGX H100 and
DGX-1 fat-tree figures moved in their last digit and the halves changed) and under any load (the
refinement used to stop on a 2 s wall clock; it now stops on a count of max-flow work)."""

import json
import os
import subprocess
import sys
import time

import pytest

from dgxstudio.analysis import bisection as B
from dgxstudio.cli import main
from dgxstudio.model import fileio
from dgxstudio.model.fabrics import build_fat_tree

_PROBE = """
import json, sys
from dgxstudio.analysis.bisection import bisection_bandwidth
from dgxstudio.model.presets import load_preset
out = {}
for name in sys.argv[1:]:
    topo = load_preset(name)
    b = bisection_bandwidth(topo, [d.id for d in topo.gpus()])
    out[name] = [b.bidir_Bps.hex(), b.half_a, b.half_b, b.method]
print(json.dumps(out))
"""


def test_the_same_topology_under_different_hash_seeds_gives_the_same_bisection():
    """dgx-h100 is enumerated (its halves changed with the seed); dgx1-fat-tree-124 takes the
    heuristic over EDR capacities, which are not whole numbers of bytes/s (its figure changed)."""
    outs = []
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run([sys.executable, "-c", _PROBE, "dgx-h100", "dgx1-fat-tree-124"], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout))
    assert outs[0] == outs[1] == outs[2]
    assert float.fromhex(outs[0]["dgx1-fat-tree-124"][0]) == 6012121212121.213


class _SlowClock:
    """Every reading of the clock is 100 s after the one before: a machine so busy that any time
    budget is spent before the first cut."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 100.0
        return self.now


def _slow_clock(monkeypatch):
    for name in ("perf_counter", "monotonic", "process_time", "time"):
        monkeypatch.setattr(time, name, _SlowClock())


def _oversubscribed():
    """Two leaves of four systems, half their bandwidth up: the best split keeps each leaf whole."""
    return build_fat_tree(8, "dgx-a100", per_leaf=4, oversubscription=2, nics_per_system=2)


def test_a_slow_clock_does_not_change_the_refinement(monkeypatch):
    topo = _oversubscribed()
    gpus = [d.id for d in topo.gpus()]
    edges = B._graph_edges(topo)
    # a first split one swap from the best: only the refinement finds the best
    monkeypatch.setattr(B, "_candidate_orders", lambda c, names: [[0, 1, 2, 4, 3, 5, 6, 7]])
    unrefined = B._heuristic(topo, edges, gpus, refine_work=0)
    steady = B._heuristic(topo, edges, gpus)
    _slow_clock(monkeypatch)
    busy = B._heuristic(topo, edges, gpus)
    assert (busy.bidir_Bps, busy.half_a, busy.half_b, busy.refinement) == \
        (steady.bidir_Bps, steady.half_a, steady.half_b, steady.refinement)
    assert steady.bidir_Bps == unrefined.bidir_Bps / 2 == 200e9
    assert not steady.refinement.ended_by_budget and steady.refinement.cuts > 0
    assert unrefined.refinement.ended_by_budget and unrefined.refinement.cuts == 0


def test_analyze_json_is_the_same_under_a_slow_clock(monkeypatch, capsys, tmp_path):
    path = tmp_path / "fat.dgxs"
    fileio.save(build_fat_tree(16), path)  # 16 DGX-1 V100 on EDR: the heuristic with a refinement
    assert main(["analyze", str(path), "--json"]) == 0
    steady = capsys.readouterr().out
    _slow_clock(monkeypatch)
    assert main(["analyze", str(path), "--json"]) == 0
    assert capsys.readouterr().out == steady
    refinement = json.loads(steady)["bisection"]["refinement"]
    assert refinement["cuts"] > 0 and refinement["work"] > 0
    assert refinement["work_budget"] == B.REFINE_WORK and refinement["ended_by_budget"] is False


def test_a_refinement_ended_by_its_budget_says_so(monkeypatch, capsys, tmp_path):
    path = tmp_path / "fat.dgxs"
    fileio.save(build_fat_tree(16), path)  # its refinement measures four cuts
    monkeypatch.setattr(B, "REFINE_WORK", 1)  # the first refinement cut spends it
    assert main(["analyze", str(path), "--json"]) == 0
    refinement = json.loads(capsys.readouterr().out)["bisection"]["refinement"]
    assert refinement["ended_by_budget"] is True and refinement["cuts"] == 1
    assert refinement["work"] >= refinement["work_budget"] == 1
    assert main(["analyze", str(path)]) == 0
    assert "its refinement stopped at its work budget" in capsys.readouterr().out
    monkeypatch.setattr(B, "REFINE_WORK", 10 ** 9)
    assert main(["analyze", str(path)]) == 0
    assert "work budget" not in capsys.readouterr().out


def test_an_enumerated_bisection_has_no_refinement(capsys):
    assert main(["analyze", "--preset", "dgx-h100", "--json"]) == 0
    bis = json.loads(capsys.readouterr().out)["bisection"]
    assert bis["method"] == "enumeration" and bis["refinement"] is None


@pytest.mark.parametrize("make", [_oversubscribed, lambda: build_fat_tree(12, "dgx-h100", rail_optimized=True)])
def test_the_budget_counts_the_same_work_on_every_run(make):
    topo = make()
    gpus = [d.id for d in topo.gpus()]
    edges = B._graph_edges(topo)
    runs = [B._heuristic(topo, edges, gpus).refinement for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].work > 0
