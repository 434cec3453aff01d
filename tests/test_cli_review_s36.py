"""The s36 new-user review of the CLI: `export --format nccl-xml` on a cluster said "choose one of
s1.system, s2.system, ..." without the option that chooses (`--system`) and with ids the canvas does
not show."""

from dgxstudio.cli import main


def test_nccl_xml_of_a_cluster_says_how_to_choose_a_system(tmp_path, capsys):
    from dgxstudio.model import fileio
    from dgxstudio.model.fabrics import build_fat_tree

    path = tmp_path / "two.dgxs"
    fileio.save(build_fat_tree(2, "dgx-h100", rail_optimized=True), path)
    out = tmp_path / "one.xml"
    assert main(["export", str(path), "--format", "nccl-xml", "-o", str(out)]) == 2
    said = capsys.readouterr().err
    assert ("NCCL XML describes one system; choose one of DGX H100 #1 (s1.system), DGX H100 #2 (s2.system), "
            "with --system (its id or name)") in said, said
    assert not out.exists()
    assert main(["export", str(path), "--format", "nccl-xml", "-o", str(out), "--system", "DGX H100 #2"]) == 0
    assert out.exists()


def test_a_truncated_file_says_it_ends_early_without_at_at(tmp_path, capsys):
    """A .dgxs cut short (a copy or download that stopped) read "Unterminated string starting at at
    line 33 column 48": json's message ends in "at", and the loader added another."""
    from dgxstudio.model import fileio
    from dgxstudio.model.presets import load_preset

    whole = tmp_path / "whole.dgxs"
    fileio.save(load_preset("dgx-h100"), whole)
    text = whole.read_text()
    cut = tmp_path / "cut.dgxs"
    quote = text.index('"name"', 2000) + 3   # inside a string
    cut.write_text(text[:quote])
    assert main(["info", str(cut)]) == 2
    said = capsys.readouterr().err
    line = text[:quote].count("\n") + 1
    assert f"{cut}: not valid JSON: the file ends at line {line} before its JSON does (cut short?): " \
           f"Unterminated string starting at line {line} column " in said, said
    assert "at at" not in said
    cut.write_text(text[:text.index("[", 2000) + 1])   # after an opening bracket
    assert main(["info", str(cut)]) == 2
    assert "before its JSON does (cut short?): Expecting value at line" in capsys.readouterr().err
    bad = tmp_path / "bad.dgxs"
    bad.write_text('{"devices": [1,\n 2 oops]}')   # a mistake inside: no word of an end
    assert main(["info", str(bad)]) == 2
    said = capsys.readouterr().err
    assert "not valid JSON: Expecting ',' delimiter at line 2 column 4" in said and "cut short" not in said, said


def test_a_negative_time_says_it_is_negative(capsys):
    # "--fwd-time: cannot read time '-2ms'" gave no reason: the number and unit read well
    assert main(["pipeline", "--preset", "dgx-h100", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8",
                 "--fwd-time", "-2ms"]) == 2
    assert ("--fwd-time: cannot read time '-2ms': a time cannot be negative (examples: 2ms, 150us, 0.5s)"
            in capsys.readouterr().err)
    assert main(["scaling", "--preset", "dgx-h100", "--sample-time", "x5ms"]) == 2
    said = capsys.readouterr().err
    assert "--sample-time: cannot read time 'x5ms' (examples" in said and "negative" not in said
