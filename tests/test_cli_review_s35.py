"""A new user's review of session 35's changes (issues #13, #17): what `simulate --help` says about the
protocols NCCL may not enable (the Simulation dock's protocol box: tests/ui/test_protocol_box.py)."""

import pytest

from dgxstudio.cli import main


def test_the_protocol_help_says_when_ll128_is_refused_and_which_algorithms_run_simple_only(capsys):
    # `--protocol ll128` is refused where NCCL would not enable it (naming the GPU and NIC), and nvls,
    # nvls-tree and collnet refuse LL and LL128; the help offered all four protocols for all of them
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split()).replace("- ", "-")   # (argparse wraps at hyphens)
    said = out.rsplit("--protocol {auto,ll,ll128,simple}", 1)[1].split(" --spread", 1)[0]
    assert "ll128 only where NCCL enables it" in said, said
    assert "refused with NCCL's reason (across systems the GPU and NIC at fault)" in said, said
    assert "nvls, nvls-tree and collnet run simple only" in said, said



def test_the_size_help_says_a_bare_number_is_bytes(capsys):
    # '--size 0.5' now asks for a unit; the help said "bytes per GPU" without the units it takes
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    said = out.rsplit("--size SIZE ", 1)[1].split(" --sweep", 1)[0]
    assert "a bare number is bytes" in said and "KiB" in said and "GB" in said, said


def test_nccl_tests_header_says_a_forced_protocol(capsys):
    # a log to set beside a measured run made with NCCL_PROTO=LL128 left the protocol out, as the header
    # said NCCL_NVLS_ENABLE=0 only since session 34
    assert main(["simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--protocol", "ll128",
                 "--sweep", "1MiB:2MiB", "--nccl-tests"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "# 8 ranks; achievable link figures; NCCL_PROTO=LL128; in-place and out-of-place are the same simulated "
        "run; #wrong N/A (nothing checked)")
    assert main(["simulate", "--preset", "dgx-a100", "--algorithm", "ring", "--sweep", "1MiB:2MiB", "--nccl-tests"]) == 0
    assert "NCCL_PROTO" not in capsys.readouterr().out
