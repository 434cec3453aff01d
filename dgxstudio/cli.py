"""The ``dgxstudio`` command. Every subcommand that reports numbers has ``--json`` with stable keys
whose names carry SI units; errors go to stderr with a non-zero exit code and no traceback.

Exit codes: 0 success, 1 the input has errors (e.g. validation findings), 2 the input cannot be used.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

from . import __version__
from .model import fileio
from .model.catalog import KIND_LABELS, default_catalog
from .model.topology import Topology
from .model.validation import ERROR, validate

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


class CliError(Exception):
    """A problem to report in one line on stderr; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_UNUSABLE):
        super().__init__(message)
        self.code = code


def _print_json(obj) -> None:
    print(json.dumps(obj, indent=2, sort_keys=False, allow_nan=False))


def open_topology(path: str | None, preset: str | None = None) -> Topology:
    from .model.presets import PRESETS, load_preset

    if preset:
        if preset not in PRESETS:
            raise CliError(f"unknown preset {preset!r}; `dgxstudio presets` lists them")
        return load_preset(preset)
    if not path:
        raise CliError("give a topology file or --preset NAME")
    try:
        return fileio.load(path)
    except fileio.TopologyFileError as exc:
        raise CliError(str(exc)) from None


def _add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="topology file (.dgxs)")
    p.add_argument("--preset", help="use a built-in preset instead of a file")


# ---- info / validate ---------------------------------------------------------------------------

def topology_info(topo: Topology) -> dict:
    kinds = Counter(d.kind for d in topo.devices.values())
    link_types = Counter()
    for lk in topo.links.values():
        link_types[lk.type] += lk.count
    gpus = topo.gpus()
    nvlink_per_gpu = []
    for g in gpus:
        total = 0.0
        for lk in topo.links_of(g.id):
            lt = topo.link_type_of(lk)
            if lt is not None and lt.family == "nvlink":
                total += topo.link_bandwidth_per_direction_Bps(lk)
        nvlink_per_gpu.append(2 * total)
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
    if args.json:
        _print_json(info)
        return EXIT_OK
    print(f"{info['name']}")
    print(f"  devices: {info['devices']}  (" + ", ".join(f"{n} {KIND_LABELS[k]}" for k, n in info["devices_by_kind"].items()) + ")")
    print(f"  links:   {info['links']}  (" + ", ".join(f"{n} x {t}" for t, n in info["physical_links_by_type"].items()) + ")")
    print(f"  GPUs:    {info['gpus']}")
    print(f"  NVLink bandwidth per GPU: {info['nvlink_bw_per_gpu_bidir_Bps'] / 1e9:.0f} GB/s bidirectional")
    print(f"  groups:  {info['groups']}  (" + ", ".join(f"{n} {k}" for k, n in info["groups_by_kind"].items()) + ")")
    return EXIT_OK


def cmd_validate(args) -> int:
    topo = open_topology(args.file, args.preset)
    findings = validate(topo)
    errors = sum(f.severity == ERROR for f in findings)
    if args.json:
        _print_json({"errors": errors, "warnings": len(findings) - errors,
                     "findings": [f.as_dict() for f in findings]})
    else:
        for f in findings:
            print(f"{f.severity}: {f.message}")
        print(f"{errors} error(s), {len(findings) - errors} warning(s)")
    return EXIT_FINDINGS if errors else EXIT_OK


# ---- presets / new / generate ------------------------------------------------------------------

def cmd_presets(args) -> int:
    from .model.presets import PRESETS

    if args.json:
        _print_json([{"name": n, "description": d} for n, (d, _) in PRESETS.items()])
    else:
        width = max(map(len, PRESETS))
        for name, (desc, _) in PRESETS.items():
            print(f"{name:<{width}}  {desc}")
    return EXIT_OK


def _write(topo: Topology, out: str) -> None:
    try:
        fileio.save(topo, out)
    except OSError as exc:
        raise CliError(f"{out}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {out}: {len(topo.devices)} devices, {len(topo.links)} links")


