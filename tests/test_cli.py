import json
import subprocess
import sys

import pytest

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_json_has_stable_si_keys(capsys):
    code, out, _ = run(capsys, "info", "--preset", "dgx-a100", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["gpus"] == 8
    assert data["nvlink_bw_per_gpu_bidir_Bps"] == pytest.approx(600e9)
    assert data["devices_by_kind"]["nvswitch"] == 6


def test_validate_exit_codes(capsys, tmp_path):
    assert run(capsys, "validate", "--preset", "dgx1-v100")[0] == 0
    from dgxstudio.model import fileio
    from dgxstudio.model.presets import load_preset
    from dgxstudio.model.topology import Link
    topo = load_preset("dgx1-v100")
    topo.add_link(Link("extra", "gpu0", "gpu5", "NVLink2"))
    bad = tmp_path / "over.dgxs"
    fileio.save(topo, bad)
    code, out, _ = run(capsys, "validate", str(bad))
    assert code == 1 and "GPU0 (gpu0) uses 7 nvlink ports" in out
    broken = tmp_path / "broken.dgxs"
    broken.write_text("{")
    code, out, err = run(capsys, "validate", str(broken))
    assert code == 2 and "not valid JSON" in err and "Traceback" not in err


def test_presets_new_and_generate(capsys, tmp_path):
    code, out, _ = run(capsys, "presets", "--json")
    names = [p["name"] for p in json.loads(out)]
    assert names == ["dgx1-p100", "dgx1-v100", "dgx-a100", "pcie-8gpu", "pcie-8gpu-p100", "dgx1-fat-tree-124", "dgx-h100", "dgx-h200",
                     "hgx-h800", "hgx-a800", "dgx-b200", "gb200-nvl72", "dgx-a100-superpod", "dgx-h100-superpod"]
    out_file = tmp_path / "n.dgxs"
    assert run(capsys, "new", "--preset", "dgx-a100", "-o", str(out_file))[0] == 0
    assert run(capsys, "info", str(out_file))[0] == 0
    ft = tmp_path / "ft.dgxs"
    code, out, _ = run(capsys, "generate", "fat-tree", "--systems", "10", "--per-leaf", "2", "--spines", "4", "-o", str(ft))
    assert code == 0
    code, out, _ = run(capsys, "info", str(ft), "--json")
    data = json.loads(out)
    assert data["gpus"] == 80 and data["devices_by_kind"]["ib_switch"] == 5 + 4
    code, _, err = run(capsys, "generate", "fat-tree", "--systems", "4", "--spines", "40", "-o", str(ft))
    assert code == 2 and "ports" in err


def test_unknown_preset_and_missing_file(capsys):
    code, _, err = run(capsys, "info", "--preset", "dgx9")
    assert code == 2 and "unknown preset 'dgx9'" in err
    code, _, err = run(capsys, "info", "/nonexistent/x.dgxs")
    assert code == 2 and "no such file" in err


def test_console_entry_points():
    for cmd in ([sys.executable, "-m", "dgxstudio", "--version"],):
        result = subprocess.run(cmd, capture_output=True, text=True)
        assert result.returncode == 0 and "dgxstudio" in result.stdout


def test_simulate_json_keys_and_sweep(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--collective", "all-reduce", "--algorithm",
                       "multi-ring", "--size", "256MiB", "--json")
    data = json.loads(out)
    assert code == 0
    for key in ("collective", "algorithm", "gpus", "size_bytes", "time_s", "algbw_Bps", "busbw_Bps",
                "bound_busbw_Bps", "bottlenecks"):
        assert key in data
    assert data["size_bytes"] == 256 * 2**20 and data["gpus"] == 8
    assert data["bottlenecks"][0]["links"] and 0 < data["bottlenecks"][0]["utilization"] <= 1.0 + 1e-9
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--sweep", "1KiB:1MiB", "--json")
    rows = json.loads(out)["rows"]
    assert [r["size_bytes"] for r in rows] == [2**k for k in range(10, 21)]
    assert all(r["algorithm"] != "auto" for r in rows)


def test_simulate_bad_input(capsys):
    code, _, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--size", "lots")
    assert code == 2 and "--size" in err
    code, _, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--gpus", "gpu0")
    assert code == 2 and "at least 2 GPUs" in err
    # the same GPU named twice is one GPU: the message says which one the set holds
    code, _, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--gpus", "gpu3,gpu3")
    assert code == 2 and "at least 2 GPUs; the GPU set holds 1: gpu3" in err
    code, _, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--collective", "all-gather", "--algorithm", "tree")
    assert code == 2 and "not an algorithm for all-gather" in err


@pytest.mark.parametrize("extra", [
    ["--system", "dgx-h100", "--systems", "2", "--nic", "connectx-6-hdr"],
    ["--system", "dgx-a100", "--systems", "3", "--nics-per-system", "4"],
    ["--system", "dgx-a100", "--systems", "3", "--nic", "nic-100gbe"],
])
def test_generate_today_fabrics_build_validate_and_simulate(capsys, tmp_path, extra):
    out = tmp_path / "c.dgxs"
    code, _, err = run(capsys, "generate", "fat-tree", *extra, "-o", str(out))
    assert code == 0, err
    code, text, _ = run(capsys, "validate", str(out), "--json")
    assert code == 0 and json.loads(text)["errors"] == 0
    code, text, err = run(capsys, "simulate", str(out), "--collective", "all-reduce", "--size", "64MiB", "--json")
    assert code == 0, err
    assert json.loads(text)


def test_generate_rail_optimized_with_oversubscription(capsys, tmp_path):
    out = tmp_path / "r.dgxs"
    code, _, err = run(capsys, "generate", "fat-tree", "--system", "dgx-h100", "--systems", "32", "--per-leaf", "16",
                       "--rail-optimized", "--oversubscription", "2:1", "-o", str(out))
    assert code == 0, err
    code, text, _ = run(capsys, "info", str(out), "--json")
    assert json.loads(text)["devices_by_kind"]["ib_switch"] == 16 + 2


@pytest.mark.parametrize("extra, needle", [
    (["--nic", "ib-switch-ndr-64"], "not a NIC"),
    (["--nics-per-system", "9"], "has 8 compute NICs"),
    (["--rail-optimized", "--rails", "3"], "does not divide"),
    (["--oversubscription", "3", "--per-leaf", "4"], "does not divide"),
    (["--tiers", "2", "--per-leaf", "1", "--systems", "80"], "three tiers"),
])
def test_generate_refuses_bad_combinations_and_writes_nothing(capsys, tmp_path, extra, needle):
    out = tmp_path / "bad.dgxs"
    args = ["generate", "fat-tree", "--system", "dgx-h100"]
    if "--systems" not in extra:
        args += ["--systems", "4"]
    code, stdout, err = run(capsys, *args, *extra, "-o", str(out))
    assert code == 2 and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_analyze_shows_progress_on_a_terminal_only(capsys):
    import io

    from dgxstudio.cli.common import StepProgress
    from tests.terminal import Terminal

    tty = Terminal()
    progress = StepProgress("analyzing 8 GPUs", tty)
    progress(0.5, "bisection")
    progress.done()
    assert "analyzing 8 GPUs: bisection (50%)" in tty.getvalue() and tty.getvalue().endswith("\r\033[K")
    piped = io.StringIO()
    quiet = StepProgress("analyzing 8 GPUs", piped)
    quiet(0.5, "rings")
    quiet.done()
    assert piped.getvalue() == ""
    assert main(["analyze", "--preset", "dgx1-v100", "--json"]) == 0
    assert capsys.readouterr().err == ""  # not a terminal: nothing on stderr, JSON alone on stdout


def test_analyze_interrupted_gives_a_message_and_status_130(monkeypatch, capsys):
    import dgxstudio.analysis.summary as summary

    def interrupted(topo, gpus, progress=None, cancelled=None):
        progress(0.25, "rings")
        raise KeyboardInterrupt
    monkeypatch.setattr(summary, "analyze", interrupted)
    assert main(["analyze", "--preset", "dgx1-v100"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err


def test_report_name_without_an_extension_gets_its_format_and_a_wrong_one_is_refused(capsys, tmp_path):
    code, out, _ = run(capsys, "report", "--preset", "dgx1-v100", "--size", "1MiB", "-o", str(tmp_path / "summary"))
    assert code == 0 and (tmp_path / "summary.html").read_text().lstrip().lower().startswith("<!doctype html")
    assert not (tmp_path / "summary").exists()
    code, out, _ = run(capsys, "report", "--preset", "dgx1-v100", "--size", "", "--format", "pdf",
                       "-o", str(tmp_path / "brief"))
    assert code == 0 and (tmp_path / "brief.pdf").read_bytes().startswith(b"%PDF")
    for name, extra, said in (("x.docx", [], "HTML (.html) or PDF (.pdf)"),
                              ("y.html", ["--format", "pdf"], "--format says PDF")):
        code, _, err = run(capsys, "report", "--preset", "dgx1-v100", "-o", str(tmp_path / name), *extra)
        assert code == 2 and said in err
        assert not any(p.name.startswith(name[0] + ".") for p in tmp_path.iterdir())


def test_analyze_of_a_system_without_published_power_does_not_say_zero_kw(capsys):
    code, text, _ = run(capsys, "analyze", "--preset", "hgx-h800")
    assert code == 0
    assert "published power: no published figure (HGX H800)" in text and "0.0 kW" not in text


@pytest.mark.parametrize("ratio", ["0", "1:2", "nan"])
def test_an_oversubscription_below_one_is_refused_as_typed(capsys, tmp_path, ratio):
    """'--oversubscription 0' was refused as '--oversubscription 0.0' (the review)."""
    out = tmp_path / "bad.dgxs"
    with pytest.raises(SystemExit) as exc:
        main(["generate", "fat-tree", "--systems", "4", "--oversubscription", ratio, "-o", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"'{ratio}': the leaf down:up ratio must be 1 or more" in err
    assert not out.exists()
