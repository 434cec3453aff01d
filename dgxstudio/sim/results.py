"""What a collective run is asked (``SimOptions``) and what it gives back (``CollectiveResult``, and
its compact form kept for reports once the run leaves the screen), with nccl-tests' bus-bandwidth
factors. ``sim/run.py`` makes the runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import tuning as T
from .latency_bound import idle_share, is_latency_bound, is_link_bound, moving_time_s
from .schedule import Schedule, SimResult


class SimulationError(ValueError):
    """A run that cannot be made as asked; the message says why and names what is at fault."""

DEFAULT_CHUNK = 4 * 1024 * 1024


def busbw_factor(collective: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor (shared/reference/formats.md)."""
    if collective == "all-reduce":
        return 2 * (n - 1) / n
    if collective in ("all-gather", "reduce-scatter", "all-to-all"):
        return (n - 1) / n
    return 1.0


@dataclass
class SimOptions:
    chunk: float = DEFAULT_CHUNK
    achievable: bool = False
    spread: str = "even"
    reduce_s_per_byte: float = 0.0
    root: str | None = None
    server: str | None = None
    protocol: str = "auto"
    pxn: bool = False
    # GPUs one thread drives (nccl-tests -g N, ncclCommInitAll): their kernels launch in turn, so a
    # call pays N-1 more launches before the last GPU starts. 1: a process per GPU (mpirun, torchrun).
    gpus_per_thread: int = 1
    # NCCL_NVLS_ENABLE: False as =0, NCCL sets up no NVLink SHARP and auto chooses without nvls and
    # nvls-tree (sim/nccl_env.py)
    nvls_enable: bool = True


@dataclass
class CollectiveResult:
    collective: str
    algorithm: str
    requested_algorithm: str
    gpus: list[str]
    size_bytes: float
    time_s: float
    # The bound, or a function that computes it when first asked (a tree run on a large cluster
    # must not pay NCCL's ring planning unless someone reads the ring bound).
    bound: float | Callable[[], float]
    reason: str
    sim: SimResult
    schedule: Schedule
    candidates: dict[str, float] = field(default_factory=dict)
    options: SimOptions = field(default_factory=SimOptions)
    rings: list[list[str]] = field(default_factory=list)
    protocol: str | None = None
    channels: int | None = None
    rings_alone_Bps: float | None = None   # set by the Results dock's job (sim/ring_bound_note.py)
    model_estimates: dict[str, float] = field(default_factory=dict)

    @property
    def bound_busbw_Bps(self) -> float:
        if callable(self.bound):
            self.bound = float(self.bound())
        return self.bound

    @bound_busbw_Bps.setter
    def bound_busbw_Bps(self, value: float) -> None:
        self.bound = value

    @property
    def algbw_Bps(self) -> float:
        return self.size_bytes / self.time_s if self.time_s > 0 else 0.0

    @property
    def busbw_Bps(self) -> float:
        return self.algbw_Bps * busbw_factor(self.collective, len(self.gpus))

    @property
    def fraction_of_bound(self) -> float:
        return self.busbw_Bps / self.bound_busbw_Bps if self.bound_busbw_Bps > 0 else 0.0

    @property
    def chunk_used(self) -> bool:
        """Whether the run cut its data in ``options.chunk`` pieces: not NCCL's ring, tree, nvls-tree and
        collnet, which pipeline in NCCL's own slices (the GUI greys its Chunk box for them)."""
        from .run import cuts_in_chunks  # run imports this module

        return cuts_in_chunks(self.algorithm)

    def as_dict(self, bottlenecks: int = 10) -> dict:
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "protocol": T.PROTOCOL_LABELS.get(self.protocol, self.protocol) if self.protocol else None,
            "channels": self.channels,
            "requested_algorithm": self.requested_algorithm,
            "reason": self.reason,
            "gpus": len(self.gpus),
            "size_bytes": self.size_bytes,
            "chunk_bytes": self.options.chunk if self.chunk_used else None,  # None: the algorithm has its own
            "figures": "achievable" if self.options.achievable else "peak",
            "gpus_per_thread": self.options.gpus_per_thread,
            "time_s": self.time_s,
            "algbw_Bps": self.algbw_Bps,
            "busbw_Bps": self.busbw_Bps,
            "bound_busbw_Bps": self.bound_busbw_Bps,
            "fraction_of_bound": self.fraction_of_bound,
            "candidates_time_s": self.candidates,
            "nccl_model_time_s": self.model_estimates,
            "bottlenecks": self.sim.bottlenecks(bottlenecks),
            # (sim/latency_bound.py) latency took most of the run, or the busiest link carried bytes for at
            # least half of it: only then is bottlenecks[0] the run's bottleneck
            "latency_bound": is_latency_bound(self.sim),
            "link_bound": is_link_bound(self.sim),
            "idle_fraction": idle_share(self.sim),
            "transfer_groups": len(self.schedule.groups),
            "events": self.sim.events,
            "wall_s": self.sim.wall_s,
        }


