"""A new user's review of main at 030276d: what the command line said wrong."""

from dgxstudio.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_says_one_switch_hop_not_one_switch_hops(capsys, tmp_path):
    # two rail-optimized DGX H100 meet in one leaf per rail: the worst system-to-system path crosses
    # one switch, which `analyze` printed as "(1 switch hops)"
    path = str(tmp_path / "two.dgxs")
    assert run(capsys, "generate", "fat-tree", "--systems", "2", "--system", "dgx-h100", "--rail-optimized",
               "-o", path)[0] == 0
    code, out, _ = run(capsys, "analyze", path)
    assert code == 0
    assert "(1 switch hop)," in out
    code, out, _ = run(capsys, "analyze", "--preset", "dgx1-fat-tree-124")
    assert "(3 switch hops)," in out and "over 8 hops" in out


def test_a_leaf_too_small_for_per_leaf_names_the_option(capsys, tmp_path):
    # "--per-leaf 1000" answered "a leaf needs 8000 ports down and 8000 up", naming no option
    code, _, err = run(capsys, "generate", "fat-tree", "--systems", "16", "--system", "dgx-h100", "--per-leaf", "1000",
                       "-o", str(tmp_path / "x.dgxs"))
    assert code == 2
    assert "--per-leaf 1000: a leaf of 1000 systems needs 8000 ports down and 8000 up" in err
    code, _, err = run(capsys, "generate", "fat-tree", "--systems", "16", "--system", "dgx-h100", "--spines", "100",
                       "-o", str(tmp_path / "x.dgxs"))
    assert code == 2 and "--spines 100: a leaf of 4 systems needs 32 ports down and 100 up" in err


def test_a_ring_inside_one_system_is_not_said_to_run_across_systems(capsys, tmp_path):
    # the README's PCIe-only server, and two DGX-1 GPUs no NVLink joins, read "rings: 1 across systems"
    code, out, _ = run(capsys, "analyze", "--preset", "pcie-8gpu")
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("rings:"))
    assert "rings: 1 not on NVLink alone: " in line and "across systems" not in line
    code, out, _ = run(capsys, "analyze", "--preset", "dgx1-v100", "--gpus", "gpu0,gpu5")
    assert "across systems" not in out and "not on NVLink alone" in out
    assert run(capsys, "report", "--preset", "pcie-8gpu", "--size", "", "-o", str(tmp_path / "r.html"))[0] == 0
    html = (tmp_path / "r.html").read_text()
    assert "across systems" not in html and "over 1 ring not on NVLink alone" in html


def test_info_counts_groups_in_the_plural(capsys):
    # "groups:  129  (1 cluster, 1 fabric, 127 system)" on the SuperPOD, "27 tray" on the NVL72
    code, out, _ = run(capsys, "info", "--preset", "dgx-h100-superpod")
    assert code == 0 and "groups:  129  (1 cluster, 1 fabric, 127 systems)" in out
    code, out, _ = run(capsys, "info", "--preset", "gb200-nvl72")
    assert "(1 system, 27 trays)" in out


def test_train_headline_says_the_critical_resource_is_the_rated_verdict(capsys, tmp_path):
    # two DGX A100 at tp=8 pp=2 headed "critical resource: infiniband" while InfiniBand was 0.4% busy and
    # the achievable and simulated verdicts below it said "nvlink limits"; the headline names its basis
    path = str(tmp_path / "a100x2.dgxs")
    assert run(capsys, "generate", "fat-tree", "--systems", "2", "--system", "dgx-a100", "-o", path)[0] == 0
    code, out, _ = run(capsys, "train", path, "--dp", "1", "--tp", "8", "--pp", "2")
    assert code == 0
    assert "  critical resource at rated figures: infiniband (achievable and simulated: nvlink) - " in out
    assert "achievable: nvlink limits" in out and "simulated:  nvlink limits" in out
    code, out, _ = run(capsys, "train", path, "--dp", "1", "--tp", "8", "--pp", "2", "--json")
    assert '"critical_resource": "infiniband"' in out   # the JSON key keeps its meaning
    # without the lecture's verdict (no tensor traffic across the network) the headline has no basis
    code, out, _ = run(capsys, "train", path, "--dp", "2", "--tp", "8", "--pp", "1")
    assert "  critical resource: compute - " in out


