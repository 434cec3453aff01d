"""The ``simulate`` subcommand: one collective, or a sweep of sizes, on a GPU set."""

from __future__ import annotations

import math

from ..sim.collectives import COLLECTIVES
from ..sim.results import capacity_words
from .common import (ALGORITHM_HELP, EXIT_OK, JSON_HELP, CliError, StepProgress, add_sim_options, add_source,
                     loading_name, open_runnable_topology, parse_size_arg, print_json, select, sim_errors, sweep_arg)
from ..units import counted


DEFAULT_SIZE = "256MiB"   # one run's size when neither --size nor --sweep is given

def sim_options(args, gpus: list[str] | None = None):
    """The engine's options from the command line; ``gpus``, the selected set, checks ``--root``
    against it (the engine took a root outside the set for an internal error). ``--server`` with
    another algorithm, and ``--protocol`` with one of DGX Studio's own, are refused: they were
    ignored without a word."""
    if args.server is not None and args.algorithm != "parameter-server":
        raise CliError(f"--server {args.server}: only --algorithm parameter-server has a server"
                       f" (--algorithm {args.algorithm} has none)")
    from ..sim.run import NCCL, ALIASES

    if args.protocol != "auto":
        own = args.algorithm if ALIASES.get(args.algorithm, args.algorithm) not in (*NCCL, "auto") else None
        if own is None and args.collective == "all-to-all":  # (NCCL's p2p rule, sim/nccl_p2p.py)
            raise CliError(f"--protocol {args.protocol}: an all-to-all runs as NCCL's grouped send/receive, whose"
                           " protocol follows NCCL's p2p rule (LL while a peer's bytes are at most 16 KiB a channel,"
                           " else Simple), not a choice")
        if own is not None:
            raise CliError(f"--protocol {args.protocol}: NCCL's protocols are for its algorithms"
                           f" ({', '.join(NCCL)}, auto); {own} runs without them")
    from ..sim.nccl_env import refusal

    if getattr(args, "no_nvls", False) and (why := refusal(args.algorithm, nvls_enable=False)):
        raise CliError(f"--algorithm {args.algorithm} with --no-nvls: {why}")   # (named, as --server's and --protocol's)
    if args.root is not None and getattr(args, "collective", None) not in (None, "broadcast", "reduce"):
        raise CliError(f"--root {args.root}: only broadcast and reduce have a root"
                       f" (--collective {args.collective} has none)")
    if gpus is not None and args.root is not None and args.root not in gpus:
        raise CliError(f"--root {args.root}: not one of the {len(gpus)} selected GPUs"
                       f" ({', '.join(gpus[:4])}{' ...' if len(gpus) > 4 else ''})")
    return _sim_options(args)


def _sim_options(args):
    from ..sim.run import SimOptions

    reduce_cost = 0.0
    if args.reduce_bw:
        # refused in the unit the user typed, not as the engine's seconds per byte
        try:
            gbps = float(args.reduce_bw)
        except ValueError:
            raise CliError(f"--reduce-bw: expected a number of GB/s, got {args.reduce_bw!r}") from None
        if not math.isfinite(gbps):
            raise CliError(f"--reduce-bw: {args.reduce_bw!r} is not a finite number of GB/s")
        if gbps <= 0:
            raise CliError(f"--reduce-bw: {args.reduce_bw} GB/s is out of range (a reduction speed above 0 GB/s)")
        from ..sim.limits import MAX_REDUCE_S_PER_BYTE

        if 1.0 / (gbps * 1e9) > MAX_REDUCE_S_PER_BYTE:
            raise CliError(f"--reduce-bw: {args.reduce_bw} GB/s is below the least the engine takes,"
                           f" {1.0 / MAX_REDUCE_S_PER_BYTE / 1e9:g} GB/s")
        reduce_cost = 1.0 / (gbps * 1e9)
    return SimOptions(chunk=parse_size_arg(args.chunk, "--chunk"), achievable=args.figures == "achievable",
                      spread=args.spread, reduce_s_per_byte=reduce_cost, root=args.root, server=args.server,
                      protocol=args.protocol, pxn=args.pxn,
                      gpus_per_thread=getattr(args, "gpus_per_thread", 1),
                      nvls_enable=not getattr(args, "no_nvls", False))


def _row(result) -> dict:
    d = result.as_dict()
    d["rings"] = result.rings
    return d


def _ring_note(sim, result) -> str:
    from ..sim.ring_bound_note import rings_alone_Bps, rings_alone_words

    return rings_alone_words(rings_alone_Bps(sim, result))


def _run_shown(sim, args, size: int, k: int, n: int, bar: StepProgress):
    """One size of the run, its progress on the terminal (none when stderr is not one: the engine is
    then given no callback, as before). A run over 512 DGX H100 plays for seconds, and showed nothing.
    The line stays within 80 columns (a wrapped one is not taken back by the carriage return)."""
    from ..sim.setup_steps import Setup, of_run
    from ..units import format_size

    count = f", {k + 1}/{n}" if n > 1 else ""
    step = f"{args.collective} {args.algorithm} {format_size(size)}" + count
    if not bar.live:
        return sim.run(args.collective, args.algorithm, size)
    bar(k / n, step)   # at once, then the setup's steps in words (2-4 s at 2,048 DGX H100), then the engine's

    def show(p) -> None:   # a setup step's words in place of the run's: both would pass 80 columns
        bar((k + of_run(p)) / n, p.step + count if isinstance(p, Setup) else step)
    return sim.run(args.collective, args.algorithm, size, progress=show)


