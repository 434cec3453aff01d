"""A new user's review of main at 3805ef3: what the command line said wrong or left out."""

import json

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_says_a_file_has_validation_errors_and_names_the_first(capsys, tmp_path):
    # `info` on a file with an unknown GPU part printed a clean summary (exit 0, no word of it), while
    # `simulate` refused the same file; it now counts the findings and names the first
    text = (tmp_path / "ok.dgxs")
    assert run(capsys, "new", "--preset", "dgx-h100", "-o", str(text))[0] == 0
    bad = tmp_path / "bad.dgxs"
    bad.write_text(text.read_text().replace('"part": "h100-sxm5-80gb", "name": "GPU3"',
                                            '"part": "h100-bogus", "name": "GPU3"'))
    code, out, _ = run(capsys, "info", str(bad))
    assert code == 0
    assert ("  findings: 1 error, 0 warnings; the first: GPU3 (gpu3): unknown part 'h100-bogus'"
            " (`dgxstudio validate` lists them)") in out
    code, out, _ = run(capsys, "info", str(bad), "--json")
    found = json.loads(out)["findings"]
    assert found["errors"] == 1 and found["warnings"] == 0
    assert found["first"]["code"] == "unknown-part" and found["first"]["devices"] == ["gpu3"]
    code, out, _ = run(capsys, "info", str(text))
    assert code == 0 and "  findings: none\n" in out
    code, out, _ = run(capsys, "info", str(text), "--json")
    assert json.loads(out)["findings"] == {"errors": 0, "warnings": 0, "first": None}


def test_chunk_bytes_is_reported_only_for_algorithms_that_cut_in_chunks(capsys, tmp_path):
    # `simulate --json` said "chunk_bytes": 4194304 for NCCL's ring, which pipelines in NCCL's own slices
    # (a 1 B and a 64 MiB --chunk give the same time, and the GUI greys its Chunk box for it)
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--collective", "all-reduce", "--algorithm", "ring",
                       "--size", "64MiB", "--json")
    assert code == 0 and json.loads(out)["chunk_bytes"] is None
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--collective", "all-reduce", "--algorithm", "nvls",
                       "--size", "64MiB", "--chunk", "1MiB", "--json")
    assert code == 0 and json.loads(out)["chunk_bytes"] == 2**20
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--collective", "all-reduce", "--algorithm",
                       "single-ring", "--size", "64MiB", "--json")
    assert json.loads(out)["chunk_bytes"] == 4 * 2**20
    report = tmp_path / "r.html"
    assert run(capsys, "report", "--preset", "dgx-h100", "--algorithm", "tree", "--size", "64MiB", "-o", str(report))[0] == 0
    assert "not used: tree pipelines in NCCL&#x27;s own slices" in report.read_text()
    assert json.loads((tmp_path / "r.json").read_text())["runs"][0]["chunk_bytes"] is None
