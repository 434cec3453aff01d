"""Subcommands about the topology itself: info, validate, presets, new, generate, analyze."""

from __future__ import annotations

import argparse
from collections import Counter

from ..model.catalog import KIND_LABELS
from ..model.systems import SYSTEM_BUILDERS, power_text
from ..model.topology import Topology
from ..model.validation import ERROR, validate
from ..units import counted
from .common import (EXIT_FINDINGS, EXIT_OK, JSON_HELP, CliError, StepProgress, add_source, open_topology, print_json,
                     select, write_topology)


def topology_info(topo: Topology) -> dict:
    kinds = Counter(d.kind for d in topo.devices.values())
    link_types = Counter()
    for lk in topo.links.values():
        link_types[lk.type] += lk.count
    gpus = topo.gpus()
    nvlink_of = dict.fromkeys((g.id for g in gpus), 0.0)  # one pass over the links, not one look-up per GPU
    nvlink_bw: dict[tuple, float | None] = {}  # per distinct (type, width, count, override): a handful
    for lk in topo.links.values():
        a, b = lk.a, lk.b
        if a not in nvlink_of and b not in nvlink_of:
            continue
        spec = (lk.type, lk.width, lk.count, lk.bandwidth_per_direction_Bps)
        if spec in nvlink_bw:
            bw = nvlink_bw[spec]
        else:
            lt = topo.link_type_of(lk)
            bw = nvlink_bw[spec] = (topo.link_bandwidth_per_direction_Bps(lk)
                                    if lt is not None and lt.family == "nvlink" else None)
        if bw is not None:
            if a in nvlink_of:
                nvlink_of[a] += bw
            if b in nvlink_of and b != a:
                nvlink_of[b] += bw
    nvlink_per_gpu = [2 * v for v in nvlink_of.values()]
    return {
        "name": topo.name,
        "devices": len(topo.devices),
        "devices_by_kind": {k: kinds[k] for k in KIND_LABELS if kinds[k]},
        "links": len(topo.links),
        "physical_links_by_type": dict(sorted(link_types.items())),
        "gpus": len(gpus),
        "nvlink_bw_per_gpu_bidir_Bps": max(nvlink_per_gpu) if nvlink_per_gpu else 0.0,
        "nvlink_bw_per_gpu_min_bidir_Bps": min(nvlink_per_gpu) if nvlink_per_gpu else 0.0,
        "groups": len(topo.groups),
        "groups_by_kind": dict(Counter(g.kind for g in topo.groups.values())),
        "catalog_version": topo.catalog.version,
    }


def cmd_info(args) -> int:
    topo = open_topology(args.file, args.preset)
    info = topology_info(topo)
    info["findings"] = _findings_summary(validate(topo))
    if args.json:
        print_json(info)
        return EXIT_OK
    print(f"{info['name']}")
    print(f"  devices: {info['devices']}" + _parts(_count(n, KIND_LABELS[k]) for k, n in info["devices_by_kind"].items()))
    physical = info["physical_links_by_type"]
    # a link entry may stand for several cables (count): say both, so the breakdown adds up
    print(f"  links:   {_count(info['links'], 'connection')}, {sum(physical.values())} physical"
          + _parts(f"{n} x {t}" for t, n in physical.items()))
    print(f"  GPUs:    {info['gpus']}")
    print(f"  NVLink bandwidth per GPU: {info['nvlink_bw_per_gpu_bidir_Bps'] / 1e9:.0f} GB/s bidirectional")
    print(f"  groups:  {info['groups']}" + _parts(_count(n, k) for k, n in info["groups_by_kind"].items()))
    found = info["findings"]
    if found["first"] is None:
        print("  findings: none")
    else:
        # a file `simulate` will refuse must not look clean here: say how many and name the first
        print(f"  findings: {_count(found['errors'], 'error')}, {_count(found['warnings'], 'warning')};"
              f" the first: {found['first']['message']} (`dgxstudio validate` lists them)")
    return EXIT_OK


def _findings_summary(findings) -> dict:
    """How many errors and warnings `validate` finds, and the first (errors before warnings)."""
    errors = [f for f in findings if f.severity == ERROR]
    first = (errors or findings or [None])[0]
    return {"errors": len(errors), "warnings": len(findings) - len(errors),
            "first": first.as_dict() if first is not None else None}


