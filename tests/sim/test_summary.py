"""A session keeps summaries of the runs it no longer shows: the figures, results files and report
must read the same from a summary as from the full run, and the summary must be much smaller."""

import json
import pickle

from dgxstudio.analysis.summary import analyze
from dgxstudio.model.presets import load_preset
from dgxstudio.report.html import ReportData, build_html, results_csv, results_json
from dgxstudio.report.provenance import document_ref, stamp
from dgxstudio.sim.pipeline import PipelineSpec, run_pipeline
from dgxstudio.sim.run import SimOptions, Simulator
from dgxstudio.sim.summary import MAX_DELIVERED_POINTS, SimSummary, summarize, thin


def _runs():
    topo = load_preset("dgx1-v100")
    gpus = [g.id for g in topo.gpus()]
    sim = Simulator(topo, gpus, SimOptions(chunk=256 * 1024))
    run = stamp(sim.run("all-reduce", "tree", 64 * 2**20), document_ref(topo))
    sweep = stamp([sim.run("all-gather", "ring", s) for s in (2**20, 2**24)], document_ref(topo))
    pipe = stamp(run_pipeline(topo, PipelineSpec("1f1b", 4, 8, gpus[:4], [2e-3] * 4, [4e-3] * 4, 16 * 2**20)),
                 document_ref(topo))
    return topo, gpus, run, sweep, pipe


def test_a_summary_reads_like_the_run_and_is_much_smaller():
    topo, gpus, run, sweep, pipe = _runs()
    small, small_sweep, small_pipe = summarize(run), summarize(sweep), summarize(pipe)
    assert isinstance(small.sim, SimSummary) and all(isinstance(r.sim, SimSummary) for r in small_sweep)
    assert summarize(small) is small  # idempotent
    assert run.sim is not small.sim and not isinstance(run.sim, SimSummary)  # the shown run keeps its record
    assert small.as_dict() == run.as_dict()
    assert [r.as_dict(3) for r in small_sweep] == [r.as_dict(3) for r in sweep]
    assert small_pipe.as_dict() == pipe.as_dict()
    assert small.document == run.document and small_pipe.document == pipe.document
    full = ReportData(topo, analyze(topo, gpus), [run], [sweep], [pipe])
    kept = ReportData(topo, analyze(topo, gpus), [small], [small_sweep], [small_pipe])
    assert json.loads(results_json(kept)) == json.loads(results_json(full))
    assert results_csv(kept) == results_csv(full)
    assert "Bottleneck links" in build_html(kept)[0]
    assert len(pickle.dumps(small)) * 4 < len(pickle.dumps(run))


def test_thin_keeps_the_ends_and_a_bounded_number_of_points():
    points = [(float(i), float(i * i)) for i in range(10_000)]
    out = thin(points)
    assert len(out) == MAX_DELIVERED_POINTS and out[0] == points[0] and out[-1] == points[-1]
    assert out == sorted(out)
    assert thin(points[:10]) == points[:10]
