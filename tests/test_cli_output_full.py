"""Output that cannot be written (stdout on a full disk) is the user's disk, not a bug: it was
"internal error: OSError: [Errno 28] No space left on device ...; please report it", exit 3."""

import errno
import subprocess
import sys

import pytest

from dgxstudio.cli import main


class _FullDisk:
    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self):
        pass


def test_a_full_disk_on_stdout_is_an_unusable_request_not_an_internal_error(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    code = main(["info", "--preset", "dgx-h100"])
    err = capsys.readouterr().err
    assert code == 2
    assert "dgxstudio: error: cannot write the output: No space left on device" in err and "internal error" not in err


def test_an_error_reading_a_file_is_still_worded_where_it_happens(capsys, tmp_path):
    code = main(["info", str(tmp_path / "missing.dgxs")])
    assert code == 2 and "no such file" in capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/full is Linux's")
def test_simulate_to_dev_full_exits_2():
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", "import sys; from dgxstudio.cli import main; sys.exit(main())",
                               "simulate", "--preset", "dgx-h100", "--size", "1MiB"], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2 and "cannot write the output: No space left on device" in done.stderr
