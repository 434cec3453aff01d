"""A run's one-line reason says what was asked and what NCCL's model chose: an algorithm asked for with
the protocol left to auto does not read as if the protocol had been asked for too."""

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.run import SimOptions, simulate

MiB = 2**20


def test_a_protocol_left_to_auto_is_not_called_requested():
    r = simulate(load_preset("dgx-a100"), "all-reduce", "ring", 256 * MiB, options=SimOptions(protocol="auto"))
    assert r.reason == "ring as requested; Simple: NCCL's cost model's choice for this size"


def test_a_protocol_asked_for_is_called_requested():
    r = simulate(load_preset("dgx-a100"), "all-reduce", "ring", 256 * MiB, options=SimOptions(protocol="ll128"))
    assert r.reason == "ring with LL128 as requested"


def test_auto_counts_one_channel_in_the_singular():
    """A small all-reduce runs on one channel: "(1 channel)", not "(1 channels)"; more are plural."""
    topo = load_preset("dgx-h100")
    small = simulate(topo, "all-reduce", "auto", 1024)
    assert small.channels == 1 and "(1 channel):" in small.reason
    large = simulate(topo, "all-reduce", "auto", 256 * MiB)
    assert large.channels > 1 and f"({large.channels} channels):" in large.reason
