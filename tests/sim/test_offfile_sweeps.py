"""The off-file A100 sweeps (benchmarks/fidelity_offfile.json) and the script that compares them."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("fidelity_offfile", ROOT / "benchmarks" / "fidelity_offfile.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_source_names_its_url_launch_and_version():
    mod = _script()
    sources = mod.load_sources(mod.DEFAULT_DATA)
    assert {s["key"] for s in sources} >= {"stas00-a100", "nccl-tests-149"}
    for s in sources:
        assert s["url"].startswith("https://github.com/")
        assert s["gpus_per_thread"] in (1, 8)
        sizes = [p[0] for p in s["points"]]
        assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)


def test_a_source_without_url_or_with_a_bad_point_is_refused(tmp_path):
    mod = _script()
    data = json.loads(mod.DEFAULT_DATA.read_text(encoding="utf-8"))
    bad = dict(data, sources=[{k: v for k, v in data["sources"][0].items() if k != "url"}])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ValueError, match="url"):
        mod.load_sources(path)
    bad = dict(data, sources=[dict(data["sources"][0], points=[[1024, 0, None]])])
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ValueError, match="bad point"):
        mod.load_sources(path)


def test_compare_simulates_each_point_with_the_source_launch_mode():
    mod = _script()
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 8,
              "nccl_version": "x", "points": [[1 << 30, 230.0, None]]}
    rows = mod.compare(source, {}, {1 << 30: 228.1})
    (row,) = rows
    assert row["size"] == 1 << 30 and row["azure"] == 228.1
    assert row["error"] == pytest.approx(row["simulated"] / 230.0 - 1)
    assert row["tolerance"] == 0.15 and row["choice"].startswith("ring/simple")
    assert row["nccl_model"] > 0


def test_a_printed_figure_stands_for_every_value_that_rounds_to_it():
    """nccl-tests prints busbw to 0.01 GB/s: "0.04" at 1 KiB is anything from 0.035 to 0.045, so a
    simulated 0.0522 is 16% beyond it, not the 30.5% a comparison with 0.04 itself gives."""
    mod = _script()
    assert mod.error_beyond_printing(0.04, 0.0522) == pytest.approx(0.0522 / 0.045 - 1)
    assert mod.error_beyond_printing(0.04, 0.0522) < 0.30 < 0.0522 / 0.04 - 1
    assert mod.error_beyond_printing(0.04, 0.0441) == 0.0      # rounds to the printed figure
    assert mod.error_beyond_printing(0.04, 0.03) == pytest.approx(0.03 / 0.035 - 1)
    assert mod.error_beyond_printing(230.48, 239.76) == pytest.approx(239.76 / 230.485 - 1)
    # times: two decimals under 100 us, one under 10,000 us, none above
    assert [mod.printed_half_unit(v, "us") for v in (93.12, 412.5, 20_480.0)] == [0.005, 0.05, 0.5]
    assert mod.printed_half_unit(0.04, "GB/s") == 0.005



def test_every_copied_point_agrees_with_its_own_time():
    """Points are copied as printed, so each keeps nccl-tests' own arithmetic (busbw = size / time x 1.75 on 8
    GPUs) within the rounding of both figures; a mistyped digit in either breaks it."""
    mod = _script()
    checked = 0
    for s in mod.load_sources(mod.DEFAULT_DATA):
        for size, busbw, time_us in s["points"]:
            if time_us is not None:
                assert mod.agrees_with_its_time(size, busbw, time_us), (s["key"], size, busbw, time_us)
                checked += 1
    assert checked >= 31
    assert "galvatron-dgx-a100" in {s["key"] for s in mod.load_sources(mod.DEFAULT_DATA)}


def test_a_mistyped_point_disagrees_with_its_time():
    mod = _script()
    assert mod.agrees_with_its_time(16777216, 99.99, 293.6)        # galvatron-dgx-a100 at 16 MiB, as printed
    assert not mod.agrees_with_its_time(16777216, 99.99, 239.6)    # two digits of the time swapped
    assert not mod.agrees_with_its_time(16777216, 99.09, 293.6)    # one digit of the busbw wrong
    assert not mod.agrees_with_its_time(16777216, 100.03, 293.6)   # just past what 293.6 us rounds from (99.98-100.02)
    assert mod.agrees_with_its_time(1073741824, 229.04, 8203.9)    # stas00 at 1 GiB