def test_self_test_drops_only_the_offscreen_size_hint_warning():
    # `dgxstudio --self-test` printed "This plugin does not support propagateSizeHints()" twice on stderr
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "dgxstudio", "--self-test"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "propagateSizeHints" not in result.stderr, result.stderr
    # the handler drops exactly that message: any other Qt warning still reaches stderr, and the previous
    # handler is back afterwards
    script = ("from PySide6.QtCore import qWarning\n"
              "from dgxstudio.ui.selftest import OFFSCREEN_NOISE, quiet_offscreen_noise\n"
              "restore = quiet_offscreen_noise()\n"
              "qWarning(OFFSCREEN_NOISE)\nqWarning('another warning')\n"
              "qWarning(OFFSCREEN_NOISE + ' (not quite)')\n"
              "restore()\nqWarning(OFFSCREEN_NOISE)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["another warning", "This plugin does not support propagateSizeHints() "
                                          "(not quite)", "This plugin does not support propagateSizeHints()"]


def test_nvls_on_systems_without_an_nvswitch_says_they_have_none(capsys):
    # `--algorithm nvls-tree` on DGX-1 said it "needs NVSwitches ... in every system" (or, on one DGX-1,
    # pointed at nvls, which fails too); the DGX-1 has no NVSwitch at all, and the refusal says so
    for preset in ("dgx1-v100", "dgx1-fat-tree-124"):
        code, _, err = run(capsys, "simulate", "--preset", preset, "--algorithm", "nvls-tree")
        assert code != 0
        assert ("nvls-tree needs NVSwitches that reduce in the switch (NVLink SHARP, NVSwitch gen3 and later) in "
                "every system; DGX-1 (V100) has no NVSwitch") in err, err
    code, _, err = run(capsys, "simulate", "--preset", "dgx1-v100", "--algorithm", "nvls")
    assert "; DGX-1 (V100) has no NVSwitch" in err
    # systems with NVSwitches too old to reduce name the switches they have
    code, _, err = run(capsys, "simulate", "--preset", "dgx-a100-superpod", "--algorithm", "nvls-tree")
    assert "in every system; these GPUs reach NVSwitch (2nd gen)" in err
    code, _, err = run(capsys, "simulate", "--preset", "dgx-h100", "--algorithm", "nvls-tree")
    assert "inside one system NCCL uses nvls" in err


def test_one_gpu_and_empty_counts_read_as_english(capsys, tmp_path):
    # a one-GPU file: `analyze` said "Untitled: 1 GPUs", `train` "only 1 are selected", `info`
    # "links: 0 connections, 0 physical  ()" and "groups: 0  ()"
    from dgxstudio.model import fileio
    from dgxstudio.model.topology import Device, Topology
    topo = Topology()
    topo.add_device(Device("gpu0", "gpu", "tesla-v100-sxm2", "gpu0"))
    path = str(tmp_path / "one.dgxs")
    fileio.save(topo, path)
    code, out, _ = run(capsys, "analyze", path)
    assert code == 0 and out.splitlines()[0] == "Untitled: 1 GPU"
    code, _, err = run(capsys, "train", path, "--tp", "2")
    assert code == 2 and "dp x tp x pp = 2 GPUs, but the GPU set has only 1 GPU" in err
    code, out, _ = run(capsys, "info", path)
    assert code == 0 and "()" not in out
    assert "  links:   0 connections, 0 physical\n" in out and "  groups:  0\n" in out
    assert "  devices: 1  (1 GPU)\n" in out
    code, out, _ = run(capsys, "info", "--preset", "dgx-h100")   # a breakdown still follows a count
    assert "  links:   55 connections, 170 physical  (144 x NVLink4, 22 x PCIe5, 4 x UPI-16GT)" in out
    code, _, err = run(capsys, "pipeline", path, "--stages", "2", "--microbatches", "4")
    assert code == 2 and "--stages 2: the GPU set has only 1 GPU" in err


def test_a_device_that_is_not_a_gpu_is_named_by_its_display_name(capsys):
    # "--gpus nvswitch0" answered "'nvswitch0' is a nvswitch, not a GPU"
    code, _, err = run(capsys, "analyze", "--preset", "dgx-h100", "--gpus", "nvswitch0")
    assert code == 2 and "'nvswitch0' is an NVSwitch, not a GPU" in err
    code, _, err = run(capsys, "analyze", "--preset", "dgx-h100", "--gpus", "cpu0")
    assert "'cpu0' is a CPU, not a GPU" in err


def test_info_counts_devices_in_plural_forms(capsys):
    from dgxstudio.cli import main
    assert main(["info", "--preset", "dgx-h100"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.strip().startswith("devices:"))
    assert "(8 GPUs, 4 NVSwitches, 10 NICs, 4 PCIe switches, 2 CPUs)" in line
