"""A result's bound is the best any algorithm allows (NVLS, trees and CollNet can pass the rings); when
NCCL's rings alone allow less, the CLI and the Results dock both say how much, so a ring at its own
ceiling does not read as half-used (61.6% of 575.4 GB/s on a DGX H100, where the rings allow 369.9)."""

from __future__ import annotations


def rings_alone_Bps(sim, result) -> float | None:
    """NCCL's rings' bus bandwidth bound when it is below the result's bound, else None; ``sim`` is
    the Simulator the result came from (its ring bound is cached: the result's bound was read from it)."""
    if result.collective == "all-to-all" or result.bound_busbw_Bps <= 0:
        return None
    rings = sim.plan_bound(for_ring=False)
    return rings if 0 < rings < result.bound_busbw_Bps * 0.99 else None


def rings_alone_words(rings_Bps: float | None) -> str:
    """' (any algorithm; NCCL's rings alone allow 369.90 GB/s)', or '' without a lower ring bound."""
    return f" (any algorithm; NCCL's rings alone allow {rings_Bps / 1e9:.2f} GB/s)" if rings_Bps else ""
