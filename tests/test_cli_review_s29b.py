"""A latency-bound run (per-call and per-hop latency dominate its time) names no bottleneck link, in
the CLI's text, its JSON and the report; a bandwidth-bound one still does."""

import json
import re

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_says_a_small_run_is_latency_bound(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--size", "8KiB")
    assert code == 0
    assert "latency-bound: no byte moved on any link for 99% of the run (per-call and per-hop latency dominate)" in out
    assert "busiest links (none limited the run):" in out
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--size", "256MiB")
    assert code == 0 and "latency-bound" not in out and "  busiest links:" in out


def test_simulate_json_keeps_its_keys_and_adds_latency_bound(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--size", "8KiB", "--json")
    small = json.loads(out)
    assert code == 0 and small["latency_bound"] is True and small["idle_fraction"] > 0.9 and not small["link_bound"]
    assert small["bottlenecks"] and small["bottlenecks"][0]["utilization"] < 0.05   # the key stays
    _code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--size", "256MiB", "--json")
    big = json.loads(out)
    assert big["latency_bound"] is False and big["idle_fraction"] < 0.1 and big["link_bound"] is True


def test_report_calls_a_latency_bound_run_so(capsys, tmp_path):
    out_html = tmp_path / "r.html"
    code, _, err = run(capsys, "report", "--preset", "dgx-a100", "--algorithm", "ring", "--size", "8KiB",
                       "-o", str(out_html))
    assert code == 0, err
    html = out_html.read_text()
    assert "latency-bound" in html and "Its bottleneck was" not in html and "Bottleneck links" not in html
    assert json.loads((tmp_path / "r.json").read_text())["runs"][0]["latency_bound"] is True


def test_simulate_calls_no_link_the_bottleneck_of_a_run_held_below_link_speed(capsys, tmp_path):
    """A 256 KiB LL tree over 8 DGX A100 moves bytes most of its time (82% since session 30's LL trips,
    86% before), at NCCL's LL ceiling per channel: its busiest link, a few percent busy, was listed as
    the run's bottleneck too. LL forced: since session 35's LL128 rule NCCL's model picks LL128 there on
    DGX A100 (its NICs share the GPUs' PCIe switches), and that run is latency-bound instead."""
    path = str(tmp_path / "a100x8.dgxs")
    assert run(capsys, "generate", "fat-tree", "--systems", "8", "--system", "dgx-a100", "-o", path)[0] == 0
    code, out, _ = run(capsys, "simulate", path, "--algorithm", "tree", "--protocol", "ll", "--size", "256KiB",
                         "--json")
    d = json.loads(out)
    assert code == 0 and d["latency_bound"] is False and d["link_bound"] is False
    assert d["bottlenecks"][0]["utilization"] < 0.1
    code, out, _ = run(capsys, "simulate", path, "--algorithm", "tree", "--protocol", "ll", "--size", "256KiB")
    moved = re.search(r"not link-bound: bytes moved (\d+)% of the run but below link speed", out)
    assert moved and 50 <= int(moved.group(1)) < 100, out
    assert "so no link is its bottleneck" in out and "busiest links (none limited the run):" in out
    _code, out, _ = run(capsys, "simulate", path, "--algorithm", "ring", "--size", "1GiB", "--json")
    assert json.loads(out)["link_bound"] is True
