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


def _load_with_first_source_changed(mod, tmp_path, **changes):
    """The data file with its first source changed as given, written to ``tmp_path`` and loaded."""
    data = json.loads(mod.DEFAULT_DATA.read_text(encoding="utf-8"))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(dict(data, sources=[dict(data["sources"][0], **changes)])), encoding="utf-8")
    return mod.load_sources(path)


def test_every_source_names_its_url_launch_and_version():
    mod = _script()
    sources = mod.load_sources(mod.DEFAULT_DATA)
    assert {s["key"] for s in sources} >= {"stas00-a100", "nccl-tests-149"}
    for s in sources:
        assert s["url"].startswith("https://github.com/")
        assert s["gpus_per_thread"] in (1, mod.ranks_of(s))
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
                assert mod.agrees_with_its_time(size, busbw, time_us, mod.ranks_of(s), mod.collective_of(s)), (s["key"], size, busbw, time_us)
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


def test_a_source_is_simulated_on_the_machine_and_gpus_it_names():
    """Off-file figures of today's machines run on their own preset or generated cluster: 5 of a DGX H100's
    GPUs under NVLS (NVIDIA/nccl #1455's 5-GPU run), not the DGX A100 every A100 source ran on."""
    mod = _script()
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 5, "nccl_version": "x",
              "simulate_on": {"preset": "dgx-h100"}, "gpus": 5, "ranks": 5, "simulate_algorithm": "nvls",
              "points": [[1 << 32, 420.0, None]]}
    (row,) = mod.compare(source, {}, {1 << 32: 230.0})
    assert row["ranks"] == 5 and row["choice"].startswith("nvls/simple")
    assert row["azure"] is None          # the A100 sweep is beside A100 sources only
    assert 400 < row["simulated"] < 440  # H100 NVLS on 5 GPUs, not an A100 ring (about 240)


def test_a_source_whose_machine_gives_other_ranks_or_no_machine_is_refused(tmp_path):
    mod = _script()
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 1, "nccl_version": "x",
              "simulate_on": {"fat_tree": {"systems": 2, "system": "dgx-h100"}}, "ranks": 8,
              "points": [[1 << 30, 400.0, None]]}
    with pytest.raises(ValueError, match="8 ranks stated, the machine gives 16"):
        mod.compare(source, {}, {})
    with pytest.raises(ValueError, match="simulate_on needs one of"):
        _load_with_first_source_changed(mod, tmp_path, simulate_on={"system": "dgx-h100"})


def test_a_refusal_of_the_simulator_is_a_row_not_a_crash(monkeypatch):
    mod = _script()

    def refuse(self, *args, **kwargs):
        raise mod.TooLarge("too many flow groups")
    monkeypatch.setattr(mod.Simulator, "run", refuse)
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 1, "nccl_version": "x",
              "points": [[1 << 30, 230.0, None]]}
    rows = mod.compare(source, {}, {})
    assert rows[0]["refused"] == "too many flow groups" and not rows[0]["ok"]
    assert "refused: too many flow groups" in mod.report(source, rows)


def test_a_source_of_another_collective_is_simulated_and_checked_as_that_collective():
    """An all_gather_perf log is compared as an all-gather: its busbw is algbw x (n-1)/n, not 2(n-1)/n."""
    mod = _script()
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 1, "nccl_version": "x",
              "simulate_on": {"preset": "dgx-h100"}, "collective": "all-gather",
              "points": [[1 << 30, 370.0, None]]}
    (row,) = mod.compare(source, {}, {})
    assert row["collective"] == "all-gather" and row["choice"].startswith("ring/")
    assert 330 < row["simulated"] < 400  # NCCL's ring on NVLink4 (~370), not NVLS all-reduce (~480)
    assert "all-gather simulated on" in mod.report(source, [row])
    # a point of the 4-node all-gather log keeps nccl-tests' arithmetic for (n-1)/n and 32 ranks
    assert mod.agrees_with_its_time(8589934592, 323.53, 25720.7, 32, "all-gather")
    assert not mod.agrees_with_its_time(8589934592, 323.53, 25720.7, 32, "all-reduce")


def test_a_source_run_without_nvls_is_simulated_without_it(tmp_path):
    """A source names the NCCL settings of its run (nccl_env): coreweave PR #48's 20 racks ran with
    NCCL_NVLS_ENABLE=0 (its Slurm script), so its rows are NCCL's choice among ring and tree."""
    mod = _script()
    sources = {s["key"]: s for s in mod.load_sources(mod.DEFAULT_DATA)}
    assert sources["coreweave-48-gb200-20racks"]["nccl_env"] == {"NCCL_NVLS_ENABLE": "0"}
    assert "2.26.2" in sources["coreweave-48-gb200-20racks"]["nccl_version"]
    assert sources["coreweave-43-gb200-nvl72"]["nccl_env"] == {"NCCL_NVLS_ENABLE": "1"}
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 1, "nccl_version": "x",
              "simulate_on": {"preset": "dgx-h100"}, "points": [[1 << 30, 480.0, None]]}
    simulators = {}
    (on,) = mod.compare(source, simulators, {})
    (off,) = mod.compare(dict(source, nccl_env={"NCCL_NVLS_ENABLE": "0"}), simulators, {})
    assert on["choice"].startswith("nvls/") and not off["choice"].startswith("nvls")
    assert len(simulators) == 2   # the setting is part of what a source ran on
    with pytest.raises(ValueError, match="NCCL_ALGO"):
        _load_with_first_source_changed(mod, tmp_path, nccl_env={"NCCL_ALGO": "ring"})


def test_the_nccl_settings_a_source_names_are_said_on_the_simulated_line():
    """The GB200 rows' first line ended "..., NVIDIA_IMEX_CHANNELS=0; NCCL_NVLS_ENABLE=0": the setting
    repeated after the command's words, with nothing to say it is what the simulation took."""
    mod = _script()
    source = {"key": "t", "label": "t", "url": "https://github.com/x/y", "gpus_per_thread": 1, "nccl_version": "x",
              "command": "all_reduce_perf -b 1G -e 1G", "simulate_on": {"preset": "dgx-h100"},
              "nccl_env": {"NCCL_NVLS_ENABLE": "0"}, "points": [[1 << 30, 350.0, None]]}
    (row,) = mod.compare(source, {}, {})
    assert row["choice"].startswith(("ring/", "tree/"))
    lines = mod.report(source, [row]).splitlines()
    assert lines[3] == "   NCCL x; ; all_reduce_perf -b 1G -e 1G"
    assert lines[4] == '   all-reduce simulated on {"preset": "dgx-h100"}, 8 GPUs, algorithm auto, with NCCL_NVLS_ENABLE=0'