def cmd_validate(args) -> int:
    topo = open_topology(args.file, args.preset)
    findings = validate(topo)
    errors = sum(f.severity == ERROR for f in findings)
    if args.json:
        print_json({"errors": errors, "warnings": len(findings) - errors,
                     "findings": [f.as_dict() for f in findings]})
    else:
        for f in findings:
            print(f"{f.severity}: {f.message}")
        print(f"{errors} error(s), {len(findings) - errors} warning(s)")
    return EXIT_FINDINGS if errors else EXIT_OK


def cmd_presets(args) -> int:
    from ..model.presets import PRESETS

    if args.json:
        print_json([{"name": n, "description": d} for n, (d, _) in PRESETS.items()])
    else:
        width = max(map(len, PRESETS))
        for name, (desc, _) in PRESETS.items():
            print(f"{name:<{width}}  {desc}")
    return EXIT_OK


def cmd_new(args) -> int:
    if args.preset:
        topo = open_topology(None, args.preset)
    else:
        topo = Topology(args.name or "Untitled")
    if args.name:
        topo.name = args.name
    write_topology(topo, args.output)
    return EXIT_OK


def cmd_generate(args) -> int:
    from ..model.builders import build_fat_tree

    try:
        topo = build_fat_tree(args.systems, args.system, args.per_leaf, args.spines, nic=args.nic,
                              nics_per_system=args.nics_per_system, rail_optimized=args.rail_optimized,
                              rails=args.rails, oversubscription=args.oversubscription, tiers=args.tiers,
                              switch=args.switch)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    write_topology(topo, args.output)
    return EXIT_OK