@dataclass
class CompactSim:
    """What a finished run keeps for its report once it is no longer the one on screen: its time,
    its busiest links and its delivery curve (thinned), not every transfer, segment and route."""
    time_s: float
    top: list[dict]
    delivered: list[tuple[float, float]]
    events: int
    wall_s: float
    moving_s: float | None = None   # seconds with some byte moving (sim/latency_bound.py)

    def bottlenecks(self, top: int = 10) -> list[dict]:
        return self.top[:top]


@dataclass
class CompactSchedule:
    groups: range           # as many as the run had: ``len(schedule.groups)`` still counts them
    payload_bytes: float = 0.0
    description: str = ""


COMPACT_BOTTLENECKS = 10
COMPACT_POINTS = 256


def compact(result: CollectiveResult) -> CollectiveResult:
    """The same result for reports, tables and JSON (``as_dict`` gives the same figures), without
    the per-transfer record a replay needs; a compacted result stays compact."""
    import dataclasses

    sim = result.sim
    if isinstance(sim, CompactSim):
        return result
    pts = sim.delivered
    if len(pts) > COMPACT_POINTS:
        step = len(pts) / (COMPACT_POINTS - 1)
        pts = [pts[int(i * step)] for i in range(COMPACT_POINTS - 1)] + [pts[-1]]
    small = CompactSim(sim.time_s, sim.bottlenecks(COMPACT_BOTTLENECKS), list(pts), sim.events, sim.wall_s,
                       moving_time_s(sim))
    bound = result.bound if not callable(result.bound) else result.bound_busbw_Bps
    out = dataclasses.replace(result, sim=small, bound=bound,
                              schedule=CompactSchedule(range(len(result.schedule.groups)),
                                                       result.schedule.payload_bytes, result.schedule.description))
    names = {f.name for f in dataclasses.fields(result)}
    for key, value in vars(result).items():  # what was set on it besides its fields (the document it ran on)
        if key not in names:
            setattr(out, key, value)
    return out


def capacity_words(b: dict, run: CollectiveResult | None = None) -> str:
    """A bottleneck's capacity as a user reads it: what the run could use and, when a protocol's or a
    tree's efficiency scaled it (``SimResult.capacity_scale``), the link's own figure beside it,
    e.g. "44.1 of the link's 47.0 GB/s per direction usable by ring with LL128"."""
    use = b["capacity_per_direction_Bps"]
    link = b.get("link_capacity_per_direction_Bps", use)  # (results kept before the key existed)
    if abs(use - link) <= 1e-9 * link:
        return f"{use / 1e9:.1f} GB/s per direction"
    by = "the run"
    if run is not None and getattr(run, "protocol", None):
        by = f"{run.algorithm} with {T.PROTOCOL_LABELS.get(run.protocol, run.protocol)}"
    return f"{use / 1e9:.1f} of the link's {link / 1e9:.1f} GB/s per direction usable by {by}"
