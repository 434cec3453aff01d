"""What a reviewer found on a large DGX H100 cluster: names elided where they differ, a progress bar
left behind by a refused run, Select all and Auto-layout at the overview's fit doing nothing silently."""

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dgxstudio.model.fabrics import build_fat_tree


def test_nvswitch_names_keep_the_end_that_tells_them_apart(make_window, qtbot):
    """'DGX H100 #12 NVSwitch0' was drawn 'DGX H…itch0', the same for all four switches of a system."""
    w = make_window(topology=build_fat_tree(12, "dgx-h100", rail_optimized=True))
    system = next(g for g in w.scene.group_items.values() if g.title == "DGX H100 #12")
    w.view.centerOn(system)
    QTest.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                      pos=w.view.mapFromScene(system.sceneBoundingRect().center()))
    qtbot.waitUntil(lambda: any("NVSwitch" in d.name for d in w.scene.device_items.values()), timeout=3000)
    switches = sorted((d for d in w.scene.device_items.values() if d.name.startswith("DGX H100 #12 NVSwitch")),
                      key=lambda d: d.name)
    assert len(switches) == 4
    for i, d in enumerate(switches):
        assert d.label_lines[-1] == f"NVSwitch{i}", d.label_lines
        assert "#12" in d.label_lines[0], d.label_lines
    assert len({tuple(d.label_lines) for d in switches}) == 4
