"""The lecture's NVLink-to-network verdict applies only where the pipeline boundary crosses the network."""

import pytest

from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.training import ModelSpec, train_iteration


@pytest.mark.parametrize("topo, dp, tp, pp", [
    (build_fat_tree(2, "dgx1-v100"), 2, 4, 2),   # each replica's two stages share a DGX-1
    (load_preset("dgx-a100"), 1, 4, 2),           # one system: no network at all on the boundary
])
def test_a_boundary_inside_a_system_gets_no_network_verdict(topo, dp, tp, pp):
    gpus = [d.id for d in topo.gpus()]
    d = train_iteration(topo, gpus, dp, tp, pp, ModelSpec(), microbatches=2).details
    words = d["critical_resource_words"]
    # Before: "NVLink is the limit: ... needs NVLink 1.50x as fast as the network, the hardware offers 3.87x".
    assert "NVLink is the limit" not in words and "does not apply" in words
    assert d["verdicts"] == {}
    assert d["critical_resource"] in ("compute", next(iter(d["busy_fraction"])))


def test_a_boundary_between_systems_keeps_the_lecture_verdict():
    topo = build_fat_tree(2, "hgx-a800")
    d = train_iteration(topo, [g.id for g in topo.gpus()], 1, 8, 2, ModelSpec(), microbatches=2).details
    assert d["critical_resource"] == "nvlink" and "NVLink is the limit" in d["critical_resource_words"]
    assert set(d["verdicts"]) >= {"rated", "achievable", "simulated"}


def test_every_limit_in_the_json_names_a_link_class():
    """nvlink_to_network.rated.limit read "network" where verdicts.rated.limit read "infiniband"."""
    topo = build_fat_tree(2, "dgx-a100")
    d = train_iteration(topo, [g.id for g in topo.gpus()], 1, 8, 2, ModelSpec(), microbatches=2).as_dict()
    limits = []

    def walk(x):
        if isinstance(x, dict):
            limits.extend(v for k, v in x.items() if k == "limit")
            for v in x.values():
                walk(v)
    walk(d["nvlink_to_network"])
    walk(d["verdicts"])
    assert limits and set(limits) <= {"nvlink", "infiniband"}
    assert d["nvlink_to_network"]["rated"]["limit"] == d["verdicts"]["rated"]["limit"] == "infiniband"


def test_a_run_that_mostly_computes_names_compute_as_critical():
    """Pure data parallelism on two DGX A100 computes 96% of the iteration; it read 'critical resource:
    infiniband - the infiniband links are the busiest (10% of the iteration)'."""
    topo = build_fat_tree(2, "dgx-a100")
    r = train_iteration(topo, [g.id for g in topo.gpus()], 16, 1, 1, ModelSpec(), microbatches=8)
    d = r.details
    assert r.breakdown_s["compute"] > 0.9 * r.iteration_s
    assert d["critical_resource"] == "compute"
    assert d["critical_resource_words"].startswith("compute is 96% of the iteration; the infiniband links")
    # a run the network dominates still names the network
    r = train_iteration(topo, [g.id for g in topo.gpus()], 1, 16, 1, ModelSpec(), microbatches=2)
    assert r.breakdown_s["compute"] < 0.5 * r.iteration_s and r.details["critical_resource"] == "infiniband"