def _ratio(text: str) -> float:
    """An oversubscription ratio: '2', '2:1' or '1.5'."""
    try:
        if ":" in text:
            a, b = text.split(":", 1)
            value = float(a) / float(b)
        else:
            value = float(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a ratio such as 2 or 2:1") from None
    if not value >= 1:   # said as typed ('0', not '0.0'), NaN included
        raise argparse.ArgumentTypeError(f"{text!r}: the leaf down:up ratio must be 1 or more (such as 2 or 2:1)")
    return value


def cmd_analyze(args) -> int:
    from ..analysis.summary import analyze
    from ..model.names import device_words, ring_words

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    progress = StepProgress(f"analyzing {len(gpus):,} GPUs")  # on a terminal; Ctrl+C stops with status 130
    try:
        result = analyze(topo, gpus, progress)
    finally:
        progress.done()
    if args.json:
        print_json(result)
        return EXIT_OK
    gb = 1e9
    print(f"{topo.name}: {_count(result['gpus'], 'GPU')}")
    b = result["bisection"]
    stopped = b["refinement"] is not None and b["refinement"]["ended_by_budget"]
    print(f"  bisection bandwidth: {b['bidir_Bps'] / gb:,.1f} GB/s bidirectional"
          f" ({'exact' if b['exact'] else 'upper bound'}, {b['method']}"
          f"{'; its refinement stopped at its work budget' if stopped else ''})")
    r = result["rings"]
    systems = len({topo.system_of(g) for g in gpus} - {None})
    over = {"nvlink": "over NVLink", "all": "across systems" if systems > 1 else "not on NVLink alone"
            }.get(r["fabric"], f"over {r['fabric']}")   # a PCIe server's ring crosses no system
    print(f"  rings: {r['count']} {over}: {r['method']}{', link-disjoint' if r['link_disjoint'] else ', sharing links'};"
          f" ring all-reduce bus bandwidth bound {r['allreduce_busbw_bound_Bps'] / gb:,.1f} GB/s at peak link figures"
          f" (NCCL runs each ring both ways: their bidirectional rates added; simulate's bound is at achievable figures)")
    for i, ring in enumerate(r["rings"][:8]):
        shown = ring_words(topo, ring, "->", 6, "...")   # as the canvas names them: "GPU3" alone said not which system's
        print(f"    ring {i}: {shown}  [{r['ring_bidir_Bps'][i] / 2 / gb:.1f} GB/s per direction,"
              f" {r['ring_bidir_Bps'][i] / gb:.1f} GB/s bidirectional]")
    if len(r["rings"]) > 8:
        print(f"    ... {len(r['rings']) - 8} more ring(s) (--json lists all {len(r['rings'])})")
    print(f"  NVLink per GPU: {result['nvlink_bw_per_gpu_bidir_Bps'] / gb:,.0f} GB/s bidirectional;"
          f" all GPUs: {result['aggregate_nvlink_bw_bidir_Bps'] / 1e12:,.2f} TB/s")
    print(f"  PCIe per GPU: {result['pcie_bw_per_gpu_bidir_Bps'] / gb:,.1f} GB/s bidirectional;"
          f" network per GPU: {result['network_bw_per_gpu_bidir_Bps'] / gb:,.1f} GB/s bidirectional")
    ports = result.get("compute_nic_ports_first_system", [])
    if ports:
        print("  compute NIC ports of a system: " + ", ".join(
            f"{p['count']} x {p['rate_bps_per_direction'] / 1e9:,.0f} Gb/s ({p['cabled']} cabled)" for p in ports))
    power = result["power"]
    print(f"  published power: {power_text(power['published_W'], power['without_published_figure'])}")
    for note in power.get("basis", []):
        print(f"    {note}; systems at their published maximum")
    lat = result["latency"]
    if lat["max_system_to_system_s"] is not None:
        print(f"  system-to-system latency: worst {lat['max_system_to_system_s'] * 1e6:.2f} us"
              f" ({_count(lat['switch_hops_worst'], 'switch hop')}), best {lat['min_system_to_system_s'] * 1e6:.2f} us")
    if lat["from_first_gpu_max_s"] is not None:
        a, z = lat["from_first_gpu_max_pair"]
        print(f"  farthest GPU from {device_words(topo, a)}: {device_words(topo, z)}, {lat['from_first_gpu_max_s'] * 1e6:.2f} us over {_count(lat['from_first_gpu_max_hops'], 'hop')}")
    return EXIT_OK


def _count(n: int, noun: str) -> str:
    """'1 GPU', '8 GPUs', '4 NVSwitches', '2 PCIe switches'."""
    return counted(n, noun, noun + ("es" if noun.endswith(("ch", "sh", "s", "x")) else "s"))


def _parts(parts) -> str:
    """'  (a, b)' after a count, or nothing when there is nothing to break it into."""
    parts = list(parts)
    return f"  ({', '.join(parts)})" if parts else ""


def register(sub) -> None:
    p = sub.add_parser("info", help="summarize a topology")
    add_source(p)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("validate", help="check a topology (exit 0: no errors, 1: errors, 2: unreadable)")
    add_source(p)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("presets", help="list the built-in presets")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_presets)

    p = sub.add_parser("new", help="write a new topology file, empty or from a preset")
    p.add_argument("--preset", help="start from this preset")
    p.add_argument("--name", help="topology name")
    p.add_argument("-o", "--output", required=True, help="file to write (.dgxs)")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("generate", help="generate a parametric topology")
    gsub = p.add_subparsers(dest="generator", metavar="GENERATOR", required=True)
    g = gsub.add_parser("fat-tree", help="N systems on a fat tree of InfiniBand or Ethernet (RoCE) switches, by --switch")
    g.add_argument("--systems", type=int, required=True, help="number of systems")
    g.add_argument("--system", default="dgx1-v100", choices=list(SYSTEM_BUILDERS),
                   help="system type (default dgx1-v100)")
    g.add_argument("--per-leaf", type=int, default=None,
                   help="systems per leaf, or per scalable unit with --rail-optimized (default: fill the leaf's down ports, half of it at 1:1, or all the systems when fewer)")
    g.add_argument("--spines", type=int, default=None, help="spine switches, one uplink each (default: from the leaf)")
    g.add_argument("--nic", default=None, metavar="PART", help="catalog part of the systems' compute NICs")
    g.add_argument("--nics-per-system", type=int, default=None, metavar="K",
                   help="cable only the first K compute NICs of each system")
    g.add_argument("--rail-optimized", action="store_true",
                   help="NIC k of every system in a scalable unit goes to leaf k of that unit")
    g.add_argument("--rails", type=int, default=None, help="rails per scalable unit (default: one per NIC port)")
    g.add_argument("--oversubscription", type=_ratio, default=1.0, metavar="R",
                   help="leaf down:up ratio, e.g. 2 or 2:1 (default 1, non-blocking)")
    g.add_argument("--tiers", type=int, choices=[2, 3], default=None,
                   help="switch tiers (default: 2, or 3 when two cannot hold the cluster)")
    g.add_argument("--switch", default=None, metavar="PART",
                   help="catalog part of the switches (default: the one made for the NIC's speed)")
    g.add_argument("-o", "--output", required=True)
    g.set_defaults(func=cmd_generate)

    p = sub.add_parser("analyze", help="bisection, rings, latency and per-GPU bandwidth of a GPU set")
    add_source(p)
    p.add_argument("--gpus", default="all", help="GPU set: all, ids (gpu0,gpu3), ranges (gpu0-gpu3), group names")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_analyze)
