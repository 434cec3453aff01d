"""Options that did nothing and said nothing are refused. `--server` names the parameter server's
device; with another algorithm it did nothing (`simulate --algorithm ring --server gpu3` ran the ring
as if it were not there)."""

import pytest

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command,algorithm", [("simulate", "ring"), ("simulate", "auto"), ("report", "tree")])
def test_server_with_another_algorithm_is_refused(capsys, tmp_path, command, algorithm):
    extra = ("-o", str(tmp_path / "r.html")) if command == "report" else ()
    code, out, err = run(capsys, command, "--preset", "dgx1-v100", "--algorithm", algorithm, "--server", "gpu3", *extra)
    assert code == 2 and not out
    assert f"--server gpu3: only --algorithm parameter-server has a server (--algorithm {algorithm} has none)" in err
    assert not (tmp_path / "r.html").exists()


def test_server_with_the_parameter_server_runs(capsys):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--algorithm", "parameter-server",
                       "--server", "gpu3", "--size", "1MiB")
    assert code == 0 and "parameter-server" in out


@pytest.mark.parametrize("argv,own", [(("--algorithm", "parameter-server"), "parameter-server"),
                                      (("--algorithm", "hierarchical"), "hierarchical")])
def test_a_protocol_for_an_algorithm_without_protocols_is_refused(capsys, argv, own):
    """`--protocol ll --algorithm parameter-server` printed the server's run with protocol '-': the
    option did nothing, where NCCL's nvls with LL is refused."""
    code, out, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--protocol", "ll", *argv)
    assert code == 2 and not out
    assert f"--protocol ll: NCCL's protocols are for its algorithms (ring, tree, nvls, nvls-tree, collnet, auto); {own}" \
           " runs without them" in err


def test_a_protocol_for_an_all_to_all_is_refused_with_nccls_p2p_rule(capsys):
    """An all-to-all now runs with a protocol (NCCL's p2p rule picks LL or Simple per size), so the
    refusal says why it cannot be forced instead of 'runs without them'."""
    code, out, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--protocol", "ll", "--collective", "all-to-all")
    assert code == 2 and not out
    assert "--protocol ll: an all-to-all runs as NCCL's grouped send/receive" in err and "16 KiB a channel" in err


@pytest.mark.parametrize("algorithm", ["auto", "ring", "multi-ring", "tree"])
def test_a_protocol_for_nccl_algorithms_still_runs(capsys, algorithm):
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--protocol", "ll128", "--algorithm", algorithm,
                       "--size", "1MiB")
    assert code == 0 and "LL128" in out


def test_a_size_with_a_sweep_is_refused_and_either_alone_runs(capsys):
    """`simulate --size 1GiB --sweep 1KiB:4KiB` ran the sweep and dropped the size without a word."""
    code, out, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--size", "1GiB", "--sweep", "1KiB:4KiB")
    assert code == 2 and not out
    assert "--size 1GiB and --sweep 1KiB:4KiB: a sweep runs its own sizes; give one of them" in err
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--sweep", "1KiB:4KiB")
    assert code == 0 and "1 KiB" in out and "4 KiB" in out
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100")   # neither: one run of 256 MiB
    assert code == 0 and "256 MiB" in out
    code, _, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--size", "")
    assert code == 2 and "--size" in err


@pytest.mark.parametrize("command,collective", [("simulate", "all-reduce"), ("simulate", "all-gather"),
                                                ("report", "all-reduce")])
def test_a_root_for_a_collective_without_one_is_refused(capsys, tmp_path, command, collective):
    """`--root gpu3` with all-reduce did nothing (nccl-tests ignores its -r there too, silently)."""
    extra = ("-o", str(tmp_path / "r.html")) if command == "report" else ()
    code, out, err = run(capsys, command, "--preset", "dgx1-v100", "--collective", collective, "--root", "gpu3", *extra)
    assert code == 2 and not out
    assert f"--root gpu3: only broadcast and reduce have a root (--collective {collective} has none)" in err
    assert not (tmp_path / "r.html").exists()


def test_an_empty_gpu_set_is_refused_not_read_as_every_gpu(capsys):
    code, out, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--gpus", "", "--size", "1MiB")
    assert code == 2 and not out
    assert "--gpus '': names no GPUs" in err
    code, out, _ = run(capsys, "simulate", "--preset", "dgx1-v100", "--gpus", "all", "--size", "1MiB")
    assert code == 0
