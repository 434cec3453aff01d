"""A parameter server reduces, so it is a GPU or a CPU: a PCIe switch, a NIC or an NVSwitch named as
one was simulated as if it could (a DGX-1's 'pcie0' gave 181.8 ms, as fast as its CPU)."""

import pytest

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import SimOptions, SimulationError, simulate

MiB = 2**20


@pytest.mark.parametrize("preset,device,label", [("dgx1-v100", "pcie0", "PCIe switch"), ("dgx1-v100", "ib0", "NIC"),
                                                 ("dgx-h100", "nvswitch0", "NVSwitch")])
def test_a_device_that_cannot_reduce_is_refused_as_server(preset, device, label):
    topo = load_preset(preset)
    assert topo.devices[device].kind not in ("gpu", "cpu")
    with pytest.raises(SimulationError, match=rf"'{device}' \({label}\) cannot reduce: a parameter server is a GPU or a CPU"):
        simulate(topo, "all-reduce", "parameter-server", 16 * MiB, options=SimOptions(server=device))


@pytest.mark.parametrize("server", ["gpu3", "cpu0"])
def test_a_gpu_or_a_cpu_still_serves(server):
    r = simulate(load_preset("dgx1-v100"), "all-reduce", "parameter-server", 16 * MiB, options=SimOptions(server=server))
    assert r.time_s > 0
