"""The recovery copy is proven to open again by a process of its own (issue 17: the proof in this process
held the interpreter lock for most of a second at a time on a 30 MB design, every minute, and the GUI
thread's frames waited); a copy that does not open is never written, and going back to the saved state
while a copy is being proven drops it."""

import os
import sys

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dgxstudio.model import fileio, reopen
from dgxstudio.model.commands import SetAttribute
from dgxstudio.ui import autosave


def _edit(w, name="edited GPU"):
    w.document.push(SetAttribute("gpu0", "name", name))


def _leftovers(saver):
    return sorted(n for n in os.listdir(saver.folder) if n.endswith(".tmp"))


def test_a_copy_that_does_not_open_is_never_written_and_the_last_one_stays(make_window, qtbot, monkeypatch):
    w = make_window("dgx1-v100")
    saver = w.autosaver
    assert saver.prove_in_child
    _edit(w)
    with qtbot.waitSignal(saver.saved, timeout=15000):
        assert saver.tick()
    good = saver.file.read_bytes()
    real = fileio.encoded_text
    parsed_here = []
    real_from_dict = fileio.topology_from_dict
    monkeypatch.setattr(fileio, "topology_from_dict", lambda *a, **k: parsed_here.append(1) or real_from_dict(*a, **k))

    def broken(topo, *rest):   # an encoder bug: a link to a device that is not in the file
        text = real(topo, *rest)
        return text.replace('"b": "gpu1"', '"b": "no-such-device"', 1)
    monkeypatch.setattr(autosave.fileio, "encoded_text", broken)
    _edit(w, "edited again")
    with qtbot.waitSignal(saver.failed, timeout=15000) as failed:
        assert saver.tick()
    assert "cannot be saved" in failed.args[0] and "no-such-device" in failed.args[0]
    assert "links[" in failed.args[0]                 # the JSON path the loader names
    assert saver.file.read_bytes() == good            # the last good copy is untouched
    assert _leftovers(saver) == []
    assert parsed_here == []                          # the proof ran in the child process
    w.document.undo_stack.setClean()


def test_without_a_child_the_copy_is_proven_here(make_window, qtbot, monkeypatch):
    monkeypatch.setattr(reopen, "_child_command", lambda path: [sys.executable, "-c", "import sys; sys.exit(9)"])
    w = make_window("dgx1-v100")
    saver = w.autosaver
    parsed_here = []
    real_from_dict = fileio.topology_from_dict
    monkeypatch.setattr(fileio, "topology_from_dict", lambda *a, **k: parsed_here.append(1) or real_from_dict(*a, **k))
    _edit(w)
    with qtbot.waitSignal(saver.saved, timeout=15000):
        assert saver.tick()
    assert parsed_here == [1]
    monkeypatch.setattr(fileio, "topology_from_dict", real_from_dict)
    assert fileio.load(saver.file).devices["gpu0"].name == "edited GPU"
    w.document.undo_stack.setClean()


def test_undo_back_to_clean_while_the_copy_is_proven_drops_it(make_window, qtbot, monkeypatch, tmp_path):
    started = tmp_path / "proof-started"
    slow = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(60)"
    monkeypatch.setattr(reopen, "_child_command", lambda path: [sys.executable, "-c", slow])
    w = make_window("dgx1-v100")
    saver = w.autosaver
    _edit(w)
    assert saver.tick()
    qtbot.waitUntil(started.exists, timeout=15000)    # the copy is written beside and being proven
    assert _leftovers(saver) and not saver.file.exists()
    QTest.keyClick(w.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)   # back to the saved state
    assert w.document.undo_stack.isClean()
    assert saver.wait(5)                              # the child was stopped: no minute-long wait
    qtbot.wait(100)
    assert not saver.file.exists() and not saver.file.with_suffix(".json").exists()
    assert _leftovers(saver) == []


def test_prove_reopens_names_the_fault(tmp_path):
    good = tmp_path / "good.dgxs"
    from dgxstudio.model.presets import load_preset

    fileio.save(load_preset("dgx-a100"), good)
    reopen.prove_reopens(good)
    bad = tmp_path / "bad.dgxs"
    bad.write_text(good.read_text().replace('"kind": "gpu"', '"kind": "toaster"', 1))
    try:
        reopen.prove_reopens(bad)
    except fileio.TopologyFileError as exc:
        assert exc.path.startswith("devices[") and "toaster" in str(exc)
    else:
        raise AssertionError("a file that does not load was proven")
