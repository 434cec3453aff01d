"""The findings check after an edit takes its snapshot on its own thread (issue 17: a shallow snapshot on
the GUI thread cost 40-140 ms of a frame on the 2,048-system cluster after every edit), and never shows
what a half-made edit read."""

import threading

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dgxstudio.model import topology as topology_module
from dgxstudio.model.validation import validate
from dgxstudio.ui import findings as findings_mod


def _texts(w):
    return [w.findings.item(i).text() for i in range(w.findings.count())]


def _expected(w):
    return [f"{'Error' if f.severity == 'error' else 'Warning'}: {f.message}" for f in validate(w.document.topology)] \
        or ["No problems found"]


def _delete(w, qtbot, device_id):
    w.select_and_center([device_id])
    w.scene.select_ids([device_id])
    QTest.keyClick(w.view, Qt.Key.Key_Delete)


def _settled(w):
    f = w.findings
    return f._checking is None and not f._timer.isActive() and not f._idle.isActive()


def test_the_snapshot_after_an_edit_is_taken_off_the_gui_thread(make_window, qtbot, monkeypatch):
    monkeypatch.setattr(findings_mod, "DEFER_ABOVE", 0)       # the preset is checked as a large design is
    w = make_window("dgx-h100")
    qtbot.waitUntil(lambda: _settled(w) and _texts(w) != ["Checking the design…"], timeout=15_000)
    tables_on = []
    real = topology_module.Topology._shallow_tables

    def watch(self, other):
        tables_on.append(threading.current_thread().name)
        return real(self, other)
    monkeypatch.setattr(topology_module.Topology, "_shallow_tables", watch)
    topo = w.document.topology
    nic = next(d.id for d in topo.devices.values() if d.kind == "nic")
    _delete(w, qtbot, nic)
    assert nic not in topo.devices
    qtbot.waitUntil(lambda: bool(tables_on) and _settled(w), timeout=15_000)
    assert tables_on == ["dgxstudio-findings"]
    assert _texts(w) == _expected(w)
    # the snapshot the check took is the one a Run pressed now shares: no second one
    topo.shallow_snapshot()
    assert tables_on == ["dgxstudio-findings"]
    QTest.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)   # undo
    assert nic in topo.devices
    qtbot.waitUntil(lambda: len(tables_on) == 2 and _settled(w), timeout=15_000)
    assert tables_on == ["dgxstudio-findings"] * 2
    assert _texts(w) == _expected(w)


def test_findings_of_a_state_that_moved_on_are_never_shown(make_window, qtbot, monkeypatch):
    monkeypatch.setattr(findings_mod, "DEFER_ABOVE", 0)
    w = make_window("dgx-h100")
    qtbot.waitUntil(lambda: _settled(w) and _texts(w) != ["Checking the design…"], timeout=15_000)
    topo = w.document.topology
    gpus = [d.id for d in topo.devices.values() if d.kind == "gpu"]
    taking, release = threading.Event(), threading.Event()
    real = topology_module.Topology.loose_snapshot
    first = []

    def slow(self):
        if not first:      # the first check's thread holds on while the user edits again
            first.append(1)
            taking.set()
            release.wait(10)
        return real(self)
    monkeypatch.setattr(topology_module.Topology, "loose_snapshot", slow)
    shown = []
    real_show = w.findings._show
    monkeypatch.setattr(w.findings, "_show", lambda found: shown.append(list(found)) or real_show(found))
    _delete(w, qtbot, gpus[0])
    qtbot.waitUntil(taking.is_set, timeout=5000)
    _delete(w, qtbot, gpus[1])       # a second edit while the first check reads the document
    release.set()
    qtbot.waitUntil(lambda: _settled(w) and bool(shown), timeout=15_000)
    qtbot.wait(300)
    assert len(shown) == 1           # only the check of the state after both edits
    assert [f.message for f in shown[0]] == [f.message for f in validate(topo)]
    assert _texts(w) == _expected(w)
