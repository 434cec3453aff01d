"""The X11 start looked up its 15 xcb libraries one by one (ctypes.util.find_library, an ``ldconfig -p``
each: 41 ms) on every start. Now it loads Qt's xcb platform plugin first (Qt loads it next anyway) and
looks the libraries up only when the plugin does not load, to name the missing ones."""

import ctypes.util
import os

import pytest


def _looked_up(monkeypatch, absent=()):
    names = []

    def find_library(name):
        names.append(name)
        return None if name in absent else f"lib{name}.so"

    monkeypatch.setattr(ctypes.util, "find_library", find_library)
    return names


def _loadable_plugin():
    """A platform plugin that loads wherever these tests run: the offscreen one they use."""
    from PySide6.QtCore import QLibraryInfo

    path = os.path.join(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath), "platforms", "libqoffscreen.so")
    if not os.path.isfile(path):
        pytest.skip("no libqoffscreen.so in Qt's plugin folder")
    return path


def test_a_plugin_that_loads_needs_no_library_looked_up(monkeypatch):
    from dgxstudio.ui.app import missing_display_libraries

    names = _looked_up(monkeypatch, absent={"xcb-icccm"})
    assert missing_display_libraries({"DISPLAY": ":0"}, plugin=_loadable_plugin()) == []
    assert names == []


def test_a_plugin_that_does_not_load_has_its_missing_libraries_named(monkeypatch, tmp_path):
    from dgxstudio.ui.app import XCB_LIBRARIES, missing_display_libraries

    broken = tmp_path / "libqxcb.so"
    broken.write_bytes(b"not a shared object")
    names = _looked_up(monkeypatch, absent={"xcb-icccm", "xcb-keysyms"})
    assert missing_display_libraries({"DISPLAY": ":0"}, plugin=str(broken)) == ["libxcb-icccm4", "libxcb-keysyms1"]
    assert names == list(XCB_LIBRARIES)
    # off X11 neither the plugin nor the libraries are looked at
    names.clear()
    assert missing_display_libraries({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, plugin=str(broken)) == []
    assert missing_display_libraries({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, plugin=str(broken)) == []
    assert names == []


def test_the_plugin_is_looked_for_where_qt_looks(tmp_path):
    from dgxstudio.ui.app import xcb_plugin_file

    assert xcb_plugin_file({"QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path)}) is None  # not there: look up each library
    (tmp_path / "libqxcb.so").write_bytes(b"")
    assert xcb_plugin_file({"QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path)}) == str(tmp_path / "libqxcb.so")
    default = xcb_plugin_file({})
    assert default is None or default.endswith(os.path.join("plugins", "platforms", "libqxcb.so"))
