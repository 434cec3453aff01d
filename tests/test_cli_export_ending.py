"""`export` refuses an output named for another format: `--format svg -o x.png` wrote SVG text into a
file every picture viewer opens as PNG (a review of stop 33)."""

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_output_named_for_another_format_is_refused_and_left_alone(capsys, tmp_path):
    picture = tmp_path / "x.png"
    picture.write_bytes(b"an older picture")
    code, out, err = run(capsys, "export", "--preset", "dgx-h100", "--format", "svg", "-o", str(picture))
    assert code == 2
    assert "its ending .png is for --format png" in err and "name the file .svg" in err
    assert picture.read_bytes() == b"an older picture"
    code, _, err = run(capsys, "export", "--preset", "dgx-h100", "--format", "graphml", "-o", str(tmp_path / "t.xml"))
    assert code == 2 and "--format nccl-xml" in err
    assert not (tmp_path / "t.xml").exists()


def test_its_own_ending_or_one_no_format_claims_is_written(capsys, tmp_path):
    for fmt, name in (("svg", "x.SVG"), ("dot", "x.gv"), ("graphml", "x"), ("nccl-xml", "x.xml")):
        code, out, err = run(capsys, "export", "--preset", "dgx-h100", "--format", fmt, "-o", str(tmp_path / name))
        assert code == 0, err
        assert (tmp_path / name).stat().st_size > 0
