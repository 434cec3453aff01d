"""A new user's review of main at ebf93db: what the window said wrong."""

from .test_review_s32 import run_collective


def test_the_nvls_legend_promises_dashed_rings_only_when_they_are_drawn(make_window, qtbot):
    """An NVLS run's legend read "nvls-reduce in 4 switches (dashed ring)" while no dashed ring was on
    the canvas: they are drawn round the switches only with "show rings" ticked, which is off by default."""
    w = make_window("dgx-h100")
    assert not w.sim_panel.show_rings.isChecked()
    run_collective(w, qtbot, "all-reduce", "nvls", "64MiB")
    assert "nvls-reduce in 4 switches (a dashed ring with show rings)" in w.legend.entries, w.legend.entries
    w.sim_panel.show_rings.setChecked(True)
    run_collective(w, qtbot, "all-reduce", "nvls", "64MiB")
    assert "nvls-reduce in 4 switches (dashed ring)" in w.legend.entries, w.legend.entries
