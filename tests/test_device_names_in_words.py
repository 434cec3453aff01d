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


def test_a_ring_names_each_system_once_where_it_enters_it():
    # "DGX A100 #1 GPU0 -> DGX A100 #1 GPU2 -> ..." repeated the system before every GPU: 430 characters
    # for a 2-system ring; the system is named where the ring enters it, and a long ring says how many
    # systems it crosses beyond the GPUs shown
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.model.names import ring_words
    from dgxstudio.model.presets import load_preset

    topo = build_fat_tree(2, "dgx-a100")
    one, two = ([f"s{s}.gpu{i}" for i in range(8)] for s in (1, 2))
    words = ring_words(topo, one + two, "->")
    assert words == ("DGX A100 #1 GPU0 -> GPU1 -> GPU2 -> GPU3 -> GPU4 -> GPU5 -> GPU6 -> GPU7 -> "
                     "DGX A100 #2 GPU0 -> GPU1 -> GPU2 -> GPU3 -> GPU4 -> GPU5 -> GPU6 -> GPU7")
    long = ring_words(build_fat_tree(4, "dgx-a100"), [f"s{s}.gpu{i}" for s in range(1, 5) for i in range(8)],
                      "->", 6, "...")
    assert long == "DGX A100 #1 GPU0 -> GPU1 -> GPU2 -> GPU3 -> GPU4 -> GPU5 ... (32 GPUs in 4 systems)"
    one_system = load_preset("dgx-a100")
    assert ring_words(one_system, ["gpu0", "gpu1", "gpu2"]) == "GPU0 → GPU1 → GPU2"   # one system: names alone
