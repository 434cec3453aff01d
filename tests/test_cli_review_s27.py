"""A second new user's review of the CLI (session 27): messages that did not name the option at
fault, and a bandwidth without its direction."""

import os

import pytest

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["simulate", "report"])
def test_a_reversed_sweep_names_the_option_and_the_sizes(capsys, tmp_path, command):
    """`--sweep 1GiB:1MiB` said only "a sweep needs 0 < low <= high"."""
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    code, out, err = run(capsys, command, "--preset", "dgx-a100", "--sweep", "1GiB:1MiB", *extra)
    assert code == 2 and not out
    assert "--sweep 1GiB:1MiB: a sweep from 1,073,741,824 to 1,048,576 bytes" in err
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("option, value, says", [("--systems", "0", "--systems 0: a whole number from 1 to"),
                                                 ("--per-leaf", "0", "--per-leaf 0: systems per leaf"),
                                                 ("--spines", "0", "--spines 0: a fat tree needs at least 1 spine")])
def test_generate_names_the_count_at_fault(capsys, tmp_path, option, value, says):
    """`--systems 0` said "systems must be a whole number ...", the other options did name themselves."""
    argv = ["generate", "fat-tree", "--systems", "4", "-o", str(tmp_path / "t.dgxs")]
    if option == "--systems":
        argv[3] = value
    else:
        argv[4:4] = [option, value]
    code, _, err = run(capsys, *argv)
    assert code == 2 and says in err
    assert not os.listdir(tmp_path)


def test_train_verdict_gives_nvlinks_direction(capsys, tmp_path):
    """"NVLink 450 GB/s per GPU vs network 320 GB/s per system per direction": the NVLink figure is per
    direction too (an H100's 900 GB/s is bidirectional), and said so nowhere."""
    path = str(tmp_path / "h2.dgxs")
    assert run(capsys, "generate", "fat-tree", "--systems", "2", "--system", "dgx-h100", "-o", path)[0] == 0
    code, out, _ = run(capsys, "train", path, "--dp", "1", "--tp", "8", "--pp", "2", "--microbatches", "2")
    assert code == 0
    assert "NVLink 450 GB/s per GPU per direction vs network 320 GB/s per system per direction" in out


@pytest.mark.parametrize("argv, says", [
    (("simulate", "--preset", "dgx-a100", "--size", "-5MiB"), "--size: '-5MiB' is out of range"),
    (("scaling", "--preset", "dgx1-p100", "--sample-time", "-5ms"), "--sample-time: cannot read time '-5ms'"),
    (("simulate", "--preset", "dgx-a100", "--size", "-.5MiB"), "--size: '-.5MiB' is out of range"),
])
def test_a_negative_value_is_judged_by_its_option_not_taken_for_one(capsys, argv, says):
    # argparse reads "-5MiB" as an unknown option and says only "expected one argument"
    code, out, err = run(capsys, *argv)
    assert code == 2 and says in err and "expected one argument" not in err
