"""A new user's review of main at 030276d: what the command line said wrong."""

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_says_one_switch_hop_not_one_switch_hops(capsys, tmp_path):
    # two rail-optimized DGX H100 meet in one leaf per rail: the worst system-to-system path crosses
    # one switch, which `analyze` printed as "(1 switch hops)"
    path = str(tmp_path / "two.dgxs")
    assert run(capsys, "generate", "fat-tree", "--systems", "2", "--system", "dgx-h100", "--rail-optimized",
               "-o", path)[0] == 0
    code, out, _ = run(capsys, "analyze", path)
    assert code == 0
    assert "(1 switch hop)," in out
    code, out, _ = run(capsys, "analyze", "--preset", "dgx1-fat-tree-124")
    assert "(3 switch hops)," in out and "over 8 hops" in out


def test_a_leaf_too_small_for_per_leaf_names_the_option(capsys, tmp_path):
    # "--per-leaf 1000" answered "a leaf needs 8000 ports down and 8000 up", naming no option
    code, _, err = run(capsys, "generate", "fat-tree", "--systems", "16", "--system", "dgx-h100", "--per-leaf", "1000",
                       "-o", str(tmp_path / "x.dgxs"))
    assert code == 2
    assert "--per-leaf 1000: a leaf of 1000 systems needs 8000 ports down and 8000 up" in err
    code, _, err = run(capsys, "generate", "fat-tree", "--systems", "16", "--system", "dgx-h100", "--spines", "100",
                       "-o", str(tmp_path / "x.dgxs"))
    assert code == 2 and "--spines 100: a leaf of 4 systems needs 32 ports down and 100 up" in err
