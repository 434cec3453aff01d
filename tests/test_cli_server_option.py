"""`--server` names the parameter server's device; with another algorithm it did nothing and said
nothing (`simulate --algorithm ring --server gpu3` ran the ring as if it were not there)."""

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
