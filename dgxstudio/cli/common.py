"""What every subcommand shares: the error type, JSON output, opening a topology, GPU selection.

Exit codes: 0 success, 1 the input has errors (e.g. validation findings), 2 the input cannot be used,
3 an internal error (a bug in DGX Studio: one line on stderr, the traceback with ``--debug``).
"""

from __future__ import annotations

import argparse
import json

from ..model import fileio
from ..model.topology import Topology
from ..units import counted

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE, EXIT_INTERNAL = 0, 1, 2, 3
ALGORITHM_HELP = ("NCCL's algorithms as NCCL_ALGO names them: ring, tree, nvls (NVLink SHARP in one system's "
                  "NVSwitches), nvls-tree (NVLink SHARP inside each system, trees across them), collnet (SHARP "
                  "InfiniBand switches); single-ring (textbook, one ring one way); the lecture's parameter-server, "
                  "decentralized, hierarchical; direct (pair by pair, all-to-all); multi-ring: ring's earlier name; "
                  "auto (default): NCCL's own choice")
JSON_HELP = "print the result as JSON on stdout (a quantity's key names its SI unit: time_s, busbw_Bps, size_bytes)"


class CliError(Exception):
    """A problem to report in one line on stderr; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_UNUSABLE):
        super().__init__(message)
        self.code = code


class StepProgress:
    """Progress of a slow step on stderr (``analyzing: rings (2/4), 31 s``), only when stderr is a
    terminal, so scripts and JSON output see nothing. Called as ``progress(fraction, step)``."""

    def __init__(self, what: str, stream=None):
        import sys
        import time

        self.what = what
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.clock = time.monotonic
        self.shown = False

    def __call__(self, fraction: float, step: str) -> None:
        if not self.live:
            return
        elapsed = self.clock() - self.started
        self.stream.write(f"\r{self.what}: {step} ({100 * fraction:.0f}%), {elapsed:.0f} s \033[K")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def loading_name(path: str, room: int = 40) -> str:
    """A file as a progress line names it while loading it: its last part, cut to ``room`` characters (the
    line stays within 80 columns: a wrapped one is not taken back by the carriage return)."""
    import os

    name = os.path.basename(path) or path
    return name if len(name) <= room else name[:room - 3] + "..."


def print_json(obj) -> None:
    print(json.dumps(obj, indent=2, sort_keys=False, allow_nan=False))


def preset_hint(name: str, presets) -> str:
    """"did you mean 'dgx-b200'? " for a preset name typed as a person remembers it (``hgx-b200``,
    ``DGX-H100``, ``dgx_h100``, ``gb200``), or "" when no preset is close: one that holds the name
    (the shortest; a name of 3 characters or more, as "a" or "1" is held by most of them), else the
    closest spelling."""
    import difflib

    folded = {p.lower().replace("_", "-").replace(" ", "-"): p for p in presets}
    key = name.lower().replace("_", "-").replace(" ", "-")
    holding = sorted((f for f in folded if len(key.strip("-")) >= 3 and key in f), key=len)
    close = holding[:1] or difflib.get_close_matches(key, folded, n=1)
    return f"did you mean {folded[close[0]]!r}? " if close else ""


def open_topology(path: str | None, preset: str | None = None) -> Topology:
    if preset and path:   # the file was dropped without a word and the preset simulated
        raise CliError(f"{path} and --preset {preset}: give a topology file or --preset NAME, not both")
    if preset:
        # (only here: the presets' builders, ~16 ms of compiling and running, which a file's run never uses)
        from ..model.presets import PRESETS, load_preset

        if preset not in PRESETS:
            raise CliError(f"unknown preset {preset!r} ({preset_hint(preset, PRESETS)}`dgxstudio presets` lists them)")
        return load_preset(preset)
    if not path:
        raise CliError("give a topology file or --preset NAME")
    try:
        return fileio.load(path)
    except fileio.TopologyFileError as exc:
        raise CliError(str(exc)) from None


def open_runnable_topology(path: str | None, preset: str | None = None) -> Topology:
    """A topology to run something on (simulate, pipeline, train, scaling, report): one with
    validation errors is refused with exit 1, as `validate` does, whichever command is run."""
    from ..model.validation import errors as design_errors, first_errors_words

    topo = open_topology(path, preset)
    errors = design_errors(topo, as_read=not preset)  # (a file's topology, just read: see validation.errors)
    if errors:
        raise CliError(f"{path or topo.name}: the topology has {len(errors)} error(s); fix them first"
                       f" (`dgxstudio validate` lists them): {first_errors_words(errors)}", EXIT_FINDINGS)
    return topo


def add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="topology file (.dgxs)")
    p.add_argument("--preset", help="use a built-in preset instead of a file")


def select(topo: Topology, spec: str | None) -> list[str]:
    from ..analysis.gpuset import GpuSetError, select_gpus

    if spec is not None and not spec.strip():
        raise CliError("--gpus '': names no GPUs (leave the option out, or give 'all', for every GPU)")
    try:
        return select_gpus(topo, spec)
    except GpuSetError as exc:
        if (not spec or spec.strip().lower() == "all") and not topo.gpus():
            # nothing was asked of --gpus: the fault is the topology's, not the option's
            raise CliError(f"{topo.name}: the topology has no GPUs") from None
        raise CliError(f"--gpus: {exc}") from None


def parse_size_arg(text: str, what: str) -> int:
    from ..units import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise CliError(f"{what}: {exc}") from None


def sweep_arg(text: str, one_size_ok: bool = False) -> list[int]:
    """--sweep LOW:HIGH as the powers of two between, or an error naming the option and what was given."""
    from ..sim.run import SimulationError, sweep_sizes

    lo, sep, hi = text.partition(":")
    if not sep and not one_size_ok:
        raise CliError("--sweep: expected LOW:HIGH, e.g. 1KiB:4GiB")
    try:
        return sweep_sizes(parse_size_arg(lo, "--sweep"), parse_size_arg(hi or lo, "--sweep"))
    except SimulationError as exc:
        raise CliError(f"--sweep {text}: {exc}") from None


def write_topology(topo: Topology, out: str) -> None:
    try:
        fileio.save(topo, out)
    except fileio.TopologyFileError as exc:
        raise CliError(f"{out}: not written: {exc}") from None
    except OSError as exc:
        raise CliError(f"{out}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {out}: {counted(len(topo.devices), 'device')}, {counted(len(topo.links), 'link')}")


def sim_errors() -> tuple[type[Exception], ...]:
    """What a simulation, pipeline or training request raises for input it cannot use (a message
    for the user, exit 2), as opposed to a bug."""
    from ..analysis.routing import RoutingError
    from ..sim.pipeline import PipelineError
    from ..sim.limits import TooLarge
    from ..sim.run import SimulationError
    from ..sim.training import TrainingError

    return (SimulationError, PipelineError, TrainingError, RoutingError, TooLarge)


def preset_names() -> list[str]:
    from ..model.presets import preset_names

    return preset_names()


def gpus_per_thread_arg(text: str) -> int:
    """--gpus-per-thread N as simulate and train read it: a whole number of GPUs from 1 to 1024."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of GPUs, got {text!r}") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"expected 1 to 1024 GPUs, got {value}")
    return value


