"""A cancelled simulation stops promptly (target 0.1 s): NCCL's tree all-reduce on the 124-system
DGX-1 fat tree (992 GPUs, tens of seconds of events), cancelled once progress has started, several
times; prints how long the run went on after Cancel. The test suite checks only that it stops (a
timed limit there failed on a machine at load 5-6).

    python benchmarks/cancel_simulation.py [--trials 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cancel_trials import cancel_trials  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    from dgxstudio.cancel import Cancelled
    from dgxstudio.model.presets import load_preset
    from dgxstudio.sim.run import Simulator

    topo = load_preset("dgx1-fat-tree-124")
    sim = Simulator(topo, [d.id for d in topo.gpus()])
    cancel_trials(lambda progress, cancel: sim.run("all-reduce", "tree", 256 * 2**20, progress=progress, cancel=cancel),
                  [0.2 * trial for trial in range(args.trials)], Cancelled)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
