"""A training run from the GUI's training tab goes into the report (HTML, JSON, CSV) as the
collectives, sweeps and pipelines do; it was shown in the Results dock and then dropped."""

import csv
import json

from dgxstudio.model.builders import build_fat_tree

from .test_simulation_gui import run_training_tab


def test_a_training_run_from_the_tab_is_in_the_exported_report(make_window, qtbot, tmp_path):
    w = make_window(topology=build_fat_tree(2, "dgx-a100"))
    got = []
    w.sim_panel.resultReady.connect(lambda request, result: got.append(result))
    run_training_tab(w, qtbot, 1, 8, 2, microbatches=4)
    t = got[-1]
    assert w.session["trainings"] == [t]
    assert w.export_report(str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text()
    assert "<h2>Training 1: dp=1 tp=8 pp=2, 1f1b schedule, 4 micro-batches</h2>" in html
    data = json.loads((tmp_path / "r.json").read_text())
    assert [r["iteration_s"] for r in data["trainings"]] == [t.iteration_s]
    assert data["trainings"][0]["document"]["sha256"] == data["document"]["sha256"]
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert [(r["kind"], float(r["time_s"])) for r in rows] == [("training", t.iteration_s)]
    w.open_preset("dgx1-v100")   # another document: its runs go
    assert w.session["trainings"] == []
