"""What a reviewer using the CLI as a new architect found: numbers whose labels did not add up,
options silently ignored, messages in the engine's units instead of the user's."""

import pytest

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_links_line_adds_up(capsys):
    """`links: 55 (144 x NVLink4, 22 x PCIe5, 4 x UPI)` did not add up: say connections and cables."""
    code, out, _ = run(capsys, "info", "--preset", "dgx-h100")
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("links:"))
    assert "55 connections, 170 physical" in line
    assert "144 x NVLink4" in line


def test_analyze_says_how_many_rings_it_did_not_list(capsys):
    """DGX H100 has 9 rings; the text listed 8 and said nothing of the ninth."""
    code, out, _ = run(capsys, "analyze", "--preset", "dgx-h100")
    assert code == 0
    assert "rings: 9 over NVLink: " in out
    assert sum(x.strip().startswith("ring ") for x in out.splitlines()) == 8
    assert "1 more ring(s) (--json lists all 9)" in out
    assert "GB/s bidirectional]" in out and "both directions]" not in out


def test_analyze_says_how_its_ring_bound_adds_up(capsys):
    """A new user read '[50.0 GB/s bidirectional]' per ring and a bound of 300 (= 6 x 50) as adding
    a bidirectional figure into a per-direction bus bandwidth, and could not tell the bound was at
    peak figures while simulate's is at achievable ones."""
    code, out, _ = run(capsys, "analyze", "--preset", "dgx-a100")
    assert code == 0
    assert "bound 300.0 GB/s at peak link figures (NCCL runs each ring both ways" in out
    assert "rated" not in out   # the report and `--figures peak|achievable` say "peak" for the same figures
    assert "[25.0 GB/s per direction, 50.0 GB/s bidirectional]" in out


@pytest.mark.parametrize("value, says", [("-3", "-3 GB/s is out of range"), ("0", "0 GB/s is out of range"),
                                         ("nan", "not a finite number of GB/s"),
                                         ("inf", "not a finite number of GB/s"),
                                         ("abc", "expected a number of GB/s")])
def test_reduce_bw_refused_in_the_users_unit(capsys, value, says):
    """`--reduce-bw -3` said `reduction cost (s per byte): -3.33333e-10 is out of range`."""
    code, _, err = run(capsys, "simulate", "--preset", "dgx-a100", "--size", "1MiB", f"--reduce-bw={value}")
    assert code == 2
    assert "--reduce-bw: " in err and says in err
    assert "s per byte" not in err


def test_reduce_bw_too_slow_named_in_gb_per_s(capsys):
    code, _, err = run(capsys, "simulate", "--preset", "dgx-a100", "--size", "1MiB", "--reduce-bw=1e-30")
    assert code == 2
    assert "--reduce-bw: 1e-30 GB/s is below" in err and "s per byte" not in err


def test_reduce_bw_accepted(capsys):
    code, _, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--size", "1MiB", "--reduce-bw", "50", "--json")
    assert code == 0


def test_export_system_refused_for_formats_that_ignore_it(capsys, tmp_path):
    """`export --format svg --system nosuch` wrote the whole topology and exited 0."""
    out = tmp_path / "x.svg"
    code, _, err = run(capsys, "export", "--preset", "dgx1-v100", "--format", "svg", "--system", "nosuch",
                       "-o", str(out))
    assert code == 2
    assert "--system applies to --format nccl-xml only" in err
    assert not out.exists()


