"""Subcommands that read and write other formats: export, import, report."""

from __future__ import annotations

import os
import sys

from ..model import fileio
from ..sim.collectives import COLLECTIVES
from .simulate import sim_options
from .common import (ALGORITHM_HELP, EXIT_FINDINGS, EXIT_OK, CliError, add_sim_options, add_source, open_runnable_topology,
                     open_topology, parse_size_arg, select, sweep_arg, write_topology)


def cmd_export(args) -> int:
    from ..report.exports import write_export
    from ..report.formats import ExportError
    from ..report.nccl_xml import SystemNeeded

    if args.system is not None and args.format != "nccl-xml":
        # only NCCL XML describes one system; any other format would silently write the whole topology
        raise CliError(f"--system applies to --format nccl-xml only; {args.format} writes the whole topology")
    _check_ending(args.format, args.output)
    topo = open_topology(args.file, args.preset)
    try:
        write_export(topo, args.format, args.output, args.system)
    except SystemNeeded as exc:
        raise CliError(f"cannot export as {args.format}: {exc}, with --system (its id or name)") from None
    except ExportError as exc:
        raise CliError(f"cannot export as {args.format}: {exc}") from None
    except OSError as exc:
        raise CliError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {args.output} ({args.format})")
    return EXIT_OK


def _check_ending(fmt: str, output: str) -> None:
    """An output named for another format (``--format svg -o x.png``) is refused before anything is
    written: a picture viewer or another tool would open the file by its ending and fail on it."""
    from ..report.exports import EXPORT_FORMATS

    ending = os.path.splitext(output)[1].lower()
    own = EXPORT_FORMATS[fmt][1]
    others = sorted(f for f, (_, ext) in EXPORT_FORMATS.items() if ext == ending and f != fmt)
    if ending and ending != own and others:
        raise CliError(f"{output}: its ending {ending} is for --format {' or '.join(others)}; "
                       f"--format {fmt} writes {EXPORT_FORMATS[fmt][0]} (name the file {own}, or give the format you meant)")


