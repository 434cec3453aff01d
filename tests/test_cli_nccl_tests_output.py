"""`simulate --nccl-tests`: a simulated sweep in nccl-tests' own columns, to set beside a measured log."""

import json
import re

import pytest

from dgxstudio.cli import main

# a row as nccl-tests prints it (src/common.cu): size count type redop root, then time algbw busbw #wrong twice
ROW = re.compile(r"^ *(\d+) +(\d+) +(\w+) +(\w+) +(-?\d+)(?: +([\d.]+) +([\d.]+) +([\d.]+) +(\S+)){2}$")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rows(out):
    return [ROW.match(line) for line in out.splitlines() if not line.startswith("#")]


def test_a_sweep_prints_as_nccl_tests_prints_it_with_the_same_figures(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--sweep", "64KiB:1GiB", "--nccl-tests")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("# all_reduce_perf, simulated by DGX Studio: DGX A100")
    assert "#       size         count      type   redop    root     time   algbw   busbw #wrong" in out
    found = rows(out)
    assert len(found) == 15 and all(found)
    _, js, _ = run(capsys, "simulate", "--preset", "dgx-a100", "--sweep", "64KiB:1GiB", "--json")
    for m, ref in zip(found, json.loads(js)["rows"]):
        size, count = int(m.group(1)), int(m.group(2))
        assert size == ref["size_bytes"] and count == size // 4
        assert (m.group(3), m.group(4), m.group(5)) == ("float", "sum", "-1")
        t_us, algbw, busbw = float(m.group(6)), float(m.group(7)), float(m.group(8))
        assert algbw == pytest.approx(ref["algbw_Bps"] / 1e9, abs=0.005)
        assert busbw == pytest.approx(ref["busbw_Bps"] / 1e9, abs=0.005)
        # nccl-tests' time: two decimals under 100 us, one under 10,000, none above
        decimals = len(m.group(6).split(".")[1]) if "." in m.group(6) else 0
        assert decimals == (2 if t_us < 100 else 1 if t_us < 10_000 else 0)
        assert t_us == pytest.approx(ref["time_s"] * 1e6, abs=0.5)
    average = float(re.search(r"# Avg bus bandwidth    : ([\d.]+)", out).group(1))
    assert average == pytest.approx(sum(float(m.group(8)) for m in found) / len(found), rel=1e-3)


def test_a_broadcast_names_its_root_rank_and_no_reduction(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--collective", "broadcast", "--root", "gpu3",
                       "--size", "1GiB", "--nccl-tests")
    assert code == 0
    (m,) = rows(out)
    assert out.startswith("# broadcast_perf") and (m.group(4), m.group(5)) == ("none", "3")


def test_nccl_tests_and_json_output_are_one_or_the_other(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--preset", "dgx-h100", "--json", "--nccl-tests"])
    assert exc.value.code == 2


def test_sizes_that_are_not_whole_floats_are_counted_as_bytes(capsys):
    # 1-3 bytes printed a count of 0 floats
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--sweep", "1:8", "--nccl-tests")
    assert code == 0
    found = rows(out)
    assert [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in found] == [
        (1, 1, "int8"), (2, 2, "int8"), (4, 4, "int8"), (8, 8, "int8")]


def test_an_all_gather_counts_each_ranks_part_as_nccl_tests_does(capsys, tmp_path):
    # all_gather_perf over 32 ranks prints 1024 bytes as a count of 8 (github.com/ZiyanIshani/vpbenchmarking,
    # results/nccl/nccl_multinode/nccl_allgather_20260224_225706.txt); the output said 256
    path = tmp_path / "four.dgxs"
    assert main(["generate", "fat-tree", "--systems", "4", "--system", "dgx-h100", "--rail-optimized",
                 "-o", str(path)]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "simulate", str(path), "--collective", "all-gather", "--sweep", "1KiB:2KiB",
                       "--nccl-tests")
    assert code == 0
    assert [(int(m.group(1)), int(m.group(2)), m.group(4)) for m in rows(out)] == [(1024, 8, "none"), (2048, 16, "none")]


def test_the_count_of_a_per_rank_collective(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--collective", "reduce-scatter",
                       "--sweep", "1KiB:2KiB", "--nccl-tests")
    assert code == 0
    assert [(int(m.group(1)), int(m.group(2)), m.group(4)) for m in rows(out)] == [(1024, 32, "sum"), (2048, 64, "sum")]


def test_the_count_of_an_all_to_all_is_each_peers_part(capsys):
    """alltoall_perf prints size / type / ranks (1,024 B over 8 ranks: 32 floats; 32 MiB of doubles over
    8 H100: 524288, benchmarks/fidelity_offfile.json); the simulated log printed 256."""
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--collective", "all-to-all",
                       "--sweep", "1KiB:2KiB", "--nccl-tests")
    assert code == 0
    assert [(int(m.group(1)), int(m.group(2)), m.group(4)) for m in rows(out)] == [(1024, 32, "none"), (2048, 64, "none")]
