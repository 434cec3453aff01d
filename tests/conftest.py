"""Test configuration: headless Qt and an empty user config folder, set before anything imports Qt."""

import atexit
import faulthandler
import os
import signal
import shutil
import tempfile

os.environ["QT_QPA_PLATFORM"] = "offscreen"
if "DGXSTUDIO_CONFIG_DIR" not in os.environ:
    # an empty user config folder for the run, removed at the end (each run left one in /tmp)
    _config = tempfile.mkdtemp(prefix="dgxstudio-test-config-")
    os.environ["DGXSTUDIO_CONFIG_DIR"] = _config
    atexit.register(shutil.rmtree, _config, True)

# CI stops a run that hangs with SIGTERM (timeout): every thread's stack goes to the log first.
faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)

import pytest  # noqa: E402

from dgxstudio.model.catalog import load_catalog, set_default_catalog  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _builtin_catalog():
    """Every test sees the built-in catalog, whatever the machine's user catalog says."""
    set_default_catalog(load_catalog(include_user=False))
    yield
    set_default_catalog(None)


@pytest.fixture
def catalog():
    return load_catalog(include_user=False)


@pytest.fixture
def events_only(monkeypatch):
    """Hierarchical all-reduce run by the engine's events (and its steady-state skip), not by the
    chain stages' recurrence (sim/chain_stages.py): for tests of that skip, whose case it is."""
    from dgxstudio.sim import chain_stages

    monkeypatch.setattr(chain_stages, "ENABLED", False)


@pytest.fixture
def eight_mib_nvls_tree_pieces(monkeypatch):
    """NVLS-tree pieces of 8 MiB (NCCL's 64 KiB chunk x 16 channels x 8 heads, its rule from 4 systems
    on) also on two systems, whose own 128 KiB chunk halves the pieces: for the engine's tests that
    were sized on those piece counts (what they check is the skip or the splice, not the piece)."""
    from dgxstudio.sim import tuning
    monkeypatch.setattr(tuning, "nvls_tree_chunk_bytes", lambda *a: 65536)
