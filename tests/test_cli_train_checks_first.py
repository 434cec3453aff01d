"""`train` refuses a bad expert or bucket option before it simulates anything: `--ep` was checked only
after every tensor group's all-reduces had run (sim/training.py), so the CLI spent that work before its
refusal and the GUI read the refusal as a failed run."""

import pytest

from dgxstudio.cli import main
from dgxstudio.sim import training


@pytest.fixture(scope="module")
def h100_four(tmp_path_factory):
    f = tmp_path_factory.mktemp("train") / "h100x4.dgxs"
    assert main(["generate", "fat-tree", "--system", "dgx-h100", "--systems", "4", "-o", str(f)]) == 0
    return str(f)


class _NoEngine:
    """An engine that must not be started: the refusal comes first."""

    def __init__(self, *args, **kwargs):
        raise AssertionError("simulated before the arguments were checked")


@pytest.mark.parametrize("options, said", [
    (["--dp", "2", "--ep", "3", "--experts", "6"], "--ep 3 must divide the data-parallel size 2"),
    (["--dp", "2", "--ep", "2"], "expert parallelism needs a mixture-of-experts model (--experts N)"),
    (["--dp", "4", "--tp", "4", "--ep", "4", "--experts", "6"], "6 experts do not split evenly over 4 expert-parallel ranks"),
    (["--dp", "2", "--bucket-size", "1"], "--bucket-size 1 B cuts"),
])
def test_refused_before_the_first_simulation(h100_four, capsys, monkeypatch, options, said):
    monkeypatch.setattr(training, "Engine", _NoEngine)
    capsys.readouterr()
    assert main(["train", h100_four, "--tp", "8", "--pp", "2", *options]) == 2
    out, err = capsys.readouterr()
    assert said in err and out == ""
