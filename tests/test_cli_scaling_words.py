"""`scaling`'s table as a reader takes it: times with a space before their unit, and which GPUs each
row ran on (a 2-GPU DGX-1 V100 all-reduce is slower than a 4-GPU one: gpu0 and gpu1 share one NVLink)."""

import json

from dgxstudio.cli import main


def test_scaling_rows_say_their_gpus_and_space_their_units(capsys):
    assert main(["scaling", "--preset", "dgx1-v100", "--sample-time", "5ms", "--grad-bytes", "97.5MB"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["1", "2", "4", "8"] and all(r[2] == "ms" for r in rows)
    assert "a row of N GPUs runs on the first N of: GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7" in out
    assert main(["scaling", "--preset", "dgx1-v100", "--sample-time", "5ms", "--gpus", "gpu4,gpu5,gpu0,gpu1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["topologies"][0]["gpu_order"] == ["gpu0", "gpu1", "gpu4", "gpu5"]
