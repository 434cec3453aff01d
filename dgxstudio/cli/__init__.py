"""The ``dgxstudio`` command. Every subcommand that reports numbers has ``--json`` with stable keys
whose names carry SI units; errors go to stderr with a non-zero exit code and no traceback.

Exit codes: 0 success, 1 the input has errors (e.g. validation findings), 2 the input cannot be used,
3 an internal error (one line on stderr; ``--debug`` shows the traceback).
Each module of this package registers the subcommands it is about; only the module a command needs
is imported, so ``--version`` and ``presets`` start without loading the simulator.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import traceback

from .. import __version__
from ..heap import paused_gc
from .common import EXIT_INTERNAL, EXIT_OK, EXIT_UNUSABLE, CliError, open_topology

# Which module of this package registers each subcommand (kept in step by tests/test_cli.py).
COMMANDS = {
    "gui": None,
    "info": "topology", "validate": "topology", "presets": "topology", "new": "topology",
    "generate": "topology", "analyze": "topology",
    "simulate": "simulate",
    "export": "files", "import": "files", "report": "files",
    "pipeline": "training", "train": "training", "scaling": "training",
}
MODULES = ("topology", "simulate", "training", "files")


def build_parser(modules=MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dgxstudio", description="Design GPU cluster interconnects and simulate collectives on them.")
    parser.add_argument("--version", action="version", version=f"dgxstudio {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    parser.add_argument("--self-test", action="store_true",
                        help="start offscreen, open the default preset, run a short simulation, exit 0 if all went well")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("gui", help="open the desktop application (the default)")
    p.add_argument("file", nargs="?", help="topology file to open")
    p.set_defaults(func=cmd_gui)
    for name in modules:
        importlib.import_module(f".{name}", __name__).register(sub)
    return parser


def cmd_gui(args) -> int:
    """Open the desktop application on a file, or on the default preset."""
    from ..model.presets import DEFAULT_PRESET

    topo = open_topology(args.file, None if args.file else DEFAULT_PRESET)
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")) \
            and sys.platform.startswith("linux"):
        raise CliError("no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set); "
                       "run it in a desktop session, or use the command line: `dgxstudio --help`")
    try:
        from ..ui.app import DisplayLibrariesMissing, run_app
    except ImportError as exc:
        raise CliError(f"the desktop application cannot start: {exc}") from None
    try:
        return run_app(topo, args.file, None if args.file else DEFAULT_PRESET)
    except DisplayLibrariesMissing as exc:
        raise CliError(str(exc)) from None


def _normalize(argv: list[str]) -> list[str]:
    """``dgxstudio`` and ``dgxstudio FILE`` mean ``dgxstudio gui [FILE]``."""
    commands = set(COMMANDS)
    if not argv:
        return ["gui"]
    if argv == ["--self-test"]:
        return argv
    if argv[0] not in commands and not argv[0].startswith("-"):
        return ["gui", *argv]
    return argv


def _join_negative_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--size -5MiB`` as ``--size=-5MiB``: argparse takes a value that starts with '-' and is not a
    plain number for an option and says only "expected one argument"; joined, the option's own check
    says what is wrong with the value."""
    sub = None
    for action in parser._actions:  # the command's own parser, whose options take the values
        if isinstance(action, argparse._SubParsersAction) and argv and argv[0] in action.choices:
            sub = action.choices[argv[0]]
    if sub is None:
        return argv
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        action = sub._option_string_actions.get(tok) if tok.startswith("--") else None
        if action is not None and action.nargs is None and i + 1 < len(argv) \
                and len(argv[i + 1]) > 1 and argv[i + 1][0] == "-" and (argv[i + 1][1].isdigit() or argv[i + 1][1] == "."):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    program = argv is None  # the process's own command line: it ends when this returns
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = _normalize([a for a in argv if a != "--debug"])
    if argv and argv[0] in COMMANDS:
        module = COMMANDS[argv[0]]
        parser = build_parser((module,) if module else ())
    elif argv == ["--version"]:
        parser = build_parser(())
    else:
        parser = build_parser()
    args = parser.parse_args(_join_negative_values(parser, argv))
    try:
        return _run(parser, args, program)
    except Exception as exc:  # noqa: BLE001 - a bug: one line, its own exit status, no traceback
        if debug:
            traceback.print_exc()
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        at = f" (at {os.path.basename(where.filename)}:{where.lineno})" if where else ""
        message = str(exc).splitlines()[0][:200] if str(exc) else ""
        print(f"dgxstudio: internal error: {type(exc).__name__}: {message}{at}; "
              f"please report it{'' if debug else ' (--debug shows the traceback)'}", file=sys.stderr)
        return EXIT_INTERNAL


def _end_process(code: int) -> None:
    """End the process now, its output written, without taking apart what the command built and
    left in ``args.built`` (a simulation of 16,384 GPUs: its topology, routes and results, a second
    of CPU to free object by object just before the process exits). Returns if the output cannot be
    written (a closed pipe): the ordinary exit then reports it as before."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _run(parser: argparse.ArgumentParser, args, program: bool = False) -> int:
    from ..model.catalog import default_catalog

    if args.self_test:
        from ..ui.selftest import self_test

        return self_test()
    if args.command is None:
        parser.print_help()
        return EXIT_UNUSABLE
    for message in default_catalog().messages:
        print(f"warning: {message}", file=sys.stderr)
    try:
        if args.command == "gui":
            return args.func(args)
        # A command runs once and ends: the collector stays paused for all of it, so it never walks
        # the millions of objects of a large topology it loaded (its first pass after the load alone
        # took 0.9 s of the 59 MB file's 3.7 s). Simulations and analyses pause it anyway.
        # A program that built something ends here, the collector still paused: resumed, its first
        # pass would walk all of it (0.35 s CPU after a 16,384-GPU parameter server) just before exit.
        with paused_gc():
            code = args.func(args)
            if program and getattr(args, "built", None) is not None:
                _end_process(code)
            return code
    except CliError as exc:
        print(f"dgxstudio: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("dgxstudio: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # the output itself could not be written (stdout on a full disk): not a bug, and nothing to
        # report but that; a file the command writes names itself (filename set) and is worded there
        if exc.filename is None and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):
            print(f"dgxstudio: error: cannot write the output: {exc.strerror}", file=sys.stderr)
            return EXIT_UNUSABLE
        raise


if __name__ == "__main__":
    sys.exit(main())
