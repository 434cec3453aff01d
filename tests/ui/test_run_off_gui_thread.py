"""Issue 16: starting a run never blocks the GUI thread. The frozen copy a run reads and the
provenance hash its result carries (about 3 s on a 59 MB cluster) are made off the GUI thread, and
the result still names the document exactly as it was when Run was pressed."""

import threading

from PySide6.QtCore import Qt

from dgxstudio.model.commands import SetAttribute
from dgxstudio.model.topology import Topology
from dgxstudio.report import provenance

from .test_simulation_gui import configure


def test_run_after_an_edit_copies_and_hashes_off_the_gui_thread(make_window, qtbot, monkeypatch):
    w = make_window("dgx-a100")
    topo = w.document.topology
    link = next(lk for lk in topo.links.values() if lk.type.lower().startswith("nvlink"))
    w.document.push(SetAttribute(link.id, "latency_s", 1e-6))  # an edit: no copy of this state yet
    at_run = provenance.content_hash(topo)
    calls, release = [], threading.Event()
    real_copy, real_hash = Topology.copy, provenance.content_hash

    def held_copy(self):
        calls.append(("copy", threading.current_thread()))
        release.wait(20)  # held until the test has edited again: the GUI thread must not be waiting here
        return real_copy(self)

    def counted_hash(t):
        calls.append(("hash", threading.current_thread()))
        return real_hash(t)

    monkeypatch.setattr(Topology, "copy", held_copy)
    monkeypatch.setattr(provenance, "content_hash", counted_hash)
    p = configure(w, size="16MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
        # the click is back while the copy is still held, so nothing waited for it on this thread
        assert p.runner.running and p.run_button.text() == "Restart"
        qtbot.waitUntil(lambda: bool(calls), timeout=5000)
        w.document.push(SetAttribute(link.id, "latency_s", 3e-6))  # edited in place while being copied
        release.set()
    request, result = blocker.args
    assert [k for k, _ in calls] == ["copy", "hash"]
    assert all(t is not threading.main_thread() for _, t in calls)
    # the run and its provenance are the document as it was at the click, not after the later edit
    assert result.document["sha256"] == request.document["sha256"] == at_run
    assert at_run != real_hash(topo)
    # pressing Run on the new state copies once more, again off the GUI thread, with the new hash
    calls.clear()
    with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert [k for k, _ in calls] == ["copy", "hash"] and all(t is not threading.main_thread() for _, t in calls)
    assert blocker.args[1].document["sha256"] == real_hash(topo)
    # and once more on the unchanged state: nothing copied or hashed again
    calls.clear()
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    assert calls == []


def test_cancel_while_the_copy_is_being_made(make_window, qtbot, monkeypatch):
    w = make_window("dgx1-v100")
    w.document.push(SetAttribute(next(iter(w.document.topology.links)), "latency_s", 1e-6))
    release = threading.Event()
    real_copy = Topology.copy
    monkeypatch.setattr(Topology, "copy", lambda self: release.wait(20) and real_copy(self))
    p = configure(w, size="16MiB")
    qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(p.runner.cancelled, timeout=3000):  # the job waits for the copy cancellably
        qtbot.mouseClick(p.cancel_button, Qt.MouseButton.LeftButton)
    assert p.state.text() == "Cancelled"
    release.set()
    with qtbot.waitSignal(p.resultReady, timeout=60000):  # the copy made meanwhile serves the next run
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)


def test_a_large_design_is_checked_off_the_gui_thread_after_an_edit(make_window, qtbot, monkeypatch):
    """Above DEFER_ABOVE devices (seconds of checks on a 59 MB cluster) the findings are worked out on a
    thread of their own; a check overtaken by an edit is not shown."""
    import dgxstudio.ui.findings as findings_mod

    w = make_window("dgx-a100")
    monkeypatch.setattr(findings_mod, "DEFER_ABOVE", 0)
    threads, real = [], findings_mod.validate
    monkeypatch.setattr(findings_mod, "validate", lambda t: threads.append(threading.current_thread()) or real(t))
    topo = w.document.topology
    link = next(iter(topo.links.values()))
    w.document.push(SetAttribute(link.id, "count", 999))  # far more ports than the part has
    qtbot.waitUntil(lambda: any("port" in w.findings.item(i).text() and link.count == 999
                                for i in range(w.findings.count())), timeout=10000)
    assert threads and all(t is not threading.main_thread() for t in threads)
    w.document.undo_stack.undo()
    qtbot.waitUntil(lambda: not w.findings._checking and not any("999" in w.findings.item(i).text()
                                                                 for i in range(w.findings.count())), timeout=10000)
