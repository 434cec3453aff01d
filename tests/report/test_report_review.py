"""The report as an engineer who runs nccl-tests reads it: the protocol and channels of every size,
and a summary that does not seem to contradict itself."""

import csv
import io

import pytest

from dgxstudio.analysis.summary import analyze
from dgxstudio.model.presets import load_preset
from dgxstudio.report.content import ReportData, Table, build_blocks, summary
from dgxstudio.report.html import results_csv
from dgxstudio.report.provenance import stamp
from dgxstudio.sim.run import Simulator, SimOptions, simulate, sweep_sizes


def _h100(sweep=True):
    topo = load_preset("dgx-h100")
    gpus = [g.id for g in topo.gpus()]
    data = ReportData(topo, analyze(topo, gpus))
    data.runs.append(stamp(simulate(topo, "all-reduce", "auto", 256 * 2**20), data.document))
    if sweep:
        sim = Simulator(topo, gpus, SimOptions())
        rows = [stamp(sim.run("all-reduce", "auto", n), data.document) for n in sweep_sizes(2**10, 2**24)]
        data.sweeps.append(rows)
    return data


def test_sweep_table_names_protocol_and_channels_per_size():
    """The CLI sweep shows NCCL's protocol and channels per size; the report's table showed neither."""
    data = _h100()
    tables = [b for b in build_blocks(data) if isinstance(b, Table) and b.header[0] == "size (bytes)"]
    assert len(tables) == 1
    header, rows = tables[0].header, tables[0].rows
    assert header[:4] == ["size (bytes)", "algorithm", "protocol", "channels"]
    first, last = rows[0], rows[-1]
    assert first[2] == "LL" and first[3] == "1"            # 1 KiB: LL on one channel
    assert last[2] == "Simple" and int(last[3]) > 1


def test_csv_carries_protocol_and_channels_after_the_old_columns():
    data = _h100()
    table = list(csv.reader(io.StringIO(results_csv(data))))
    head = table[0]
    assert head[:11] == ["kind", "collective", "algorithm", "gpus", "size_bytes", "time_s", "algbw_Bps", "busbw_Bps",
                         "bound_busbw_Bps", "topology", "document_sha256"]
    assert head[11:] == ["protocol", "channels"]
    run = table[1]
    assert run[0] == "run" and run[11] in ("LL", "LL128", "Simple") and int(run[12]) >= 1
    assert all(len(row) == len(head) for row in table)


def test_summary_explains_a_run_above_the_ring_bound():
    """'ring all-reduce can reach at most 450 GB/s ... The best run reached 470 GB/s' read as a contradiction
    (the best run was NVLS, which reduces in the switches and is not held to the ring bound)."""
    data = _h100(sweep=False)
    best = data.runs[0]
    assert best.algorithm == "nvls" and best.busbw_Bps > data.analysis["rings"]["allreduce_busbw_bound_Bps"]
    text = summary(data)
    assert "above the ring bound: nvls is not a ring" in text


def test_summary_of_a_ring_run_says_nothing_of_it():
    topo = load_preset("dgx1-v100")
    data = ReportData(topo, analyze(topo, [g.id for g in topo.gpus()]))
    data.runs.append(stamp(simulate(topo, "all-reduce", "ring", 64 * 2**20), data.document))
    assert "above the ring bound" not in summary(data)


def test_topology_picture_background_covers_the_whole_picture():
    """`<rect width="100%">` is 100 px in Qt's SVG Tiny renderer: the PDF and PNG showed a grey square in the
    top-left corner and the rest of the picture on white."""
    from dgxstudio.report.pdf import svg_to_image
    from dgxstudio.report.svg import topology_svg

    image = svg_to_image(topology_svg(load_preset("dgx-h100")))
    corner = image.pixelColor(3, 3).name()
    far = image.pixelColor(image.width() - 3, image.height() - 3).name()
    assert corner == far == "#fbfbfb"


def test_charts_background_covers_the_whole_chart():
    from dgxstudio.report.pdf import svg_to_image
    from dgxstudio.report.svg import gantt_chart, line_chart

    for svg in (line_chart([("a", [1, 2], [1, 2])], "t", "x", "y"),
                gantt_chart([{"device": "gpu0", "start_s": 0.0, "end_s": 1.0, "kind": "F", "microbatch": 0}], "g")):
        assert 'width="100%"' not in svg
        image = svg_to_image(svg)
        assert image.pixelColor(image.width() - 2, 2).name() == "#ffffff"


