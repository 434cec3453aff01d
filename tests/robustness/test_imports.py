"""Issue 16, failures 2 and 6: what an import accepts, save and reopen accept; what it refuses is one
message (no traceback) naming the element or the rule."""

import re

import pytest

from dgxstudio.cli import main
from dgxstudio.model import fileio
from dgxstudio.model.presets import load_preset
from dgxstudio.report import formats
from dgxstudio.report.nccl_xml import to_nccl_xml

NCCL = to_nccl_xml(load_preset("dgx1-v100"))
GRAPHML = formats.to_graphml(load_preset("dgx1-p100"))


def _import(tmp_path, capsys, fmt, text, encoding="utf-8"):
    src = tmp_path / "in.xml"
    src.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    out = tmp_path / "out.dgxs"
    code = main(["import", str(src), "--format", fmt, "-o", str(out)])
    _, err = capsys.readouterr()
    return code, err, out


@pytest.mark.parametrize("fmt, text, expected", [
    # (0 is NCCL's "no width in sysfs", read as x16 as NCCL reads it: tests/report/test_nccl_xml_review.py)
    ("nccl-xml", re.sub(r'link_width="\d+"', 'link_width="64"', NCCL, count=1), "link_width='64'>: out of range 0..32"),
    ("nccl-xml", re.sub(r'count="\d+"', 'count="100000"', NCCL, count=1), "out of range 1..1024"),
    ("nccl-xml", NCCL.replace("<cpu ", "<cpu>" + "<pci>" * 5000 + "</pci>" * 5000 + "</cpu><cpu ", 1),
     "nested deeper than 64"),
    ("nccl-xml", "<system>" + "<cpu/>" * 250_000 + "</system>", "more than 200000 elements"),
    ("graphml", GRAPHML.replace('<data key="d4">gpu</data>', '<data key="d4">toaster</data>', 1),
     "unknown device kind 'toaster'"),
    ("graphml", GRAPHML.replace('"gpu0"', '"' + "x" * 10_000 + '"'), "longer than the limit"),
    ("graphml", GRAPHML[: len(GRAPHML) // 2], "not a readable graphml topology"),
    ("graphml", "<graphml><graph><node/></graph>", "not a readable graphml topology"),
])
def test_imports_that_would_not_reopen_are_refused_with_one_message(tmp_path, capsys, fmt, text, expected):
    code, err, out = _import(tmp_path, capsys, fmt, text)
    assert code == 2 and expected in err, err
    assert "Traceback" not in err and not out.exists()


def test_graphml_negative_bandwidth_is_refused(tmp_path, capsys):
    topo = load_preset("dgx1-p100")
    next(iter(topo.links.values())).bandwidth_per_direction_Bps = 5e9
    text = formats.to_graphml(topo).replace(">5000000000.0<", ">-5000000000.0<")  # override and effective
    assert ">-5000000000.0<" in text
    code, err, out = _import(tmp_path, capsys, "graphml", text)
    assert code == 2 and "bandwidth_per_direction_Bps: -5000000000 is out of range" in err and not out.exists()


def test_non_utf8_import_is_a_message(tmp_path, capsys):
    code, err, _ = _import(tmp_path, capsys, "graphml", GRAPHML.replace("GPU", "GPÜ"), encoding="latin-1")
    assert code == 2 and "not UTF-8" in err


def test_an_accepted_import_reopens(tmp_path, capsys):
    code, err, out = _import(tmp_path, capsys, "nccl-xml", NCCL)
    assert code == 0, err
    assert len(fileio.load(out).gpus()) == 8