def cmd_simulate(args) -> int:
    from ..model.names import ends_words
    from ..sim.engine import SimulationCancelled
    from ..sim.latency_bound import limit_words
    from ..sim.run import Simulator
    from ..units import format_size, format_time

    if args.sweep and args.size is not None:
        raise CliError(f"--size {args.size} and --sweep {args.sweep}: a sweep runs its own sizes; give one of them")
    bar = StepProgress("simulating")  # on a terminal only: 2,048 DGX H100 take seconds, their file ~1 s to load
    try:
        if args.file and not args.preset:
            bar(0.0, f"loading {loading_name(args.file)}")
        topo = open_runnable_topology(args.file, args.preset)
        gpus = select(topo, args.gpus)
        sizes = (sweep_arg(args.sweep) if args.sweep
                 else [parse_size_arg(DEFAULT_SIZE if args.size is None else args.size, "--size")])
        bar.what = f"simulating on {counted(len(gpus), 'GPU', grouped=True)}"
        sim = Simulator(topo, gpus, sim_options(args, gpus), checked=True,  # open_runnable_topology validated it
                        progress=(lambda p: bar(0.0, p.step)) if bar.live else None)   # "routing"
        results = [_run_shown(sim, args, s, k, len(sizes), bar) for k, s in enumerate(sizes)]
    except sim_errors() as exc:
        raise CliError(str(exc)) from None
    except SimulationCancelled:
        raise CliError("cancelled") from None
    finally:
        bar.done()
    args.built = (topo, sim, results)  # left for the process's end (cli.main), not freed one by one
    if args.nccl_tests:
        from ..report.nccl_tests import nccl_tests_log

        root = sim.gpus.index(args.root) if args.root in sim.gpus else 0
        print(nccl_tests_log(results, f"{topo.name}, {args.algorithm}", len(gpus), root), end="")
        return EXIT_OK
    if args.json:
        # NCCL's settings the run was made with, named as an off-file source names them (only when one
        # is set: a script read --no-nvls from the reason's words alone)
        env = {"nccl_env": {"NCCL_NVLS_ENABLE": "0"}} if getattr(args, "no_nvls", False) else {}
        if args.sweep:
            first = results[0]
            print_json({"collective": first.collective, "requested_algorithm": args.algorithm, "gpus": len(gpus),
                         **env, "bound_busbw_Bps": first.bound_busbw_Bps, "rows": [_row(r) for r in results]})
        else:
            print_json({**_row(results[0]), **env})
        return EXIT_OK
    first = results[0]
    print(f"{topo.name}: {first.collective} over {counted(len(gpus), 'GPU')}, "
          f"{'achievable' if first.options.achievable else 'peak'} link figures"
          + ("" if first.options.nvls_enable else ", no NVLink SHARP (NCCL_NVLS_ENABLE=0)"))  # a sweep said it nowhere
    print(f"  topology bound (bus bandwidth): {first.bound_busbw_Bps / 1e9:.2f} GB/s{_ring_note(sim, first)}")
    g = sim.gpus_per_thread()
    if g > 1:
        from ..sim.tuning import serial_launch

        print(f"  one thread drives {g} GPUs (nccl-tests -g {g}): each call waits "
              f"{format_time(serial_launch(g))} for their kernels to launch in turn")
    print(f"  {'size':>10} {'algorithm':>16} {'protocol':>8} {'ch':>3} {'time':>12} {'algbw GB/s':>11} "
          f"{'busbw GB/s':>11} {'% bound':>8}")
    for r in results:
        proto = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}.get(r.protocol, "-")
        print(f"  {format_size(r.size_bytes):>10} {r.algorithm:>16} {proto:>8} {r.channels or '-':>3} {format_time(r.time_s):>12} "
              f"{r.algbw_Bps / 1e9:>11.2f} {r.busbw_Bps / 1e9:>11.2f} {100 * r.fraction_of_bound:>7.1f}%")
    if not args.sweep:
        r = results[0]
        if r.requested_algorithm == "auto":
            print(f"  auto: {r.reason}")
        elif r.reason and r.reason != f"{r.algorithm} as requested":  # (as the GUI's results say it)
            print(f"  {r.reason}")
        why = limit_words(r.sim)
        if why is not None:
            print(f"  {why}")
            print("  busiest links (none limited the run):")
        else:
            print("  busiest links:")
        for b in r.sim.bottlenecks(5):
            print(f"    {', '.join(b['links'])} ({ends_words(topo, b['from'], b['to'], '->')}): {100 * b['utilization']:.1f}% busy, "
                  f"{capacity_words(b, r)}")
    return EXIT_OK


def register(sub) -> None:
    from ..sim.run import ALGORITHMS

    p = sub.add_parser("simulate", help="simulate a collective on the topology")
    add_source(p)
    p.add_argument("--collective", default="all-reduce", choices=COLLECTIVES)
    p.add_argument("--algorithm", default="auto", choices=(*ALGORITHMS, "multi-ring"), help=ALGORITHM_HELP)
    p.add_argument("--size", help=f"bytes per GPU as nccl-tests counts them, with a unit (64KiB, 256MiB, 1GB; "
                                  f"a bare number is bytes; default {DEFAULT_SIZE})")
    p.add_argument("--sweep", help="LOW:HIGH, powers of two, e.g. 1KiB:4GiB")
    p.add_argument("--gpus", default="all", help="GPU set (see analyze)")
    add_sim_options(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    out.add_argument("--nccl-tests", action="store_true",
                     help="print the rows as nccl-tests prints them (size in bytes, count, type, redop, root, time in "
                          "us, algbw, busbw), to set beside a measured log")
    p.set_defaults(func=cmd_simulate)
