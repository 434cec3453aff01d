"""Subcommands for pipeline schedules and training: pipeline, train, scaling."""

from __future__ import annotations

import argparse
import os

from ..model.names import ring_words
from .common import (sim_errors, EXIT_OK, JSON_HELP, CliError, StepProgress, add_source, open_runnable_topology, parse_size_arg,
                     gpus_per_thread_arg, preset_hint, preset_names, print_json, select)
from ..units import counted


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
                     params=_number(args.params, "--params") if args.params else None,
                     experts=getattr(args, "experts", 0) or 0, top_k=getattr(args, "top_k", 2))


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CliError(f"{what}: expected a number, got {text!r}") from None


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (defaults: GPT-3 XL, 1.3 B parameters)")
    g.add_argument("--layers", type=int, default=24, help="transformer layers (default 24)")
    g.add_argument("--hidden", type=int, default=2048, help="hidden size (default 2048)")
    g.add_argument("--seq-len", type=int, default=2048, help="tokens per sample (default 2048)")
    g.add_argument("--micro-batch-size", type=int, default=1, help="samples per micro-batch (default 1)")
    g.add_argument("--precision", choices=["fp16", "bf16", "tf32", "fp32"], default="fp16")
    g.add_argument("--efficiency", type=float, default=0.5, help="fraction of the GPU's catalog peak reached (default 0.5)")
    g.add_argument("--params", help="parameter count (default 12 x layers x hidden^2)")


def cmd_pipeline(args) -> int:
    from ..sim.engine import SimulationCancelled
    from ..analysis.gpuset import only_selected
    from ..sim.pipeline import PipelineError, PipelineSpec, run_pipeline
    from ..sim.training import TrainingError, stage_times

    topo = open_runnable_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    if args.stages > len(gpus):
        raise CliError(f"--stages {args.stages}: {only_selected(len(gpus))}")
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
        w_share = args.w_share if args.w_share is not None else (0.5 if args.bwd_time else model.weight_gradient_share())
        if args.w_share is not None and not 0 < args.w_share < 1:
            raise CliError(f"--w-share {args.w_share:g}: the weight gradient's share of the backward must be more "
                           "than 0 and less than 1")
        spec = PipelineSpec(args.schedule, args.stages, args.microbatches, stage_gpus, fwd, bwd, act, args.chunks, w_share)
        result = run_pipeline(topo, spec, achievable=args.figures == "achievable")
    except sim_errors() as exc:
        raise CliError(str(exc)) from None
    except SimulationCancelled:
        raise CliError("cancelled") from None
    if args.json:
        print_json(result.as_dict())
        return EXIT_OK
    on = ring_words(topo, stage_gpus, head=8, more="...", sep=", ")   # as the canvas and the Gantt name them; --json: ids
    print(f"{topo.name}: {spec.schedule} pipeline, {counted(spec.stages, 'stage')} on {on}, "
          f"{counted(spec.microbatches, 'micro-batch', 'micro-batches')}" + (f", {spec.chunks} chunks" if spec.chunks > 1 else "")
          + f", {args.figures} link figures")
    ideal = result.as_dict(False)["ideal_bubble_fraction"]
    print(f"  makespan {result.makespan_s * 1e3:.3f} ms; bubble {100 * result.bubble_fraction:.1f}% of the makespan, "
          f"{100 * result.stage_bubble_fraction:.1f}% of the worst stage's span "
          f"(ideal {'n/a' if ideal is None else f'{100 * ideal:.1f}%'})")
    print(f"  micro-batches whose activations a stage holds at most, per stage: {result.peak_inflight}")
    return EXIT_OK


def bucket_arg(text: str | None) -> float | None:
    """``--bucket-size``: None for the default (PyTorch DDP's), 0 for one all-reduce ("0" or "none")."""
    if text is None:
        return None
    return 0.0 if text.strip().lower() in ("0", "none") else float(parse_size_arg(text, "--bucket-size"))


def _check_train_options(args) -> None:
    """The grid and router options, each named with its value (the simulator's own checks speak of
    stages and replicas, not of the option the user typed)."""
    for name, value, low in (("--dp", args.dp, 1), ("--tp", args.tp, 1), ("--pp", args.pp, 1), ("--ep", args.ep, 1),
                             ("--microbatches", args.microbatches, 1), ("--experts", args.experts, 0)):
        if value < low:
            raise CliError(f"{name} {value}: must be at least {low}")
    if args.chunks is not None and args.chunks < 1:
        raise CliError(f"--chunks {args.chunks}: must be at least 1")
    if args.experts and not 1 <= args.top_k <= args.experts:
        raise CliError(f"--top-k {args.top_k}: must be between 1 and --experts ({args.experts})")


