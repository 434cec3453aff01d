"""NVLink SHARP (NVLS) all-reduce schedules: inside one system (the NVSwitches reduce and multicast)
and NCCL's NVLS tree across systems (the switches reduce, each GPU's slice crosses a double binary
tree through its own NIC, the switches multicast the result)."""

from __future__ import annotations

import math

import numpy as np

from . import limits
from .collectives import _tree_phase, double_trees, pieces
from .schedule import Group, Pattern, Schedule


def nvls_allreduce(gpus: list[str], switch_shares: dict[str, float], size: float, chunk: float,
                   latency_s: float | None = None) -> Schedule:
    """NVLink SHARP all-reduce inside one system: every GPU pushes its data into the NVSwitches, which
    reduce it (multimem.ld_reduce) and multicast the result back (multimem.st). Each GPU sends and
    receives its S bytes plus its own 1/P slice once more, spread over the switches in proportion to
    its NVLinks to each (``switch_shares``, summing to 1)."""
    p = len(gpus)
    sched = Schedule([], size, f"NVLS all-reduce over {p} GPUs through {len(switch_shares)} NVSwitch(es)")
    n, piece = pieces(size * (1 + 1 / p), chunk)
    last_up: dict[str, int] = {}
    last_down: dict[str, int] = {}
    ups = {sw: Pattern([(g, sw) for g in gpus], latency_s=latency_s) for sw in switch_shares}
    downs = {sw: Pattern([(sw, g) for g in gpus], latency_s=latency_s) for sw in switch_shares}
    starts = []
    for j in range(n):
        starts.append(len(sched.groups))
        if 2 <= j <= 4 and sched.repeat_piece(starts[j - 2], starts[j - 1], n - j, j - 1):
            break  # the pieces from here on are the last one's images (columns, not objects)
        for sw, share in switch_shares.items():
            u = sched.add(Group(f"NVLS reduce {sw} piece {j}", ups[sw], piece * share, (),
                                (last_up[sw],) if sw in last_up else (),
                                meta={"phase": "nvls-reduce", "switch": sw, "piece": j}))
            d = sched.add(Group(f"NVLS multicast {sw} piece {j}", downs[sw], piece * share, (u,),
                                (last_down[sw],) if sw in last_down else (),
                                meta={"phase": "nvls-multicast", "switch": sw, "piece": j}))
            last_up[sw], last_down[sw] = u, d
    return sched


