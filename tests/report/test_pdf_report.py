"""The PDF report is a document to hand over (issue 15, item 9)."""

import shutil
import subprocess

import pytest

from dgxstudio.analysis.summary import analyze
from dgxstudio.model.presets import load_preset
from dgxstudio.report.content import ReportData, Table, network_per_gpu, summary
from dgxstudio.report.pdf import _gui, _Pages, write_pdf
from dgxstudio.report.provenance import document_ref, stamp
from dgxstudio.sim.run import simulate


def _data(runs=True):
    topo = load_preset("dgx1-v100")
    data = ReportData(topo, analyze(topo, [g.id for g in topo.gpus()]))
    if runs:
        data.runs.append(stamp(simulate(topo, "all-reduce", "multi-ring", 64 * 2**20), data.document))
    return data


def test_summary_names_the_design_the_figures_and_the_bottleneck():
    data = _data()
    text = summary(data)
    assert "8 Tesla V100 SXM2" in text and "150.00 GB/s" in text and "bottleneck was GPU" in text
    assert "gpu0" not in text  # names, not ids
    assert network_per_gpu(data.topology, data.analysis).startswith("not cabled: 5 NICs")


def test_runs_on_another_document_are_left_out():
    data = _data()
    other = load_preset("dgx-a100")
    foreign = stamp(simulate(other, "all-reduce", "multi-ring", 2**20), document_ref(other))
    mixed = ReportData(data.topology, data.analysis, [data.runs[0], foreign])
    assert mixed.runs == [data.runs[0]] and mixed.left_out == 1


def test_long_tables_repeat_their_header_and_headings_stay_with_what_follows():
    from PySide6.QtGui import QFont, QFontMetricsF

    _gui()
    fonts = {k: QFont("Sans Serif", 10) for k in ("body", "small", "th", "td", "h2", "h3")}
    pages = _Pages(600, 800, fonts, lambda k: QFontMetricsF(fonts[k]))
    table = Table(["size", "value"], [[i, i * 2] for i in range(200)])
    pages.flow([table])
    assert len(pages.pages) > 2
    for ops in pages.pages:
        first_texts = [op.text for op in ops if op.kind == "text"][:2]
        assert first_texts == ["size", "value"], "every page of a long table starts with its header"
    from dgxstudio.report.content import Heading, Para
    pages = _Pages(600, 800, fonts, lambda k: QFontMetricsF(fonts[k]))
    pages.put_text("filler", "body", 0)
    pages.y = 760
    pages.flow([Heading(2, "Late heading"), Para("intro"), Table(["a"], [[1], [2], [3]])])
    assert pages.headings == [(2, "Late heading", 1)], "a heading at the foot of a page moves with its content"
    # a short table that would not be split: the heading moves with all of it, not with its first rows
    # (a simulation's parameter table went to the next page and left its heading behind)
    pages = _Pages(600, 800, fonts, lambda k: QFontMetricsF(fonts[k]))
    pages.put_text("filler", "body", 0)
    pages.y = 640
    pages.flow([Heading(2, "Simulation 1"), Table(["parameter", "value"], [[f"p{i}", i] for i in range(12)])])
    assert pages.headings == [(2, "Simulation 1", 1)]
    assert [op.text for op in pages.pages[1] if op.kind == "text"][:3] == ["Simulation 1", "parameter", "value"]


def test_pdf_has_title_page_contents_and_page_numbers(tmp_path):
    out = tmp_path / "r.pdf"
    pages = write_pdf(_data(), str(out))
    assert pages >= 4 and out.read_bytes().startswith(b"%PDF")
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")

    def page(n):
        return subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(out), "-"],
                              capture_output=True, text=True, check=True).stdout
    first = page(1)
    assert "DGX-1 (V100)" in first and "Summary" in first and "bottleneck" in first and f"page 1 of {pages}" in first
    toc = page(2)
    assert "Contents" in toc and "Analysis" in toc and "Assumptions" in toc and f"page 2 of {pages}" in toc
    assert "GPU0 – GPU1" in "".join(page(n) for n in range(3, pages + 1))


def test_a_short_reports_contents_page_carries_the_key_figures(tmp_path):
    """Five contents lines left the second page nearly blank: the key figures fill it, and the page
    numbers the contents give still point at their sections."""
    out = tmp_path / "r.pdf"
    data = _data()
    pages = write_pdf(data, str(out))
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")

    def page(n):
        return subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(out), "-"],
                              capture_output=True, text=True, check=True).stdout.replace("\ufb01", "fi")  # the "fi" ligature
    toc = page(2)
    assert "Key figures" in toc and "bisection bandwidth" in toc
    run = data.runs[0]
    assert f"{run.busbw_Bps / 1e9:,.2f} GB/s bus bandwidth" in toc
    for line in toc.splitlines():
        words = line.split()
        if words and words[0] == "Assumptions" and words[-1].isdigit():
            assert "Assumptions" in page(int(words[-1]))
            break
    else:
        raise AssertionError("the contents list no Assumptions page")
