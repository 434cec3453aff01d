"""The Simulation dock's size fields refuse a fraction of a byte as the CLI does ('1.5' ran 2 bytes)."""

import pytest
from PySide6.QtCore import Qt

MESSAGE = "'1.5' is not a whole number of bytes (a size without a unit is bytes); did you mean 1.5KiB?"


@pytest.mark.parametrize("field, box, text", [("Size", "size", "1.5"), ("Chunk", "chunk", "1.5"),
                                              ("Sweep range", "sweep_range", "1.5:1KiB")])
def test_a_fraction_of_a_byte_is_refused_with_the_clis_words(make_window, qtbot, field, box, text):
    w = make_window("dgx-h100")
    p = w.sim_panel
    p.tabs.setCurrentIndex(0)
    p.sweep.setChecked(box == "sweep_range")
    getattr(p, box).setText(text)
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert p.state.text() == f"Not run: {field}: {MESSAGE}"   # the form refused it: nothing ran, nothing failed
    assert w.results.table.rowCount() == 0 and not p.cancel_button.isEnabled()