def nvls_tree_allreduce(systems: list[list[str]], shares: list[dict[str, float]], size: float, chunk: float,
                        intra_latency_s: float, inter_latency_s: float, cap_Bps: float = math.inf,
                        slots: int = 0, virtual: bool = False) -> Schedule:
    """NCCL's NVLS tree: in every system the NVSwitches reduce (NVLink SHARP), each GPU then
    all-reduces its 1/P slice with the GPUs of the same rank in the other systems over a double
    binary tree through its own NIC, and the switches multicast the result back. ``shares`` gives,
    per system, each switch's share of a GPU's NVLinks.

    Every connection is a FIFO (a piece leaves it after the previous one), and with ``slots`` > 0 a
    buffer of that many pieces sits between the switches' reduce and the network: the reduce of piece
    j waits until the trees have taken piece j - slots (NCCL_STEPS step buffers per connection; the
    caller's ``slots`` is ``tuning.slots_per_connection``, NCCL_STEPS over a slice's steps, while a
    piece is one of NCCL's loops, of which a tree connection moves one chunk a step (ProtoSimple<1, 1>,
    device/all_reduce.h v2.28.9-1:590-591; primitives.h :25-28): NCCL would hold
    NCCL_STEPS loops, not 4; 8 moves no answer on 2 or 4 DGX H100 or 248 DGX H200, where the per-head
    ceiling binds first), so the NVLink side cannot run ahead of the network without bound; and
    likewise every tree connection's receiver: a level runs at most ``slots`` pieces ahead of the
    level its receiver forwards to.

    With ``virtual``, the pieces added as columns are virtual rows instead (``virtual_rows``) where
    the run folds (from ``FOLD_SYSTEMS`` systems) or building them would pass the group limit: a
    folded run reads only the groups it keeps (``sim/nvls_virtual.py``)."""
    p = len(systems[0])
    sched = Schedule([], size, f"NVLS tree all-reduce over {len(systems)} systems of {p} GPUs")
    n, piece = pieces(size, chunk)
    sched.meta["pieces"] = n
    ups, downs = {}, {}
    for s, (members, sh) in enumerate(zip(systems, shares)):
        for sw in sh:
            ups[(s, sw)] = Pattern([(g, sw) for g in members], latency_s=intra_latency_s / 2)
            downs[(s, sw)] = Pattern([(sw, g) for g in members], latency_s=intra_latency_s / 2)
    # each system's transfers, reduce then multicast per switch: the roles ``system_fold`` maps
    # between systems wired alike
    sched.meta["systems"] = [[ups[(s, sw)] for sw in sh] + [downs[(s, sw)] for sw in sh] for s, sh in enumerate(shares)]
    rails = [double_trees([[members[i]] for members in systems]) for i in range(p)]
    spans: dict[str, list[tuple[int, int]]] = {}  # each tree's runs of group ids, piece by piece as built
    repeat = (0, 0)  # the pieces added as columns: (groups per piece, how many)
    # one pattern per (rail, tree, direction, level), shared by every piece's groups
    shared: dict[tuple[int, int, bool], dict] = {}
    fifo: dict[tuple[int, int, bool], dict] = {}  # each connection's last group: pieces leave it in order
    held: dict[tuple[int, int], dict] = {}  # per tree, each level's groups: a receiver's buffers (see _tree_phase)
    last_join: list[int | None] = [None, None, None]
    taken: list[int] = []  # per piece: the join of its first network hops (its buffer slot is free again)
    last_up: dict = {}
    last_down: dict = {}
    slice_bytes = piece / p / 2
    starts = []
    for j in range(n):
        starts.append(len(sched.groups))
        # once the buffers are in their steady use, the pieces from here on are the last one's
        # images: added as columns rather than built one by one (a 16 GiB run has 4,096 pieces)
        j0 = max(2, slots + 2)
        if j0 <= j <= j0 + 2:
            m = starts[j - 1] - starts[j - 2]
            # (a run that folds reads only the rows it keeps: from 64 systems on, or past the limit;
            # one that does not fold for its many pieces plays a shorter schedule: sim/spliced_run.py)
            big = virtual and (len(sched.groups) + (n - j) * m > limits.MAX_SCHEDULED_GROUPS
                               or _folds_by_systems(len(systems), n) or n > FOLD_PIECES)
            if sched.repeat_piece(starts[j - 2], starts[j - 1], n - j, j - 1, virtual=big):
                repeat = (m, n - j)  # (copy c, piece j - 1 + c: piece j - 1's groups c m on)
                break
        up_ids = []
        for (s, sw), pattern in ups.items():
            # each GPU sends its piece, and receives its reduced 1/P slice back: (1 + 1/P) each way
            free = (taken[j - slots],) if slots > 0 and j >= slots else ()
            gid = sched.add(Group(f"NVLS reduce s{s} {sw} piece {j}", pattern, piece * (1 + 1 / p) * shares[s][sw], free,
                                  (last_up[(s, sw)],) if (s, sw) in last_up else (),
                                  meta={"phase": "nvls-reduce", "switch": sw, "piece": j}))
            last_up[(s, sw)] = gid
            up_ids.append(gid)
        # the joins are chained too (a zero-time join "sends" at once), so that every group has its
        # predecessor in a lane and a steady state can be recognised and skipped (see _Periods)
        joined = sched.add(Group(f"NVLS reduced piece {j}", deps_done=tuple(up_ids),
                                 deps_sent=(last_join[0],) if last_join[0] is not None else (),
                                 meta={"phase": "join", "piece": j}))
        last_join[0] = joined
        net_ids, first_ids = [], []
        for i, trees in enumerate(rails):
            for k, tree in enumerate(trees):
                label = f"rail {i} tree {k} piece {j}"
                lanes = fifo.setdefault((i, k, True), {})
                hold = held.setdefault((i, k), {})
                # one colour key per rail and tree, not per piece (the replay's legend lists keys)
                before = len(sched.groups)
                upd = _tree_phase(sched, tree, slice_bytes, slice_bytes, True, 0.0, label, after={0: joined},
                                  latency_of=lambda pairs: inter_latency_s, cap_Bps=cap_Bps,
                                  patterns=shared.setdefault((i, k, True), {}), lanes=lanes, held=hold, slots=slots,
                                  key=f"rail {i} tree {k}")
                first_ids.append(lanes[max(lanes)])  # the deepest level goes first on the way up
                down = _tree_phase(sched, tree, slice_bytes, slice_bytes, False, 0.0, label, after=upd,
                                   latency_of=lambda pairs: inter_latency_s, cap_Bps=cap_Bps,
                                   patterns=shared.setdefault((i, k, False), {}), lanes=fifo.setdefault((i, k, False), {}),
                                   held=hold, slots=slots, key=f"rail {i} tree {k}")
                net_ids.append(down[0])
                spans.setdefault(f"rail {i} tree {k}", []).append((before, len(sched.groups)))
        if slots > 0:
            gone = sched.add(Group(f"trees took piece {j}", deps_done=tuple(first_ids),
                                   deps_sent=(last_join[2],) if last_join[2] is not None else (),
                                   meta={"phase": "join", "piece": j}))
            last_join[2] = gone
            taken.append(gone)
        crossed = sched.add(Group(f"trees done piece {j}", deps_done=tuple(net_ids),
                                  deps_sent=(last_join[1],) if last_join[1] is not None else (),
                                  meta={"phase": "join", "piece": j}))
        last_join[1] = crossed
        for (s, sw), pattern in downs.items():
            gid = sched.add(Group(f"NVLS multicast s{s} {sw} piece {j}", pattern, piece * (1 + 1 / p) * shares[s][sw],
                                  (crossed,),
                                  (last_down[(s, sw)],) if (s, sw) in last_down else (),
                                  meta={"phase": "nvls-multicast", "switch": sw, "piece": j}))
            last_down[(s, sw)] = gid
    sched.meta["tree_spans"] = (list(spans.values()), repeat)  # (read by tree_units, only if the run folds)
    return sched


