"""`import` of a file that describes hardware that cannot be: said, with exit 1, not a clean import."""

from dgxstudio.cli import main
from dgxstudio.model.presets import load_preset
from dgxstudio.report.nccl_xml import to_nccl_xml


def test_an_import_with_impossible_links_says_so_and_exits_1(capsys, tmp_path):
    # 500 NVLinks from each H100 to a switch: imported with exit 0 and not a word, and the first
    # `simulate` on it refused the file
    xml = to_nccl_xml(load_preset("dgx-h100")).replace('count="5" tclass', 'count="500" tclass')
    src, out = tmp_path / "dump.xml", tmp_path / "back.dgxs"
    src.write_text(xml)
    code = main(["import", str(src), "--format", "nccl-xml", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and out.exists()
    assert "the imported topology has 10 error(s)" in err
    assert "GPU0 (gpu0) uses 1008 nvlink ports; H100 SXM5 80GB has 18" in err
    assert f"`dgxstudio validate {out}` lists them" in err
    src.write_text(to_nccl_xml(load_preset("dgx-h100")))
    assert main(["import", str(src), "--format", "nccl-xml", "-o", str(out)]) == 0
    assert "error" not in capsys.readouterr().err
