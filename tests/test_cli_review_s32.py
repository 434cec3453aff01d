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


def test_train_explanation_does_not_repeat_its_headline_or_the_verdict_lines(capsys, tmp_path):
    # the lecture's A100 pair read "critical resource at rated figures: infiniband (achievable and simulated:
    # nvlink) - the pipeline boundary's infiniband is the limit; NVLink has 1.07x the headroom ... (1.88x
    # offered, 1.75x required) (the lecture's verdict, at rated figures; at the catalog's achievable figures
    # NVLink limits: 1.25x offered)", each part said again by the headline or the verdict lines below it
    lines = {}
    for system in ("dgx-a100", "hgx-a800"):
        path = str(tmp_path / f"{system}.dgxs")
        assert run(capsys, "generate", "fat-tree", "--systems", "2", "--system", system, "-o", path)[0] == 0
        code, out, _ = run(capsys, "train", path, "--tp", "8", "--pp", "2")
        assert code == 0
        lines[system] = next(x for x in out.splitlines() if "critical resource" in x)
        assert "offered" not in lines[system] and "required" not in lines[system]
        assert "rated:      " in out and "achievable: " in out   # the ratios stay, once, in the verdict lines
    assert lines["dgx-a100"] == ("  critical resource at rated figures: infiniband (achievable and simulated: nvlink)"
                                 " - the pipeline boundary's infiniband limits; NVLink has 1.07x the headroom the"
                                 " tensor traffic needs")
    assert lines["hgx-a800"] == ("  critical resource at rated figures: nvlink (achievable and simulated agree)"
                                 " - NVLink offers 0.71x the bandwidth the tensor traffic needs against the network")
    code, out, _ = run(capsys, "train", str(tmp_path / "dgx-a100.dgxs"), "--dp", "16")
    assert "  critical resource: compute - 96% of the iteration; the infiniband links are the busiest" in out
    code, out, _ = run(capsys, "train", str(tmp_path / "dgx-a100.dgxs"), "--tp", "8", "--pp", "2", "--json")
    words = json.loads(out)["critical_resource_words"]   # the JSON's sentence stands alone, unchanged
    assert "(1.88x offered, 1.75x required)" in words


def test_a_latency_bound_run_does_not_say_100_percent_idle_beside_busy_links(capsys):
    # a 1 KiB all-to-all on a DGX H100 read "no byte moved on any link for 100% of the run" above links
    # listed 0.3% busy: the share was 99.7% (99.8% and 0.1% since the all-to-all pays NCCL's p2p launch)
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--collective", "all-to-all", "--size", "1KiB")
    assert code == 0
    assert "no byte moved on any link for 99.8% of the run" in out and "0.1% busy" in out
    from dgxstudio.sim.latency_bound import percent
    assert [percent(x) for x in (0.0, 1.0, 0.5, 0.997, 0.9999, 0.003, 0.0004)] == [
        "0%", "100%", "50%", "99.7%", "over 99.9%", "0.3%", "under 0.1%"]


def test_a_switch_part_that_is_an_nvswitch_reads_an_nvswitch(capsys, tmp_path):
    # "--switch nvswitch-gen3: NVSwitch (3rd gen) is a NVSwitch", where `--gpus nvswitch0` says "an NVSwitch"
    code, _, err = run(capsys, "generate", "fat-tree", "--systems", "4", "--switch", "nvswitch-gen3",
                       "-o", str(tmp_path / "x.dgxs"))
    assert code == 2 and "NVSwitch (3rd gen) is an NVSwitch, not an InfiniBand or Ethernet switch" in err
    from dgxstudio.model.catalog import with_article
    assert [with_article(x) for x in ("NVSwitch", "NIC", "InfiniBand switch", "ConnectX-7", "Ethernet switch")] == [
        "an NVSwitch", "a NIC", "an InfiniBand switch", "a ConnectX-7", "an Ethernet switch"]


def test_the_report_says_what_the_rings_alone_allow_beside_the_bound(capsys, tmp_path):
    # `report --algorithm ring` on a DGX H100: "topology bound 575.40 GB/s" and "share of the bound 61.6%"
    # with no word that NCCL's rings allow 369.90 GB/s, which `simulate` says
    report = tmp_path / "r.html"
    assert run(capsys, "report", "--preset", "dgx-h100", "--algorithm", "ring", "--size", "64MiB",
               "-o", str(report))[0] == 0
    assert "575.40 GB/s (any algorithm; NCCL&#x27;s rings alone allow 369.90 GB/s)" in report.read_text()