def add_sim_options(p: argparse.ArgumentParser) -> None:
    # (only here: the commands without simulation options, `presets`, `generate`, `check`..., neither
    # import the tuning module nor read its file)
    from ..sim.tuning import protocol_words

    p.add_argument("--chunk", default="4MiB",
                   help="pipelining chunk of the textbook and lecture algorithms and of nvls (default 4MiB); "
                        "NCCL's ring, tree, nvls-tree and collnet pipeline in NCCL's own slices")
    p.add_argument("--figures", choices=["peak", "achievable"], default="achievable",
                   help="link figures: achievable (default: what nccl-tests measure) or peak (the white-paper bound)")
    p.add_argument("--protocol", choices=["auto", "ll", "ll128", "simple"], default="auto",
                   help=protocol_words())
    p.add_argument("--spread", choices=["even", "hash"], default="even",
                   help="tied routes: spread evenly (adaptive routing) or pick one by hash")
    p.add_argument("--pxn", action="store_true",
                   help="PXN: traffic to another system leaves through the NIC on the destination's rail, "
                        "reached over NVLink (default: the NIC closest to the sending GPU)")
    p.add_argument("--no-nvls", action="store_true",
                   help="as NCCL_NVLS_ENABLE=0: NCCL sets up no NVLink SHARP, so auto chooses without nvls and "
                        "nvls-tree, and asking for either is refused")
    p.add_argument("--gpus-per-thread", type=gpus_per_thread_arg, default=1, metavar="N",
                   help="GPUs one thread drives, as nccl-tests -g N: their kernels launch in turn and each call "
                        "pays N-1 more launches (default 1: a process per GPU, as mpirun or torchrun run it)")
    p.add_argument("--reduce-bw", help="reduction speed in GB/s (default: reductions are free)")
    p.add_argument("--root", help="root GPU, for broadcast and reduce only (default: the first GPU)")
    p.add_argument("--server", help="GPU or CPU acting as parameter server, for --algorithm parameter-server only "
                                    "(default: the first GPU)")
