"""``dgxstudio simulate`` run as a program ends its process without freeing what it built, its
output complete and its exit status kept; called in-process (``main(argv)``) it returns as before."""

import json
import os
import subprocess
import sys

# an exit handler shows whether the interpreter's ordinary shutdown ran
_PROGRAM = ("import atexit, sys; atexit.register(lambda: print('ordinary shutdown', file=sys.stderr)); "
            "from dgxstudio.cli import main; sys.argv = ['dgxstudio', *sys.argv[1:]]; {call}")


def _run(call: str, *args: str) -> subprocess.CompletedProcess:
    # output into a pipe buffered as it usually is, so what is not written out before the end is lost
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", _PROGRAM.format(call=call), *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_simulate_as_a_program_ends_at_once_with_its_output_written():
    args = ("simulate", "--preset", "dgx1-v100", "--algorithm", "ring", "--size", "1MiB", "--json")
    done = _run("sys.exit(main())", *args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["algorithm"] == "ring"  # written out before the process ended (a pipe)
    assert "ordinary shutdown" not in done.stderr
    text = _run("sys.exit(main())", *args[:-1])  # (printed line by line into the pipe's buffer)
    assert text.returncode == 0 and "busiest links" in text.stdout and "ordinary shutdown" not in text.stderr
    inside = _run("code = main(sys.argv[1:]); print('returned', code)", *args)
    assert inside.returncode == 0 and "returned 0" in inside.stdout and "ordinary shutdown" in inside.stderr
    assert json.loads(inside.stdout.rsplit("returned", 1)[0]) == {**json.loads(done.stdout),
                                                                    "wall_s": json.loads(inside.stdout.rsplit(
                                                                        "returned", 1)[0])["wall_s"]}


def test_a_failing_simulation_keeps_its_exit_status_and_message():
    done = _run("sys.exit(main())", "simulate", "--preset", "dgx1-v100", "--algorithm", "ring", "--size", "-1")
    assert done.returncode == 2 and "error" in done.stderr and "ordinary shutdown" in done.stderr


def test_a_program_ends_with_the_collector_still_paused():
    # resumed before the end, the collector's first pass walks everything the run built (0.35 s of
    # CPU after a 16,384-GPU parameter server) only for the process to end
    watch = ("import gc, dgxstudio.heap as heap; resume = heap._resume; heap._resume = lambda: (resume(), "
             "gc.isenabled() and print('collector resumed', file=sys.stderr)); ")
    args = ("simulate", "--preset", "dgx1-v100", "--algorithm", "ring", "--size", "1MiB", "--json")
    done = _run(watch + "sys.exit(main())", *args)
    assert done.returncode == 0 and json.loads(done.stdout)["algorithm"] == "ring", done.stderr
    assert "collector resumed" not in done.stderr and "ordinary shutdown" not in done.stderr
    inside = _run(watch + "code = main(sys.argv[1:]); print('returned', code)", *args)
    assert "returned 0" in inside.stdout and "collector resumed" in inside.stderr
