"""A new user's review of main at ebf93db: what the command line said wrong or left out."""

import json

from dgxstudio.cli import main
from tests.terminal import on_terminal


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_shows_progress_on_a_terminal(monkeypatch, capsys):
    # `simulate` over 512 DGX H100 (nvls-tree, 1 GiB) ran 10 s, 2,048 of them 14 s, with nothing on
    # the terminal; analyze, train and scaling show their progress there
    term = on_terminal(monkeypatch)
    assert main(["simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--size", "64MiB"]) == 0
    shown = term.getvalue()
    assert "\rsimulating on 8 GPUs: all-reduce ring 64 MiB (0%)" in shown
    assert "(100%)" in shown and shown.endswith("\r\033[K")   # the line is cleared before the table
    term.truncate(0)
    assert main(["simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--sweep", "1MiB:2MiB"]) == 0
    assert "simulating on 8 GPUs: all-reduce ring 2 MiB, 2/2 (50%)" in term.getvalue()
    monkeypatch.undo()
    capsys.readouterr()
    code, out, err = run(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", "ring", "--size", "64MiB", "--json")
    assert code == 0 and err == "" and json.loads(out)["algorithm"] == "ring"   # piped: nothing on stderr


def test_a_file_and_a_preset_together_are_refused(capsys, tmp_path):
    # `simulate --preset dgx-h100 my.dgxs` simulated the preset and dropped the file without a word
    mine = tmp_path / "mine.dgxs"
    assert run(capsys, "new", "--preset", "dgx1-v100", "-o", str(mine))[0] == 0
    for command in ("simulate", "info", "analyze"):
        code, out, err = run(capsys, command, str(mine), "--preset", "dgx-h100")
        assert code == 2 and out == ""
        assert err.strip() == f"dgxstudio: error: {mine} and --preset dgx-h100: give a topology file or --preset NAME, not both"


def test_no_nvls_refusal_names_both_options(capsys):
    # it read "nvls is disabled (NCCL_NVLS_ENABLE=0 ...)", naming an environment variable the user never set
    for algorithm in ("nvls", "nvls-tree"):
        code, out, err = run(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", algorithm, "--no-nvls", "--json")
        assert code == 2 and out == ""
        assert err.startswith(f"dgxstudio: error: --algorithm {algorithm} with --no-nvls: {algorithm} is disabled")


def test_json_says_nvls_was_disabled(capsys):
    # `--no-nvls --json` said so only inside the auto reason's words
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--size", "64MiB", "--no-nvls", "--json")
    assert code == 0 and json.loads(out)["nccl_env"] == {"NCCL_NVLS_ENABLE": "0"} and json.loads(out)["algorithm"] == "ring"
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--sweep", "1MiB:2MiB", "--no-nvls", "--json")
    assert code == 0 and json.loads(out)["nccl_env"] == {"NCCL_NVLS_ENABLE": "0"}
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--size", "64MiB", "--json")
    assert code == 0 and "nccl_env" not in json.loads(out) and json.loads(out)["algorithm"] == "nvls"


def test_every_json_option_says_what_it_does(capsys):
    # `--json` was the one option of simulate, info, analyze, train, ... with no help line
    import pytest

    for command in ("info", "validate", "analyze", "simulate", "pipeline", "train", "scaling"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "--json print the result as JSON on stdout" in out, command


def test_nccl_tests_header_says_nvls_was_disabled(capsys):
    # a log to set beside a measured one left out the setting the measured run's job script made
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--sweep", "1MiB:2MiB", "--no-nvls", "--nccl-tests")
    assert code == 0 and out.splitlines()[1] == ("# 8 ranks; achievable link figures; NCCL_NVLS_ENABLE=0; in-place and "
                                                 "out-of-place are the same simulated run; #wrong N/A (nothing checked)")
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--sweep", "1MiB:2MiB", "--nccl-tests")
    assert code == 0 and "NCCL_NVLS_ENABLE" not in out


def test_the_algorithm_help_names_every_choice(capsys):
    # simulate's --algorithm help left out nvls-tree, direct and multi-ring; report's had no help at all
    import pytest

    from dgxstudio.sim.run import ALGORITHMS

    for command in ("simulate", "report"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split()).replace("- ", "-")   # (argparse wraps at hyphens)
        said = out.rsplit("--algorithm {", 1)[1].split("} ", 1)[1].split(" --size", 1)[0]   # its line in the options
        assert said.startswith("NCCL's algorithms"), said
        for name in (*ALGORITHMS, "multi-ring"):
            assert name in said, (command, name)


def test_the_text_output_says_nvls_was_disabled(capsys):
    # a sweep with --no-nvls printed nothing that said so (a single run's auto reason did)
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--sweep", "1MiB:2MiB", "--no-nvls")
    assert code == 0
    assert out.splitlines()[0] == "DGX H100: all-reduce over 8 GPUs, achievable link figures, no NVLink SHARP (NCCL_NVLS_ENABLE=0)"
    code, out, _ = run(capsys, "simulate", "--preset", "dgx-h100", "--sweep", "1MiB:2MiB")
    assert out.splitlines()[0] == "DGX H100: all-reduce over 8 GPUs, achievable link figures"
