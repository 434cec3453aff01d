"""The critical resource of a training iteration is the one its critical path waits on longest. On four
DGX H100 with experts (dp 2, tp 8, pp 2, ep 2) the expert all-to-all crosses InfiniBand for 77 ms of a
141 ms iteration, InfiniBand is 49% busy against NVLink's 11%, yet the run said "critical resource:
nvlink": the lecture's verdict, which weighs only the tensor all-reduces against the boundary sends
(about 21 ms), decided alone."""

import pytest

from dgxstudio.model.builders import build_fat_tree
from dgxstudio.sim.training import (LECTURE_PART, ModelSpec, boundary_crossings, critical_path_by_resource,
                                    train_iteration)
from dgxstudio.sim.training_words import critical_headline, critical_reason
from dgxstudio.units import format_time


@pytest.fixture(scope="module")
def moe_run():
    topo = build_fat_tree(4, "dgx-h100")
    return train_iteration(topo, [g.id for g in topo.gpus()], 2, 8, 2, ModelSpec(experts=8), ep=2)


def test_the_expert_all_to_all_over_the_network_is_critical(moe_run):
    r, d = moe_run, moe_run.details
    assert r.bottleneck["expert_parallel"] == "infiniband"
    assert r.breakdown_s["expert_parallel"] > r.breakdown_s["tensor_parallel"] + d["boundary_send_s"] * 16
    assert d["verdicts"]["rated"]["limit"] == "nvlink"   # the lecture's balance alone still says NVLink
    assert d["critical_resource"] == "infiniband" == next(iter(d["busy_fraction"]))
    waits = r.breakdown_s["expert_parallel"] + r.breakdown_s["data_parallel"]
    words = d["critical_resource_words"]
    assert words.startswith("infiniband bounds the most of the iteration's critical path: the expert all-to-all "
                            "and the exposed gradient all-reduce wait on it for " + format_time(waits))
    lecture = r.breakdown_s["tensor_parallel"] + 16 * d["boundary_send_s"]
    assert f"{LECTURE_PART} that the lecture's NVLink-to-network balance weighs take {format_time(lecture)} on nvlink" in words


def test_the_headline_names_the_critical_path_and_the_verdict_beside_it(moe_run):
    assert critical_headline(moe_run) == ("critical resource on the iteration's critical path: infiniband (the "
                                          "lecture's tensor-against-boundary verdict: nvlink on every basis)")
    assert critical_reason(moe_run).startswith("the expert all-to-all and the exposed gradient all-reduce wait on it")


def test_the_verdict_decides_when_its_traffic_is_the_larger_part():
    breakdown = {"tensor_parallel": 3.0, "expert_parallel": 1.0, "data_parallel": 1.0}
    necks = {"expert_parallel": "infiniband", "data_parallel": "infiniband"}
    path = critical_path_by_resource(breakdown, necks, "nvlink", 0.5)
    assert path == {"nvlink": {"s": 3.5, "parts": [LECTURE_PART]},
                    "infiniband": {"s": 2.0, "parts": ["the expert all-to-all", "the exposed gradient all-reduce"]}}
    # the same class as the verdict adds to it; a class of "none" (no run) is no resource
    path = critical_path_by_resource(breakdown, {"expert_parallel": "nvlink", "data_parallel": "none"}, "nvlink", 0.0)
    assert path == {"nvlink": {"s": 4.0, "parts": [LECTURE_PART, "the expert all-to-all"]}}


@pytest.mark.parametrize("schedule, pp, chunks, m, crossings", [
    ("1f1b", 2, 1, 8, 16), ("gpipe", 4, 1, 2, 12), ("interleaved", 2, 2, 4, 24), ("zb-v", 2, 2, 4, 16), ("1f1b", 1, 1, 8, 0),
])
def test_boundary_crossings_of_a_lane(schedule, pp, chunks, m, crossings):
    assert boundary_crossings(schedule, pp, chunks, m) == crossings


def test_the_verdicts_traffic_is_its_own_time_not_its_class_total():
    """When the expert all-to-all waits on the verdict's class too, the verdict's row in the path holds
    both; the words' figure for the tensor all-reduces and boundary sends is theirs alone (it said 4 ms,
    the row's total, for 3 ms of tensor and boundary traffic)."""
    from dgxstudio.sim.training import _critical_path_words

    breakdown = {"tensor_parallel": 2.5e-3, "expert_parallel": 1.0e-3, "data_parallel": 6.0e-3}
    necks = {"expert_parallel": "nvlink", "data_parallel": "infiniband"}
    path = critical_path_by_resource(breakdown, necks, "nvlink", 0.5e-3)
    assert path["nvlink"]["s"] == pytest.approx(4.0e-3)
    balance = {"limit": "nvlink", "required_ratio": 1.75, "offered_ratio": 2.0, "rated": {"limit": "nvlink"}}
    words = _critical_path_words("infiniband", path, balance, 20e-3, 3.0e-3)
    assert f"{LECTURE_PART} that the lecture's NVLink-to-network balance weighs take {format_time(3.0e-3)} on nvlink" in words
    assert format_time(4.0e-3) not in words
