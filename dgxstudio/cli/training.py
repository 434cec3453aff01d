"""Subcommands for pipeline schedules and training: pipeline, train, scaling."""

from __future__ import annotations

import argparse

from .common import (sim_errors, EXIT_OK, CliError, add_source, open_topology, parse_size_arg, preset_names, print_json,
                     select)


def _times(text: str | None, stages: int, what: str) -> list[float] | None:
    from ..units import parse_time

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
    from ..sim.training import ModelSpec

    return ModelSpec(layers=args.layers, hidden=args.hidden, seq_len=args.seq_len, microbatch_size=args.micro_batch_size,
                     precision=args.precision, efficiency=args.efficiency,
                     params=_number(args.params, "--params") if args.params else None)


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CliError(f"{what}: expected a number, got {text!r}") from None


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (defaults: GPT-3 XL, 1.3 B parameters)")
    g.add_argument("--layers", type=int, default=24)
    g.add_argument("--hidden", type=int, default=2048)
    g.add_argument("--seq-len", type=int, default=2048)
    g.add_argument("--micro-batch-size", type=int, default=1)
    g.add_argument("--precision", choices=["fp16", "bf16", "tf32", "fp32"], default="fp16")
    g.add_argument("--efficiency", type=float, default=0.5, help="fraction of the GPU's catalog peak reached (default 0.5)")
    g.add_argument("--params", help="parameter count (default 12 x layers x hidden^2)")


def cmd_pipeline(args) -> int:
    from ..sim.engine import SimulationCancelled
    from ..sim.pipeline import PipelineError, PipelineSpec, run_pipeline
    from ..sim.training import TrainingError, stage_times

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
        act = parse_size_arg(args.activation_bytes, "--activation-bytes") if args.activation_bytes not in (None, "0") else (
            0.0 if args.activation_bytes == "0" else model.activation_bytes())
        spec = PipelineSpec(args.schedule, args.stages, args.microbatches, stage_gpus, fwd, bwd, act, args.chunks)
        result = run_pipeline(topo, spec, achievable=args.figures == "achievable")
    except sim_errors() as exc:
        raise CliError(str(exc)) from None
    except SimulationCancelled:
        raise CliError("cancelled") from None
    if args.json:
        print_json(result.as_dict())
        return EXIT_OK
    print(f"{topo.name}: {spec.schedule} pipeline, {spec.stages} stages on {', '.join(stage_gpus)}, "
          f"{spec.microbatches} micro-batches" + (f", {spec.chunks} chunks" if spec.chunks > 1 else ""))
    print(f"  makespan {result.makespan_s * 1e3:.3f} ms; bubble {100 * result.bubble_fraction:.1f}% "
          f"(ideal {100 * result.as_dict(False)['ideal_bubble_fraction']:.1f}%)")
    print(f"  activations held at most, per stage: {result.peak_inflight}")
    return EXIT_OK


def cmd_train(args) -> int:
    from ..sim.training import TrainingError, train_iteration

    topo = open_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    try:
        r = train_iteration(topo, gpus, args.dp, args.tp, args.pp, model_spec(args), args.microbatches, args.schedule,
                            args.overlap, args.placement, achievable=args.figures == "achievable")
    except sim_errors() as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json(r.as_dict())
        return EXIT_OK
    print(f"{topo.name}: dp={r.dp} tp={r.tp} pp={r.pp}, {r.microbatches} micro-batches")
    print(f"  iteration {r.iteration_s * 1e3:.2f} ms, {r.samples_per_s:,.1f} samples/s")
    for k, v in r.breakdown_s.items():
        print(f"    {k:<32} {v * 1e3:10.2f} ms   bottleneck: {r.bottleneck[k]}")
    return EXIT_OK


def cmd_scaling(args) -> int:
    from ..sim.training import TrainingError, scaling
    from ..units import parse_time

    topos = [open_topology(args.file, args.preset)]
    for other in args.compare or []:
        topos.append(open_topology(None, other) if other in preset_names() else open_topology(other))
    try:
        sample = parse_time(args.sample_time)
    except ValueError as exc:
        raise CliError(f"--sample-time: {exc}") from None
    grad = parse_size_arg(args.grad_bytes, "--grad-bytes")
    table = []
    try:
        for topo in topos:
            gpus = select(topo, args.gpus)
            rows = scaling(topo, gpus, grad, sample, args.batch_per_gpu, args.global_batch)
            table.append({"topology": topo.name, "rows": [r.__dict__ for r in rows]})
    except sim_errors() as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"gradient_bytes": grad, "sample_time_s": sample, "batch_per_gpu": args.batch_per_gpu,
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


def register(sub) -> None:
    from ..sim.pipeline import SCHEDULES

    p = sub.add_parser("pipeline", help="simulate a pipeline-parallel schedule")
    add_source(p)
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    p.add_argument("--stages", type=int, required=True)
    p.add_argument("--microbatches", type=int, required=True)
    p.add_argument("--chunks", type=int, default=1, help="model chunks per GPU (interleaved schedule)")
    p.add_argument("--gpus", default="all", help="GPU set; stages take its first GPUs in order")
    p.add_argument("--fwd-time", help="forward time per micro-batch, one or per stage (e.g. 2ms or 2ms,3ms)")
    p.add_argument("--bwd-time", help="backward time per micro-batch, one or per stage")
    p.add_argument("--activation-bytes", help="bytes crossing each stage boundary (0: free; default from the model)")
    p.add_argument("--figures", choices=["peak", "achievable"], default="peak")
    add_model_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pipeline)

    p = sub.add_parser("train", help="estimate one training iteration on a dp x tp x pp grid")
    add_source(p)
    p.add_argument("--dp", type=int, default=1)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--pp", type=int, default=1)
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--schedule", choices=SCHEDULES[:2], default="1f1b")
    p.add_argument("--overlap", action="store_true", help="overlap the gradient all-reduce with the last backward pass")
    p.add_argument("--placement", default="tp,pp,dp", help="rank order, fastest first (default tp,pp,dp: tensor groups inside systems)")
    p.add_argument("--gpus", default="all")
    p.add_argument("--figures", choices=["peak", "achievable"], default="peak")
    add_model_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("scaling", help="weak and strong data-parallel scaling on 1, 2, 4, ... GPUs")
    add_source(p)
    p.add_argument("--compare", action="append", help="another preset or file to put in the same table (repeatable)")
    p.add_argument("--grad-bytes", default="97.5MB", help="gradient bytes per iteration (default: ResNet-50, 97.5 MB)")
    p.add_argument("--sample-time", required=True, help="compute time per sample on one GPU, e.g. 5ms")
    p.add_argument("--batch-per-gpu", type=int, default=64, help="weak scaling batch per GPU (default 64)")
    p.add_argument("--global-batch", type=int, default=64, help="strong scaling total batch (default 64)")
    p.add_argument("--gpus", default="all")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_scaling)
