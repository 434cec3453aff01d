"""Every switch block of a cluster's overview names itself at fit: a pod's spines read 'Pod 3' (not
'3 spine 1 – 32', nor nothing when that does not fit), the lone core block 'Core'."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.analysis.cluster_overview import build_overview


def shown_names(w) -> dict[str, str]:
    """The first line each block drew (its name), as painted in the view now."""
    w.view.viewport().grab()   # paints every block at the view's scale
    return {bid: (item._text._shown[0][0] if item._text is not None and item._text._shown else "")
            for bid, item in w.scene.lod.block_items.items()}


def test_spine_and_core_blocks_name_themselves_at_fit(make_window, qtbot):
    w = make_window(topology=build_fat_tree(512, "dgx-h100", rail_optimized=True))
    w.view.fit()
    qtbot.wait(5)
    lod = w.scene.lod
    names = shown_names(w)
    tiers = {bid: lod.overview.blocks[bid].tier for bid in names}
    spines = sorted(names[b] for b, t in tiers.items() if t == 2)
    assert spines == ["Pod 1", "Pod 2", "Pod 3", "Pod 4"] or spines == sorted(
        lod.overview.blocks[b].label for b, t in tiers.items() if t == 2), spines
    core = [names[b] for b, t in tiers.items() if t == 3]
    assert core in (["Core"], [lod.overview.blocks[b].label for b, t in tiers.items() if t == 3]), core
    assert all(names[b] for b, t in tiers.items() if t == 0), "scalable units are named"


def test_short_names_keep_the_word_their_number_belongs_to():
    ov = build_overview(build_fat_tree(512, "dgx-h100", rail_optimized=True))
    shorts = {b.label: b.short for b in ov.blocks.values() if b.tier >= 1}
    assert shorts["Pod 3 spine 1 – 32"] == "Pod 3"
    assert shorts["Leaf 9 – 16"] == "9 – 16"   # the row's name says they are leaves
    assert [s for label, s in shorts.items() if label.startswith("Core")] == ["Core"]


def test_a_device_joined_to_nothing_sits_in_a_row_named_for_it():
    from dgxstudio.model.topology import Device

    topo = build_fat_tree(512, "dgx-h100", rail_optimized=True)
    topo.add_device(Device("spare", topo.devices["leaf1"].kind, topo.devices["leaf1"].part, "Spare switch"))
    ov = build_overview(topo)
    rows = [name for name, _top, _h in ov.tier_rows]
    # it was 'Tier 4 switches', above the core, as if it were the cluster's top tier
    assert rows[0] == "Not connected" and not any(r.startswith("Tier") for r in rows), rows
    assert rows[1:] == ["Core switches", "Spine switches", "Leaves and units"]
