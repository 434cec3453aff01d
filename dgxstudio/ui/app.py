"""Starting the desktop application."""

from __future__ import annotations

import sys

from ..model.topology import Topology


# Qt's xcb platform plugin (X11) cannot load without these system libraries, and then aborts the
# process with a message that does not name them (it names libxcb-cursor0 whichever is missing): the
# xcb libraries of "Qt for X11 Requirements" (https://doc.qt.io/qt-6/linux-requirements.html, its
# platform plugin's table) that PySide6's plugin links (ldd of libQt6XcbQpa.so.6), by the name
# find_library looks them up under, with the Debian/Ubuntu package that holds each. A Debian 12 with
# libxcb-cursor0 but without libxcb-icccm4 and libxcb-keysyms1 aborted so.
XCB_LIBRARIES = {"xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4", "xcb-image": "libxcb-image0",
                 "xcb-keysyms": "libxcb-keysyms1", "xcb-randr": "libxcb-randr0",
                 "xcb-render-util": "libxcb-render-util0", "xcb-render": "libxcb-render0", "xcb-shape": "libxcb-shape0",
                 "xcb-shm": "libxcb-shm0", "xcb-sync": "libxcb-sync1", "xcb-util": "libxcb-util1",
                 "xcb-xfixes": "libxcb-xfixes0", "xcb-xkb": "libxcb-xkb1", "xkbcommon-x11": "libxkbcommon-x11-0",
                 "X11-xcb": "libx11-xcb1"}


def missing_display_libraries(environ=None, plugin: str | None = None) -> list[str]:
    """System packages the X11 platform plugin needs that are not installed (empty when not on X11).

    ``plugin``: the xcb platform plugin's file (xcb_plugin_file). When it loads, every library it
    links is there and none is looked up: find_library runs ``ldconfig -p`` once per library (15
    of them, 41 ms of a start), so they are looked up one by one only when the plugin does not load."""
    import ctypes
    import os

    env = os.environ if environ is None else environ
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return []
    if not platform and (env.get("WAYLAND_DISPLAY") or not env.get("DISPLAY")):
        return []
    if plugin is not None:
        try:
            ctypes.CDLL(plugin)  # Qt loads the same file next; its libraries stay loaded for it
            return []
        except OSError:
            pass
    import ctypes.util

    return [pkg for lib, pkg in XCB_LIBRARIES.items() if ctypes.util.find_library(lib) is None]


def xcb_plugin_file(environ=None) -> str | None:
    """The xcb platform plugin Qt will load: in QT_QPA_PLATFORM_PLUGIN_PATH when that is set, else in
    Qt's plugin folder; None when it is not there (then missing_display_libraries looks up each library)."""
    import os

    from PySide6.QtCore import QLibraryInfo

    env = os.environ if environ is None else environ
    folder = env.get("QT_QPA_PLATFORM_PLUGIN_PATH") or os.path.join(
        QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath), "platforms")
    path = os.path.join(folder, "libqxcb.so")
    return path if os.path.isfile(path) else None


class DisplayLibrariesMissing(RuntimeError):
    pass


def serial_raster_fills(environ=None) -> None:
    """Qt's raster engine hands every fill taller than 96 scanlines (a widget's background, the
    canvas's background, a box's cached picture) to a pool of helper threads, and the GUI thread
    waits for them. For this window's fills the hand-off (waking threads, futexes) costs more GUI
    CPU than the fill itself, and on a busy machine the wait for a helper thread to be scheduled
    comes on top: GB200 NVL72's first paint 15.6-16.3 -> 14.6-14.7 ms of GUI CPU, and its wall time
    from 16.3-18.5 ms down to its CPU time (load 1). QT_NO_GUI_THREADPOOL (read when the pool is
    first needed, so set before the first window) keeps every fill on the GUI thread; a value the
    user set is kept."""
    import os

    env = os.environ if environ is None else environ
    env.setdefault("QT_NO_GUI_THREADPOOL", "1")


def application():
    from PySide6.QtWidgets import QApplication

    serial_raster_fills()
    app = QApplication.instance()
    if app is None:
        missing = missing_display_libraries(plugin=xcb_plugin_file())
        if missing:
            raise DisplayLibrariesMissing(
                f"DGX Studio needs {', '.join(missing)} to open a window on X11: install "
                f"{'it' if len(missing) == 1 else 'them'} (Debian/Ubuntu: "
                f"sudo apt-get install {' '.join(missing)}), or run with QT_QPA_PLATFORM=wayland or offscreen.")
        app = QApplication(sys.argv[:1])
        app.setApplicationName("DGX Studio")
        app.setOrganizationName("DGX Studio")
    return app


SETTLE_AFTER_MS = 300   # the heap is settled this long after the window is shown: after its first frames


def settle_heap(again: bool = False) -> None:
    """Once the window is built and drawn: move every object alive now (Qt wrappers, the catalog, the
    document, pyqtgraph's state) out of the collector's sight. They live as long as the window, and a
    full collection would otherwise walk all of them again and again, stalling the GUI thread for 100 ms
    and more while runs start and stop. Objects that die later are still freed.

    Only the young generations are collected first: a full collection here took 70-145 ms on a DGX
    preset (200 ms on a 512-system cluster) and found nothing after the young one (measured: 0
    unreachable objects in both), so it cost the window's first frame that much for nothing.

    ``again``: a document opened later replaced one settled before, which may have left cycles the
    frozen objects would keep: everything is thawed and collected in full once, then frozen."""
    import gc

    if again:
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()


def before_show() -> None:
    """The young generations collected once the window is built, before it is shown: the objects the
    build made (thousands of widgets' and items' wrappers) waited in them until a collection of the
    middle generation came due, in the second or third frame, and walked them all there: 2-4 ms of
    GUI CPU and 2-38 ms of wall time in GB200 NVL72's frames after the first. Now that frame finds
    the young generations nearly empty; the window is not on screen yet while this runs."""
    import gc

    gc.collect(1)


def show_window(window) -> None:
    """Show the main window (before_show first), then settle the heap (settle_heap) once its first
    frames are on screen, not before them: run_app used to settle between show() and the event loop,
    so the first frame waited for a full collection."""
    from PySide6.QtCore import QTimer

    before_show()
    window.show()
    QTimer.singleShot(SETTLE_AFTER_MS, settle_heap)


def run_app(topology: Topology, path: str | None = None, preset: str | None = None) -> int:
    from .main_window import MainWindow

    import gc

    app = application()
    window = MainWindow(topology, path, preset)
    show_window(window)
    from PySide6.QtCore import QTimer

    from .autosave import offer_recovery

    QTimer.singleShot(0, lambda: offer_recovery(window))  # after a crash: restore unsaved work?
    code = app.exec()
    from .main_window import MIME_CLIP

    data = app.clipboard().mimeData()
    if data is not None and data.hasFormat(MIME_CLIP):
        app.clipboard().clear()  # our copy dies with us; left to the interpreter's exit it can segfault
    # Delete the window while Qt still runs rather than leave it to the interpreter's exit.
    window.deleteLater()
    app.processEvents()
    del window
    gc.collect()
    return code