def cmd_new(args) -> int:
    if args.preset:
        topo = open_topology(None, args.preset)
    else:
        topo = Topology(args.name or "Untitled")
    if args.name:
        topo.name = args.name
    _write(topo, args.output)
    return EXIT_OK


def cmd_generate(args) -> int:
    from .model.builders import build_fat_tree

    try:
        topo = build_fat_tree(args.systems, args.system, args.per_leaf, args.spines)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    _write(topo, args.output)
    return EXIT_OK


# ---- analyze -----------------------------------------------------------------------------------

def select(topo: Topology, spec: str | None) -> list[str]:
    from .analysis.gpuset import GpuSetError, select_gpus

    try:
        return select_gpus(topo, spec)
    except GpuSetError as exc:
        raise CliError(f"--gpus: {exc}") from None


def cmd_analyze(args) -> int:
    from .analysis.summary import analyze

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    result = analyze(topo, gpus)
    if args.json:
        _print_json(result)
        return EXIT_OK
    gb = 1e9
    print(f"{topo.name}: {result['gpus']} GPUs")
    b = result["bisection"]
    print(f"  bisection bandwidth: {b['bidir_Bps'] / gb:,.1f} GB/s bidirectional"
          f" ({'exact' if b['exact'] else 'upper bound'}, {b['method']})")
    r = result["rings"]
    print(f"  rings: {r['count']} over {r['fabric']} ({r['method']}{', link-disjoint' if r['link_disjoint'] else ', sharing links'});"
          f" ring all-reduce bus bandwidth bound {r['allreduce_busbw_bound_Bps'] / gb:,.1f} GB/s")
    for i, ring in enumerate(r["rings"][:8]):
        shown = " -> ".join(ring) if len(ring) <= 16 else " -> ".join(ring[:6]) + f" ... ({len(ring)} GPUs)"
        print(f"    ring {i}: {shown}  [{r['ring_bidir_Bps'][i] / gb:.1f} GB/s both directions]")
    print(f"  NVLink per GPU: {result['nvlink_bw_per_gpu_bidir_Bps'] / gb:,.0f} GB/s bidirectional;"
          f" all GPUs: {result['aggregate_nvlink_bw_bidir_Bps'] / 1e12:,.2f} TB/s")
    print(f"  PCIe per GPU: {result['pcie_bw_per_gpu_bidir_Bps'] / gb:,.1f} GB/s bidirectional;"
          f" network per GPU: {result['network_bw_per_gpu_bidir_Bps'] / gb:,.1f} GB/s bidirectional")
    lat = result["latency"]
    if lat["max_system_to_system_s"] is not None:
        print(f"  system-to-system latency: worst {lat['max_system_to_system_s'] * 1e6:.2f} us"
              f" ({lat['switch_hops_worst']} switch hops), best {lat['min_system_to_system_s'] * 1e6:.2f} us")
    if lat["from_first_gpu_max_s"] is not None:
        a, z = lat["from_first_gpu_max_pair"]
        print(f"  farthest GPU from {a}: {z}, {lat['from_first_gpu_max_s'] * 1e6:.2f} us over {lat['from_first_gpu_max_hops']} hops")
    return EXIT_OK


# ---- simulate ----------------------------------------------------------------------------------

def _size(text: str, what: str) -> int:
    from .units import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise CliError(f"{what}: {exc}") from None


def sim_options(args):
    from .sim.run import SimOptions

    reduce_cost = 0.0
    if args.reduce_bw:
        try:
            reduce_cost = 1.0 / (float(args.reduce_bw) * 1e9)
        except (ValueError, ZeroDivisionError):
            raise CliError(f"--reduce-bw: expected GB/s, got {args.reduce_bw!r}") from None
    return SimOptions(chunk=_size(args.chunk, "--chunk"), achievable=args.figures == "achievable",
                      spread=args.spread, reduce_s_per_byte=reduce_cost, root=args.root, server=args.server)


def _row(result) -> dict:
    d = result.as_dict()
    d["rings"] = result.rings
    return d


