"""A new user's review of main at 3805ef3: what the window said twice or not at all."""

from dgxstudio.model.builders import build_fat_tree

from .test_simulation_gui import run_training_tab


def test_training_summary_explains_the_headline_without_repeating_it(make_window, qtbot):
    # the lecture's A100 pair: "Critical resource at rated figures: infiniband (achievable and simulated:
    # nvlink) - ... (1.88x offered, 1.75x required) (the lecture's verdict, at rated figures; at the catalog's
    # achievable figures NVLink limits: 1.25x offered)", then the Verdicts lines said the same ratios again
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    run_training_tab(w, qtbot, 1, 8, 2, microbatches=4)
    text = w.results.summary.text()
    headline = next(x for x in text.split("<br>") if "Critical resource" in x)
    assert headline.endswith("</b> - the pipeline boundary's infiniband limits; NVLink has 1.07x the headroom the"
                             " tensor traffic needs"), headline
    assert text.count("1.88x") == 1 and "rated: infiniband limits (NVLink offers 1.88x the network" in text
