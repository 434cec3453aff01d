"""NCCL's environment switches that decide which algorithms a run may take.

``NCCL_NVLS_ENABLE=0`` (``SimOptions.nvls_enable`` False, ``--no-nvls``): NCCL's ``ncclNvlsInit``
(src/transport/nvls.cc) returns with ``nvlsSupport = 0`` when the parameter is 0, no NVLS graph is
searched (src/init.cc: ``if (comm->nvlsSupport) ncclTopoCompute(nvlsGraph)``), and the cost model
then has neither NVLS nor NVLS_TREE to pick: NCCL chooses among its ring and tree on hardware that
could do NVLink SHARP. Operators set it (coreweave/nccl-tests commit a736384, 2025-04-14: "per NV ask,
we need to disable NVLS temporarily for our nccl-tests"), and a run made so is compared as made.
"""

from __future__ import annotations

NVLS_ALGORITHMS = ("nvls", "nvls-tree")


def offered(collective: str, nvls_enable: bool = True) -> tuple[str, ...]:
    """The algorithms NCCL's cost model weighs for ``collective`` by default: broadcast, reduce,
    all-gather and reduce-scatter run on rings only (tuning.cc); CollNet only with the SHARP plugin
    and NCCL_COLLNET_ENABLE=1, so never by default; NVLS and the NVLS tree unless disabled."""
    if collective != "all-reduce":
        return ("ring",)
    return tuple(a for a in ("ring", "tree", "nvls", "nvls-tree") if nvls_enable or a not in NVLS_ALGORITHMS)


def refusal(algorithm: str, nvls_enable: bool = True) -> str | None:
    """Why a run with these switches cannot take ``algorithm``, or None."""
    if not nvls_enable and algorithm in NVLS_ALGORITHMS:
        return f"{algorithm} is disabled (NCCL_NVLS_ENABLE=0: NCCL sets up no NVLink SHARP)"
    return None


def note(withheld: tuple[str, ...] = ()) -> str:
    """What auto's reason adds when the switches took away ``withheld``, algorithms the hardware
    could run (on a DGX A100, which has no NVLink SHARP, NCCL_NVLS_ENABLE=0 takes nothing away)."""
    return f"; {' and '.join(withheld)} left out (NCCL_NVLS_ENABLE=0)" if withheld else ""
