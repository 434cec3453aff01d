"""The new-user review's repro: two H100 and an NVSwitch (gen3) dropped from the palette, both GPUs
wired to the switch and to each other, no system frame. It is one host (model/nodes.py): nvls runs,
nvls-tree is refused as within one system, and LL128 is not left out "across systems"."""

import json

from dgxstudio.cli import main
from dgxstudio.model import fileio
from tests.model.test_unframed_systems import two_on_a_switch


def _repro(tmp_path):
    path = tmp_path / "repro.dgxs"
    fileio.save(two_on_a_switch(direct=True), path)
    return str(path)


def test_unframed_gpus_on_an_nvswitch_run_nvls_as_one_system(tmp_path, capsys):
    path = _repro(tmp_path)
    assert main(["simulate", path, "--algorithm", "nvls"]) == 0
    out = capsys.readouterr().out
    assert "nvls as requested" in out, out
    assert main(["simulate", path, "--algorithm", "nvls-tree"]) == 2
    assert "inside one system NCCL uses nvls" in capsys.readouterr().err
    for algo in ("ring", "auto"):
        assert main(["simulate", path, "--algorithm", algo]) == 0
        out = capsys.readouterr().out
        assert "across systems" not in out and "LL128 left out" not in out, out


def test_unframed_design_counts_its_parts_power(tmp_path, capsys):
    """A system without a frame has no published figure: its parts count one by one, as they did."""
    path = _repro(tmp_path)
    assert main(["analyze", path, "--json"]) == 0
    power = json.loads(capsys.readouterr().out)["power"]
    assert power["published_W"] == 1400.0 and power["without_published_figure"] == ["NVSwitch (3rd gen)"]


def test_an_algorithm_the_collective_cannot_run_lists_auto_too(capsys):
    """The s36 review: `--collective all-to-all --algorithm ring` said "(choose from direct)", without
    auto, which every collective takes."""
    assert main(["simulate", "--preset", "dgx-h100", "--collective", "all-to-all", "--algorithm", "ring"]) == 2
    assert "ring is not an algorithm for all-to-all (choose from auto, direct)" in capsys.readouterr().err


def test_scaling_names_the_gpus_of_a_row_as_the_canvas_does(tmp_path, capsys):
    """The s36 review: `scaling` listed "s1.gpu0, s1.gpu1, ..." where the rest of the app says
    "DGX H100 #1 GPU0"; each system is named once where the list enters it (as ring_words does)."""
    from dgxstudio.model.fabrics import build_fat_tree

    path = tmp_path / "two.dgxs"
    fileio.save(build_fat_tree(2, "dgx-h100", rail_optimized=True), path)
    assert main(["scaling", str(path), "--sample-time", "5ms", "--gpus", "s1.gpu0,s1.gpu1,s2.gpu0,s2.gpu1"]) == 0
    out = capsys.readouterr().out
    assert ("a row of N GPUs runs on the first N of: DGX H100 #1 GPU0, GPU1, DGX H100 #2 GPU0, GPU1 "
            "(--gpus chooses them, by id or system)") in out, out
