"""Zoom and pan frames on the 1,000-system DGX-1 fat tree (issue 17: zoom and pan frames under 50 ms;
the issue's starting point, which opened in 12 s to a blank canvas). The same frames as
canvas_scale.py's open_and_move, without the rest of that script.

Run: python benchmarks/dgx1_tree.py [--systems N] [--notches N] [--profile]
"""

import cProfile
import os
import pstats
import sys

import canvas_scale
from canvas_scale import open_and_move

from dgxstudio.model.fabrics import build_fat_tree


def main() -> None:
    args = sys.argv[1:]
    systems = int(args[args.index("--systems") + 1]) if "--systems" in args else 1000
    notches = int(args[args.index("--notches") + 1]) if "--notches" in args else 25
    prof = cProfile.Profile() if "--profile" in args else None
    if prof is not None:   # profile the frames only, not the opening
        frame = canvas_scale.frame

        def profiled(*a, **k):
            prof.enable()
            try:
                return frame(*a, **k)
            finally:
                prof.disable()
        canvas_scale.frame = profiled
    open_and_move(f"dgx1-{systems}", build_fat_tree(systems), None, notches=notches)
    print(f"load {os.getloadavg()[0]:.2f}")
    if prof is not None:
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
