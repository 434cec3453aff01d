"""The ``dgxstudio`` command. Every subcommand that reports numbers has ``--json`` with stable keys
whose names carry SI units; errors go to stderr with a non-zero exit code and no traceback.

Exit codes: 0 success, 1 the input has errors (e.g. validation findings), 2 the input cannot be used.
Each module of this package registers the subcommands it is about.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..model.catalog import default_catalog
from . import files, simulate, topology, training
from .common import EXIT_OK, EXIT_UNUSABLE, CliError, open_topology


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dgxstudio", description="Design GPU cluster interconnects and simulate collectives on them.")
    parser.add_argument("--version", action="version", version=f"dgxstudio {__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="start offscreen, open the default preset, run a short simulation, exit 0 if all went well")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("gui", help="open the desktop application (the default)")
    p.add_argument("file", nargs="?", help="topology file to open")
    p.set_defaults(func=cmd_gui)
    for module in (topology, simulate, training, files):
        module.register(sub)
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
        from ..ui.selftest import self_test

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