def cmd_simulate(args) -> int:
    from .sim.engine import SimulationCancelled
    from .sim.run import SimulationError, Simulator, sweep_sizes
    from .units import format_size, format_time

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    try:
        sim = Simulator(topo, gpus, sim_options(args))
        if args.sweep:
            lo, _, hi = args.sweep.partition(":")
            if not hi:
                raise CliError("--sweep: expected LOW:HIGH, e.g. 1KiB:4GiB")
            sizes = sweep_sizes(_size(lo, "--sweep"), _size(hi, "--sweep"))
            results = [sim.run(args.collective, args.algorithm, s) for s in sizes]
        else:
            results = [sim.run(args.collective, args.algorithm, _size(args.size, "--size"))]
    except SimulationError as exc:
        raise CliError(str(exc)) from None
    except SimulationCancelled:
        raise CliError("cancelled") from None
    if args.json:
        if args.sweep:
            first = results[0]
            _print_json({"collective": first.collective, "requested_algorithm": args.algorithm, "gpus": len(gpus),
                         "bound_busbw_Bps": first.bound_busbw_Bps, "rows": [_row(r) for r in results]})
        else:
            _print_json(_row(results[0]))
        return EXIT_OK
    first = results[0]
    print(f"{topo.name}: {first.collective} over {len(gpus)} GPUs, "
          f"{'achievable' if first.options.achievable else 'peak'} link figures")
    print(f"  topology bound (bus bandwidth): {first.bound_busbw_Bps / 1e9:.2f} GB/s")
    print(f"  {'size':>10} {'algorithm':>16} {'time':>12} {'algbw GB/s':>11} {'busbw GB/s':>11} {'% bound':>8}")
    for r in results:
        print(f"  {format_size(r.size_bytes):>10} {r.algorithm:>16} {format_time(r.time_s):>12} "
              f"{r.algbw_Bps / 1e9:>11.2f} {r.busbw_Bps / 1e9:>11.2f} {100 * r.fraction_of_bound:>7.1f}%")
    if not args.sweep:
        r = results[0]
        if r.requested_algorithm == "auto":
            print(f"  auto: {r.reason}")
        print("  busiest links:")
        for b in r.sim.bottlenecks(5):
            print(f"    {', '.join(b['links'])} ({b['from']} -> {b['to']}): {100 * b['utilization']:.1f}% busy")
    return EXIT_OK


# ---- pipeline / train / scaling -----------------------------------------------------------------

def _times(text: str | None, stages: int, what: str) -> list[float] | None:
    from .units import parse_time

    if text is None:
        return None
    try:
        values = [parse_time(x) for x in text.split(",")]
    except ValueError as exc:
        raise CliError(f"{what}: {exc}") from None
    if len(values) == 1:
        return values * stages
    if len(values) != stages:
        raise CliError(f"{what}: give one time, or one per stage ({stages})")
    return values


def model_spec(args):
    from .sim.training import ModelSpec

    return ModelSpec(layers=args.layers, hidden=args.hidden, seq_len=args.seq_len, microbatch_size=args.micro_batch_size,
                     precision=args.precision, efficiency=args.efficiency,
                     params=float(args.params) if args.params else None)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (defaults: GPT-3 XL, 1.3 B parameters)")
    g.add_argument("--layers", type=int, default=24)
    g.add_argument("--hidden", type=int, default=2048)
    g.add_argument("--seq-len", type=int, default=2048)
    g.add_argument("--micro-batch-size", type=int, default=1)
    g.add_argument("--precision", choices=["fp16", "bf16", "tf32", "fp32"], default="fp16")
    g.add_argument("--efficiency", type=float, default=0.5, help="fraction of the GPU's catalog peak reached (default 0.5)")
    g.add_argument("--params", help="parameter count (default 12 x layers x hidden^2)")