def test_gantt_draws_the_weight_gradient_apart_from_the_backward():
    """A zero-bubble schedule's W was drawn in B's colour in the report (the GUI draws it green)."""
    from dgxstudio.report.svg import GANTT_COLORS, gantt_chart

    timeline = [{"device": "gpu0", "kind": k, "microbatch": 0, "start_s": i * 1e-3, "end_s": (i + 1) * 1e-3}
                for i, k in enumerate("FBW")]
    svg = gantt_chart(timeline, "zb-h1 schedule")
    assert len(set(GANTT_COLORS.values())) == 3
    for k, label in (("F", "forward"), ("B", "backward (input gradient)"), ("W", "weight gradient")):
        assert f'fill="{GANTT_COLORS[k]}" stroke="#fff"' in svg
        assert f"{k}: {label}" in svg


def test_graphml_import_of_an_nccl_xml_says_what_the_file_is():
    """An NCCL XML imported as GraphML said `replace() argument 1 must be str, not bytes`."""
    from dgxstudio.report.formats import GraphmlError, from_graphml
    from dgxstudio.report.nccl_xml import to_nccl_xml

    with pytest.raises(GraphmlError, match=r"root element is <system>, not <graphml> \(an NCCL topology"):
        from_graphml(to_nccl_xml(load_preset("dgx1-v100")))
    with pytest.raises(GraphmlError, match="root element is <html>"):
        from_graphml('<?xml version="1.0"?><!-- a comment --><html><body/></html>')


@pytest.mark.parametrize("name", ["dgx-h100", "dgx-b200", "hgx-h800", "dgx-a100", "dgx1-v100"])
def test_nccl_xml_round_trip_keeps_links_parts_and_bandwidth(name):
    """DGX H100 came back with PCIe3/4, QPI and its 400G NICs as '100 GbE (warning)'; DGX B200 with
    NVLink4 and half its NVLink bandwidth (SM 100 unknown), its Xeon 8570 as an E5-2698 v4."""
    from collections import Counter

    from dgxstudio.cli.topology import topology_info
    from dgxstudio.report.nccl_xml import from_nccl_xml, to_nccl_xml

    topo = load_preset(name)
    back, warnings = from_nccl_xml(to_nccl_xml(topo))
    assert warnings == []
    a, b = topology_info(topo), topology_info(back)
    for key in ("physical_links_by_type", "devices_by_kind", "nvlink_bw_per_gpu_bidir_Bps"):
        assert a[key] == b[key], key
    parts = lambda t, kind: Counter(d.part for d in t.devices.values() if d.kind == kind)  # noqa: E731
    for kind in ("cpu", "nvswitch", "pcie_switch"):
        assert parts(back, kind) == parts(topo, kind), kind
    # a GPU is known by its SM version: an H800 returns as the H100 (its NVLinks, 8 not 18, stay)
    sms = lambda t: Counter(t.catalog.part(g.part).extra["nccl_sm"] for g in t.gpus())  # noqa: E731
    assert sms(back) == sms(topo)
    # NCCL XML gives a NIC's speed and ports, not its model: a BlueField-3 at 200 Gb/s returns as a
    # ConnectX at 200 Gb/s; speed and port count survive
    def nics(t):
        cat = t.catalog
        return Counter((cat.part(d.part).extra["nccl_speed_mbps"],
                        sum(g.count for g in cat.part(d.part).ports if g.name != "pcie"))
                       for d in t.devices.values() if d.kind == "nic")
    assert nics(back) == nics(topo)


def test_nccl_xml_names_an_infiniband_vpi_nic_mlx5():
    """ConnectX-7 takes NDR and 400 GbE; on a DGX H100 its nets were written 'eth0', as Ethernet."""
    from dgxstudio.report.nccl_xml import to_nccl_xml

    xml = to_nccl_xml(load_preset("dgx-h100"))
    assert 'name="mlx5_0"' in xml and 'name="eth0"' not in xml


def test_summary_names_ring_fabrics_in_words():
    """'over 4 all rings' (a cluster) and 'over 3 nvlink rings' read as typos."""
    topo = load_preset("dgx1-v100")
    data = ReportData(topo, analyze(topo, [g.id for g in topo.gpus()]))
    assert "over 3 NVLink rings" in summary(data)


def test_summary_of_a_cluster_says_rings_across_systems(tmp_path):
    from dgxstudio.cli import main
    from dgxstudio.model import fileio

    path = tmp_path / "c.dgxs"
    assert main(["generate", "fat-tree", "--system", "dgx-a100", "--systems", "2", "-o", str(path)]) == 0
    topo = fileio.load(str(path))
    data = ReportData(topo, analyze(topo, [g.id for g in topo.gpus()]))
    assert data.analysis["rings"]["fabric"] == "all"
    text = summary(data)
    assert "rings across systems" in text and " all rings" not in text
