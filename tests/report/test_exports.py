"""Every export parses back; imports rebuild equivalent topologies; reports hold the figures and
escape what users typed."""

import json
import xml.etree.ElementTree as ET

import networkx as nx
import pytest
import yaml

from dgxstudio.analysis.summary import analyze
from dgxstudio.cli import main
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.model.validation import validate
from dgxstudio.report.formats import ExportError, from_graphml, to_astra_yaml, to_dot, to_graphml, to_ns3
from dgxstudio.report.html import ReportData, build_html
from dgxstudio.report.nccl_xml import from_nccl_xml, to_nccl_xml


def link_summary(topo):
    """GPU -> sorted (link type, count, bandwidth) of its links: what an import must keep."""
    out = {}
    for g in topo.gpus():
        out[g.id] = sorted((lk.type, lk.count, round(topo.link_bandwidth_per_direction_Bps(lk))) for lk in topo.links_of(g.id))
    return out


@pytest.mark.parametrize("preset", ["dgx1-v100", "dgx-a100", "pcie-8gpu"])
def test_graphml_round_trip_keeps_every_attribute(preset):
    topo = load_preset(preset)
    topo.devices["gpu0"].properties = {"rack": "B7"}
    text = to_graphml(topo)
    g = nx.read_graphml(__import__("io").StringIO(text), force_multigraph=True)
    assert g.number_of_nodes() == len(topo.devices) and g.number_of_edges() == len(topo.links)
    back = from_graphml(text)
    assert link_summary(back) == link_summary(topo)
    assert back.devices["gpu0"].properties == {"rack": "B7"}
    assert {d.part for d in back.devices.values()} == {d.part for d in topo.devices.values()}


def test_dot_is_well_formed_and_escaped():
    topo = load_preset("dgx1-p100")
    topo.devices["gpu0"].name = 'evil "quote" \\ name'
    dot = to_dot(topo)
    assert dot.startswith('graph "DGX-1 (P100)" {') and dot.rstrip().endswith("}")
    assert dot.count(" -- ") == len(topo.links)
    assert '\\"quote\\"' in dot


def test_nccl_xml_of_the_a100_and_its_import():
    topo = load_preset("dgx-a100")
    root = ET.fromstring(to_nccl_xml(topo))
    assert root.tag == "system" and root.get("version") == "1"
    gpus = root.iter("gpu")
    gpus = list(gpus)
    assert len(gpus) == 8
    for gpu in gpus:
        links = gpu.findall("nvlink")
        assert len(links) == 6 and all(nv.get("count") == "2" and nv.get("tclass") == "0x068000" for nv in links)
        assert len({nv.get("target") for nv in links}) == 6
    speeds = {pci.get("link_speed") for pci in root.iter("pci")}
    assert speeds == {"16 GT/s"}
    nets = list(root.iter("net"))
    assert {n.get("speed") for n in nets} == {"200000"}
    back, warnings = from_nccl_xml(to_nccl_xml(topo))
    assert warnings == []
    assert len(back.gpus()) == 8 and len(back.devices_of_kind("nvswitch")) == 6
    assert [f for f in validate(back) if f.severity == "error"] == []
    for g in back.gpus():
        nv = [lk for lk in back.links_of(g.id) if lk.type == "NVLink3"]
        assert len(nv) == 6 and sum(lk.count for lk in nv) == 12
    assert analyze(back, [g.id for g in back.gpus()])["nvlink_bw_per_gpu_bidir_Bps"] == pytest.approx(600e9)


def test_nccl_xml_of_the_dgx1_and_unknown_gpus():
    topo = load_preset("dgx1-v100")
    xml = to_nccl_xml(topo)
    back, _ = from_nccl_xml(xml)
    assert link_summary(back).values().__len__() == 8
    nv_units = sorted(sum(lk.count for lk in back.links_of(g.id) if lk.type == "NVLink2") for g in back.gpus())
    assert nv_units == [6] * 8
    odd = xml.replace('sm="70"', 'sm="75"')
    back, warnings = from_nccl_xml(odd)
    assert warnings and "SM 75" in warnings[0]
    with pytest.raises(ValueError, match="not XML"):
        from_nccl_xml("<system")


def test_ns3_edge_list_parses_back():
    topo = load_preset("dgx1-fat-tree-124")
    lines = to_ns3(topo).splitlines()
    nodes, switches, links = map(int, lines[0].split())
    assert nodes == len(topo.devices) and links == len(topo.links) and switches == nodes - 992
    assert len(lines[1].split()) == switches and min(map(int, lines[1].split())) == 992
    for line in lines[2:]:
        src, dst, bw, lat, err = line.split()
        assert 0 <= int(src) < nodes and 0 <= int(dst) < nodes
        assert bw.endswith("Gbps") and float(bw[:-4]) > 0 and lat.endswith("ms") and err == "0"
    assert len(lines) == 2 + links


