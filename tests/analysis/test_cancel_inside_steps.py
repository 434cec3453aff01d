"""Issue 16: a cancelled analysis stops inside its long steps, not only between them.

Each step's long loops (the bisection's graph building and max-flows, the latency searches, the
fabric and router tables, the ring plan) read the ambient cancel check (``dgxstudio.cancel``). Here the
check turns true after a few reads: the step must raise ``Cancelled`` from inside, and it must have
read the check more than once on the way (a check only at the start would not stop a long loop).
"""

import pytest

from dgxstudio.analysis.bandwidth import gpu_bandwidth
from dgxstudio.analysis.bisection import bisection_bandwidth
from dgxstudio.analysis.fabric import Fabric
from dgxstudio.analysis.paths import path_latencies, system_to_system_latency
from dgxstudio.analysis.rings import find_rings
from dgxstudio.analysis.routing import Router
from dgxstudio.analysis.summary import analyze
from dgxstudio.cancel import Cancelled, cancellable
from dgxstudio.model.fabrics import build_fat_tree


@pytest.fixture(scope="module")
def cluster():
    topo = build_fat_tree(48, "dgx-h100", rail_optimized=True)
    return topo, [d.id for d in topo.gpus()]


class CountingCheck:
    """Says "cancelled" from its ``after``-th read on, and counts the reads."""

    def __init__(self, after: int):
        self.after, self.reads = after, 0

    def __call__(self) -> bool:
        self.reads += 1
        return self.reads >= self.after


def _reads_without_cancel(step) -> int:
    check = CountingCheck(10**9)
    with cancellable(check):
        step()
    return check.reads


STEPS = {
    "bisection": lambda topo, gpus: bisection_bandwidth(topo, gpus),
    "system latency": lambda topo, gpus: system_to_system_latency(topo, fab=Fabric(topo)),
    "gpu latency": lambda topo, gpus: path_latencies(topo, gpus[0], [gpus[-1]], Fabric(topo)),
    "fabric": lambda topo, gpus: Fabric(topo),
    "router": lambda topo, gpus: Router(topo),
    "rings": lambda topo, gpus: find_rings(topo, gpus),
    "bandwidth": lambda topo, gpus: gpu_bandwidth(topo, gpus),
}

MIN_READS = {"bandwidth": 1}  # every 1,024 GPUs: once on this cluster


@pytest.mark.parametrize("name", sorted(STEPS))
def test_each_long_step_reads_the_cancel_check_as_it_goes(name, cluster):
    topo, gpus = cluster
    step = STEPS[name]
    reads = _reads_without_cancel(lambda: step(topo, gpus))
    assert reads >= MIN_READS.get(name, 2), f"{name}: the cancel check is read {reads} time(s)"
    # Cancelled at its last read: the step stops there, from inside, instead of finishing.
    check = CountingCheck(reads)
    with cancellable(check), pytest.raises(Cancelled):
        step(topo, gpus)
    assert check.reads == reads


def test_a_cancelled_analysis_raises_cancelled_and_leaves_the_collector_as_it_was(cluster):
    import gc

    from dgxstudio.heap import wait_released

    topo, gpus = cluster
    reads = _reads_without_cancel(lambda: analyze(topo, gpus))
    enabled = gc.isenabled()
    for at in (2, reads // 2, reads - 1):
        check = CountingCheck(at)
        with cancellable(check), pytest.raises(Cancelled):
            analyze(topo, gpus)
        assert check.reads == at
        assert wait_released(30)  # what it built is let go of on another thread, the collector paused meanwhile
        assert gc.isenabled() == enabled
