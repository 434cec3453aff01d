"""``simulate --json`` over many cases, to check that an engine change leaves every answer as it was.

    python benchmarks/json_sweeps.py dump DIR             # on the old code (e.g. PYTHONPATH=<copy of it>)
    python benchmarks/json_sweeps.py dump DIR2            # on the new code
    python benchmarks/json_sweeps.py compare DIR DIR2

The cases: the dgx1-v100, dgx-a100 and dgx-h100 presets, and fat trees of 2, 4 and 5 DGX A100 and
(rail-optimized) DGX H100 systems made with ``dgxstudio generate fat-tree``; the algorithms ring,
tree, hierarchical, nvls, nvls-tree, collnet and auto; every power of two from 1 KiB to 16 GiB (``--sweep``).
Each (topology, algorithm) is one ``dgxstudio simulate --json --sweep`` run through the ``dgxstudio``
of the Python that runs this script; its stdout, stderr and exit status are kept. ``compare`` reads
numbers to 1e-9 relative (``wall_s``, the run's own CPU clock, is left out) and text exactly, and
says how many files are also identical byte for byte apart from ``wall_s``.
``--only SUBSTRING`` narrows the dump to the cases whose name has it. ``compare --ignore events`` also
leaves out the named fields (comma-separated; ``wall_s`` always), for a change that may alter them
(skipping a steady state earlier plays fewer events); it says in how many places each one differs.
``compare --ties`` compares the bottleneck lists link by link, for a change that moves last bits: links
whose utilizations agree to 1e-9 may then rank otherwise (and be cut at the list's end otherwise).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

PRESETS = ("dgx1-v100", "dgx-a100", "dgx-h100")
CLUSTERS = [(system, n) for system in ("dgx-a100", "dgx-h100") for n in (2, 4, 5)]
ALGORITHMS = ("ring", "tree", "hierarchical", "nvls", "nvls-tree", "collnet", "auto")
SWEEP = "1KiB:16GiB"
REL = 1e-9


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from dgxstudio.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


def dump(out_dir: str, only: str | None) -> None:
    os.makedirs(out_dir, exist_ok=True)
    sources = [(p, ["--preset", p]) for p in PRESETS]
    for system, n in CLUSTERS:
        path = os.path.join(out_dir, f"{system}_{n}.dgxs")
        if not os.path.exists(path):
            extra = ["--rail-optimized"] if system == "dgx-h100" else []
            done = _cli("generate", "fat-tree", "--systems", str(n), "--system", system, *extra, "-o", path)
            if done.returncode:
                raise SystemExit(f"generate {system} x {n} failed: {done.stderr}")
        sources.append((f"{n}x{system}", [path]))
    for name, source in sources:
        for algorithm in ALGORITHMS:
            case = f"{name}_{algorithm}"
            if only and only not in case:
                continue
            t0 = time.perf_counter()
            done = _cli("simulate", *source, "--algorithm", algorithm, "--sweep", SWEEP, "--json")
            with open(os.path.join(out_dir, case + ".out"), "w") as f:
                json.dump({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}, f)
            print(f"{case:<32} rc {done.returncode}  {time.perf_counter() - t0:7.1f} s", file=sys.stderr, flush=True)


def _strip(x, names=("wall_s",)):
    """``x`` without the fields ``names``, at any depth."""
    if isinstance(x, dict):
        return {k: _strip(v, names) for k, v in x.items() if k not in names}
    if isinstance(x, list):
        return [_strip(v, names) for v in x]
    return x


def _count_differing(a, b, name: str) -> tuple[int, int]:
    """In how many places the field ``name`` differs between a and b (alike in shape), of how many."""
    if isinstance(a, dict) and isinstance(b, dict):
        pairs = [(a[k], b.get(k)) for k in a if k != name]
        here = (int(a.get(name) != b.get(name)), 1) if name in a else (0, 0)
    elif isinstance(a, list) and isinstance(b, list):
        pairs, here = list(zip(a, b)), (0, 0)
    else:
        return 0, 0
    counts = [here] + [_count_differing(x, y, name) for x, y in pairs]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def _tally(a, b, path: str, fields: dict) -> None:
    """For each field (its path with list indices left out), in how many places it differs at all
    and, for numbers, by how much at most (relative): last bits included, unlike ``_diff``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k in b:
                _tally(a[k], b[k], f"{path}.{k}" if path else k, fields)
    elif isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b):
            _tally(x, y, path + "[]", fields)
    elif a != b:
        entry = fields.setdefault(path, [0, 0.0])
        entry[0] += 1
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and max(abs(a), abs(b)) > 0:
            entry[1] = max(entry[1], abs(a - b) / max(abs(a), abs(b)))


def _diff(a, b, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append(f"{where}: keys {list(a)} != {list(b)}")
            return
        for k in a:
            _diff(a[k], b[k], f"{where}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} != {len(b)} items")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{i}]", out)
    elif isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or \
                abs(a - b) > REL * max(abs(a), abs(b)) and not (math.isnan(a) and math.isnan(b)):
            out.append(f"{where}: {a!r} != {b!r}")
    elif a != b:
        out.append(f"{where}: {a!r} != {b!r}")