# When the simulator folds an NVLS tree's alike trees (``tree_units``): folding builds the groups it
# runs as objects, so it pays where the network is large and the pieces few. Measured (DGX H100,
# rail-optimized, CPU), before the systems folded too: 128 systems at 256 MiB (32 pieces) 1.5 s
# folded against 1.7 s; at 4 GiB (512 pieces, 640,000 groups) 6.6 s and 1.0 GB against 3.8 s and
# 0.5 GB, and at 16 GiB (2.56 million groups) 22 s and 3.6 GB against 4.8 s and 1.5 GB (the steady
# state is skipped flow by flow); 512 systems at 256 MiB and 1 GiB (128 pieces, 536,000 groups) 7.3
# and 24 s, where flow by flow is refused for its network states' memory; 2,048 at 256 MiB
# (535,648 groups) 33 s and 2.7 GB.
FOLD_PIECES = 128
FOLD_GROUPS = 1_000_000
# With the systems folded (sim/system_fold.py) a piece runs a few dozen groups however many the
# systems: from 64 systems on, folding pays up to 1,024 pieces (4 GiB). Measured (CPU, peak RSS, load
# 5-6), folded against flow by flow: 64 systems at 4 GiB 1.2 against 1.9 s, at 16 GiB 3.8 against
# 2.7 s; 128 systems at 4 GiB 1.7 s / 358 MB against 4.5 s / 418 MB, at 16 GiB 5.7 against 6.5 s
# and 1.2 against 1.05 GB; 512 systems at 2 and 4 GiB 4.4 and 6.2 s (flow by flow is refused for its
# network states' memory); 16 systems at 4 GiB 0.68 against 0.47 s.
# Since the maps' path (sim/place_maps.py) folding pays at every size the group limit lets through,
# so the cap is 8,192 pieces (32 GiB). Measured (CPU user+sys, peak RSS, load 1.9-2.7), folded
# against flow by flow: 64 systems at 16 GiB 1.07 s / 497 MB against 2.0 s / 597 MB, at 32 GiB
# 1.6 s / 940 MB against 4.0 s / 1.10 GB; 128 systems at 16 GiB 1.6 s / 862 MB against 4.9 s /
# 1.02 GB (every answer the same to 1e-11; past these sizes the schedule's groups are refused).
# Since a folded run's pieces stay virtual rows (sim/nvls_virtual.py: only the groups it runs are
# built), 16 GiB over 128 systems takes 0.85 s / 96 MB, over 512 (8,984,576 groups, refused before)
# 2.6 s / 255 MB (CPU of the whole CLI run, peak RSS, load 3.5-4.3; the same answers).
FOLD_SYSTEMS = 64
FOLD_PIECES_SYSTEMS = 8192


def folds(sched: Schedule) -> bool:
    """Whether the simulator runs an NVLS tree schedule folded (``tree_fold`` with ``tree_units``)."""
    pieces = sched.meta["pieces"]
    if _folds_by_systems(len(sched.meta.get("systems", ())), pieces):
        return True
    return pieces <= FOLD_PIECES and len(sched.groups) <= FOLD_GROUPS


def _folds_by_systems(n_systems: int, pieces: int) -> bool:
    """Folded for its many systems (``FOLD_SYSTEMS``), whatever its groups: ``folds``' first rule,
    which the builder also reads to keep such a schedule's later pieces virtual."""
    return n_systems >= FOLD_SYSTEMS and pieces <= FOLD_PIECES_SYSTEMS


def _ids(runs: list[tuple[int, int]], m: int, copies: int) -> list[int]:
    """A tree's group ids from its runs [a, b), one a piece, the last repeated ``copies`` times, each
    m further on (the pieces added as columns)."""
    lo, hi = np.asarray(runs, dtype=np.int64).T
    if copies:
        shift = np.arange(1, copies + 1, dtype=np.int64) * m
        lo, hi = np.concatenate([lo, lo[-1] + shift]), np.concatenate([hi, hi[-1] + shift])
    lens = hi - lo
    return (np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(lo - (np.cumsum(lens) - lens), lens)).tolist()


def tree_units(sched: Schedule) -> list[list[int]] | None:
    """The groups of each of an NVLS tree schedule's network trees (every rail's pair), ascending,
    read from the groups' "tree" key: the units ``tree_fold`` runs once per class of alike trees
    (the reduce, multicast and joins in between stay outside them). None with fewer than two."""
    known = sched.meta.get("tree_spans")
    if known is not None:  # (listed as the schedule was built: the same lists, without reading every meta)
        return [_ids(runs, *known[1]) for runs in known[0]] if len(known[0]) > 1 else None
    by_key: dict[str, list[int]] = {}
    for g, (_, meta) in enumerate(sched.groups.patterns_and_metas()):
        key = meta.get("tree")
        if key is not None:
            by_key.setdefault(key, []).append(g)
    return list(by_key.values()) if len(by_key) > 1 else None
