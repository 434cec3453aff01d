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
