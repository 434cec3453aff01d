"""A run's setup in words, before the engine's first report: on 2,048 DGX H100 an NVLS tree spends
2-4 s routing, planning NCCL's channels, building its schedule and folding its alike systems, and a
bar fed by the engine alone sat at 0% through all of it.

A run that reports (``Simulator(progress=...)``, ``Simulator.run(progress=...)``) sends a ``Setup``
as each step begins, after checking the cancel flag (so Cancel stops a run between its steps as
well as inside them); the engine's own ``Progress`` reports follow, their fraction (the share of
the bytes delivered, which the live plots read) left as it is. ``of_run`` places either on the
run's one bar: the steps at fixed points of its first ``ENGINE_FROM``, the engine's share after.
The points are fixed, not timed: the steps' weights differ from one collective to another.

The steps are reported where they happen, deep in the core, without every function taking the
callback: ``reporting(progress)`` holds it for the block, as ``cancel.cancellable`` holds the flag.

The engine says when it begins (``EngineBegins``, once per block, before its first ``Progress``,
which comes only after its first 50 ms): so a refusal or a failure is known to come from setup or
from the engine by what was reported, not guessed from where the bar stood.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..cancel import check_cancelled

# Where each step begins on the run's bar; the engine's reports fill ENGINE_FROM..1. From the run a
# bar matters most for, an NVLS tree at 256 MiB over 2,048 DGX H100 (CPU seconds): routing 0.5,
# channels and bounds 0.8, schedule 0.5, fold 1.9, then 0.8 to the end (the engine's first report
# comes at 18% of its bytes). A small run's setup takes no time, and its bar jumps to ENGINE_FROM.
AT = {"routing": 0.0, "finding rings": 0.04, "planning channels": 0.07, "building the schedule": 0.18,
      "folding alike systems": 0.25}
ENGINE_FROM = 0.5


@dataclass
class Setup:
    """A setup step begins: ``step`` in words ("routing"), ``fraction`` where it stands on the run's bar."""
    fraction: float
    step: str


@dataclass
class EngineBegins:
    """The setup is over and the engine begins: on the run's bar at ``ENGINE_FROM`` (``fraction``, the
    engine's share, is 0)."""
    fraction: float = 0.0


class _Report:
    """A block's callback, and whether the engine's beginning was told (a run may start the engine
    more than once: told once)."""

    def __init__(self, progress) -> None:
        self.progress = progress
        self.engine_told = False


_report: ContextVar = ContextVar("dgxstudio_setup_report", default=None)


@contextmanager
def reporting(progress) -> Iterator[None]:
    """Setup steps in this block go to ``progress`` (None: to nobody; the cancel flag is still checked)."""
    token = _report.set(_Report(progress) if progress is not None else None)
    try:
        yield
    finally:
        _report.reset(token)


def step(words: str) -> None:
    """The setup step ``words`` (a key of ``AT``) begins: ``Cancelled`` if the flag is set, else a
    ``Setup`` to the run's progress callback, if it has one."""
    check_cancelled()
    report = _report.get()
    if report is not None:
        report.progress(Setup(AT[words], words))


def engine_begins() -> None:
    """The engine begins (``Engine.run``): in a block that reports, the first time, ``Cancelled`` if
    the flag is set (a cancel during the last step is not told as the engine beginning), else an
    ``EngineBegins`` to its progress callback."""
    report = _report.get()
    if report is not None and not report.engine_told:
        check_cancelled()
        report.engine_told = True
        report.progress(EngineBegins())


def of_run(p) -> float:
    """Where a run's report stands on its one bar, 0..1: a step's point, or the engine's fraction
    after the setup's share."""
    if isinstance(p, Setup):
        return p.fraction
    return ENGINE_FROM + (1.0 - ENGINE_FROM) * p.fraction