def _tflops(flop_per_s: float) -> str:
    t = flop_per_s / 1e12
    return f"{t:,.0f}" if t >= 100 else f"{t:.3g}"


def train_chunks(args) -> int:
    """--chunks as train_iteration takes it: 2 by default for the interleaved schedule, else 1."""
    if args.chunks is not None:
        return args.chunks
    return 2 if args.schedule == "interleaved" and args.pp > 1 else 1


def cmd_train(args) -> int:
    from ..sim.training import TrainingError, train_iteration
    from ..sim.training_words import critical_headline, critical_reason, data_parallel_words, memory_words, pipeline_words

    _check_train_options(args)
    topo = open_runnable_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    try:
        bucket = bucket_arg(args.bucket_size)
        progress = StepProgress(f"training on {topo.name}")   # on a terminal only
        try:
            r = train_iteration(topo, gpus, args.dp, args.tp, args.pp, model_spec(args), args.microbatches,
                                args.schedule, not args.no_overlap, args.placement,
                                achievable=args.figures == "achievable", bucket_bytes=bucket, ep=args.ep,
                                progress=progress, chunks=train_chunks(args), gpus_per_thread=args.gpus_per_thread)
        finally:
            progress.done()
    except sim_errors() as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json(r.as_dict())
        return EXIT_OK
    used = r.dp * r.tp * r.pp
    print(f"{topo.name}: dp={r.dp} tp={r.tp} pp={r.pp}" + (f" ep={args.ep} ({args.experts} experts, top-{args.top_k})"
          if args.ep > 1 else f" ({args.experts} experts, top-{args.top_k})" if args.experts else "")
          + (f" on {used} of the {len(gpus)} GPUs selected" if used < len(gpus) else f" on {counted(used, 'GPU')}")
          + f", {counted(r.microbatches, 'micro-batch', 'micro-batches')}" + (f", {args.schedule} schedule" if r.pp > 1 else "")
          + (f" ({r.details['chunks']} model chunks per stage)" if r.pp > 1 and r.details["chunks"] > 1 else "")
          + f", {args.figures} link figures"
          + (f", one thread per {args.gpus_per_thread} GPUs (-g {args.gpus_per_thread})" if args.gpus_per_thread > 1 else ""))
    d = r.details
    print(f"  model: {args.layers} layers, hidden {args.hidden}, sequence {args.seq_len}, micro-batch {args.micro_batch_size}, "
          f"{d['parameters'] / 1e9:,.2f} B parameters in the layers, {d['precision']} at {100 * d['efficiency']:g}% of the GPU's "
          f"{_tflops(d['gpu_peak_flop_per_s'])} TFLOP/s = {_tflops(d['compute_flop_per_s_per_gpu'])} TFLOP/s per GPU")
    rate = f"{r.samples_per_s:,.1f}" if r.samples_per_s >= 10 else f"{r.samples_per_s:.3g}"   # not "0.0" for a 175 B model
    print(f"  iteration {r.iteration_s * 1e3:,.2f} ms, {rate} samples/s")
    for k, v in r.breakdown_s.items():
        print(f"    {k:<32} {v * 1e3:10.2f} ms   bottleneck: {r.bottleneck[k]}")
    if pipeline_words(r):
        print(f"  pipeline: {pipeline_words(r)}")
    if data_parallel_words(r):
        print(f"  data-parallel: {data_parallel_words(r)}")
    if memory_words(r):
        print(f"  memory: {memory_words(r)}")
    print(f"  {critical_headline(r)} - {critical_reason(r)}")
    verdicts = d.get("verdicts") or {}
    for key in ("rated", "achievable", "simulated"):
        v = verdicts.get(key)
        if v is None:
            continue
        rates = (f"NVLink {v['nvlink_per_gpu_per_direction_Bps'] / 1e9:.0f} GB/s per GPU per direction vs network "
                 f"{v['network_per_system_per_direction_Bps'] / 1e9:.0f} GB/s per system per direction; "
                 if "nvlink_per_gpu_per_direction_Bps" in v else "")
        print(f"    {key + ':':<11} {v['limit']} limits ({rates}NVLink offers {v['offered_ratio']:.2f}x the network, "
              f"the tensor traffic needs {v['required_ratio']:.2f}x) - {v['basis']}")
    if "why_they_differ" in verdicts:
        print(f"    why: {verdicts['why_they_differ']}")
    print("  busy fraction per link class: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in d["busy_fraction"].items()))
    return EXIT_OK


def _scaling_model(args, topo, gpus, ref_topo):
    from ..sim.scaling import BatchCurve, StepModel, backward_share, ddp_bucket_bytes, parse_curve
    from ..sim.training import peak_flops
    from ..units import parse_time

    def time_arg(text: str, what: str) -> float:
        try:
            return parse_time(text)
        except ValueError as exc:
            raise CliError(f"{what}: {exc}") from None
    sample = time_arg(args.sample_time, "--sample-time")
    overhead = time_arg(args.overhead, "--overhead") if args.overhead else 0.0
    curve = BatchCurve.fit(parse_curve(args.batch_curve)) if args.batch_curve else BatchCurve()
    bucket = bucket_arg(args.bucket_size)
    bucket = ddp_bucket_bytes() if bucket is None else (bucket or None)   # None: one all-reduce
    scale = 1.0
    if topo is not ref_topo:  # the sample time is measured on the first topology's GPU
        scale = peak_flops(ref_topo, select(ref_topo, args.gpus)[0], args.precision) / peak_flops(topo, gpus[0], args.precision)
    in_bytes = parse_size_arg(args.input_bytes, "--input-bytes") if args.input_bytes else 0.0
    return StepModel(parse_size_arg(args.grad_bytes, "--grad-bytes"), sample, args.sample_batch or args.batch_per_gpu,
                     curve, overhead, bucket, not args.no_overlap, backward_share(), scale, in_bytes,
                     args.input_copy == "prefetch")


def cmd_scaling(args) -> int:
    from ..sim.scaling import ScalingError, run_case, scaling
    from ..sim.training import TrainingError

    achievable = args.figures == "achievable"
    if args.case:
        try:
            result = run_case(args.case, achievable)
        except ScalingError as exc:
            raise CliError(str(exc)) from None
        if args.json:
            print_json(result)
            return EXIT_OK
        print(result["title"] + f" ({result['figures']} link figures)")
        for kind, cmp in result["comparison"].items():
            print(f"  {kind:<6} 8 GPUs: " + ", ".join(
                f"{k} {cmp['simulated'][k]:,.0f} images/s (published {cmp['published'][k]:,}, {100 * cmp['error'][k]:+.1f}%)"
                for k in cmp["published"]) + f"; NVLink/PCIe {cmp['simulated_ratio']:.2f}x (published "
                f"{cmp['published_ratio']:.2f}x, {100 * cmp['ratio_error']:+.1f}%)")
        for label, entry in result["systems"].items():
            r = next(x for x in entry["rows"] if x["gpus"] == 8)
            m = entry["model"]
            print(f"  {label:<6} 8-GPU step: all-reduce {r['allreduce_s'] * 1e3:.2f} ms; input copies of all 8 GPUs at once "
                  f"{r['weak_input_copy_s'] * 1e3:.2f} ms weak / {r['strong_input_copy_s'] * 1e3:.2f} ms strong, "
                  f"{'prefetched (exposed' if m['input_prefetch'] else 'on the critical path (exposed'} "
                  f"{r['weak_exposed_input_s'] * 1e3:.2f} / {r['strong_exposed_input_s'] * 1e3:.2f} ms)")
        return EXIT_OK
    if not args.sample_time:
        raise CliError("give --sample-time (compute per sample on one GPU) or --case NAME")
    topos = [open_runnable_topology(args.file, args.preset)]
    for other in args.compare or []:
        if other not in preset_names() and not os.path.exists(other):
            raise CliError(f"--compare {other}: neither a preset ({preset_hint(other, preset_names())}"
                           "`dgxstudio presets` lists them) nor a file")
        topos.append(open_runnable_topology(None, other) if other in preset_names() else open_runnable_topology(other))
    table = []
    try:
        for topo in topos:
            gpus = select(topo, args.gpus)
            model = _scaling_model(args, topo, gpus, topos[0])
            progress = StepProgress(f"scaling on {topo.name}")  # on a terminal only: hundreds of GPUs take seconds
            try:
                rows = scaling(topo, gpus, model, args.batch_per_gpu, args.global_batch, achievable=achievable,
                               progress=progress)
            finally:
                progress.done()
            largest = max((r.gpus for r in rows), default=0)
            table.append({"topology": topo.name, "compute_scale": model.compute_scale, "gpu_order": gpus[:largest],
                          "rows": [{**r.__dict__, "strong_batch_per_gpu": args.global_batch / r.gpus} for r in rows]})
    except (ScalingError, *sim_errors()) as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"gradient_bytes": model.grad_bytes, "sample_time_s": model.sample_s, "batch_per_gpu": args.batch_per_gpu,
                    "global_batch": args.global_batch, "figures": args.figures, "overhead_s": model.overhead_s,
                    "bucket_bytes": model.bucket_bytes, "overlap": model.overlap, "batch_curve_b_half": model.curve.b_half,
                    "input_bytes_per_sample": model.input_bytes_per_sample, "input_copy": args.input_copy,
                    "topologies": table})
        return EXIT_OK
    buckets = f"{model.bucket_bytes / 2**20:.0f} MiB buckets" if model.bucket_bytes else "one all-reduce"
    print(f"data-parallel scaling: {model.grad_bytes / 1e6:.1f} MB of gradients ({buckets}, "
          f"{'overlapped with backward' if model.overlap else 'after backward'}), {model.sample_s * 1e3:.3f} ms per sample, "
          f"weak {args.batch_per_gpu}/GPU, strong {args.global_batch} total, {args.figures} link figures")
    inp = model.input_bytes_per_sample > 0
    if inp:
        print(f"input: {model.input_bytes_per_sample:,.0f} bytes per sample copied host to device, "
              f"{'prefetched during the compute' if model.input_prefetch else 'before each step (on the critical path)'}")
    for topo, entry in zip(topos, table):
        print(f"  {entry['topology']}")
        print(f"    {'GPUs':>5} {'all-reduce':>12} {'weak samples/s':>15} {'eff':>6} {'strong samples/s':>17} {'eff':>6}"
              + (f" {'weak input copy (exposed)':>27}" if inp else ""))
        for r in entry["rows"]:
            # Below one sample a GPU, strong scaling is no longer a batch anyone can run: no figure.
            strong = (f"{r['strong_samples_per_s']:>17,.1f} {100 * r['strong_efficiency']:>5.1f}%"
                      if r["strong_batch_per_gpu"] >= 1 else f"{'-':>17} {'-':>6}")
            print(f"    {r['gpus']:>5} {r['allreduce_s'] * 1e3:>9.3f} ms {r['weak_samples_per_s']:>15,.1f} "
                  f"{100 * r['weak_efficiency']:>5.1f}% {strong}"
                  + (f" {r['weak_input_copy_s'] * 1e3:>12.3f} ms ({r['weak_exposed_input_s'] * 1e3:.3f} ms)" if inp else ""))
        order = entry.get("gpu_order") or []
        if order:   # which GPUs a row of N runs on: a 2-GPU row slower than a 4-GPU one is read from them
            shown = ring_words(topo, order, head=8, more="...", sep=", ")  # (as the canvas names them; --json: ids)
            print(f"    a row of N GPUs runs on the first N of: {shown} (--gpus chooses them, by id or system)")
        if any(r["strong_batch_per_gpu"] < 1 for r in entry["rows"]):
            print(f"    strong: no figure above {args.global_batch:,} GPUs, where the global batch of "
                  f"{args.global_batch:,} (--global-batch) gives each GPU less than one sample")
    return EXIT_OK


