"""`dgxstudio simulate` does not import networkx (issue #17: 70 ms of every run's fixed cost).

Only the bisection of an all-to-all's bound builds graphs with it, so it is imported there."""

import subprocess
import sys

from dgxstudio.analysis.bisection import bisection_bandwidth
from dgxstudio.model.presets import build_preset


def test_the_simulate_command_and_the_simulator_leave_networkx_unimported():
    code = ("import sys; import dgxstudio.cli, dgxstudio.cli.simulate, dgxstudio.sim.run, dgxstudio.sim.nccl_schedules; "
            "print('networkx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bisection_still_finds_its_graphs():
    topo = build_preset("dgx-h100")
    gpus = [d.id for d in topo.gpus()]
    assert bisection_bandwidth(topo, gpus).bidir_Bps > 0
