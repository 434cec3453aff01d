"""`simulate`'s text says how a run was made, as the GUI's results do: the protocol NCCL's model chose
for an algorithm asked for, or a parameter server simulated by symmetry class. Only auto's reason was
printed; JSON had the others as `reason`."""

from dgxstudio.cli import main


def _out(capsys, *argv):
    assert main(["simulate", *argv]) == 0
    return capsys.readouterr().out


def test_the_protocol_chosen_for_a_requested_algorithm_is_said(capsys):
    out = _out(capsys, "--preset", "dgx1-v100", "--algorithm", "ring", "--size", "256MiB")
    assert "\n  ring as requested; Simple: NCCL's cost model's choice for this size\n" in out


def test_a_parameter_server_by_class_says_so(capsys, tmp_path):
    path = str(tmp_path / "four.dgxs")
    assert main(["generate", "fat-tree", "--systems", "4", "--system", "dgx-h100", "--rail-optimized", "-o", path]) == 0
    capsys.readouterr()
    out = _out(capsys, path, "--algorithm", "parameter-server", "--size", "1MiB")
    assert "parameter-server as requested; simulated as" in out and "symmetry classes" in out


def test_a_bare_as_requested_is_not_repeated(capsys):
    out = _out(capsys, "--preset", "dgx1-v100", "--algorithm", "hierarchical", "--size", "1MiB")
    assert "hierarchical as requested" not in out