def cmd_pipeline(args) -> int:
    from .sim.engine import SimulationCancelled
    from .sim.pipeline import PipelineError, PipelineSpec, run_pipeline
    from .sim.training import TrainingError, stage_times

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    if args.stages > len(gpus):
        raise CliError(f"--stages {args.stages}: only {len(gpus)} GPUs are selected")
    stage_gpus = gpus[:args.stages]
    fwd = _times(args.fwd_time, args.stages, "--fwd-time")
    bwd = _times(args.bwd_time, args.stages, "--bwd-time")
    try:
        model = model_spec(args)
        model.check()
        if fwd is None or bwd is None:
            model_fwd, model_bwd = stage_times(topo, stage_gpus, model)
            fwd = fwd or model_fwd
            bwd = bwd or model_bwd
        act = _size(args.activation_bytes, "--activation-bytes") if args.activation_bytes not in (None, "0") else (
            0.0 if args.activation_bytes == "0" else model.activation_bytes())
        spec = PipelineSpec(args.schedule, args.stages, args.microbatches, stage_gpus, fwd, bwd, act, args.chunks)
        result = run_pipeline(topo, spec, achievable=args.figures == "achievable")
    except (PipelineError, TrainingError) as exc:
        raise CliError(str(exc)) from None
    except SimulationCancelled:
        raise CliError("cancelled") from None
    if args.json:
        _print_json(result.as_dict())
        return EXIT_OK
    print(f"{topo.name}: {spec.schedule} pipeline, {spec.stages} stages on {', '.join(stage_gpus)}, "
          f"{spec.microbatches} micro-batches" + (f", {spec.chunks} chunks" if spec.chunks > 1 else ""))
    print(f"  makespan {result.makespan_s * 1e3:.3f} ms; bubble {100 * result.bubble_fraction:.1f}% "
          f"(ideal {100 * result.as_dict(False)['ideal_bubble_fraction']:.1f}%)")
    print(f"  activations held at most, per stage: {result.peak_inflight}")
    return EXIT_OK


def cmd_train(args) -> int:
    from .sim.training import TrainingError, train_iteration

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    try:
        r = train_iteration(topo, gpus, args.dp, args.tp, args.pp, model_spec(args), args.microbatches, args.schedule,
                            args.overlap, args.placement, achievable=args.figures == "achievable")
    except TrainingError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        _print_json(r.as_dict())
        return EXIT_OK
    print(f"{topo.name}: dp={r.dp} tp={r.tp} pp={r.pp}, {r.microbatches} micro-batches")
    print(f"  iteration {r.iteration_s * 1e3:.2f} ms, {r.samples_per_s:,.1f} samples/s")
    for k, v in r.breakdown_s.items():
        print(f"    {k:<32} {v * 1e3:10.2f} ms   bottleneck: {r.bottleneck[k]}")
    return EXIT_OK


def cmd_scaling(args) -> int:
    from .sim.training import TrainingError, scaling
    from .units import parse_time

    topos = [open_topology(args.file, args.preset)]
    for other in args.compare or []:
        topos.append(open_topology(None, other) if other in _preset_names() else open_topology(other))
    try:
        sample = parse_time(args.sample_time)
    except ValueError as exc:
        raise CliError(f"--sample-time: {exc}") from None
    grad = _size(args.grad_bytes, "--grad-bytes")
    table = []
    try:
        for topo in topos:
            gpus = select(topo, args.gpus)
            rows = scaling(topo, gpus, grad, sample, args.batch_per_gpu, args.global_batch)
            table.append({"topology": topo.name, "rows": [r.__dict__ for r in rows]})
    except TrainingError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        _print_json({"gradient_bytes": grad, "sample_time_s": sample, "batch_per_gpu": args.batch_per_gpu,
                     "global_batch": args.global_batch, "topologies": table})
        return EXIT_OK
    print(f"data-parallel scaling: {grad / 1e6:.1f} MB of gradients, {sample * 1e3:.3f} ms per sample, "
          f"weak {args.batch_per_gpu}/GPU, strong {args.global_batch} total")
    for entry in table:
        print(f"  {entry['topology']}")
        print(f"    {'GPUs':>5} {'all-reduce':>12} {'weak samples/s':>15} {'eff':>6} {'strong samples/s':>17} {'eff':>6}")
        for r in entry["rows"]:
            print(f"    {r['gpus']:>5} {r['allreduce_s'] * 1e3:>10.3f}ms {r['weak_samples_per_s']:>15,.1f} "
                  f"{100 * r['weak_efficiency']:>5.1f}% {r['strong_samples_per_s']:>17,.1f} {100 * r['strong_efficiency']:>5.1f}%")
    return EXIT_OK


