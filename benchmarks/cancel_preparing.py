"""Cancel acts while the worker prepares a run's replay (``replay_facts.prepare``: its groups per
class, timeline and busiest links' plot; issue 17, target 0.1 s as for a run). NVLS tree all-reduce
of 256 MiB over the rail-optimized 512-system DGX H100 cluster (4,096 GPUs; its preparation takes
1.8-3.9 s on this machine, nearly all reading the busiest links' rate patterns), cancelled at several points of
the preparation; prints how long it went on after Cancel.

    python benchmarks/cancel_preparing.py [--systems 512] [--trials 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cancel_trials import cancel_trials  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=512)
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    from dgxstudio.cancel import Cancelled
    from dgxstudio.model.fabrics import build_fat_tree
    from dgxstudio.sim.run import SimOptions, Simulator
    from dgxstudio.ui.replay_facts import prepare

    topo = build_fat_tree(args.systems, "dgx-h100", rail_optimized=True)
    result = Simulator(topo, [d.id for d in topo.gpus()], SimOptions(achievable=True)).run(
        "all-reduce", "nvls-tree", 256 * 2**20)
    t0 = time.perf_counter()
    prepare(result)
    whole = time.perf_counter() - t0
    print(f"preparation uncancelled: {whole:.2f} s")
    cancel_trials(lambda progress, cancel: prepare(result, progress, cancel),
                  [whole * trial / (args.trials + 1) for trial in range(args.trials)], Cancelled)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
