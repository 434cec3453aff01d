"""Validation's messages and `analyze`'s ring orders name devices as the canvas does (``model/names.py``,
as link ends are named): in a design of systems dropped from the palette, each GPU is "GPU3", and
"GPU3 (s2.gpu3): unknown part" or "ring 0: s1.gpu0 -> ..." did not say which system's in words. JSON
keeps the ids scripts read."""

import json

from dgxstudio.cli import main
from dgxstudio.model.fileio import save
from dgxstudio.model.validation import validate

from .test_link_end_names import roce_pair


def test_validation_names_a_device_after_its_system(tmp_path, capsys):
    topo = roce_pair(short_names=True)
    topo.devices["s2.gpu3"].part = "h100-bogus"
    lk = next(lk for lk in topo.links.values() if {lk.a, lk.b} & {"s2.gpu5"})
    lk.a = lk.b = "s2.gpu5"
    said = {f.code: f.message for f in validate(topo)}
    assert said["unknown-part"] == "DGX H100 #2 GPU3 (s2.gpu3): unknown part 'h100-bogus'"
    assert said["self-link"] == f"link {lk.id} joins DGX H100 #2 GPU5 to itself"
    path = tmp_path / "bad.dgxs"
    save(topo, path)
    assert main(["validate", str(path), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    bogus = next(f for f in findings if f["code"] == "unknown-part")
    assert bogus["devices"] == ["s2.gpu3"]   # ids where scripts read them


def test_one_system_keeps_its_plain_names():
    from dgxstudio.model.presets import load_preset

    topo = load_preset("dgx-h100")
    topo.devices["gpu3"].part = "h100-bogus"
    assert [f.message for f in validate(topo) if f.code == "unknown-part"] == ["GPU3 (gpu3): unknown part 'h100-bogus'"]


def test_analyze_names_the_ring_gpus_after_their_systems(tmp_path, capsys):
    path = tmp_path / "pair.dgxs"
    save(roce_pair(short_names=True), path)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    ring0 = next(ln for ln in out.splitlines() if ln.strip().startswith("ring 0:"))
    assert ring0.strip().startswith("ring 0: DGX H100 #1 GPU") and "-> DGX H100 #2 GPU" in ring0
    assert "s1.gpu" not in out
    assert "farthest GPU from DGX H100 #1 GPU0: DGX H100 #2 GPU" in out
    assert main(["analyze", str(path), "--json"]) == 0
    rings = json.loads(capsys.readouterr().out)["rings"]["rings"]
    assert rings[0][0].startswith("s1.gpu")   # ids in JSON
