"""Simulate a collective on a topology: choose the algorithm, build its schedule, run the engine,
and report time, algorithm and bus bandwidth (nccl-tests' factors) against the topology's bound.

Algorithms:
- ``ring``: one ring driven in one direction (the textbook algorithm);
- ``multi-ring``: every ring the analysis finds, each driven in both directions, data split evenly
  (what NCCL's ring algorithm does with its channels);
- ``tree``: NCCL's double binary tree, pipelined;
- ``parameter-server``: one device (GPU or CPU) reduces and redistributes;
- ``decentralized``: the lecture's one-by-one scheme;
- ``hierarchical``: reduce inside each system, ring across systems, broadcast inside;
- ``direct``: all-to-all, every pair at once;
- ``auto``: simulate the candidates and keep the fastest, saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import limits
from ..analysis.bisection import bisection_bandwidth
from ..analysis.rings import find_rings, system_rings
from ..model.topology import Topology
from ..model.validation import ERROR, validate
from . import collectives as C
from ..cancel import cancellable, check_cancelled
from .engine import Engine, Progress, Schedule, SimResult
from .routing import Router, RoutingError

ALGORITHMS = ("auto", "ring", "multi-ring", "tree", "parameter-server", "decentralized", "hierarchical", "direct")
SUPPORTED = {
    "all-reduce": ("ring", "multi-ring", "tree", "parameter-server", "decentralized", "hierarchical"),
    "all-gather": ("ring", "multi-ring"),
    "reduce-scatter": ("ring", "multi-ring"),
    "broadcast": ("ring", "multi-ring", "tree"),
    "reduce": ("ring", "multi-ring", "tree"),
    "all-to-all": ("direct",),
}
AUTO_CANDIDATES = {
    "all-reduce": ("multi-ring", "tree", "hierarchical"),
    "all-gather": ("multi-ring",),
    "reduce-scatter": ("multi-ring",),
    "broadcast": ("multi-ring", "tree"),
    "reduce": ("multi-ring", "tree"),
    "all-to-all": ("direct",),
}
DEFAULT_CHUNK = 4 * 1024 * 1024


class SimulationError(ValueError):
    """A run that cannot be made as asked; the message says why and names what is at fault."""


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


@dataclass
class CollectiveResult:
    collective: str
    algorithm: str
    requested_algorithm: str
    gpus: list[str]
    size_bytes: float
    time_s: float
    bound_busbw_Bps: float
    reason: str
    sim: SimResult
    schedule: Schedule
    candidates: dict[str, float] = field(default_factory=dict)
    options: SimOptions = field(default_factory=SimOptions)
    rings: list[list[str]] = field(default_factory=list)

    @property
    def algbw_Bps(self) -> float:
        return self.size_bytes / self.time_s if self.time_s > 0 else 0.0

    @property
    def busbw_Bps(self) -> float:
        return self.algbw_Bps * busbw_factor(self.collective, len(self.gpus))

    @property
    def fraction_of_bound(self) -> float:
        return self.busbw_Bps / self.bound_busbw_Bps if self.bound_busbw_Bps > 0 else 0.0

    def as_dict(self, bottlenecks: int = 10) -> dict:
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "requested_algorithm": self.requested_algorithm,
            "reason": self.reason,
            "gpus": len(self.gpus),
            "size_bytes": self.size_bytes,
            "chunk_bytes": self.options.chunk,
            "figures": "achievable" if self.options.achievable else "peak",
            "time_s": self.time_s,
            "algbw_Bps": self.algbw_Bps,
            "busbw_Bps": self.busbw_Bps,
            "bound_busbw_Bps": self.bound_busbw_Bps,
            "fraction_of_bound": self.fraction_of_bound,
            "candidates_time_s": self.candidates,
            "bottlenecks": self.sim.bottlenecks(bottlenecks),
            "transfer_groups": len(self.schedule.groups),
            "events": self.sim.events,
            "wall_s": self.sim.wall_s,
        }


class Simulator:
    """Holds what is costly to derive (routes, rings, bounds) for repeated runs on one topology."""

    def __init__(self, topo: Topology, gpus: list[str], options: SimOptions | None = None,
                 router: Router | None = None):
        self.topo = topo
        self.gpus = list(gpus)
        self.options = options or SimOptions()
        if len(self.gpus) < 2:
            raise SimulationError("a collective needs at least 2 GPUs")
        errors = [f for f in validate(topo) if f.severity == ERROR]
        if errors:
            listed = "; ".join(f.message for f in errors[:3])
            more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
            raise SimulationError(f"the topology has errors; fix them first: {listed}{more}")
        for g in self.gpus:
            if g not in topo.devices or topo.devices[g].kind != "gpu":
                raise SimulationError(f"{g!r} is not a GPU of this topology")
        if self.options.chunk <= 0:
            raise SimulationError("the chunk size must be positive")
        if router is not None and (router.topo is not topo or router.spread != self.options.spread):
            raise ValueError("a shared router must belong to the same topology and spreading")
        self.router = router or Router(topo, self.options.achievable, self.options.spread)
        self._rings = None
        self._bounds: dict[str, float] = {}

    # ---- what the topology allows --------------------------------------------------------------
    def rings(self):
        if self._rings is None:
            self._rings = find_rings(self.topo, self.gpus, achievable=self.options.achievable)
            if not self._rings.rings:
                self._raise_disconnected()
        return self._rings

    def _raise_disconnected(self) -> None:
        base = self.gpus[0]
        for g in self.gpus[1:]:
            try:
                self.router.routes(base, g)
            except RoutingError as exc:
                raise SimulationError(str(exc)) from None
        raise SimulationError("no ring can be formed through these GPUs")

    def bound_busbw(self, collective: str) -> float:
        """The bus bandwidth the topology allows: ring rates for ring-shaped collectives, bisection
        and injection bandwidth for all-to-all."""
        if collective in self._bounds:
            return self._bounds[collective]
        if collective == "all-to-all":
            p = len(self.gpus)
            bis = bisection_bandwidth(self.topo, self.gpus).bidir_Bps
            inject = min(sum(self.router.capacity[self.router.channel_index[(g, v)]] for v in self.router.fabric.adj[g])
                         for g in self.gpus)
            # time >= S(p-1)/p / inject and >= p S / (2 bisection)
            algbw = min(inject * p / (p - 1), 2 * bis / p) if p > 1 else 0.0
            value = algbw * busbw_factor(collective, p)
        else:
            value = self.rings().allreduce_busbw_bound_Bps
        self._bounds[collective] = value
        return value

    # ---- schedules ------------------------------------------------------------------------------
    def _ring_specs(self) -> list[C.RingSpec]:
        specs = []
        for r in self.rings().rings:
            through_gpu = any(any(self.topo.devices[d].kind == "gpu" for d in h[1:-1]) for h in r.hops)
            specs.append(C.RingSpec(r.gpus, r.hops if through_gpu else None))
        return specs

    def schedule(self, collective: str, algorithm: str, size: float) -> Schedule:
        o = self.options
        red = o.reduce_s_per_byte
        root = o.root or self.gpus[0]
        if root not in self.gpus:
            raise SimulationError(f"root {root!r} is not one of the GPUs")
        if algorithm in ("ring", "multi-ring"):
            specs = self._ring_specs()
            if algorithm == "ring":
                specs = specs[:1]
            both = algorithm == "multi-ring"
            if collective in ("broadcast", "reduce"):
                return C.ring_rooted(collective, specs, root, size, o.chunk, both, red)
            return C.ring_collective(collective, specs, size, o.chunk, both, red)
        if algorithm == "tree":
            return C.tree_collective(collective, self._system_chains(), size, o.chunk, root, red)
        if algorithm == "parameter-server":
            server = o.server or self.gpus[0]
            if server not in self.topo.devices:
                raise SimulationError(f"no device {server!r} to act as parameter server")
            return C.parameter_server(self.gpus, server, size, o.chunk, red)
        if algorithm == "decentralized":
            return C.one_by_one(self.gpus, size, red)
        if algorithm == "hierarchical":
            return self._hierarchical(size)
        if algorithm == "direct":
            try:
                return C.all_to_all(self.gpus, size, o.chunk)
            except ValueError as exc:
                raise SimulationError(str(exc)) from None
        raise SimulationError(f"unknown algorithm {algorithm!r}")

    def _system_chains(self) -> list[list[str]]:
        """Each system's GPUs in the order of its first NVLink ring (document order without one)."""
        systems: dict[str, list[str]] = {}
        for g in self.gpus:
            systems.setdefault(self.topo.system_of(g) or g, []).append(g)
        local = system_rings(self.topo, systems) or {}
        chains = []
        for sid, members in systems.items():
            rings = local[sid].rings if sid in local else []
            chains.append(list(rings[0].gpus) if rings else members)
        return chains

    def _hierarchical(self, size: float) -> Schedule:
        chains = self._system_chains()
        return C.hierarchical(chains, [C.RingSpec(c) for c in chains], size, self.options.chunk,
                              self.options.reduce_s_per_byte)

    # ---- running ---------------------------------------------------------------------------------
    def run(self, collective: str, algorithm: str, size: float,
            progress: Callable[[Progress], None] | None = None, cancel=None) -> CollectiveResult:
        if collective not in SUPPORTED:
            raise SimulationError(f"unknown collective {collective!r} (one of {', '.join(SUPPORTED)})")
        if algorithm not in ALGORITHMS:
            raise SimulationError(f"unknown algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
        if not size > 0:
            raise SimulationError("the size must be positive")
        limits.collective(size, self.options.chunk, len(self.gpus), self.options.reduce_s_per_byte, SimulationError)
        if algorithm == "auto":
            return self._auto(collective, size, progress, cancel)
        if algorithm not in SUPPORTED[collective]:
            raise SimulationError(f"{algorithm} is not an algorithm for {collective} "
                                  f"(choose from {', '.join(SUPPORTED[collective])})")
        with cancellable(cancel):
            check_cancelled()
            if algorithm in ("ring", "multi-ring"):
                self.rings()
                check_cancelled()
            sched = self.schedule(collective, algorithm, size)
        try:
            sim = Engine(self.router).run(sched, progress, cancel)
        except RoutingError as exc:
            raise SimulationError(str(exc)) from None
        rings = [r.gpus for r in self.rings().rings] if algorithm in ("ring", "multi-ring") else []
        return CollectiveResult(collective, algorithm, algorithm, self.gpus, size, sim.time_s,
                                self.bound_busbw(collective), f"{algorithm} as requested", sim, sched,
                                options=self.options, rings=rings[:1] if algorithm == "ring" else rings)

    def _auto(self, collective: str, size: float, progress, cancel) -> CollectiveResult:
        candidates = list(AUTO_CANDIDATES[collective])
        multi_system = len({self.topo.system_of(g) for g in self.gpus}) > 1
        if "hierarchical" in candidates and not multi_system:
            candidates.remove("hierarchical")
        results = {}
        for i, alg in enumerate(candidates):
            def scaled(p: Progress, i=i) -> None:
                if progress is not None:
                    progress(Progress((i + p.fraction) / len(candidates), p.sim_time_s, p.utilization))
            try:
                results[alg] = self.run(collective, alg, size, scaled, cancel)
            except SimulationError:
                continue
        if not results:
            raise SimulationError(f"no algorithm for {collective} could run on these GPUs")
        best = min(results.values(), key=lambda r: r.time_s)
        times = {a: r.time_s for a, r in results.items()}
        others = ", ".join(f"{a} {t * 1e3:.3f} ms" for a, t in sorted(times.items(), key=lambda kv: kv[1]) if a != best.algorithm)
        best.requested_algorithm = "auto"
        best.candidates = times
        best.reason = (f"{best.algorithm} is fastest for {size:,.0f} bytes on {len(self.gpus)} GPUs: "
                       f"{best.time_s * 1e3:.3f} ms" + (f" (vs {others})" if others else ""))
        return best


def simulate(topo: Topology, collective: str, algorithm: str, size: float, gpus: list[str] | None = None,
             options: SimOptions | None = None, progress=None, cancel=None) -> CollectiveResult:
    gpus = gpus if gpus is not None else [d.id for d in topo.gpus()]
    return Simulator(topo, gpus, options).run(collective, algorithm, size, progress, cancel)


def sweep_sizes(lo: float, hi: float) -> list[int]:
    """Powers of two from lo to hi, as nccl-tests steps them."""
    if lo <= 0 or hi < lo:
        raise SimulationError("a sweep needs 0 < low <= high")
    sizes, s = [], 1
    while s < lo:
        s *= 2
    while s <= hi:
        sizes.append(s)
        s *= 2
    if not sizes:
        raise SimulationError(f"no power of two between {lo:,.0f} and {hi:,.0f} bytes")
    return sizes
