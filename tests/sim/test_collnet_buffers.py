"""CollNet's bounded buffers (issue #17: CollNet at 16,384 GPUs; #13: NCCL's structure): every
connection holds NCCL_STEPS step buffers, so a rail's chain cannot run more than ``slots`` pieces
ahead of its SHARP stage (sim/collnet_chain.py). Without the bound the chains, on NVLink, ran ahead
of the slower network and a 16 GiB call over 2,048 systems never settled within the engine's budget."""

import re

import pytest

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.sim import tuning as T
from dgxstudio.sim.run import SimOptions, Simulator

MiB = 2**20
EPS = 1e-15


def _run(topo, size):
    return Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run("all-reduce", "collnet",
                                                                                         size).sim


def _lanes(r):
    """Per rail: each chain level's groups by direction, and the SHARP groups by phase and level,
    piece by piece."""
    lanes: dict[tuple, dict[int, int]] = {}
    for i, g in enumerate(r.groups):
        m = g.meta
        if m.get("phase") in ("up", "down"):
            lanes.setdefault((m["tree"], m["phase"], m["level"]), {})[m["piece"]] = i
        elif m.get("phase") in ("sharp-reduce", "sharp-broadcast"):
            rail, level = re.fullmatch(r"(collnet rail \d+) SHARP \w+ piece \d+(?: level (\d+))?", g.name).groups()
            lanes.setdefault((rail, m["phase"], int(level or 0)), {})[m["piece"]] = i
    return lanes


# DGX H100 systems with 200 Gb/s HDR NICs: the SHARP stage runs at the NICs' rate, the chains on
# NVLink faster, so unbounded chains run ahead (the last test checks that the bound binds here)
HDR = "connectx-6-hdr"
CASES = [("2 DGX H100, HDR NICs", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True, nic=HDR), 256 * MiB),
         ("4 DGX H100, HDR NICs, two systems a leaf (a two-level SHARP tree)",
          lambda: build_fat_tree(4, "dgx-h100", rail_optimized=True, per_leaf=2, nic=HDR), 256 * MiB)]


@pytest.mark.parametrize("label, build, size", CASES)
def test_a_collnet_chain_runs_at_most_the_buffer_slots_ahead_of_its_sharp_stage(label, build, size):
    slots = T.slots_per_connection("all-reduce")
    assert slots == 4  # NCCL_STEPS 8 step buffers, a piece (slice) of 2 steps
    r = _run(build(), size)
    lanes = _lanes(r)
    rails = sorted({k[0] for k in lanes if k[1] == "sharp-reduce"})
    assert len(rails) == 8, label
    checked = 0
    for rail in rails:
        levels = sorted(k[2] for k in lanes if k[0] == rail and k[1] == "sharp-reduce")
        into_net = lanes[(rail, "sharp-reduce", levels[0])]
        back = lanes[(rail, "sharp-broadcast", max(levels))]
        up1, down1 = lanes[(rail, "up", 1)], lanes[(rail, "down", 1)]
        assert len(into_net) >= 8 * slots, label  # enough pieces for the bound to matter
        for j in range(slots, len(into_net)):
            # the head's buffer for its chain: freed when the head has sent piece j - slots on
            assert r.group_start[up1[j]] >= r.group_sent[into_net[j - slots]] - EPS, (label, rail, j)
            # its send buffer into the network: freed when piece j - slots has come back reduced
            assert r.group_start[into_net[j]] >= r.group_done[back[j - slots]] - EPS, (label, rail, j)
            # its receive buffer: freed when the head has passed piece j - slots down its chain
            assert r.group_start[into_net[j]] >= r.group_sent[down1[j - slots]] - EPS, (label, rail, j)
            checked += 1
        # deeper chain levels: a receiver frees a piece once it forwards it up
        for (tree, phase, level), ids in lanes.items():
            if tree != rail or phase != "up" or level < 2:
                continue
            onward = lanes[(rail, "up", level - 1)]
            for j in range(slots, len(ids)):
                assert r.group_start[ids[j]] >= r.group_sent[onward[j - slots]] - EPS, (label, rail, level, j)
    assert checked


def test_without_the_bound_the_chains_would_run_ahead(monkeypatch):
    # the first case is one where the bound binds: with unbounded buffers (slots 0) the chain's
    # first hop up starts some piece before the head has sent the piece `slots` before it on
    label, build, size = CASES[0]
    topo = build()
    slots = T.slots_per_connection("all-reduce")
    bounded = _run(topo, size)
    monkeypatch.setattr(T, "slots_per_connection", lambda collective: 0)
    free = _run(topo, size)
    lanes = _lanes(free)
    into_net = lanes[("collnet rail 0", "sharp-reduce", 0)]
    up1 = lanes[("collnet rail 0", "up", 1)]
    assert any(free.group_start[up1[j]] < free.group_sent[into_net[j - slots]] - 1e-12
               for j in range(slots, len(into_net))), label
    lanes = _lanes(bounded)
    into_net = lanes[("collnet rail 0", "sharp-reduce", 0)]
    up1 = lanes[("collnet rail 0", "up", 1)]
    assert all(bounded.group_start[up1[j]] >= bounded.group_sent[into_net[j - slots]] - EPS
               for j in range(slots, len(into_net)))


@pytest.mark.parametrize("label, build, size", [
    ("2 DGX H100", lambda: build_fat_tree(2, "dgx-h100", rail_optimized=True), 1024 * MiB),
    *CASES[1:],
])
def test_pieces_added_as_columns_give_the_piece_by_piece_answer(monkeypatch, label, build, size):
    # once the buffers are in steady use a rail's pieces are added as copies of the last one built
    # (sched.repeat_piece); the run must be the one of the schedule built piece by piece
    from dgxstudio.sim.schedule import Lanes, Schedule

    topo = build()
    sim = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True))
    sched, _, _ = sim.nccl_schedule("all-reduce", "collnet", "simple", size)
    assert any(isinstance(c, Lanes) for c in sched.groups._chunks), label  # (the columns are used)
    fast = _run(topo, size)
    monkeypatch.setattr(Schedule, "repeat_piece", lambda *args: False)
    slow = _run(topo, size)
    assert len(fast.groups) == len(slow.groups)
    assert [g.name for g in fast.groups] == [g.name for g in slow.groups]
    assert [g.meta for g in fast.groups] == [g.meta for g in slow.groups]
    assert fast.time_s == slow.time_s and fast.events == slow.events
    assert (fast.group_done == slow.group_done).all() and (fast.group_sent == slow.group_sent).all()