def test_export_system_still_works_for_nccl_xml(capsys, tmp_path):
    out = tmp_path / "x.xml"
    code, _, err = run(capsys, "export", "--preset", "dgx1-v100", "--format", "nccl-xml", "--system", "nosuch",
                       "-o", str(out))
    assert code == 2 and "no system 'nosuch'" in err
    topo = tmp_path / "h.dgxs"
    assert run(capsys, "generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "-o", str(topo))[0] == 0
    code, _, _ = run(capsys, "export", str(topo), "--format", "nccl-xml", "--system", "s1.system", "-o", str(out))
    assert code == 0 and out.read_text().startswith("<")


def test_a_topology_without_gpus_is_named_not_the_option(capsys, tmp_path):
    """`analyze empty.dgxs` said `--gpus: the topology has no GPUs` though no --gpus was given."""
    path = tmp_path / "empty.dgxs"
    assert run(capsys, "new", "-o", str(path))[0] == 0
    for argv in (("analyze", str(path)), ("simulate", str(path)), ("train", str(path), "--tp", "1")):
        code, _, err = run(capsys, *argv)
        assert code == 2
        assert "Untitled: the topology has no GPUs" in err and "--gpus" not in err
    code, _, err = run(capsys, "simulate", str(path), "--gpus", "gpu0")
    assert code == 2 and err.startswith("dgxstudio: error: --gpus:")


def test_simulate_names_the_ring_ceiling_when_the_bound_is_another_algorithms(capsys):
    """DGX H100: 'topology bound 575 GB/s' is NVLS's; a ring run at 368 GB/s read as 64% used although
    it sits at NCCL's ring ceiling. The header now gives both."""
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--size", "1GiB")
    assert code == 0
    line = next(x for x in out.splitlines() if "topology bound" in x)
    assert "575.40 GB/s (any algorithm; NCCL's rings alone allow 369.90 GB/s)" in line
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--size", "1GiB")
    line = next(x for x in out.splitlines() if "topology bound" in x)
    assert line.strip() == "topology bound (bus bandwidth): 240.00 GB/s"  # rings are the bound: nothing to add


def test_connectx7_on_an_edr_switch_links_at_edr_with_a_finding(capsys, tmp_path):
    """ConnectX-7 interoperates with EDR switches (its user manual); generate refused it with
    'no common speed'."""
    out = tmp_path / "mix.dgxs"
    code, _, err = run(capsys, "generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "--nic",
                       "connectx-7-ndr", "--switch", "ib-switch-edr-36", "-o", str(out))
    assert code == 0, err
    code, text, _ = run(capsys, "validate", str(out))
    assert code == 0 and "links at InfiniBand EDR (100 Gb/s)" in text and "below its 400 Gb/s" in text


def test_scaling_compare_names_what_it_could_not_find(capsys):
    """`--compare nosuch` (the help says PRESET) answered `nosuch: no such file`."""
    code, _, err = run(capsys, "scaling", "--preset", "dgx-a100", "--sample-time", "5ms", "--compare", "nosuch")
    assert code == 2 and "--compare nosuch: neither a preset" in err


def test_scaling_names_the_time_option_at_fault(capsys):
    code, _, err = run(capsys, "scaling", "--preset", "dgx-a100", "--sample-time", "5ms", "--overhead=abc")
    assert code == 2 and err.startswith("dgxstudio: error: --overhead: ") and "--sample-time" not in err
    code, _, err = run(capsys, "scaling", "--preset", "dgx-a100", "--sample-time", "5parsecs")
    assert code == 2 and err.startswith("dgxstudio: error: --sample-time: ") and "--overhead" not in err


def _over_budget(tmp_path):
    """A DGX-1 V100 whose gpu0-gpu1 link is 9 NVLinks: GPU0 and GPU1 use 14 of their 6 ports."""
    import json

    path = tmp_path / "bad.dgxs"
    assert main(["new", "--preset", "dgx1-v100", "-o", str(path)]) == 0
    doc = json.loads(path.read_text())
    doc["links"][0]["count"] = 9
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("argv", [("simulate", "--size", "1MiB"), ("train", "--tp", "8"),
                                  ("pipeline", "--stages", "2", "--microbatches", "2"),
                                  ("scaling", "--sample-time", "5ms"), ("report", "-o", "REPORT")])
def test_every_run_refuses_a_topology_with_errors_with_exit_1(capsys, tmp_path, argv):
    """train and pipeline ran on it (exit 0); simulate, scaling and report refused with exit 2; the
    README reserves 1 for validation findings."""
    path = _over_budget(tmp_path)
    capsys.readouterr()
    argv = [str(tmp_path / "r.html") if a == "REPORT" else a for a in argv]
    code, out, err = run(capsys, argv[0], path, *argv[1:])
    assert code == 1
    assert "the topology has 2 error(s); fix them first" in err and "14 nvlink ports" in err
    assert not (tmp_path / "r.html").exists()


def test_scaling_compare_with_errors_is_refused_too(capsys, tmp_path):
    path = _over_budget(tmp_path)
    code, _, err = run(capsys, "scaling", "--preset", "dgx-a100", "--sample-time", "5ms", "--compare", path)
    assert code == 1 and "fix them first" in err


@pytest.mark.parametrize("argv", [("simulate", "--collective", "broadcast", "--root", "gpu9"),
                                  ("simulate", "--collective", "reduce", "--gpus", "gpu0-gpu3", "--root", "gpu5"),
                                  ("report", "--collective", "broadcast", "--root", "gpu9", "-o", "REPORT")])
def test_a_root_outside_the_gpu_set_is_refused_not_an_internal_error(capsys, tmp_path, argv):
    """`--root gpu9` was `internal error: ValueError: 'gpu9' is not in list`, exit 3."""
    argv = [str(tmp_path / "r.html") if a == "REPORT" else a for a in argv]
    code, _, err = run(capsys, argv[0], "--preset", "dgx-a100", *argv[1:])
    assert code == 2
    assert "--root gpu" in err and "not one of the" in err and "internal error" not in err


def test_a_root_inside_the_set_still_runs(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--collective", "broadcast", "--root", "gpu5",
                       "--size", "1MiB", "--json")
    assert code == 0


def _makespan(capsys, *argv):
    import json

    code, out, _ = run(capsys, "pipeline", "--preset", "dgx1-v100", "--stages", "4", "--microbatches", "8",
                       "--fwd-time", "2ms", "--bwd-time", "4ms", "--activation-bytes", "16MiB", "--json", *argv)
    assert code == 0
    return json.loads(out)["makespan_s"]


def test_pipeline_defaults_to_achievable_figures_as_simulate_and_train_do(capsys):
    """pipeline alone defaulted to peak link figures; every other command to achievable."""
    default, achievable, peak = _makespan(capsys), _makespan(capsys, "--figures", "achievable"), \
        _makespan(capsys, "--figures", "peak")
    assert default == achievable and peak < achievable


def test_report_pipeline_runs_at_the_reports_link_figures(capsys, tmp_path):
    """report --pipeline-stages ran the pipeline at peak figures whatever --figures said."""
    import json

    out = tmp_path / "r.html"
    assert run(capsys, "report", "--preset", "dgx1-v100", "--size", "", "--pipeline-stages", "4", "-o", str(out))[0] == 0
    got = json.loads((tmp_path / "r.json").read_text())["pipelines"][0]["makespan_s"]
    assert got == _makespan(capsys, "--figures", "achievable")
    assert run(capsys, "report", "--preset", "dgx1-v100", "--size", "", "--pipeline-stages", "4", "--figures", "peak",
               "-o", str(out))[0] == 0
    assert json.loads((tmp_path / "r.json").read_text())["pipelines"][0]["makespan_s"] == \
        _makespan(capsys, "--figures", "peak")


def test_analyze_names_cluster_rings_in_words(capsys, tmp_path):
    """'rings: 4 over all (rail rings (NCCL: ...), sharing links)' read as a typo in nested brackets."""
    path = tmp_path / "c.dgxs"
    assert run(capsys, "generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "-o", str(path))[0] == 0
    code, out, _ = run(capsys, "analyze", str(path))
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("rings:"))
    assert " across systems: " in line and "over all" not in line


@pytest.mark.parametrize("size", ["1PiB", "1PB", "2TB", "3TiB"])
def test_every_size_unit_the_range_names_is_read(size):
    """The range message says '1 B .. 1 PiB': PiB (and PB) are units too, and TB/TiB are listed."""
    from dgxstudio.units import parse_size

    assert parse_size(size) >= 10**12
    with pytest.raises(ValueError, match="TB, PB, KiB, MiB, GiB, TiB, PiB"):
        parse_size("3XB")