def register(sub) -> None:
    from ..sim.pipeline import SCHEDULES

    p = sub.add_parser("pipeline", help="simulate a pipeline-parallel schedule")
    add_source(p)
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    p.add_argument("--stages", type=int, required=True, help="pipeline stages, one GPU each")
    p.add_argument("--microbatches", type=int, required=True, help="micro-batches per iteration")
    p.add_argument("--chunks", type=int, default=1, help="model chunks per GPU (interleaved schedule)")
    p.add_argument("--gpus", default="all", help="GPU set; stages take its first GPUs in order")
    p.add_argument("--fwd-time", help="forward time per micro-batch, one or per stage (e.g. 2ms or 2ms,3ms)")
    p.add_argument("--bwd-time", help="backward time per micro-batch, one or per stage")
    p.add_argument("--activation-bytes", help="bytes crossing each stage boundary (0: free; default from the model)")
    p.add_argument("--w-share", type=float, help="zero-bubble schedules: the weight gradient's share of the backward time "
                   "(default: the model's, 24h/(48h+8s) by Qi et al.'s FLOP count; 0.5 with --bwd-time)")
    p.add_argument("--figures", choices=["peak", "achievable"], default="achievable",
                   help="link figures of the boundary sends: achievable (default, as simulate and train) or peak")
    add_model_options(p)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_pipeline)

    p = sub.add_parser("train", help="estimate one training iteration on a dp x tp x pp grid")
    add_source(p)
    p.add_argument("--dp", type=int, default=1, help="data-parallel replicas (default 1)")
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel GPUs per group (default 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    p.add_argument("--ep", type=int, default=1, help="expert-parallel size, as Megatron's --expert-model-parallel-size: each MoE layer's "
                   "experts are split over groups of EP data-parallel replicas, which exchange tokens by all-to-all "
                   "(divides --dp; default 1)")
    p.add_argument("--experts", type=int, default=0, help="experts per MoE layer (default 0: a dense model)")
    p.add_argument("--top-k", type=int, default=2, help="experts each token is routed to (default 2)")
    p.add_argument("--microbatches", type=int, default=8, help="micro-batches per iteration (default 8)")
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b",
                   help="pipeline schedule of every lane (default 1f1b); interleaved is Megatron's interleaved 1F1B "
                   "(--chunks model chunks per stage); zb-h1, zb-h2 and zb-v split the backward "
                   "into input and weight gradients (Qi et al., ICLR 2024)")
    p.add_argument("--chunks", type=int, help="interleaved schedule: model chunks per stage, as Megatron's virtual "
                   "pipeline size (default 2; the layers must divide into pp x chunks)")
    p.add_argument("--no-overlap", action="store_true",
                   help="all-reduce the gradients after the backward pass (default: buckets overlapped with it)")
    p.add_argument("--overlap", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--bucket-size", help="data-parallel gradient bucket (default 25MiB, PyTorch DDP's; 0: one all-reduce)")
    p.add_argument("--placement", default="tp,pp,dp", help="rank order, fastest first (default tp,pp,dp: tensor groups inside systems)")
    p.add_argument("--gpus", default="all", help="GPU set (see analyze); ranks take its GPUs in order")
    p.add_argument("--figures", choices=["peak", "achievable"], default="achievable",
                   help="link figures: achievable (default, what NCCL measures) or peak (the lecture's rated figures)")
    p.add_argument("--gpus-per-thread", type=gpus_per_thread_arg, default=1, metavar="N",
                   help="GPUs one thread drives, as simulate's: the expert-parallel all-to-all pays N-1 more launches "
                        "(default 1: a process per GPU, as torchrun runs a job)")
    add_model_options(p)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("scaling", help="weak and strong data-parallel scaling on 1, 2, 4, ... GPUs")
    add_source(p)
    p.add_argument("--compare", action="append", help="another preset or file to put in the same table (repeatable)")
    p.add_argument("--grad-bytes", default="97.5MB", help="gradient bytes per iteration (default: ResNet-50, 97.5 MB)")
    p.add_argument("--case", help="a published case from resources/training.json (e.g. resnet50-p100): "
                   "runs its systems and compares with the published figures")
    p.add_argument("--sample-time", help="compute time per sample on one GPU of the first topology, e.g. 5ms")
    p.add_argument("--sample-batch", type=int, help="the per-GPU batch the sample time was measured at (default: --batch-per-gpu)")
    p.add_argument("--batch-curve", help="measured throughput of one GPU at two or more batches, batch:samples_per_s,... "
                   "(e.g. 32:195,64:219): small batches then run below peak; default: linear")
    p.add_argument("--overhead", help="per-iteration overhead (optimizer step, launches), e.g. 1ms (default 0)")
    p.add_argument("--bucket-size", help="gradient bucket size (default 25MiB, PyTorch DDP's; 0: one all-reduce)")
    p.add_argument("--no-overlap", action="store_true", help="all-reduce after the backward pass instead of during it")
    p.add_argument("--precision", choices=["fp16", "bf16", "tf32", "fp32"], default="fp32",
                   help="precision whose catalog peak scales the sample time to other topologies' GPUs (default fp32)")
    p.add_argument("--batch-per-gpu", type=int, default=64, help="weak scaling batch per GPU (default 64)")
    p.add_argument("--global-batch", type=int, default=64, help="strong scaling total batch (default 64)")
    p.add_argument("--input-bytes", help="bytes per sample each GPU copies from its host per step (e.g. 602112 for a "
                   "224x224x3 fp32 image; default 0: the input pipeline is not modelled)")
    p.add_argument("--input-copy", choices=["prefetch", "serial"], default="prefetch",
                   help="the next batch's copy runs during the compute (prefetch, default) or before each step (serial)")
    p.add_argument("--gpus", default="all", help="GPU set (see analyze); 1, 2, 4, ... of its GPUs in order")
    p.add_argument("--figures", choices=["peak", "achievable"], default="achievable",
                   help="link bandwidths: catalog peaks or achievable (measured) figures (default achievable)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_scaling)
