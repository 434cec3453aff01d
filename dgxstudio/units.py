"""Parsing and formatting of sizes, times, bandwidths and counts at the edges (CLI, UI, files).

Code inside the package works in SI units (bytes, seconds, bytes/s); these helpers convert the
text a user types and the text shown back.
"""

from __future__ import annotations

import math
import re

_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "p": 1000**5, "pb": 1000**5,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "pib": 1024**5,
}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0}
_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


def parse_size(text: str) -> int:
    """'256MiB' -> 268435456; '1e6' -> 1000000; '1.1KiB' -> 1126 (rounded). Raises ValueError with the
    reason, also for a fraction of a byte ('1.5', '1.5B'). The reason does not say "size": every caller
    puts the field's name in front ("--size: '-4' is out of range", "Size: '0.5' is not ...")."""
    m = re.fullmatch(r"([-+]?)" + _NUMBER + r"\s*([A-Za-z]*)", text.strip())
    if not m:
        raise ValueError(f"cannot read {text!r} (examples: 4096, 64KiB, 256MiB, 1GB)")
    unit = m.group(3).lower()
    if unit not in _SIZE_UNITS:
        raise ValueError(f"unknown unit {m.group(3)!r} in {text!r} (B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)")
    value = float(m.group(2)) * _SIZE_UNITS[unit]
    beyond = m.group(1) == "-" or not math.isfinite(value) or value > 2**50
    if not beyond and _SIZE_UNITS[unit] == 1 and not value.is_integer():
        # a bare number is bytes, and a fraction of a byte is no size ('1.5' ran 2 bytes; '0.5' was said to
        # be out of range when a unit was what it missed); with a unit (1.1KiB) the bytes are rounded
        raise ValueError(f"{text!r} is not a whole number of bytes"
                         + ("" if unit else " (a size without a unit is bytes)") + f"; did you mean {m.group(2)}KiB?")
    if beyond or value < 1:
        raise ValueError(f"{text!r} is out of range (1 B .. 1 PiB)")
    return int(round(value))


def parse_time(text: str) -> float:
    """'2ms' -> 0.002; a bare number is seconds."""
    # (the sign is read, as parse_size reads it, so that "-4ms" is told what is wrong with it)
    m = re.fullmatch(r"(-\s*)?" + _NUMBER + r"\s*([a-zµ]*)", text.strip())
    if not m or m.group(1):
        raise ValueError(f"cannot read time {text!r}" + (": a time cannot be negative" if m else "")
                         + " (examples: 2ms, 150us, 0.5s)")
    unit = m.group(3) or "s"
    if unit not in _TIME_UNITS:
        raise ValueError(f"unknown time unit {m.group(3)!r} in {text!r} (s, ms, us, ns)")
    return float(m.group(2)) * _TIME_UNITS[unit]


def format_size(n: float) -> str:
    for unit, factor in (("PiB", 1024**5), ("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= factor:
            v = n / factor
            return f"{v:.0f} {unit}" if v.is_integer() else f"{v:.2f} {unit}"
    return f"{n:.0f} B"


def format_time(t: float) -> str:
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    if t >= 1e-6:
        return f"{t * 1e6:.2f} us"
    return f"{t * 1e9:.1f} ns"


def counted(n: int, one: str, many: str | None = None, grouped: bool = False) -> str:
    """A count with its noun in the right number: "1 micro-batch", "8 micro-batches", "1 GPU", "2 GPUs"
    (``many``: the plural when it is not ``one`` + "s"; ``grouped``: thousands separated, "16,384 GPUs")."""
    number = f"{n:,}" if grouped else f"{n}"
    return f"{number} {one if n == 1 else many or one + 's'}"
