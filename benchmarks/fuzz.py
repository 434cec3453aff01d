"""Fuzz every loader (native file, NCCL XML, GraphML, user catalog) and, through what loads, every
text exporter, for as many inputs or as long as asked.

    python benchmarks/fuzz.py --inputs 100000            # or --seconds 600
    python benchmarks/fuzz.py --target nccl-xml --seed 7

Counts crashes (any exception other than the loader's own error), broken promises (a written file
that does not reload, a name changed by an export) and hangs (one input over --hang seconds, caught
by an alarm). Each failing input is kept under tests/robustness/crashers/<target>-<n>.bin so
tests/robustness/test_fuzz.py replays it for ever. Exit status 1 if anything failed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CRASHERS = ROOT / "tests" / "robustness" / "crashers"

from tests.robustness import fuzz_oracles as F  # noqa: E402


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def keep(target: str, data) -> Path:
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    CRASHERS.mkdir(parents=True, exist_ok=True)
    path = CRASHERS / f"{target}-{hashlib.sha1(raw).hexdigest()[:12]}.bin"
    path.write_bytes(raw)
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, help="run this long instead of a number of inputs")
    ap.add_argument("--target", choices=[*F.TARGETS, "all"], default="all")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--hang", type=float, default=10.0, help="seconds one input may take")
    ap.add_argument("--exports-every", type=int, default=5,
                    help="run the exporters on every Nth native input that loads (they dominate the cost)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    targets = list(F.TARGETS) if args.target == "all" else [args.target]
    signal.signal(signal.SIGALRM, _alarm)
    counts = {t: {"inputs": 0, "loaded": 0, "refused": 0, "crash": 0, "broken": 0, "hang": 0} for t in targets}
    slowest = (0.0, "")
    started = time.time()
    n = 0
    while (time.time() - started < args.seconds) if args.seconds else n < args.inputs:
        target = targets[n % len(targets)]
        make, check = F.TARGETS[target]
        data = make(rng)
        c = counts[target]
        c["inputs"] += 1
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, args.hang)
        try:
            if target == "native":
                outcome = check(data, exports=c["loaded"] % args.exports_every == 0)
            elif target in ("nccl-xml", "graphml") and isinstance(data, str):
                outcome = check(data)
            else:
                outcome = check(data)
            c[outcome] += 1
        except Hang:
            c["hang"] += 1
            print(f"HANG {target}: kept {keep(target, data)}", flush=True)
        except F.Broken as exc:
            c["broken"] += 1
            print(f"BROKEN {target}: {exc} (kept {keep(target, data)})", flush=True)
        except Exception:  # noqa: BLE001 - a crash is what we are looking for
            c["crash"] += 1
            print(f"CRASH {target}: {traceback.format_exc().splitlines()[-1]} (kept {keep(target, data)})", flush=True)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        took = time.perf_counter() - t0
        if took > slowest[0]:
            slowest = (took, target)
        n += 1
        if n % 5000 == 0:
            print(f"{n} inputs, {time.time() - started:.0f} s", flush=True)
    total = {k: sum(c[k] for c in counts.values()) for k in ("inputs", "loaded", "refused", "crash", "broken", "hang")}
    for t, c in counts.items():
        print(f"  {t:<9} " + ", ".join(f"{k} {v}" for k, v in c.items()))
    print(f"fuzzed {total['inputs']} inputs in {time.time() - started:.0f} s (seed {args.seed}): "
          f"{total['crash']} tracebacks, {total['hang']} hangs over {args.hang:g} s, "
          f"{total['broken']} written files that do not reload or names changed; "
          f"slowest input {slowest[0]:.2f} s ({slowest[1]})")
    return 1 if total["crash"] or total["broken"] or total["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
