"""`scaling` as a user reads it: no strong-scaling figure where the global batch gives a GPU less than
one sample, and a terminal told which GPU count runs (512 GPUs of the 124-system tree take seconds)."""

import json

from dgxstudio.cli import main
from dgxstudio.model.presets import load_preset
from dgxstudio.sim.scaling import StepModel, scaling
from tests.terminal import on_terminal


def test_strong_rows_below_one_sample_a_gpu_show_no_figure(capsys):
    capsys.readouterr()
    assert main(["scaling", "--preset", "dgx1-p100", "--sample-time", "5ms", "--global-batch", "3"]) == 0
    rows = {int(line.split()[0]): line for line in capsys.readouterr().out.splitlines()
            if line.split() and line.split()[0].isdigit()}
    assert rows[2].split()[-2] != "-"            # 1.5 samples a GPU: a figure
    assert rows[4].split()[-2:] == ["-", "-"]    # 0.75 a GPU: before, "496.5 62.1%"
    assert rows[8].split()[-2:] == ["-", "-"]
    assert main(["scaling", "--preset", "dgx1-p100", "--sample-time", "5ms", "--global-batch", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["strong_batch_per_gpu"] for r in d["topologies"][0]["rows"]] == [3, 1.5, 0.75, 0.375]


def test_scaling_reports_each_gpu_count_as_it_starts():
    topo = load_preset("dgx1-p100")
    seen = []
    scaling(topo, [g.id for g in topo.gpus()], StepModel(97.5e6, 5e-3, 64), 64, 64,
            progress=lambda f, step: seen.append((f, step)))
    assert seen == [(0.0, "1 GPUs"), (0.25, "2 GPUs"), (0.5, "4 GPUs"), (0.75, "8 GPUs")]


def test_cli_scaling_shows_progress_on_a_terminal(monkeypatch, capsys):
    term = on_terminal(monkeypatch)
    assert main(["scaling", "--preset", "dgx1-p100", "--sample-time", "5ms"]) == 0
    assert "scaling on DGX-1 (P100): 8 GPUs" in term.getvalue()
