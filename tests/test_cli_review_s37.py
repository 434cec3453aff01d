"""The s37 new-user review of the CLI: a preset named as a person remembers it ("hgx-b200", "DGX-H100",
"gb200") was refused without a hint, and `pipeline` named its stage GPUs by id ("s1.gpu0") where the
canvas, the Gantt chart and `scaling` name them "DGX H100 #1 GPU0"."""

import pytest

from dgxstudio.cli import main


@pytest.mark.parametrize("typed, meant", [("hgx-b200", "dgx-b200"), ("DGX-H100", "dgx-h100"),
                                          ("dgx_h100", "dgx-h100"), ("gb200", "gb200-nvl72"),
                                          ("dgxa100", "dgx-a100")])
def test_an_unknown_preset_names_the_one_meant(typed, meant, capsys):
    assert main(["simulate", "--preset", typed]) == 2
    said = capsys.readouterr().err
    assert f"unknown preset '{typed}' (did you mean '{meant}'? `dgxstudio presets` lists them)" in said, said


def test_a_preset_nothing_like_any_gets_no_guess(capsys):
    assert main(["info", "--preset", "quantum"]) == 2
    said = capsys.readouterr().err
    assert "unknown preset 'quantum' (`dgxstudio presets` lists them)" in said and "did you mean" not in said, said


@pytest.mark.parametrize("typed", ["a", "1", " ", "-"])
def test_a_character_or_two_gets_no_guess(typed, capsys):
    """"a" or "1" is in nearly every preset's name: the shortest holding it ("did you mean 'dgx-a100'?")
    was a guess from nothing."""
    assert main(["info", "--preset", typed]) == 2
    said = capsys.readouterr().err
    assert f"unknown preset {typed!r} (`dgxstudio presets` lists them)" in said, said


def test_scaling_compare_names_the_preset_meant(capsys):
    assert main(["scaling", "--preset", "dgx1-v100", "--compare", "dgx-p100", "--sample-time", "5ms"]) == 2
    said = capsys.readouterr().err
    assert "--compare dgx-p100: neither a preset (did you mean 'dgx1-p100'?" in said, said


def test_pipeline_names_its_stage_gpus_as_the_canvas_does(tmp_path, capsys):
    from dgxstudio.model import fileio
    from dgxstudio.model.fabrics import build_fat_tree

    path = tmp_path / "two.dgxs"
    fileio.save(build_fat_tree(2, "dgx-h100", rail_optimized=True), path)
    assert main(["pipeline", str(path), "--schedule", "1f1b", "--stages", "4", "--microbatches", "8"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "4 stages on DGX H100 #1 GPU0, GPU1, GPU2, GPU3, 8 micro-batches" in first, first
    assert main(["pipeline", str(path), "--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--json"]) == 0
    assert '"s1.gpu0"' in capsys.readouterr().out   # JSON keeps ids


def test_train_says_gpus_per_thread_as_simulate_does(tmp_path, capsys):
    """`train --gpus-per-thread 8` (the expert all-to-all's launches) ran without a word of it in the
    output; `simulate -g 8` says that one thread drives 8 GPUs."""
    from dgxstudio.model import fileio
    from dgxstudio.model.fabrics import build_fat_tree

    path = tmp_path / "two.dgxs"
    fileio.save(build_fat_tree(2, "dgx-h100", rail_optimized=True), path)
    run = ["train", str(path), "--dp", "2", "--tp", "8", "--experts", "8", "--ep", "2", "--layers", "2"]
    assert main([*run, "--gpus-per-thread", "8"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.endswith("achievable link figures, one thread per 8 GPUs (-g 8)"), head
    assert main(run) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("achievable link figures")
