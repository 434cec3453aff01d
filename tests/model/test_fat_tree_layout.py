"""A fat tree's canvas layout reads at fit (issue 17): the 64-system DGX A100 tree (32 leaves of two
systems) was one line of leaves, a strip 6.5 times as wide as tall. Two lines of leaves mirrored
about the spine row keep every leaf-spine cable between the leaf rows, off the systems. Since session
37 a leaf's systems stand in a row under it (tests/model/test_fat_tree_rows.py), so the tree is wider
than when they stood in a column (staggered in two rows, they take 100 units each, not 170): two
lines still halve it."""

from dgxstudio.model.fabrics import COLUMN, build_fat_tree


def _extent(topo, ids):
    xs = [topo.layout.positions[i][0] for i in ids]
    ys = [topo.layout.positions[i][1] for i in ids]
    return min(xs), max(xs), min(ys), max(ys)


def _parts(topo):
    systems = [g for g in topo.groups.values() if g.kind == "system"]
    switches = [d for d in topo.devices if d.startswith(("leaf", "spine"))]
    return systems, switches


def test_64_dgx_a100_is_two_lines_not_one_strip():
    topo = build_fat_tree(64, "dgx-a100")
    systems, switches = _parts(topo)
    x0, x1, y0, y1 = _extent(topo, [g.id for g in systems] + switches)
    assert len({topo.layout.positions[d][1] for d in switches if d.startswith("leaf")}) == 2
    assert (x1 - x0) / (y1 - y0) < 2.5, (x1 - x0, y1 - y0)


def test_leaf_spine_cables_cross_no_system_and_systems_sit_by_their_leaf():
    for topo in (build_fat_tree(64, "dgx-a100"), build_fat_tree(124, "dgx1-v100"),
                 build_fat_tree(128, "dgx-h100", rail_optimized=True)):
        pos = topo.layout.positions
        systems, _ = _parts(topo)
        leaf_ys = sorted({pos[d][1] for d in topo.devices if d.startswith("leaf")})
        spine_ys = {pos[d][1] for d in topo.devices if d.startswith("spine")}
        low, high = min(leaf_ys + list(spine_ys)), max(leaf_ys + list(spine_ys))
        assert all(not low <= pos[g.id][1] <= high for g in systems), topo.name
        # a system sits under its leaf (in its leaf's or unit's bay), on the side of the leaf away from the spines
        for link in topo.links.values():
            leaf = link.b if link.b.startswith("leaf") else None
            owner = topo.group_of(link.a) if leaf else None
            if owner is None:
                continue
            system = next(g.id for g in topo.group_chain(owner.id) if g.kind == "system")
            (sx, sy), (lx, ly) = pos[system], pos[leaf]
            if not topo.name.count("rail-optimized"):
                per_leaf = len({next(g.id for g in topo.group_chain(topo.group_of(lk.other(leaf)).id) if g.kind == "system")
                                for lk in topo.links_of(leaf)
                                if not lk.other(leaf).startswith("spine")})
                assert abs(sx - lx) <= max(per_leaf - 1, 1) * COLUMN / 2 + 1e-9, (system, leaf)
            spine_y = next(iter(spine_ys))
            assert abs(sy - spine_y) > abs(ly - spine_y), (system, leaf)


def test_a_tree_that_fits_in_one_line_keeps_it():
    topo = build_fat_tree(4, "dgx-a100")
    ys = {topo.layout.positions[d][1] for d in topo.devices if d.startswith("leaf")}
    assert len(ys) == 1
