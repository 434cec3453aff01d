"""A fat tree's systems in a row under their leaf (new-user review, session 37): each leaf's systems
were stacked in a column under it, so its cables to the lower systems ran behind the systems above
(a daisy chain on the canvas, in SVG/PNG export and on the report's first page). Every cable from a
switch to a system must reach that system's box without crossing another system's box."""

import pytest

from dgxstudio.model.fabrics import SYSTEM_BOX, build_fat_tree


def _crosses(p, q, centre, w, h) -> bool:
    """Whether the segment p-q meets the w x h box centred at ``centre`` (Liang-Barsky clipping)."""
    (x0, y0), (x1, y1), (cx, cy) = p, q, centre
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for d, a, b in ((dx, x0 - (cx - w / 2), (cx + w / 2) - x0), (dy, y0 - (cy - h / 2), (cy + h / 2) - y0)):
        for pk, qk in ((-d, a), (d, b)):
            if pk == 0:
                if qk < 0:
                    return False
            else:
                t = qk / pk
                if pk < 0:
                    lo = max(lo, t)
                else:
                    hi = min(hi, t)
    return lo <= hi


def _system_cables(topo):
    """(switch, system) for every cable between a fabric switch and a NIC of a system."""
    out = set()
    for link in topo.links.values():
        for dev, other in ((link.a, link.b), (link.b, link.a)):
            owner = topo.group_of(dev)
            if owner is None or topo.devices[other].kind not in ("ib_switch", "eth_switch"):
                continue
            system = next((g.id for g in topo.group_chain(owner.id) if g.kind == "system"), None)
            if system is not None:
                out.add((other, system))
    return out


# every tree that is not rail-optimized (those keep their unit rows: fabrics._UnitRows says why)
CASES = [(4, "dgx-a100", {}), (4, "dgx-h100", {}), (8, "dgx-a100", {}), (8, "dgx-h100", {}),
         (16, "dgx-a100", {}), (16, "dgx-h100", {}), (64, "dgx-a100", {}), (64, "dgx-h100", {}),
         (124, "dgx1-v100", {}), (33, "dgx-h100", {}), (12, "dgx-b200", {}), (40, "dgx-h100", {"per_leaf": 3}),
         (6, "dgx-h100", {"nics_per_system": 2, "per_leaf": 1}), (200, "dgx-a100", {"tiers": 3}),
         (8, "dgx-h100", {"oversubscription": 2})]
RAIL = [(16, "dgx-h100", {"rail_optimized": True}), (64, "dgx-h100", {"rail_optimized": True}),
        (40, "dgx-h100", {"rail_optimized": True, "per_leaf": 16})]


@pytest.mark.parametrize("n,system,options", CASES)
def test_no_cable_to_a_system_passes_behind_another(n, system, options):
    topo = build_fat_tree(n, system, **options)
    pos = topo.layout.positions
    systems = [g.id for g in topo.groups.values() if g.kind == "system"]
    w, h = SYSTEM_BOX
    cables = _system_cables(topo)
    assert {s for _, s in cables} == set(systems)
    for switch, system in cables:
        for other in systems:
            if other != system:
                assert not _crosses(pos[switch], pos[system], pos[other], w + 4, h + 4), (switch, system, other)


@pytest.mark.parametrize("n,system,options", CASES + RAIL)
def test_systems_do_not_overlap(n, system, options):
    topo = build_fat_tree(n, system, **options)
    pos = topo.layout.positions
    at = [pos[g.id] for g in topo.groups.values() if g.kind == "system"]
    w, h = SYSTEM_BOX
    spots = sorted(at)
    for (x0, y0), (x1, y1) in zip(spots, spots[1:]):
        assert abs(x1 - x0) >= w + 20 or abs(y1 - y0) >= h + 20
