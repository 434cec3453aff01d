"""A large legal file stays linear (issue #16): time and peak memory of ``info``, ``validate`` and
``analyze`` on a 59 MB topology (4,000 DGX H100 systems, rail-optimized: about 115,000 devices and
300,000 links), each run as the user runs it (the installed command line, its own process).

    python benchmarks/big_file.py                      # generate the file once, then the three commands
    python benchmarks/big_file.py --systems 1000       # a smaller cluster
    python benchmarks/big_file.py --file big.dgxs      # an existing file
    python benchmarks/big_file.py --steps load,validate,analyze --in-process   # one process, step by step

Each line gives the wall time, the peak resident memory of that process and the load average, since
the machine this runs on is shared. The target is "in seconds": well under 10 s per command.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _load() -> str:
    return "load %.2f" % os.getloadavg()[0]


def run_command(args: list[str], limit: float) -> tuple[float, float, float, int, str]:
    """Wall seconds, CPU seconds, peak MB, exit status and the first line of stderr of one CLI process
    (CPU time says what wall time would be on an idle machine)."""
    cmd = [sys.executable, "-m", "dgxstudio", *args]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = t0 + limit
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return float("inf"), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, -9, f"over {limit:.0f} s"
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().strip().splitlines() if proc.stderr else []
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, err[0] if err else ""


def in_process(path: str, steps: list[str]) -> None:
    """The steps one after the other in this process (load once), for profiling."""
    from dgxstudio.analysis.summary import analyze
    from dgxstudio.cli.topology import topology_info
    from dgxstudio.model import fileio
    from dgxstudio.model.validation import validate

    t0, c0 = time.perf_counter(), time.process_time()
    topo = fileio.load(path)
    print(f"load      {time.perf_counter() - t0:7.2f} s  cpu {time.process_time() - c0:6.2f} s  {len(topo.devices):,} devices, {len(topo.links):,} links  ({_load()})")
    for step in steps:
        t0, c0 = time.perf_counter(), time.process_time()
        if step == "info":
            topology_info(topo)
        elif step == "validate":
            n = len(validate(topo))
            step = f"validate ({n} findings)"
        elif step == "analyze":
            analyze(topo, [d.id for d in topo.gpus()])
        elif step == "load":
            continue
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{step:<9} {time.perf_counter() - t0:7.2f} s  cpu {time.process_time() - c0:6.2f} s  peak {peak:,.0f} MB  ({_load()})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", help="an existing topology file (default: generate one)")
    ap.add_argument("--systems", type=int, default=4000, help="DGX H100 systems when generating (default 4000)")
    ap.add_argument("--steps", default="info,validate,analyze")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds before a command counts as hung")
    ap.add_argument("--in-process", action="store_true", help="load once and run the steps in this process")
    args = ap.parse_args()
    steps = [s for s in args.steps.split(",") if s]

    workdir = tempfile.mkdtemp(prefix="dgxstudio-big-")
    path = args.file
    if path is None:
        path = os.path.join(workdir, f"h100-{args.systems}.dgxs")
        wall, cpu, peak, rc, err = run_command(["generate", "fat-tree", "--system", "dgx-h100", "--rail-optimized",
                                           "--systems", str(args.systems), "-o", path], args.limit)
        print(f"generate  {wall:7.2f} s  cpu {cpu:6.2f} s  peak {peak:,.0f} MB  exit {rc}  ({_load()})")
        if rc != 0:
            print(err)
            return 1
    print(f"file      {os.path.getsize(path) / 1e6:.1f} MB  {path}")
    if args.in_process:
        in_process(path, steps)
        return 0
    worst = 0.0
    for step in steps:
        wall, cpu, peak, rc, err = run_command([step, path, "--json"], args.limit)
        worst = max(worst, wall)
        print(f"{step:<9} {wall:7.2f} s  cpu {cpu:6.2f} s  peak {peak:,.0f} MB  exit {rc}  ({_load()})" + (f"  {err}" if rc not in (0, 1) else ""))
    print(f"slowest   {worst:7.2f} s  (target: well under 10 s each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
