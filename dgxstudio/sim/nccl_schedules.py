"""NCCL's schedules for one call: the ring, tree, NVLS, NVLS tree and CollNet algorithms with NCCL's
channels, protocols, chunk sizes and latencies (``resources/nccl_tuning.json`` through ``sim/tuning.py``).

A mixin of ``Simulator`` (sim/run.py), which supplies the topology, router, options, channel plan and
the per-system facts these builders read.
"""

from __future__ import annotations

import numpy as np

from . import collectives as C
from . import collnet_root
from ..analysis.channels import tree_rails
from .collnet_chain import collnet_rail
from . import tuning as T
from .results import SimulationError
from .schedule import Schedule


class NcclSchedules:
    """Builds the schedule of one NCCL call (see ``Simulator``)."""

    def nccl_schedule(self, collective: str, algorithm: str, proto: str, size: float) -> tuple[Schedule, float, int]:
        """The schedule of one NCCL call, the engine's capacity scale, and the channels it uses."""
        o = self.options
        red = o.reduce_s_per_byte
        root = o.root or self.gpus[0]
        plan = self.channel_plan()
        shape = self.call_shape(collective)
        # NVLS and NVLS tree run on NCCL's nvlsChannels at every size; the others on the ring's
        # channels, fewer for small sizes
        nch = (T.nvls_channels(shape.generation, plan.nodes) if algorithm in ("nvls", "nvls-tree") else 0) \
            or T.channels_for(size, algorithm, proto, plan.channels, len(self.gpus))
        multi = plan.nodes > 1
        # NCCL pipelines in its own slices: a flow standing for k channels moves k slices a piece
        slice_ = T.slice_bytes(proto, collective)
        if algorithm == "ring":
            specs = self._nccl_ring_specs(proto, nch)
            chunk = slice_ * max(nch / len(specs), 1.0)
            steps = T.nsteps(collective, len(self.gpus)) if collective != "all-reduce" else 2 * (len(self.gpus) - 1)
            for s in specs:
                s.latency_s = C.window_latency(self._ring_hop_latencies(s.order, proto, multi), steps)
            if collective in ("broadcast", "reduce"):
                sched = C.ring_rooted(collective, specs[::2], root, size, chunk, True, red)
            else:
                sched = C.ring_collective(collective, specs, size, chunk, False, red)
            scale = T.protocol_efficiency(proto)
        elif algorithm == "tree":
            if multi:
                chains = tree_rails(plan)
            elif plan.rings:
                # one system: every channel pair's chain runs along its own ring, as NCCL searches the
                # tree's chains like its rings (one chain for all channels put them all on the same
                # NVLinks: a DGX-1 V100's tree ran at a fifth of its ring)
                chains = [[list(order)] for order in plan.rings]
            else:
                chains = self._system_chains()
            rails = len(chains) if multi or plan.rings else 1
            cap = T.per_channel_cap("tree", proto, shape.generation, plan.nodes, nch) * nch / (2 * rails)

            def level_latency(pairs) -> float:
                return max(T.hop_latency(c, "tree", proto) for c in self._hop_classes(pairs))
            def over_network(pairs) -> bool:
                return "net" in self._hop_classes(pairs)
            depth = T.tree_depth(len(self.gpus), plan.nodes)
            chain = len(self.gpus) // max(plan.nodes, 1) - 1
            piece, step_pieces = T.tree_pieces(proto, size, nch, depth, chain)
            chunk = piece * max(nch / (2 * rails), 1.0)
            sched = C.tree_collective(collective, chains, size, chunk, root, red, level_latency, cap,
                                      step_pieces, over_network)
            scale = T.tree_efficiency(proto, plan.nodes)
        elif algorithm == "nvls":
            shares = self._nvls_switch_shares()
            sched = C.nvls_allreduce(self.gpus, shares, size, o.chunk, T.hop_latency("nvlink", "nvls", "simple") / 2)
            scale = self._nvls_scale(T.tuning_data()["generations"][shape.generation]["nvls_efficiency"])
        elif algorithm == "nvls-tree":
            gen = T.tuning_data()["generations"][shape.generation]
            systems = [list(m) for m in plan.systems]
            # NCCL's per-head ceiling (algorithm bandwidth, per direction) for all its heads, shared
            # by the systems' p rails, each carrying 1/p of the data over two trees: a pair's cap
            heads = T.nvls_heads(shape)
            cap = T.nvls_tree_head_algbw_Bps(shape) * heads / (2 * len(systems[0]))
            # a piece is one of NCCL's loops: every channel moves one chunk for each head
            # (enqueue.cc's NVLS-tree chunk rule; half the channels on each tree)
            loop = nch * heads * T.nvls_tree_chunk_bytes(size, plan.nodes, nch, heads)
            sched = C.nvls_tree_allreduce(systems, self._nvls_shares(), size, loop,
                                          T.hop_latency("nvlink", "nvls-tree", "simple"),
                                          T.hop_latency("net", "nvls-tree", "simple"), cap,
                                          slots=T.slots_per_connection("all-reduce"), virtual=True)
            scale = self._nvls_scale(gen["nvls_efficiency"])
        elif algorithm == "collnet":
            sched = self._collnet(size, proto)
            scale = 1.0
        else:
            raise SimulationError(f"{algorithm} is not one of NCCL's algorithms")
        C.with_launch(sched, T.base_latency(algorithm, proto) + T.serial_launch(self.gpus_per_thread()))
        return sched, scale, nch

    def _nvls_scale(self, efficiency: float) -> np.ndarray | float:
        """The engine's capacity scale of an NVLS or NVLS tree call: NCCL's NVLS efficiency on the
        NVLinks between each GPU and its NVLink SHARP switches (the multicast and in-switch reduction
        path), the whole figure on every other channel. NCCL's model scales only that path's bandwidth
        by it (``intraBw``); the network's (``interBw``) is not (resources/nccl_tuning.json
        ``nvls_efficiency_applies``): scaling the NICs too made 2 DGX B200 26% slower than measured."""
        if not efficiency:
            return 1.0
        router = self.router
        scale = np.ones(router.n_channels)
        index = router.channel_index
        for members, shares in zip(self.channel_plan().systems, self._nvls_shares() or ()):
            for g in members:
                for sw in shares:
                    scale[index[(g, sw)]] = scale[index[(sw, g)]] = efficiency
        return scale

    def _ring_hop_latencies(self, order: list[str], proto: str, multi: bool) -> list[float]:
        """``_ring_hop_latency`` of every hop of a ring: it depends only on whether the hop stays in
        its system, so it is worked out for the first hop of each kind (131,072 hops at 16,384 GPUs)."""
        system = self.router.system_of
        sids = [system.get(g) for g in order]
        n = len(order)
        known: dict[bool, float] = {}
        out = []
        for k in range(n):
            inside = sids[k] == sids[(k + 1) % n]
            lat = known.get(inside)
            if lat is None:
                lat = known[inside] = self._ring_hop_latency(order[k], order[(k + 1) % n], proto, multi)
            out.append(lat)
        return out

    def _ring_hop_latency(self, a: str, b: str, proto: str, multi: bool) -> float:
        cls = self._hop_class(a, b)
        key = ("ring hop", cls, proto, multi)  # worked out once per class (131,072 hops at 16,384 GPUs)
        lat = self._facts.get(key)
        if lat is None:
            if cls == "net":
                lat = T.hop_latency("net", "ring", proto)
            else:
                lat = T.hop_latency(cls, "ring", proto)
                if multi:
                    lat = max(lat, T.net_overhead(self._cpu_vendor(), proto))
            self._facts[key] = lat
        return lat

    def _collnet(self, size: float, proto: str) -> Schedule:
        """CollNet chain: a chain reduce inside each system to its rail's head GPU, the heads' NICs
        reduce in the SHARP switches (up to the switch all heads share and back), a chain broadcast."""
        plan = self.channel_plan()
        o = self.options
        sched = Schedule([], size, f"CollNet all-reduce over {plan.nodes} systems, {len(plan.tree_chains)} rail(s)")
        lat_intra = T.hop_latency(self._intra_class(), "collnet", "simple")
        net_lat = T.hop_latency("net", "collnet", "simple")
        share = size / len(plan.tree_chains)
        n, piece = C.pieces(share, T.slice_bytes("simple", "all-reduce"))
        slots = T.slots_per_connection("all-reduce")  # NCCL_STEPS buffers of a piece's steps each
        ranges = []  # each rail's groups, first to last (rails alike run once: sim/tree_fold.py)
        for r, rail in enumerate(plan.tree_chains):
            first = len(sched.groups)
            heads = [chain[0] for chain in rail]
            parent: dict[str, str | None] = {}
            for chain in rail:
                parent[chain[0]] = None
                for k in range(1, len(chain)):
                    parent[chain[k]] = chain[k - 1]
            # the chains, and in the network SHARP's tree of switches, each reducing its children's data
            collnet_rail(sched, C._tree(parent), self._sharp_levels(heads, r), n, piece, lat_intra, net_lat,
                         o.reduce_s_per_byte, f"collnet rail {r}", slots)
            ranges.append((first, len(sched.groups)))
        sched.meta["trees"] = ranges
        return sched

    def _sharp_levels(self, heads: list[str], rail: int) -> list[list[tuple[str, str]]]:
        """SHARP's tree over the network switches every head's route passes through (each rail its
        own, ``collnet_root.aggregation_tree``)."""
        common = collnet_root.fast(self.router, self.topo, heads)
        if not common:
            raise SimulationError("collnet: the systems' routes share no switch to reduce in")
        fab = self.router.fabric
        flat = min(common, key=lambda s: (len(fab.adj[s]) == 0, -sum(1 for v in fab.adj[s] if fab.kind.get(v) == "nic"), s))
        return collnet_root.aggregation_tree(self.router, self.topo, heads, common, flat, rail)
