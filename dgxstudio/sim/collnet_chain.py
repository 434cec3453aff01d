"""One CollNet rail as NCCL runs it (CollNet chain, ``src/device/all_reduce.h``): a chain reduce inside
each system to the rail's head GPU, the heads' all-reduce in the SHARP switches, a chain broadcast
back, pipelined piece by piece through NCCL's bounded buffers.

Every connection holds NCCL_STEPS step buffers (``resources/nccl_tuning.json``, "pipeline"), so a
stage runs at most ``slots`` pieces ahead of the stage that frees its buffers:

- a chain connection's receiver frees a piece once it has forwarded it (``_tree_phase``'s ``held``):
  up the chain, the head forwards into the network (its SHARP reduce);
- the head's send buffer into the network (``src/transport/coll_net.cc``, ``sendProxyProgress``:
  a step is posted to the GPU only while ``posted < done + NCCL_STEPS``, ``done`` counting the
  completed ``collNetIallreduce`` calls) frees a piece once the SHARP all-reduce of it has come back;
- its receive buffer (``recvProxyProgress``: a buffer is posted while ``posted < done +
  NCCL_STEPS``, ``done`` counting the steps the GPU has read) frees a piece once the head has passed
  it down its chain.

Without those bounds the chains, on NVLink, ran ahead of the SHARP stage without limit: at 16 GiB
over 2,048 DGX H100 systems the run never settled into a repeating state within the engine's budget.
"""

from __future__ import annotations

from . import collnet_root
from .collectives import _tree_phase
from .schedule import Group, Pattern, Schedule


def collnet_rail(sched: Schedule, chains: dict, levels: list[list[tuple[str, str]]], n: int, piece: float,
                 lat_intra: float, lat_net: float, reduce_s_per_byte: float, label: str, slots: int) -> None:
    """Add one rail's groups, piece by piece. ``chains``: the rail's chains as a forest (``_tree``),
    each rooted at its system's head GPU; ``levels``: SHARP's tree of switches over the heads, leaves
    first (pairs child -> parent); ``lat_net``: the network's latency one way and back, spread over
    the levels; ``slots``: pieces a connection's buffers hold (0: unbounded).

    SHARP streams (its Streaming Aggregation Tree, which NCCL's SHARP plugin turns on; see
    ``resources/sharp_trees.json``): a switch reduces its children's packets and forwards the result
    as they arrive, so a piece crosses every level of the tree at once, one stage each way, not
    level after level (which, on three tiers, held a head's send buffers for six piece times and
    bound CollNet to its buffers' round trip)."""
    if collnet_root.sharp_trees()["streaming"]:
        levels = [[pair for pairs in levels for pair in pairs]]
    lat = lat_net / 2 / len(levels)  # (each way: the network's latency over the tree's levels)
    ups = [Pattern(pairs, latency_s=lat) for pairs in levels]
    downs = [Pattern([(p, c) for c, p in pairs], latency_s=lat) for pairs in reversed(levels)]
    many = len(levels) > 1
    prev_u: list[int | None] = [None] * len(levels)
    prev_d: list[int | None] = [None] * len(levels)
    into_net: list[int] = []  # per piece: the heads' sends into the network (their SHARP reduce)
    back: list[int] = []  # per piece: the SHARP all-reduce come back to the heads
    # each direction's level patterns and lanes, shared by every piece's call; the way up frees a
    # head's buffer when the head sends into the network (the key the way down's level 1 would use)
    up_kw = {"patterns": {}, "lanes": {}, "held": {(False, 1): into_net}, "slots": slots}
    down_kw = {"patterns": {}, "lanes": {}, "held": {}, "slots": slots}

    def latency_of(pairs) -> float:
        return lat_intra

    starts: list[int] = []
    for j in range(n):
        # once the buffers are in their steady use, the pieces from here on are the last one's
        # images: added as columns rather than built one by one (16 GiB is 2,048 pieces a rail)
        if slots + 2 <= j <= slots + 4 and sched.repeat_piece(starts[j - 2], starts[j - 1], n - j, j - 1):
            break
        starts.append(len(sched.groups))
        up = _tree_phase(sched, chains, piece, piece, True, reduce_s_per_byte, label, latency_of=latency_of,
                         first_piece=j, **up_kw)
        dep = up.get(0)  # (none when every system has one GPU: no chain hop before the NIC)
        for i, pattern in enumerate(ups):
            done = (dep,) if dep is not None else ()
            sent = (prev_u[i],) if prev_u[i] is not None else ()
            if i == 0 and slots and j >= slots:
                done += (back[j - slots],)  # the send buffer's slot
                passed = down_kw["held"].get((False, 1))
                if passed:
                    sent += (passed[j - slots],)  # the receive buffer's slot
            name = f"{label} SHARP reduce piece {j}" + (f" level {i}" if many else "")
            dep = prev_u[i] = sched.add(Group(name, pattern, piece, done, sent,
                                              meta={"phase": "sharp-reduce", "piece": j}))
            if i == 0:
                into_net.append(dep)
        for i, pattern in enumerate(downs):
            name = f"{label} SHARP broadcast piece {j}" + (f" level {i}" if many else "")
            dep = prev_d[i] = sched.add(Group(name, pattern, piece, (dep,), (prev_d[i],) if prev_d[i] is not None else (),
                                              meta={"phase": "sharp-broadcast", "piece": j}))
        back.append(dep)
        _tree_phase(sched, chains, piece, piece, False, 0.0, label, after={0: dep}, latency_of=latency_of,
                    first_piece=j, **down_kw)
