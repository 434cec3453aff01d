"""The sizes of a sweep, as nccl-tests steps them (the CLI's --sweep, the Simulation dock's range)."""

from __future__ import annotations

from .results import SimulationError


def sweep_sizes(lo: float, hi: float) -> list[int]:
    """Powers of two from lo to hi, as nccl-tests steps them."""
    if lo <= 0 or hi < lo:   # (the sizes as given: a reversed range is the usual slip)
        raise SimulationError(f"a sweep from {lo:,.0f} to {hi:,.0f} bytes: it needs 0 < low <= high")
    sizes, s = [], 1
    while s < lo:
        s *= 2
    while s <= hi:
        sizes.append(s)
        s *= 2
    if not sizes:
        raise SimulationError(f"no power of two between {lo:,.0f} and {hi:,.0f} bytes")
    return sizes