def _preset_names() -> list[str]:
    from .model.presets import preset_names

    return preset_names()


# ---- export / import / report -------------------------------------------------------------------

def cmd_export(args) -> int:
    from .report.exports import write_export
    from .report.formats import ExportError

    topo = open_topology(args.file, args.preset)
    try:
        write_export(topo, args.format, args.output, args.system)
    except ExportError as exc:
        raise CliError(f"cannot export as {args.format}: {exc}") from None
    except OSError as exc:
        raise CliError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {args.output} ({args.format})")
    return EXIT_OK


def cmd_import(args) -> int:
    from .report.formats import from_graphml
    from .report.nccl_xml import NcclXmlError, from_nccl_xml

    try:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read(fileio.MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CliError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    if len(text) > fileio.MAX_FILE_BYTES:
        raise CliError(f"{args.file}: over the limit of {fileio.MAX_FILE_BYTES} bytes")
    warnings: list[str] = []
    try:
        if args.format == "nccl-xml":
            topo, warnings = from_nccl_xml(text, name=args.name or "imported NCCL topology")
        else:
            topo = from_graphml(text)
    except (NcclXmlError, ValueError, KeyError) as exc:
        raise CliError(f"{args.file}: not a readable {args.format} topology: {exc}") from None
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    _write(topo, args.output)
    return EXIT_OK


def cmd_report(args) -> int:
    from .analysis.summary import analyze
    from .report.html import ReportData, write_report
    from .sim.pipeline import PipelineError, PipelineSpec, run_pipeline
    from .sim.run import SimulationError, Simulator, sweep_sizes

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    data = ReportData(topo, analyze(topo, gpus))
    try:
        sim = Simulator(topo, gpus, sim_options(args))
        if args.size:
            data.runs.append(sim.run(args.collective, args.algorithm, _size(args.size, "--size")))
        if args.sweep:
            lo, _, hi = args.sweep.partition(":")
            sizes = sweep_sizes(_size(lo, "--sweep"), _size(hi or lo, "--sweep"))
            data.sweeps.append([sim.run(args.collective, args.algorithm, s) for s in sizes])
        if args.pipeline_stages:
            p = args.pipeline_stages
            if p > len(gpus):
                raise CliError(f"--pipeline-stages {p}: only {len(gpus)} GPUs are selected")
            spec = PipelineSpec(args.schedule, p, args.microbatches, gpus[:p], [2e-3] * p, [4e-3] * p, 16 * 2**20)
            data.pipelines.append(run_pipeline(topo, spec))
    except (SimulationError, PipelineError) as exc:
        raise CliError(str(exc)) from None
    try:
        pages = write_report(data, args.output)
    except OSError as exc:
        raise CliError(f"{exc.filename or args.output}: cannot write the report: {exc.strerror or exc}") from None
    stem = os.path.splitext(args.output)[0]
    print(f"wrote {args.output}" + (f" ({pages} pages)" if pages else "") + f", {stem}.json and {stem}.csv")
    return EXIT_OK


def _add_sim_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chunk", default="4MiB", help="pipelining chunk (default 4MiB)")
    p.add_argument("--figures", choices=["peak", "achievable"], default="peak",
                   help="link figures: the catalog's raw numbers or its achievable efficiencies")
    p.add_argument("--spread", choices=["even", "hash"], default="even",
                   help="tied routes: spread evenly (adaptive routing) or pick one by hash")
    p.add_argument("--reduce-bw", help="reduction speed in GB/s (default: reductions are free)")
    p.add_argument("--root", help="root GPU for broadcast and reduce (default: the first GPU)")
    p.add_argument("--server", help="device acting as parameter server (default: the first GPU)")


# ---- the parser --------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dgxstudio", description="Design GPU cluster interconnects and simulate collectives on them.")
    parser.add_argument("--version", action="version", version=f"dgxstudio {__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="start offscreen, open the default preset, run a short simulation, exit 0 if all went well")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("gui", help="open the desktop application (the default)")
    p.add_argument("file", nargs="?", help="topology file to open")
    p.set_defaults(func=cmd_gui)

    p = sub.add_parser("info", help="summarize a topology")
    _add_source(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("validate", help="check a topology (exit 0: no errors, 1: errors, 2: unreadable)")
    _add_source(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("presets", help="list the built-in presets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_presets)

    p = sub.add_parser("new", help="write a new topology file, empty or from a preset")
    p.add_argument("--preset", help="start from this preset")
    p.add_argument("--name", help="topology name")
    p.add_argument("-o", "--output", required=True, help="file to write (.dgxs)")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("generate", help="generate a parametric topology")
    gsub = p.add_subparsers(dest="generator", metavar="GENERATOR", required=True)
    g = gsub.add_parser("fat-tree", help="N systems on a fat tree of InfiniBand switches")
    g.add_argument("--systems", type=int, required=True, help="number of systems")
    g.add_argument("--system", default="dgx1-v100", choices=["dgx1-v100", "dgx1-p100", "dgx-a100"],
                   help="system type (default dgx1-v100)")
    g.add_argument("--per-leaf", type=int, default=None, help="systems per leaf switch (default: half the leaf's ports)")
    g.add_argument("--spines", type=int, default=None, help="spine switches (default: one per leaf down-port)")
    g.add_argument("-o", "--output", required=True)
    g.set_defaults(func=cmd_generate)

    p = sub.add_parser("analyze", help="bisection, rings, latency and per-GPU bandwidth of a GPU set")
    _add_source(p)
    p.add_argument("--gpus", default="all", help="GPU set: all, ids (gpu0,gpu3), ranges (gpu0-gpu3), group names")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_analyze)

    from .sim.collectives import COLLECTIVES
    from .sim.run import ALGORITHMS

    p = sub.add_parser("simulate", help="simulate a collective on the topology")
    _add_source(p)
    p.add_argument("--collective", default="all-reduce", choices=COLLECTIVES)
    p.add_argument("--algorithm", default="auto", choices=ALGORITHMS,
                   help="ring: one ring one way; multi-ring: all rings both ways (NCCL); auto: fastest (default)")
    p.add_argument("--size", default="256MiB", help="bytes per GPU as nccl-tests counts them (default 256MiB)")
    p.add_argument("--sweep", help="LOW:HIGH, powers of two, e.g. 1KiB:4GiB")
    p.add_argument("--gpus", default="all", help="GPU set (see analyze)")
    _add_sim_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_simulate)

    from .sim.pipeline import SCHEDULES

    p = sub.add_parser("pipeline", help="simulate a pipeline-parallel schedule")
    _add_source(p)
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    p.add_argument("--stages", type=int, required=True)
    p.add_argument("--microbatches", type=int, required=True)
    p.add_argument("--chunks", type=int, default=1, help="model chunks per GPU (interleaved schedule)")
    p.add_argument("--gpus", default="all", help="GPU set; stages take its first GPUs in order")
    p.add_argument("--fwd-time", help="forward time per micro-batch, one or per stage (e.g. 2ms or 2ms,3ms)")
    p.add_argument("--bwd-time", help="backward time per micro-batch, one or per stage")
    p.add_argument("--activation-bytes", help="bytes crossing each stage boundary (0: free; default from the model)")
    p.add_argument("--figures", choices=["peak", "achievable"], default="peak")
    _add_model_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pipeline)

    p = sub.add_parser("train", help="estimate one training iteration on a dp x tp x pp grid")
    _add_source(p)
    p.add_argument("--dp", type=int, default=1)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--pp", type=int, default=1)
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--schedule", choices=SCHEDULES[:2], default="1f1b")
    p.add_argument("--overlap", action="store_true", help="overlap the gradient all-reduce with the last backward pass")
    p.add_argument("--placement", default="tp,pp,dp", help="rank order, fastest first (default tp,pp,dp: tensor groups inside systems)")
    p.add_argument("--gpus", default="all")
    p.add_argument("--figures", choices=["peak", "achievable"], default="peak")
    _add_model_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("scaling", help="weak and strong data-parallel scaling on 1, 2, 4, ... GPUs")
    _add_source(p)
    p.add_argument("--compare", action="append", help="another preset or file to put in the same table (repeatable)")
    p.add_argument("--grad-bytes", default="97.5MB", help="gradient bytes per iteration (default: ResNet-50, 97.5 MB)")
    p.add_argument("--sample-time", required=True, help="compute time per sample on one GPU, e.g. 5ms")
    p.add_argument("--batch-per-gpu", type=int, default=64, help="weak scaling batch per GPU (default 64)")
    p.add_argument("--global-batch", type=int, default=64, help="strong scaling total batch (default 64)")
    p.add_argument("--gpus", default="all")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_scaling)

    p = sub.add_parser("export", help="write the topology in another tool's format")
    _add_source(p)
    from .report.exports import EXPORT_FORMATS

    p.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
    p.add_argument("--system", help="the system to export (NCCL XML describes one system)")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="read a topology from another tool's format")
    p.add_argument("file")
    p.add_argument("--format", required=True, choices=["nccl-xml", "graphml"])
    p.add_argument("--name", help="name of the imported topology")
    p.add_argument("-o", "--output", required=True, help="topology file to write (.dgxs)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("report", help="an HTML or PDF report with analysis and simulations (CSV and JSON beside it)")
    _add_source(p)
    p.add_argument("--gpus", default="all")
    p.add_argument("--collective", default="all-reduce", choices=COLLECTIVES)
    p.add_argument("--algorithm", default="auto", choices=ALGORITHMS)
    p.add_argument("--size", default="256MiB", help="size of the simulated run ('' for none)")
    p.add_argument("--sweep", help="LOW:HIGH sizes for a bus-bandwidth sweep")
    p.add_argument("--pipeline-stages", type=int, help="add a pipeline run with this many stages (2 ms / 4 ms per micro-batch)")
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    _add_sim_options(p)
    p.add_argument("-o", "--output", required=True, help="report.html or report.pdf")
    p.set_defaults(func=cmd_report)
    return parser


def cmd_gui(args) -> int:
    """Open the desktop application on a file, or on the default preset."""
    from .model.presets import DEFAULT_PRESET

    topo = open_topology(args.file, None if args.file else DEFAULT_PRESET)
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")) \
            and sys.platform.startswith("linux"):
        raise CliError("no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set); "
                       "run it in a desktop session, or use the command line: `dgxstudio --help`")
    try:
        from .ui.app import run_app
    except ImportError as exc:
        raise CliError(f"the desktop application cannot start: {exc}") from None
    return run_app(topo, args.file, None if args.file else DEFAULT_PRESET)


def _normalize(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``dgxstudio`` and ``dgxstudio FILE`` mean ``dgxstudio gui [FILE]``."""
    commands = set(parser._subparsers._group_actions[0].choices)  # noqa: SLF001
    if not argv:
        return ["gui"]
    if argv == ["--self-test"]:
        return argv
    if argv[0] not in commands and not argv[0].startswith("-"):
        return ["gui", *argv]
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = _normalize(list(sys.argv[1:] if argv is None else argv), parser)
    args = parser.parse_args(argv)
    if args.self_test:
        from .ui.selftest import self_test

        return self_test()
    if args.command is None:
        parser.print_help()
        return EXIT_UNUSABLE
    for message in default_catalog().messages:
        print(f"warning: {message}", file=sys.stderr)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"dgxstudio: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("dgxstudio: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
