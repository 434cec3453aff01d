"""Simulate a collective on a topology: choose the algorithm, build its schedule, run the engine,
and report time, algorithm and bus bandwidth (nccl-tests' factors) against the topology's bound.

Algorithms, named as NCCL users know them (NCCL_ALGO), each with NCCL's protocols (LL, LL128,
Simple: their data efficiency, per-channel ceilings, per-call and per-hop latency, from
``resources/nccl_tuning.json``):
- ``ring``: NCCL's ring algorithm: every channel NCCL opens on this topology (NVLink rings in both
  directions inside a system, one ring per pair of NIC rails across systems);
- ``tree``: NCCL's double binary tree across systems with a chain inside, a pair of trees per rail;
  on one system a pair of chains per ring, each along its ring (NCCL searches them as it does rings);
- ``nvls``: NVLink SHARP all-reduce in the NVSwitches (DGX H100/H200/B200, NVL72), one system;
- ``collnet``: reduction in SHARP-capable InfiniBand switches, across systems.
The lecture's and the textbook's algorithms stay, without NCCL's protocols:
- ``single-ring``: one ring driven in one direction (the textbook algorithm);
- ``parameter-server``: one device (GPU or CPU) reduces and redistributes;
- ``decentralized``: the lecture's one-by-one scheme;
- ``hierarchical``: reduce inside each system, ring across systems, broadcast inside;
- ``direct``: all-to-all, every pair at once, as NCCL's grouped send/receive (sim/nccl_p2p.py);
- ``auto``: simulate the candidates and keep the fastest, saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from functools import partial

import numpy as np

from . import limits
from ..analysis.bisection import bisection_bandwidth
from ..analysis.rings import find_rings, system_rings
from ..model.topology import Topology
from ..model.validation import errors as design_errors, first_errors_words
from . import collectives as C
from . import nccl_env, nccl_p2p, nvls, nvls_virtual, spliced_run, symmetry, tree_fold
from ..heap import paused_gc
from ..cancel import cancellable
from .setup_steps import reporting, step
from . import tuning as T
from ..analysis.channels import ChannelPlan, group_by_system, plan as plan_channels, ring_rates
from ..analysis.nccl_paths import inter_node_path, ll128_left_out, sm_range
from .engine import Progress, Schedule
from .results import (COMPACT_BOTTLENECKS, COMPACT_POINTS, DEFAULT_CHUNK, CollectiveResult,  # noqa: F401 (re-exported)
                      CompactSchedule, CompactSim, SimOptions, SimulationError, busbw_factor, compact)  # noqa: F401
from .nccl_schedules import NcclSchedules
from .lecture_reasons import lecture_reason
from .sharp_refusal import collnet_refusal, does_reduction, inside_one_system
from .sweep import sweep_sizes  # noqa: F401 (re-exported)
from ..analysis.routing import Router, RoutingError

ALGORITHMS = ("auto", "ring", "tree", "nvls", "nvls-tree", "collnet", "single-ring", "parameter-server", "decentralized",
              "hierarchical", "direct")
# Earlier names, still accepted: "multi-ring" was NCCL's ring before it took the name.
ALIASES = {"multi-ring": "ring"}
NCCL = ("ring", "tree", "nvls", "nvls-tree", "collnet")
# all-to-all's bound loads every pair's route up to this many pairs (64 GPUs); above, the bisection
ROUTED_BOUND_PAIRS = 64 * 63


def cuts_in_chunks(algorithm: str) -> bool:
    """Whether ``algorithm`` cuts the data in ``--chunk`` pieces, whose count ``limits.collective``
    then checks: each of DGX Studio's own and NVLS of NCCL's. NCCL's others cut it in NCCL's own
    slices (their schedules are counted block by block before each is built, ``Schedule.reserve``);
    for them "use a chunk of at least ..." would change nothing but the check (a 1 TiB ring runs)."""
    return algorithm not in NCCL or algorithm == "nvls"


SUPPORTED = {
    "all-reduce": ("ring", "tree", "nvls", "nvls-tree", "collnet", "single-ring", "parameter-server", "decentralized",
                   "hierarchical"),
    "all-gather": ("ring", "single-ring"),
    "reduce-scatter": ("ring", "single-ring"),
    "broadcast": ("ring", "single-ring", "tree"),
    "reduce": ("ring", "single-ring", "tree"),
    "all-to-all": ("direct",),
}
PROTOCOL_CHOICES = ("auto", *T.PROTOCOLS)


class Simulator(NcclSchedules):
    """Holds what is costly to derive (routes, rings, bounds) for repeated runs on one topology."""

    def __init__(self, topo: Topology, gpus: list[str], options: SimOptions | None = None,
                 router: Router | None = None, cancel=None, checked: bool = False, progress=None):
        """``cancel`` (a threading.Event or a callable) stops the checks and the routing tables, which
        take seconds on clusters of thousands of systems, with ``Cancelled``. ``checked``: the caller
        has just validated ``topo`` as it is and found no errors (the CLI does, for every command that
        runs something), so it is not validated a second time (0.6 s at 16,384 GPUs). ``progress``
        hears the routing begin (a ``setup_steps.Setup``)."""
        self.topo = topo
        self.gpus = list(gpus)
        self.options = options or SimOptions()
        if len(self.gpus) < 2:
            held = f"1: {self.gpus[0]}" if self.gpus else "none"   # `--gpus gpu0,gpu0` names one GPU twice
            raise SimulationError(f"a collective needs at least 2 GPUs; the GPU set holds {held}")
        with paused_gc(), cancellable(cancel), reporting(progress):
            self._check_and_route(topo, router, checked)

    def _check_and_route(self, topo: Topology, router: Router | None, checked: bool = False) -> None:
        errors = [] if checked else design_errors(topo)
        if errors:
            raise SimulationError(f"the topology has errors; fix them first: {first_errors_words(errors)}")
        for g in self.gpus:
            if g not in topo.devices or topo.devices[g].kind != "gpu":
                raise SimulationError(f"{g!r} is not a GPU of this topology")
        root = self.options.root
        if root is not None and root not in set(self.gpus):
            # (a rooted NCCL schedule would fail looking for it in its ring: an internal error)
            raise SimulationError(f"the root {root!r} is not one of the {len(self.gpus)} GPUs of this run")
        if self.options.chunk <= 0:
            raise SimulationError("the chunk size must be positive")
        if router is not None and (router.topo is not topo or router.spread != self.options.spread
                                   or router.pxn != self.options.pxn):
            raise ValueError("a shared router must belong to the same topology and spreading")
        step("routing")
        self.router = router or Router(topo, self.options.achievable, self.options.spread, pxn=self.options.pxn)
        if self.options.protocol not in PROTOCOL_CHOICES:
            raise SimulationError(f"unknown protocol {self.options.protocol!r} (one of {', '.join(PROTOCOL_CHOICES)})")
        self._rings = None
        self._plan: ChannelPlan | None = None
        self._plan_rates: list[float] | None = None
        self._facts: dict[object, object] = {}
        self._bounds: dict[str, float] = {}

    # ---- what the topology allows --------------------------------------------------------------
    def rings(self):
        if self._rings is None:
            # (rail rings over this router: its channel plan and ring rates, which the bound reads too)
            self._rings = find_rings(self.topo, self.gpus, achievable=self.options.achievable, router=self.router,
                                     plan_rates=lambda: (self.channel_plan(), self._ring_rates(False)))
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
            if 1 < p and p * (p - 1) <= ROUTED_BOUND_PAIRS:
                # and >= the busiest channel's share over the routes the pairs take: the bisection lets
                # GPUs relay, which NCCL's sends never do (a DGX-1's cross-socket pairs without NVLink
                # all cross one QPI link)
                load = np.zeros(self.router.n_channels)
                for a in self.gpus:
                    for b in self.gpus:
                        if a != b:
                            r = self.router.routes(a, b)
                            np.add.at(load, r.channels, r.weights)
                worst = float((load / self.router.capacity).max())
                if worst > 0:
                    algbw = min(algbw, p / worst)
            # not the channel plan: seconds at 16,384 GPUs
            systems = group_by_system(self.topo, self.gpus, self.router.system_of)
            if len(systems) > 1:
                # and every system sends its L GPUs' S (p-L)/p each out through its own NICs, which on
                # more than two systems is tighter than the bisection (all but 1/N of it leaves)
                for members in systems:
                    local = len(members)
                    out = self._system_network_Bps(members)
                    if local < p and out > 0:
                        algbw = min(algbw, out * p / (local * (p - local)))
            value = algbw * busbw_factor(collective, p)
        else:
            value = self.plan_bound(for_ring=False)
            if collective == "all-reduce" and self._nvls_switch_shares() is not None:
                # NVLink SHARP: each GPU sends and receives S (1 + 1/P) through its NVLinks
                p = len(self.gpus)
                nvl = min(self._switch_links_Bps(g) for g in self.gpus)
                value = max(value, nvl * 2 * (p - 1) / (p + 1))
            plan = self.channel_plan()
            if collective == "all-reduce" and plan.nodes > 1:
                # Reduction inside systems first (trees, NVLS, CollNet): each system must still send
                # and receive S (N-1)/N... twice over its NICs, whatever the ranks inside it do.
                node_bw = min(self._system_network_Bps(m) for m in plan.systems)
                n_sys, p = plan.nodes, len(self.gpus)
                value = max(value, node_bw * n_sys / (2 * (n_sys - 1)) * busbw_factor(collective, p))
                if self._collnet_capable():
                    # CollNet (SHARP): the switches reduce, so each system sends its S once into the
                    # network and receives the result once
                    value = max(value, node_bw * busbw_factor(collective, p))
        self._bounds[collective] = value
        return value

    def _system_network_Bps(self, members: list[str]) -> float:
        """What a system's NICs can send per direction into the network."""
        fab = self.router.fabric
        sid = self.topo.system_of(members[0])
        total = 0.0
        for did in self.router.system_devices(sid):  # (a GB200 NVL72's trays' devices; [] outside a system)
            if fab.kind.get(did) != "nic":
                continue
            total += sum(fab.bundle(did, v).bandwidth for v in fab.adj.get(did, [])
                         if fab.bundle(did, v).family in ("infiniband", "ethernet"))
        return total

    # ---- NCCL's channels, protocols and choice ---------------------------------------------------
    def channel_plan(self) -> ChannelPlan:
        if self._plan is None:
            systems = group_by_system(self.topo, self.gpus, self.router.system_of)
            local = self.rings() if len(systems) == 1 else None
            self._plan = plan_channels(self.topo, self.gpus, self.router.fabric, local, self.router.system_of,
                                       self.router)
        return self._plan

    def plan_bound(self, for_ring: bool = True) -> float:
        """Bus bandwidth of NCCL's rings on this topology (every ring direction at once). ``for_ring``:
        a ring runs next, so its loads are read hop by hop from the routes the engine's ring then
        runs on (kept for it); else all at once from templates of systems wired alike, the same
        arrays element by element (a tree, NVLS or hierarchical run, or a result's bound, needs
        the number, not 75,000 ring hops' routes at 16,384 GPUs)."""
        if "_plan_bound" not in self._bounds:
            self._bounds["_plan_bound"] = float(sum(self._ring_rates(for_ring)))
        return self._bounds["_plan_bound"]

    def _ring_rates(self, by_hop: bool) -> list[float]:
        """``ring_rates`` of the channel plan, worked out once (hop by hop or by runs of hops: the
        same arrays, so the same rates)."""
        if self._plan_rates is None:
            self._plan_rates = ring_rates(self.channel_plan(), self.router, by_hop=by_hop)
        return self._plan_rates

    def _nccl_ring_specs(self, proto: str | None, channels: int | None = None) -> list[C.RingSpec]:
        """NCCL's ring channels as ring directions, with the protocol's latency and ceilings."""
        plan = self.channel_plan()
        specs = []
        vias = plan.via or [None] * len(plan.rings)
        for order, hops, via in zip(plan.rings, plan.hops, vias):
            fwd = C.RingSpec(order, hops, via=via)
            specs.extend([fwd, fwd.reversed()])
        for s in specs:
            s.share = 1.0 / len(specs)
        if proto is None:
            return specs
        shape = self.call_shape("all-reduce")
        nch = channels or plan.channels
        per_dir_channels = nch / len(specs)
        cap = T.per_channel_cap("ring", proto, shape.generation, plan.nodes, nch) * per_dir_channels
        for s in specs:
            s.cap_Bps = cap
        return specs

    def gpus_per_thread(self) -> int:
        """GPUs one launching thread drives: the option, but never more than a system holds of this run
        (a thread drives the GPUs of its own system: ``tuning.threads_gpus``)."""
        return T.threads_gpus(self.options.gpus_per_thread, self.gpus, self.topo.system_of)

    def _hop_class(self, a: str, b: str) -> str:
        system = self.router.system_of  # one look-up, not a walk up the groups (131,072 hops at 16,384 GPUs)
        if system.get(a) != system.get(b):
            return "net"
        return self._intra_class()

    def _hop_classes(self, pairs) -> set[str]:
        """``_hop_class`` of every pair, each class once (two at most; 524,000 tree hops on 2,048
        systems asked one by one cost 0.7 s)."""
        system = self.router.system_of
        across = {system.get(a) != system.get(b) for a, b in pairs}
        return {"net" if x else self._intra_class() for x in across}

    def _intra_class(self) -> str:
        """NCCL's intra-node hardware class of the run's GPUs (``nccl_p2p.intra_class``), worked out once."""
        if "intra" not in self._facts:
            self._facts["intra"] = nccl_p2p.intra_class(self.topo, self.gpus)
        return self._facts["intra"]

    def _cpu_vendor(self) -> str:
        if "cpu" not in self._facts:
            vendor = "intel"
            for d in self.topo.devices.values():
                if d.kind == "cpu":
                    part = self.topo.part_of(d.id)
                    label = f"{part.id} {part.label}".lower() if part else ""
                    vendor = "amd" if ("epyc" in label or "amd" in label) else ("intel" if "xeon" in label else "other")
                    break
            self._facts["cpu"] = vendor
        return self._facts["cpu"]

    def _sms(self) -> tuple[int, int] | None:
        if "sms" not in self._facts:  # (the GPUs' least and greatest SM version; None: not in the catalog)
            self._facts["sms"] = sm_range(self.topo, self.gpus)
        return self._facts["sms"]

    def _system_switch_shares(self, members: list[str]) -> dict[str, float] | None:
        """NVSwitches doing NVLink SHARP that every GPU of a system reaches, with each one's share of
        a GPU's NVLinks; None where a switch cannot reduce or the GPUs see different switches."""
        shares: dict[str, float] | None = None
        fab = self.router.fabric
        kind, adj, bundles, devices = fab.kind, fab.adj, fab.bundles, self.topo.devices
        reduces = self._facts.setdefault("reduces", {})  # part id -> does it reduce (a catalog look-up each)
        for g in members:
            links: dict[str, float] = {}
            for v in adj.get(g, []):
                if kind.get(v) != "nvswitch":
                    continue
                part = devices[v].part
                ok = reduces.get(part)
                if ok is None:
                    ok = reduces[part] = does_reduction(self.topo.part_of(v))
                if not ok:
                    return None
                links[v] = bundles[(g, v) if g <= v else (v, g)].bandwidth
            if not links:
                return None
            total = sum(links.values())
            if shares is None:
                shares = {sw: bw / total for sw, bw in links.items()}
            elif set(links) != set(shares):
                return None
        return shares

    def _nvls_shares(self) -> list[dict[str, float]] | None:
        """Per system, its NVLink SHARP switch shares; None unless every system has them."""
        if "nvls" not in self._facts:
            plan = self.channel_plan()
            shares = [self._system_switch_shares(m) for m in plan.systems]
            self._facts["nvls"] = None if any(s is None for s in shares) else shares
        return self._facts["nvls"]

    def _nvls_switch_shares(self) -> dict[str, float] | None:
        """One system's NVLink SHARP switch shares (None across systems: that is nvls-tree)."""
        shares = self._nvls_shares()
        return shares[0] if shares is not None and len(shares) == 1 else None

    def _collnet_capable(self) -> bool:
        known = self._facts.get("collnet")  # (a pass over every device: once, not at each call shape and bound)
        return known if known is not None else self._facts.setdefault("collnet", collnet_refusal(self.topo, self.channel_plan().nodes) is None)

    def call_shape(self, collective: str, for_ring: bool = True) -> T.CallShape:
        """NCCL's view of the call; ``for_ring``: see ``plan_bound``."""
        plan = self.channel_plan()
        ring_bus = self.plan_bound(for_ring)
        nvls, sms = 0.0, self._sms()
        if self._nvls_shares() is not None:
            nvls = self._switch_links_Bps(self.gpus[0])
        collnet = ring_bus if self._collnet_capable() else 0.0
        net = self._facts.get("net") or self._facts.setdefault("net", inter_node_path(
            self.topo, self.router.fabric, plan, self.router, self.options.pxn))
        return T.CallShape(collective, len(self.gpus), plan.nodes, T.generation_of(sms[0] if sms else None),
                           plan.channels, ring_bus, ring_bus, self._intra_class(), self._cpu_vendor(), nvls_busbw_Bps=nvls,
                           collnet_busbw_Bps=collnet, net_busbw_Bps=ring_bus if plan.nodes > 1 else 0.0,
                           net_path=net.type, net_path_where=net.where(self.topo), sms=sms)

    def refusal(self, collective: str, algorithm: str, switches: bool = True) -> str | None:
        """Why the hardware (or, with ``switches``, NCCL_NVLS_ENABLE=0) cannot run an algorithm, or None."""
        if switches and (why := nccl_env.refusal(algorithm, self.options.nvls_enable)):
            return why
        if algorithm == "nvls":
            if collective != "all-reduce":
                return "nvls does all-reduce only"
            if self.channel_plan().nodes != 1:
                return "nvls reduces inside one system's NVSwitches; across systems use nvls-tree"
            if self._nvls_switch_shares() is None:
                return (f"nvls needs NVSwitches that reduce in the switch (NVLink SHARP, NVSwitch gen3 and later); "
                        f"{self._nvswitches_reached()}")
        if algorithm == "nvls-tree":
            if collective != "all-reduce":
                return "nvls-tree does all-reduce only"
            plan = self.channel_plan()
            needs = ("nvls-tree needs NVSwitches that reduce in the switch (NVLink SHARP, NVSwitch gen3 and later) "
                     "in every system; ")
            if not any(self._switches_of(g) for g in self.gpus):
                return needs + self._nvswitches_reached()   # (named to refuse only); before "use nvls", which these GPUs cannot run either
            if plan.nodes < 2:
                return ("nvls-tree joins systems through their NICs; inside one system NCCL uses "
                        + inside_one_system(lambda a: self.refusal(collective, a) is None, prefer="nvls"))
            if len(counts := {len(m) for m in plan.systems}) != 1:
                return (f"nvls-tree needs the same number of GPUs in every system; these are {min(counts)} to"
                        f" {max(counts)} per system: select as many in each")
            if self._nvls_shares() is None:
                return needs + self._nvswitches_reached()
        if algorithm == "collnet":   # (one system: suggests only what these GPUs can run instead)
            return "collnet does all-reduce only" if collective != "all-reduce" else collnet_refusal(
                self.topo, self.channel_plan().nodes, lambda a: self.refusal(collective, a) is None)
        return None

    def _switches_of(self, g: str) -> list[str]:
        """The NVSwitches GPU ``g`` has links to."""
        fab = self.router.fabric
        return [v for v in fab.adj[g] if fab.kind.get(v) == "nvswitch"]

    def _switch_links_Bps(self, g: str) -> float:
        """GPU ``g``'s NVLink bandwidth into its NVSwitches (per direction)."""
        return sum(self.router.fabric.bundle(g, v).bandwidth for v in self._switches_of(g))

    def _nvswitches_reached(self) -> str:
        """Which NVSwitches the GPUs reach, for a refusal: their parts, or which systems have none."""
        kinds = sorted({self.topo.part_of(v).label for g in self.gpus for v in self._switches_of(g)})
        if kinds:
            return f"these GPUs reach {', '.join(kinds)}"
        models = set()
        for g in self.gpus:
            sid = self.topo.system_of(g)
            grp = self.topo.groups.get(sid) if sid else None
            models.add(grp.properties.get("model") or grp.name if grp else self.topo.name)
        return f"{' and '.join(sorted(models))} {'has' if len(models) == 1 else 'have'} no NVSwitch"

    # ---- schedules ------------------------------------------------------------------------------
    def _ring_specs(self, count: int | None = None) -> list[C.RingSpec]:
        """The first ``count`` rings (all: None) as specs; only those are traced."""
        specs = []
        for r in self.rings().rings[:count]:
            through_gpu = any(any(self.topo.devices[d].kind == "gpu" for d in h[1:-1]) for h in r.hops)
            specs.append(C.RingSpec(r.gpus, r.hops if through_gpu else None))
        return specs

    def schedule(self, collective: str, algorithm: str, size: float) -> Schedule:
        o = self.options
        red = o.reduce_s_per_byte
        root = o.root or self.gpus[0]
        if root not in self.gpus:
            raise SimulationError(f"root {root!r} is not one of the GPUs")
        if algorithm == "single-ring":
            specs = self._ring_specs(1)
            if collective in ("broadcast", "reduce"):
                return C.ring_rooted(collective, specs, root, size, o.chunk, False, red)
            return C.ring_collective(collective, specs, size, o.chunk, False, red)
        if algorithm == "parameter-server":
            server = o.server or self.gpus[0]
            if server not in self.topo.devices:
                raise SimulationError(f"no device {server!r} to act as parameter server")
            kind = self.topo.devices[server].kind
            if kind not in ("gpu", "cpu"):  # (a switch or a NIC forwards; it has nothing to reduce with)
                from ..model.catalog import KIND_LABELS

                raise SimulationError(f"{server!r} ({KIND_LABELS.get(kind, kind)}) cannot reduce:"
                                      " a parameter server is a GPU or a CPU")
            return C.parameter_server(self.gpus, server, size, o.chunk, red, self.router)
        if algorithm == "decentralized":
            return C.one_by_one(self.gpus, size, red)
        if algorithm == "hierarchical":
            return self._hierarchical(size)
        raise SimulationError(f"unknown algorithm {algorithm!r}")   # (direct: sim/nccl_p2p.py)

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
        router = self.router
        if router.spread == "even":
            # every system's channel offset checked together, in the order the engine reaches them
            # (as the ring bound does for its rings), not one system at a time as hops ask
            system = router.system_of
            router.offsets_in_bulk([sid for c in chains if (sid := system.get(c[0])) is not None])
        return C.hierarchical(chains, [C.RingSpec(c) for c in chains], size, self.options.chunk,
                              self.options.reduce_s_per_byte)

    # ---- running ---------------------------------------------------------------------------------
    def run(self, collective: str, algorithm: str, size: float,
            progress: Callable[[Progress], None] | None = None, cancel=None) -> CollectiveResult:
        # progress: each setup step (setup_steps.Setup), then the engine's; paused_gc: see dgxstudio/heap.py
        with paused_gc(), reporting(progress), cancellable(cancel) if cancel is not None else nullcontext():
            return self._run(collective, algorithm, size, progress, cancel)

    def _run(self, collective: str, algorithm: str, size: float,
             progress: Callable[[Progress], None] | None, cancel) -> CollectiveResult:
        if collective not in SUPPORTED:
            raise SimulationError(f"unknown collective {collective!r} (one of {', '.join(SUPPORTED)})")
        algorithm = ALIASES.get(algorithm, algorithm)
        if algorithm not in ALGORITHMS:
            raise SimulationError(f"unknown algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
        if not size > 0:
            raise SimulationError("the size must be positive")
        # (auto's choice of NCCL's algorithms is counted once made, in _run_nccl; all-to-all's auto is direct)
        limits.collective(size, self.options.chunk, len(self.gpus), self.options.reduce_s_per_byte, SimulationError,
                          count_pieces=cuts_in_chunks(algorithm) if algorithm != "auto" else collective == "all-to-all")
        if algorithm == "auto":
            return self._auto(collective, size, progress, cancel)
        if algorithm not in SUPPORTED[collective]:
            raise SimulationError(f"{algorithm} is not an algorithm for {collective} "
                                  f"(choose from auto, {', '.join(SUPPORTED[collective])})")
        if algorithm in NCCL:
            return self._run_nccl(collective, algorithm, size, self.options.protocol, progress, cancel)
        if algorithm == "direct":
            return nccl_p2p.run_all_to_all(self, size, progress, cancel)
        with cancellable(cancel):
            if algorithm == "single-ring":
                step("finding rings")
                self.rings()
            step("building the schedule")
            sched = self.schedule(collective, algorithm, size)
        try:
            sim = symmetry.run(self.router, sched, progress, cancel)
        except RoutingError as exc:
            raise SimulationError(str(exc)) from None
        rings = [r.gpus for r in self.rings().rings][:1] if algorithm == "single-ring" else []
        return CollectiveResult(collective, algorithm, algorithm, self.gpus, size, sim.time_s,
                                partial(self.bound_busbw, collective),
                                lecture_reason(self.router, algorithm, sched, self.gpus) + symmetry.note(sched), sim, sched,
                                options=self.options, rings=rings)

    def _run_nccl(self, collective: str, algorithm: str, size: float, protocol: str, progress, cancel,
                  requested: str | None = None) -> CollectiveResult:
        step("planning channels")
        why = self.refusal(collective, algorithm)
        if why:
            raise SimulationError(why)
        if cuts_in_chunks(algorithm):
            limits.collective(size, self.options.chunk, len(self.gpus), self.options.reduce_s_per_byte, SimulationError)
        with cancellable(cancel):
            shape = self.call_shape(collective, for_ring=algorithm == "ring")
            estimates = {}
            if protocol == "auto":
                best, est = T.choose(shape, size, (algorithm,), T.PROTOCOLS)
                if best is None:
                    raise SimulationError(f"NCCL's model has no protocol for {algorithm} {collective} here")
                protocol = best[1]
                estimates = {f"{a}/{T.PROTOCOL_LABELS[p]}": v for (a, p), v in est.items()}
            elif algorithm in ("nvls", "nvls-tree", "collnet") and protocol != "simple":
                raise SimulationError(f"{algorithm} runs with the Simple protocol only")
            elif protocol == "ll128" and (why := T.ll128_refusal(shape)):
                raise SimulationError(f"NCCL does not enable LL128 here: {why}")
            step("building the schedule")
            sched, scale, nch = self.nccl_schedule(collective, algorithm, protocol, size)
        try:
            if algorithm in ("tree", "collnet"):  # trees alike (NCCL's pair per rail, mirrored; CollNet's rails) run once
                sim = tree_fold.run(self.router, sched, scale, progress, cancel)
            elif algorithm == "nvls-tree" and nvls.folds(sched) and nvls_virtual.block(sched) is not None:
                # from 64 systems, or past the group limit: its later pieces are virtual rows (not
                # built), read through the fold
                sim = nvls_virtual.run(self.router, sched, scale, progress, cancel)
            elif algorithm == "nvls-tree" and nvls.folds(sched):
                # its network trees likewise, beside the systems' NVLS reduce and multicast
                sched.meta["trees"] = nvls.tree_units(sched)
                sim = tree_fold.run(self.router, sched, scale, progress, cancel)
            else:  # (an NVLS tree of many pieces on a shorter schedule, where it can: sim/spliced_run.py)
                sim = spliced_run.run(self.router, sched, scale, progress, cancel)
        except RoutingError as exc:
            raise SimulationError(str(exc)) from None
        sim.capacity_scale = scale  # its bottlenecks then give the link's own figure beside the usable one
        reason = (f"{algorithm} with {T.PROTOCOL_LABELS[protocol]} as requested" if not estimates else f"{algorithm} as "
                  f"requested; {T.PROTOCOL_LABELS[protocol]}: NCCL's cost model's choice for this size{ll128_left_out(shape)}")
        return CollectiveResult(collective, algorithm, requested or algorithm, self.gpus, size, sim.time_s,
                                partial(self.bound_busbw, collective), reason, sim, sched, options=self.options,
                                rings=[list(r) for r in self.channel_plan().rings] if algorithm == "ring" else [],
                                protocol=protocol, channels=nch, model_estimates=estimates)

    def _auto(self, collective: str, size: float, progress, cancel) -> CollectiveResult:
        """NCCL's choice: the algorithm and protocol its cost model rates fastest, then simulated."""
        if collective == "all-to-all":   # NCCL's grouped send/receive (sim/nccl_p2p.py)
            return nccl_p2p.run_all_to_all(self, size, progress, cancel, requested="auto")
        with cancellable(cancel):
            step("planning channels")
            shape = self.call_shape(collective)
            algos = tuple(a for a in nccl_env.offered(collective, self.options.nvls_enable)
                          if a in SUPPORTED[collective] and self.refusal(collective, a) is None)
            protos = T.PROTOCOLS if self.options.protocol == "auto" else (self.options.protocol,)
            best, est = T.choose(shape, size, algos, protos)
        if best is None:
            why = T.ll128_refusal(shape) if protos == ("ll128",) else None
            raise SimulationError(f"NCCL's model offers no algorithm for {collective} on these GPUs"
                                  + (f" with the {T.PROTOCOL_LABELS.get(self.options.protocol, self.options.protocol)} protocol"
                                     if self.options.protocol != "auto" else "")
                                  + (f", as NCCL does not enable LL128 here: {why}" if why else ""))
        algo, proto = best
        result = self._run_nccl(collective, algo, size, proto, progress, cancel, requested="auto")
        ranked = sorted(est.items(), key=lambda kv: kv[1])
        result.model_estimates = {f"{a}/{T.PROTOCOL_LABELS[p]}": v for (a, p), v in ranked}
        others = ", ".join(f"{a}/{T.PROTOCOL_LABELS[p]} {v * 1e6:.1f} us" for (a, p), v in ranked[1:4])
        result.reason = (f"NCCL's cost model picks {algo} with {T.PROTOCOL_LABELS[proto]} for {size:,.0f} bytes on "
                         f"{len(self.gpus)} GPUs ({result.channels} channel{'' if result.channels == 1 else 's'}): estimated {ranked[0][1] * 1e6:.1f} us"
                         + (f" (next: {others})" if others else "") + ll128_left_out(shape) + nccl_env.note(self._withheld(collective)))
        return result

    def _withheld(self, collective: str) -> tuple[str, ...]:
        """NVLink SHARP algorithms this hardware could run for ``collective`` that NCCL_NVLS_ENABLE=0
        took away from auto (none where it cannot, e.g. a DGX A100)."""
        if self.options.nvls_enable:
            return ()
        return tuple(a for a in nccl_env.NVLS_ALGORITHMS
                     if a in SUPPORTED[collective] and self.refusal(collective, a, switches=False) is None)


def simulate(topo: Topology, collective: str, algorithm: str, size: float, gpus: list[str] | None = None,
             options: SimOptions | None = None, progress=None, cancel=None) -> CollectiveResult:
    gpus = gpus if gpus is not None else [d.id for d in topo.gpus()]
    return Simulator(topo, gpus, options).run(collective, algorithm, size, progress, cancel)