def _link(entry: dict) -> tuple:
    return entry.get("from"), entry.get("to"), tuple(entry.get("links", ()))


def _near(x, y) -> bool:
    return abs(x - y) <= REL * max(abs(x), abs(y))


def _untie(rows_a: list, rows_b: list) -> int:
    """Each row's bottleneck lists (links ranked by utilization) made comparable where they differ only
    in how links whose utilizations agree to REL are ranked: the same links matched by name in the
    first list's order, and a link in one list only dropped from it when it ties (to REL) with the
    other list's last (the cut-off). Values are left to compare as they are. Returns the rows changed."""
    changed = 0
    for x, y in zip(rows_a, rows_b):
        bx, by = x.get("bottlenecks"), y.get("bottlenecks")
        if not isinstance(bx, list) or not isinstance(by, list) or bx == by or not bx or not by:
            continue
        ky = {_link(e): e for e in by}
        kx = {_link(e): e for e in bx}
        if not all(_near(e["utilization"], by[-1]["utilization"]) for k, e in kx.items() if k not in ky) or \
                not all(_near(e["utilization"], bx[-1]["utilization"]) for k, e in ky.items() if k not in kx):
            continue  # a link that is no tie at the cut-off: left to show as a difference
        x["bottlenecks"] = [e for e in bx if _link(e) in ky]
        y["bottlenecks"] = [ky[_link(e)] for e in x["bottlenecks"]]
        changed += 1
    return changed


def compare(a_dir: str, b_dir: str, ignore: tuple[str, ...] = (), ties: bool = False) -> int:
    names = sorted(f for f in os.listdir(a_dir) if f.endswith(".out"))
    problems, rows, identical = [], 0, 0
    left_out = ("wall_s",) + tuple(ignore)
    ignored = {name: [0, 0] for name in ignore}  # field -> [places it differs, places it is]
    fields: dict[str, list] = {}  # field -> [places it differs at all, largest relative difference]
    untied = 0  # rows whose bottleneck lists differed in the ranking of ties only (--ties)
    for name in names:
        other = os.path.join(b_dir, name)
        if not os.path.exists(other):
            problems.append(f"{name}: missing in {b_dir}")
            continue
        with open(os.path.join(a_dir, name)) as f:
            a = json.load(f)
        with open(other) as f:
            b = json.load(f)
        if a["rc"] != b["rc"] or a["stderr"] != b["stderr"]:
            problems.append(f"{name}: exit {a['rc']} / {b['rc']}, stderr {a['stderr'][-200:]!r} / {b['stderr'][-200:]!r}")
            continue
        if a["rc"]:
            identical += a["stdout"] == b["stdout"]
            continue
        raw_a, raw_b = json.loads(a["stdout"]), json.loads(b["stdout"])
        for field, tally in ignored.items():
            differ, places = _count_differing(raw_a, raw_b, field)
            tally[0] += differ
            tally[1] += places
        ja, jb = _strip(raw_a, left_out), _strip(raw_b, left_out)
        rows += len(ja.get("rows", [ja]))
        identical += json.dumps(ja) == json.dumps(jb)
        if ties and isinstance(ja.get("rows"), list) and isinstance(jb.get("rows"), list):
            untied += _untie(ja["rows"], jb["rows"])
        _tally(ja, jb, "", fields)
        out: list[str] = []
        _diff(ja, jb, name, out)
        problems.extend(out)
    print(f"{len(names)} sweeps ({rows} sizes that ran); {identical} identical byte for byte "
          f"({', '.join(left_out)} aside); {len(problems)} differences beyond {REL:g} relative")
    for field, (differ, places) in ignored.items():
        print(f"  left out: {field} differs in {differ} of {places} places")
    if ties:
        print(f"  bottleneck lists matched link by link in {untied} rows (ties ranked otherwise, or cut otherwise)")
    for field, (differ, rel) in sorted(fields.items(), key=lambda kv: -kv[1][0]):
        print(f"  differs at all (last bits too): {field} in {differ} places" + (f", at most {rel:.1e} relative" if rel else ""))
    for p in problems[:40]:
        print("  " + p)
    return 1 if problems else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dump")
    d.add_argument("dir")
    d.add_argument("--only")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--ignore", default="", help="fields to leave out besides wall_s, comma-separated (e.g. events)")
    c.add_argument("--ties", action="store_true",
                   help="compare bottleneck lists link by link: links whose utilizations agree to 1e-9 may be "
                        "ranked otherwise, and one tied with the last may be cut instead of another")
    args = p.parse_args()
    if args.what == "dump":
        dump(args.dir, args.only)
        return 0
    return compare(args.before, args.after, tuple(x for x in args.ignore.split(",") if x), args.ties)


if __name__ == "__main__":
    sys.exit(main())
