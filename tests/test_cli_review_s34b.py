"""Today's review of the command line (main at a07e12e): a size of 1.5 ran 2 bytes, and CollNet's
refusal on one system suggested nvls to machines that cannot run it."""

import json

import pytest

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("option, argv", [
    ("--size", ("simulate", "--preset", "dgx-h100", "--size", "1.5")),
    ("--sweep", ("simulate", "--preset", "dgx-h100", "--sweep", "1.5:1KiB")),
    ("--chunk", ("simulate", "--preset", "dgx-h100", "--chunk", "1.5")),
])
def test_a_fraction_of_a_byte_is_refused_naming_the_option(capsys, option, argv):
    # `simulate --preset dgx-h100 --size 1.5` silently ran 2 bytes
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"dgxstudio: error: {option}: '1.5' is not a whole number of bytes"
                          " (a size without a unit is bytes); did you mean 1.5KiB?")


def test_fractions_with_a_unit_still_run_rounded_to_whole_bytes(capsys):
    for size, expected in (("1.1KiB", 1126), ("1.5GiB", 3 * 2**29), ("2.0", 2)):
        code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--size", size, "--json")
        assert code == 0 and json.loads(out)["size_bytes"] == expected


@pytest.mark.parametrize("preset, suggests", [("dgx-a100", "ring or tree"), ("dgx-h100", "ring, tree or nvls")])
def test_collnet_on_one_system_suggests_only_what_the_hardware_runs(capsys, preset, suggests):
    # on a DGX A100 (NVSwitch gen2, no NVLink SHARP) the refusal said "ring, tree or nvls"
    code, out, err = run(capsys, "simulate", "--preset", preset, "--algorithm", "collnet")
    assert code == 2 and out == ""
    assert err.rstrip().endswith(f"these GPUs are in one system (inside one system NCCL uses {suggests})")
    code, _, err = run(capsys, "simulate", "--preset", preset, "--algorithm", "nvls", "--size", "1MiB")
    assert (code == 0) == ("nvls" in suggests)   # what is suggested runs, what is left out does not
