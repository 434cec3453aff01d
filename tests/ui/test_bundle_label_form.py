"""Bundle labels of a view all take one form: the SuperPOD presets at fit read "x256  12.8 TB/s per
direction", "x256" and "x256  12.8 TB/s/dir" side by side (each bundle took the longest of its texts
that fitted where the labels before it had left room)."""

import pytest


@pytest.mark.parametrize("preset", ["dgx-h100-superpod", "dgx-a100-superpod"])
def test_bundle_labels_at_fit_take_one_form(make_window, qtbot, preset):
    w = make_window(preset)
    w.view.fit()
    qtbot.wait(20)
    lod = w.scene.lod
    placed = lod._place_labels(w.view.viewportTransform())
    assert len(placed) >= 4   # (the H100 SuperPOD's four spine-leaf bundles: three labelled before)
    forms = {[text for text, _ in item.texts].index(text) for item, _box, text in placed}
    assert len(forms) == 1, sorted(text for _item, _box, text in placed)
