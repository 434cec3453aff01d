"""Issue 16, failure 10: autosave to a recovery file while modified, restore after a crash, a clean
close removes it."""

import os
import subprocess
import sys

from PySide6.QtWidgets import QMessageBox

from dgxstudio.model import fileio
from dgxstudio.model.commands import SetAttribute
from dgxstudio.ui import autosave

from .conftest import answer_next_dialog


def _edit(w):
    w.document.push(SetAttribute("gpu0", "name", "edited GPU"))


def test_autosave_writes_while_modified_and_a_clean_close_removes_it(make_window, qtbot, tmp_path, monkeypatch):
    w = make_window("dgx1-v100", path=str(tmp_path / "mine.dgxs"))
    saver = w.autosaver
    assert not saver.tick() and not saver.file.exists()   # nothing unsaved, nothing written
    _edit(w)
    with qtbot.waitSignal(saver.saved, timeout=10000):
        assert saver.tick()
    back = fileio.load(saver.file)
    assert back.devices["gpu0"].name == "edited GPU"
    assert saver.file.with_suffix(".json").exists()
    w.document.undo_stack.undo()                           # back at the saved state: copy removed
    assert not saver.file.exists()
    _edit(w)
    with qtbot.waitSignal(saver.saved, timeout=10000):
        saver.tick()
    w.document.undo_stack.setClean()
    assert w.close()
    assert not saver.file.exists() and not saver.file.with_suffix(".json").exists()


def test_a_crashed_session_is_offered_and_restored_marked_modified(make_window, qtbot, tmp_path):
    # A session that died: a recovery copy under a pid that no longer runs.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    folder = autosave.recovery_dir()
    folder.mkdir(parents=True, exist_ok=True)
    from dgxstudio.model.presets import load_preset
    topo = load_preset("dgx1-p100")
    topo.name = "crashed work"
    fileio.save(topo, folder / f"{pid}.dgxs")
    (folder / f"{pid}.json").write_text('{"path": "%s", "saved_at": 1.0, "name": "crashed work"}'
                                        % (tmp_path / "orig.dgxs"))
    found = autosave.find_recoverable()
    assert [r.file.name for r in found] == [f"{pid}.dgxs"]
    w = make_window("dgx1-v100")
    answer_next_dialog(QMessageBox.StandardButton.Yes)
    assert autosave.offer_recovery(w)
    assert w.document.topology.name == "crashed work"
    assert w.document.path == str(tmp_path / "orig.dgxs")
    assert w.document.dirty
    assert autosave.find_recoverable() == []


def test_live_sessions_are_not_offered(tmp_path):
    folder = tmp_path / "rec"
    folder.mkdir()
    (folder / f"{os.getpid()}.dgxs").write_text("{}")
    assert autosave.find_recoverable(folder) == []


def test_no_new_copy_while_nothing_changed(make_window, qtbot):
    w = make_window("dgx1-v100")
    saver = w.autosaver
    _edit(w)
    with qtbot.waitSignal(saver.saved, timeout=10000):
        assert saver.tick()
    assert not saver.tick()          # same state: the copy on disk is current
    w.document.push(SetAttribute("gpu1", "name", "another edit"))
    with qtbot.waitSignal(saver.saved, timeout=10000):
        assert saver.tick()
    w.document.undo_stack.setClean()


def test_autosave_makes_no_deep_copy_on_the_gui_thread(make_window, qtbot, monkeypatch):
    """The GUI thread's part of an autosave is noting the state: the snapshot (pointer copies) and
    everything that walks the objects (encoding, checking) run on the writer thread, and loading the
    copy again runs in a process of its own."""
    import copy
    import threading

    from dgxstudio.model import topology as topology_module

    w = make_window("dgx-h100")
    saver = w.autosaver
    on_gui = []
    real_deepcopy, real_copy = copy.deepcopy, topology_module.Topology.copy
    real_snapshot, real_encoded = topology_module.Topology.loose_snapshot, fileio.encoded_text
    loaded = []
    real_from_dict = fileio.topology_from_dict

    def watch(name, real):
        def call(*args, **kwargs):
            if threading.current_thread() is threading.main_thread():
                on_gui.append(name)
            return real(*args, **kwargs)
        return call
    monkeypatch.setattr(topology_module.copy, "deepcopy", watch("deepcopy", real_deepcopy))
    monkeypatch.setattr(topology_module.Topology, "copy", watch("Topology.copy", real_copy))
    monkeypatch.setattr(topology_module.Topology, "loose_snapshot", watch("loose_snapshot", real_snapshot))
    monkeypatch.setattr(autosave.fileio, "encoded_text", watch("encoded_text", real_encoded))
    monkeypatch.setattr(fileio, "topology_from_dict", lambda *a, **k: loaded.append(1) or real_from_dict(*a, **k))
    _edit(w)
    on_gui.clear()  # (the edit's own undo command may copy what it changes)
    with qtbot.waitSignal(saver.saved, timeout=10000):
        assert saver.tick()
    assert on_gui == []
    assert loaded == []   # proven by a child process: this one never parsed the copy
    assert fileio.load(saver.file).devices["gpu0"].name == "edited GPU"
    w.document.undo_stack.setClean()


def test_an_edit_while_the_copy_is_encoded_is_not_mixed_in_and_the_copy_is_taken_again(make_window, qtbot,
                                                                                      monkeypatch):
    import threading

    w = make_window("dgx1-v100")
    saver = w.autosaver
    saver._retry.setInterval(50)
    release, encoding = threading.Event(), threading.Event()
    real = fileio.encoded_text

    def slow(topo, *rest):
        encoding.set()
        release.wait(10)  # the writer is reading the shared objects while the GUI thread edits
        return real(topo, *rest)
    monkeypatch.setattr(autosave.fileio, "encoded_text", slow)
    _edit(w)
    assert saver.tick()
    assert encoding.wait(5)
    w.document.push(SetAttribute("gpu1", "name", "edited meanwhile"))
    release.set()
    with qtbot.waitSignal(saver.saved, timeout=10000):  # the first text is dropped, the retry is written
        pass
    back = fileio.load(saver.file)
    assert back.devices["gpu0"].name == "edited GPU" and back.devices["gpu1"].name == "edited meanwhile"
    w.document.undo_stack.setClean()


def test_an_autosaved_copy_restores_after_a_crash(make_window, qtbot, tmp_path):
    """What autosave wrote is what the next start restores (the pid is renamed to a dead one)."""
    w = make_window("dgx-a100", path=str(tmp_path / "work.dgxs"))
    saver = w.autosaver
    _edit(w)
    w.document.push(SetAttribute("gpu3", "name", "second edit"))
    with qtbot.waitSignal(saver.saved, timeout=10000):
        assert saver.tick()
    expected = fileio.topology_to_dict(w.document.topology)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    os.replace(saver.file, saver.folder / f"{pid}.dgxs")
    os.replace(saver.file.with_suffix(".json"), saver.folder / f"{pid}.json")
    w.document.undo_stack.setClean()
    other = make_window("dgx1-v100")
    answer_next_dialog(QMessageBox.StandardButton.Yes)
    assert autosave.offer_recovery(other)
    assert fileio.topology_to_dict(other.document.topology) == expected
    assert other.document.path == str(tmp_path / "work.dgxs") and other.document.dirty
    other.document.undo_stack.setClean()