def test_astra_yaml_when_representable_and_why_not():
    single = yaml.safe_load(to_astra_yaml(load_preset("dgx-a100")))
    assert single == {"topology": ["Switch"], "npus_count": [8], "bandwidth": [300], "latency": [940]}
    cluster = yaml.safe_load(to_astra_yaml(build_fat_tree(4, "dgx-a100")))
    assert cluster["topology"] == ["Switch", "Switch"] and cluster["npus_count"] == [8, 4]
    assert cluster["bandwidth"][1] == pytest.approx(25)
    with pytest.raises(ExportError, match="hybrid cube-mesh"):
        to_astra_yaml(load_preset("dgx1-v100"))


def test_report_contains_the_analysis_and_escapes_names():
    topo = load_preset("dgx1-v100")
    topo.devices["gpu0"].name = "<script>alert(1)</script>"
    topo.name = "lab & <b>friends</b>"
    data = ReportData(topo, analyze(topo, [g.id for g in topo.gpus()]))
    html, _ = build_html(data)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "lab &amp; &lt;b&gt;friends&lt;/b&gt;" in html
    assert "150.00 GB/s" in html and "3 over nvlink" in html
    # self-contained: nothing loaded from elsewhere
    for external in ('src="http', "href=", "<link", "url(", "<script"):
        assert external not in html


def test_cli_report_pdf_has_pages_and_csv_json(tmp_path, capsys):
    out = tmp_path / "r.pdf"
    assert main(["report", "--preset", "dgx1-v100", "--algorithm", "multi-ring", "--sweep", "1KiB:1MiB",
                 "--pipeline-stages", "4", "-o", str(out)]) == 0
    pdf = out.read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") + pdf.count(b"/Type/Page") >= 2 \
        or b"/Count" in pdf
    pages = int(pdf.split(b"/Count ")[1].split()[0])
    assert pages >= 2
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["analysis"]["rings"]["allreduce_busbw_bound_Bps"] == pytest.approx(150e9)
    assert (tmp_path / "r.csv").read_text().startswith("kind,collective")
    html = tmp_path / "r.html"
    assert main(["report", "--preset", "dgx1-fat-tree-124", "--size", "64MiB", "--algorithm", "hierarchical",
                 "-o", str(html)]) == 0
    text = html.read_text()
    assert "6,012.12 GB/s" in text and "1.28 us" in text and "<img" not in text and "src=\"http" not in text


@pytest.mark.parametrize("fmt", ["native", "graphml", "dot", "ns3", "svg", "png"])
def test_cli_export_every_format(tmp_path, capsys, fmt):
    out = tmp_path / f"t.{fmt}"
    assert main(["export", "--preset", "dgx-a100", "--format", fmt, "-o", str(out)]) == 0
    assert out.stat().st_size > 100


def test_cli_import_nccl_and_bad_input(tmp_path, capsys):
    xml = tmp_path / "a.xml"
    assert main(["export", "--preset", "dgx-a100", "--format", "nccl-xml", "-o", str(xml)]) == 0
    out = tmp_path / "a.dgxs"
    assert main(["import", str(xml), "--format", "nccl-xml", "-o", str(out)]) == 0
    assert main(["validate", str(out)]) == 0
    bad = tmp_path / "bad.xml"
    bad.write_text("<html><body>nope</body></html>")
    code = main(["import", str(bad), "--format", "nccl-xml", "-o", str(out)])
    assert code == 2 and "not <system>" in capsys.readouterr().err
    code = main(["export", "--preset", "dgx1-fat-tree-124", "--format", "nccl-xml", "-o", str(xml)])
    assert code == 2 and "one system" in capsys.readouterr().err


def test_cli_report_name_without_extension_writes_html(tmp_path, capsys):
    assert main(["report", "--preset", "dgx1-p100", "--size", "", "-o", str(tmp_path / "weekly")]) == 0
    assert not (tmp_path / "weekly").exists()
    assert (tmp_path / "weekly.html").read_text().lstrip().lower().startswith("<!doctype html")
    assert (tmp_path / "weekly.json").exists() and (tmp_path / "weekly.csv").exists()
    assert "weekly.html" in capsys.readouterr().out


def test_cli_report_unknown_extension_is_refused_naming_the_formats(tmp_path, capsys):
    assert main(["report", "--preset", "dgx1-p100", "--size", "", "-o", str(tmp_path / "r.txt")]) == 2
    err = capsys.readouterr().err
    assert ".html" in err and ".pdf" in err and "r.txt" in err
    assert list(tmp_path.iterdir()) == []