def cmd_import(args) -> int:
    from ..report.formats import from_graphml
    from ..report.nccl_xml import NcclXmlError, from_nccl_xml

    try:
        with open(args.file, "rb") as fh:
            data = fh.read(fileio.MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CliError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    if len(data) > fileio.MAX_FILE_BYTES:
        raise CliError(f"{args.file}: over the limit of {fileio.MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{args.file}: not UTF-8 text (byte {exc.start})") from None
    warnings: list[str] = []
    try:
        if args.format == "nccl-xml":
            topo, warnings = from_nccl_xml(text, name=args.name or "imported NCCL topology")
        else:
            topo = from_graphml(text)
    except (NcclXmlError, ValueError) as exc:  # GraphmlError and TopologyFileError are ValueErrors
        raise CliError(f"{args.file}: not a readable {args.format} topology: {exc}") from None
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    write_topology(topo, args.output)
    # written all the same (the GUI opens it to mend), but a file NCCL's own hardware could not be, e.g. 500
    # NVLinks from a GPU to a switch, is not a clean import: said, with exit 1 as `validate` gives
    from ..model.validation import errors as design_errors, first_errors_words

    errors = design_errors(topo)  # (its errors only: the checks that only warn are not made)
    if errors:
        print(f"dgxstudio: {args.file}: the imported topology has {len(errors)} error(s)"
              f" (`dgxstudio validate {args.output}` lists them): {first_errors_words(errors)}", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


REPORT_FORMATS = ("html", "pdf")
_REPORT_EXTENSIONS = {".html": "html", ".htm": "html", ".pdf": "pdf"}


def report_path(output: str, fmt: str | None) -> str:
    """Where the report goes: the extension names the format; a name without one gets the chosen
    format's (HTML unless asked), so ``-o summary`` never writes HTML into a file called "summary"."""
    ext = os.path.splitext(output)[1].lower()
    if not ext:
        return f"{output}.{fmt or 'html'}"
    kind = _REPORT_EXTENSIONS.get(ext)
    if kind is None:
        raise CliError(f"{output}: a report is HTML (.html) or PDF (.pdf), not {ext}")
    if fmt is not None and fmt != kind:
        raise CliError(f"{output}: the name says {kind.upper()} but --format says {fmt.upper()}")
    return output


def cmd_report(args) -> int:
    from ..analysis.gpuset import only_selected
    from ..analysis.summary import analyze
    from ..report.html import ReportData, write_report
    from ..report.provenance import stamp
    from ..sim.limits import TooLarge
    from ..sim.pipeline import PipelineError, PipelineSpec, run_pipeline
    from ..sim.ring_bound_note import rings_alone_Bps
    from ..sim.run import SimulationError, Simulator

    args.output = report_path(args.output, getattr(args, "format", None))
    topo = open_runnable_topology(args.file, args.preset)
    gpus = select(topo, args.gpus)
    data = ReportData(topo, analyze(topo, gpus))
    try:
        sim = Simulator(topo, gpus, sim_options(args, gpus), checked=True)  # open_runnable_topology validated it
        if args.size:
            run = sim.run(args.collective, args.algorithm, parse_size_arg(args.size, "--size"))
            run.rings_alone_Bps = rings_alone_Bps(sim, run)   # the report says it beside the bound, as simulate does
            data.runs.append(stamp(run, data.document))
        if args.sweep:
            sizes = sweep_arg(args.sweep, one_size_ok=True)
            data.sweeps.append(stamp([sim.run(args.collective, args.algorithm, s) for s in sizes], data.document))
        if args.pipeline_stages:
            p = args.pipeline_stages
            if p > len(gpus):
                raise CliError(f"--pipeline-stages {p}: {only_selected(len(gpus))}")
            spec = PipelineSpec(args.schedule, p, args.microbatches, gpus[:p], [2e-3] * p, [4e-3] * p, 16 * 2**20)
            result = run_pipeline(topo, spec, achievable=args.figures == "achievable")  # as the report's runs
            data.pipelines.append(stamp(result, data.document))
    except (SimulationError, PipelineError, TooLarge) as exc:
        raise CliError(str(exc)) from None
    try:
        pages = write_report(data, args.output)
    except OSError as exc:
        raise CliError(f"{exc.filename or args.output}: cannot write the report: {exc.strerror or exc}") from None
    stem = os.path.splitext(args.output)[0]
    print(f"wrote {args.output}" + (f" ({pages} pages)" if pages else "") + f", {stem}.json and {stem}.csv")
    return EXIT_OK


def register(sub) -> None:
    from ..report.exports import EXPORT_FORMATS
    from ..sim.pipeline import SCHEDULES
    from ..sim.run import ALGORITHMS

    p = sub.add_parser("export", help="write the topology in another tool's format")
    add_source(p)
    p.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
    p.add_argument("--system", help="the system to export, by group id or name (nccl-xml only: NCCL XML describes one system)")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="read a topology from another tool's format")
    p.add_argument("file")
    p.add_argument("--format", required=True, choices=["nccl-xml", "graphml"])
    p.add_argument("--name", help="name of the imported topology")
    p.add_argument("-o", "--output", required=True, help="topology file to write (.dgxs)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("report", help="an HTML or PDF report with analysis and simulations (CSV and JSON beside it)")
    add_source(p)
    p.add_argument("--gpus", default="all")
    p.add_argument("--collective", default="all-reduce", choices=COLLECTIVES)
    p.add_argument("--algorithm", default="auto", choices=(*ALGORITHMS, "multi-ring"), help=ALGORITHM_HELP)
    p.add_argument("--size", default="256MiB", help="size of the simulated run ('' for none)")
    p.add_argument("--sweep", help="LOW:HIGH sizes for a bus-bandwidth sweep")
    p.add_argument("--pipeline-stages", type=int, help="add a pipeline run with this many stages (2 ms / 4 ms per micro-batch)")
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    add_sim_options(p)
    p.add_argument("-o", "--output", required=True,
                   help="report.html or report.pdf (a name without an extension gets the --format's)")
    p.add_argument("--format", choices=REPORT_FORMATS, help="html or pdf (default: from the extension, else html)")
    p.set_defaults(func=cmd_report)
