"""Training iterations in the report: the GUI kept collectives, sweeps and pipelines for the HTML/PDF
report and its JSON and CSV, and dropped every training run (report.content.ReportData had no place
for one)."""

import csv
import io
import json
import shutil
import subprocess

import pytest

from dgxstudio.analysis.summary import analyze
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.report.content import ReportData, key_figures
from dgxstudio.report.html import build_html, results_csv, results_json
from dgxstudio.report.provenance import document_ref, stamp
from dgxstudio.sim.training import ModelSpec, train_iteration
from dgxstudio.sim.training_words import critical_headline, critical_reason


@pytest.fixture(scope="module")
def data():
    topo = build_fat_tree(2, "dgx-a100")
    gpus = [g.id for g in topo.gpus()]
    d = ReportData(topo, analyze(topo, gpus))
    d.trainings.append(stamp(train_iteration(topo, gpus, 1, 8, 2, ModelSpec(), microbatches=4), d.document))
    return d


def test_the_html_report_has_a_section_per_training_run(data):
    t = data.trainings[0]
    html = build_html(data)[0]
    assert "<h2>Training 1: dp=1 tp=8 pp=2, 1f1b schedule, 4 micro-batches</h2>" in html
    assert f"{t.iteration_s * 1e3:.3f} ms" in html
    head, why = critical_headline(t), critical_reason(t)
    assert f"{head[:1].upper() + head[1:]}. {why[:1].upper() + why[1:]}.".replace("'", "&#x27;") in html
    assert "critical resource at rated figures: infiniband" in head   # the lecture's A100 pair
    assert "Busy fraction per link class: nvlink" in html
    # the lecture's A100 pair: rated says infiniband, achievable nvlink; the CLI and the Results dock say why
    why = t.details["verdicts"]["why_they_differ"]
    assert why and f"Why the rated and achievable verdicts differ: {why}." in html.replace("&#x27;", "'")
    rows = key_figures(data).rows
    assert ["training 1: dp=1 tp=8 pp=2, 1f1b schedule",
            f"{t.iteration_s * 1e3:.3f} ms an iteration, {t.samples_per_s:,.1f} samples/s; critical resource infiniband"] in rows


def test_the_results_json_and_csv_carry_the_training_run(data):
    t = data.trainings[0]
    out = json.loads(results_json(data))
    assert len(out["trainings"]) == 1
    row = out["trainings"][0]
    assert row["iteration_s"] == t.iteration_s and row["critical_resource"] == "infiniband"
    assert row["document"] == data.document
    rows = [r for r in csv.DictReader(io.StringIO(results_csv(data))) if r["kind"] == "training"]
    assert len(rows) == 1 and float(rows[0]["time_s"]) == t.iteration_s and rows[0]["gpus"] == "16"
    assert rows[0]["collective"] == "dp=1 tp=8 pp=2, 1f1b schedule"


def test_a_training_run_on_another_document_is_left_out(data):
    other = build_fat_tree(2, "hgx-a800")
    foreign = stamp(train_iteration(other, [g.id for g in other.gpus()], 1, 8, 2, ModelSpec(), microbatches=2),
                    document_ref(other))
    mixed = ReportData(data.topology, data.analysis, trainings=[data.trainings[0], foreign])
    assert mixed.trainings == [data.trainings[0]] and mixed.left_out == 1


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_the_pdf_report_has_the_training_section(data, tmp_path):
    from dgxstudio.report.pdf import write_pdf

    out = tmp_path / "r.pdf"
    write_pdf(data, str(out))
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert "Training 1: dp=1 tp=8 pp=2, 1f1b schedule, 4 micro-batches" in text
    assert "tensor parallel" in text
