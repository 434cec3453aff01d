"""The s36 new-user review of the CLI: `export --format nccl-xml` on a cluster said "choose one of
s1.system, s2.system, ..." without the option that chooses (`--system`) and with ids the canvas does
not show."""

from dgxstudio.cli import main


def test_nccl_xml_of_a_cluster_says_how_to_choose_a_system(tmp_path, capsys):
    from dgxstudio.model import fileio
    from dgxstudio.model.fabrics import build_fat_tree

    path = tmp_path / "two.dgxs"
    fileio.save(build_fat_tree(2, "dgx-h100", rail_optimized=True), path)
    out = tmp_path / "one.xml"
    assert main(["export", str(path), "--format", "nccl-xml", "-o", str(out)]) == 2
    said = capsys.readouterr().err
    assert ("NCCL XML describes one system; choose one of DGX H100 #1 (s1.system), DGX H100 #2 (s2.system), "
            "with --system (its id or name)") in said, said
    assert not out.exists()
    assert main(["export", str(path), "--format", "nccl-xml", "-o", str(out), "--system", "DGX H100 #2"]) == 0
    assert out.exists()
