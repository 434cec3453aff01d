"""Link ends named in words as the canvas names the devices (name, with its system when there are
several), never by id: a RoCE NIC was ``s1.ib0`` in ``simulate``'s bottleneck lines where the canvas
says "DGX H100 #1 ETH0"; JSON keeps the ids scripts read."""

import json

from dgxstudio.cli import main
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.fileio import save
from dgxstudio.model.names import device_words
from dgxstudio.model.presets import load_preset
from dgxstudio.report.content import bottleneck_rows
from dgxstudio.sim.results import SimOptions
from dgxstudio.sim.run import simulate


def roce_pair(short_names: bool = False):
    """Two DGX H100 on 400 GbE RoCE; ``short_names``: named as systems dropped from the palette are
    ("ETH0" in "DGX H100 #1"), not as a generated cluster's ("DGX H100 #1 ETH0")."""
    topo = build_fat_tree(2, "dgx-h100", rail_optimized=True, switch="eth-switch-400g-128")
    if short_names:
        for dev in topo.devices.values():
            system = topo.system_of(dev.id)
            if system is not None:
                dev.name = dev.name.removeprefix(topo.groups[system].name + " ")
    return topo


def test_simulate_names_the_ends_of_its_busiest_links(tmp_path, capsys):
    path = tmp_path / "roce.dgxs"
    save(roce_pair(), path)
    assert main(["simulate", str(path), "--algorithm", "ring", "--size", "256MiB"]) == 0
    out = capsys.readouterr().out
    lines = out[out.index("busiest links"):].splitlines()[1:]
    assert lines and all(" -> " in ln for ln in lines)
    assert "(Leaf 1 -> DGX H100 #1 ETH0)" in out and "s1.ib0" not in out and "leaf1" not in out
    assert main(["simulate", str(path), "--algorithm", "ring", "--size", "256MiB", "--json"]) == 0
    ends = {(b["from"], b["to"]) for b in json.loads(capsys.readouterr().out)["bottlenecks"]}
    assert ("leaf1", "s1.ib0") in ends   # ids where scripts read them


def test_a_device_is_named_with_its_system_when_there_are_several():
    topo = roce_pair(short_names=True)
    assert topo.devices["s2.ib0"].name == "ETH0"
    assert device_words(topo, "s2.ib0") == "DGX H100 #2 ETH0"
    assert device_words(topo, "leaf1") == "Leaf 1"            # in no system
    assert device_words(topo, "s1.system") == "DGX H100 #1"   # a group by its name
    assert device_words(roce_pair(), "s2.ib0") == "DGX H100 #2 ETH0"   # its name says it already
    one = load_preset("dgx-h100")
    assert device_words(one, "gpu0") == "GPU0"                # one system: the name alone


def test_the_reports_bottleneck_rows_name_the_system():
    topo = roce_pair(short_names=True)
    r = simulate(topo, "all-reduce", "ring", 256 * 2**20, options=SimOptions(achievable=True))
    row = bottleneck_rows(topo, r.sim.bottlenecks(1))[0]
    b = r.sim.bottlenecks(1)[0]
    assert row[1] == f"{device_words(topo, b['from'])} → {device_words(topo, b['to'])}"
    assert "DGX H100 #" in row[0] and "DGX H100 #" in row[1], row
