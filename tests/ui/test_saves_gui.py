"""Issue 16, failures 3 and 7 in the window: a save or export that fails says why, keeps the old file
and keeps the document marked modified."""

import os

from PySide6.QtWidgets import QMessageBox

from dgxstudio.model import fileio
from dgxstudio.model.commands import SetAttribute

from .conftest import answer_next_dialog


def test_a_save_that_cannot_be_reopened_is_refused_and_the_document_stays_modified(make_window, tmp_path):
    path = tmp_path / "work.dgxs"
    w = make_window("dgx1-v100")
    assert w._save_to(str(path))
    before = path.read_bytes()
    w.document.topology.devices["gpu0"].properties["x"] = float("inf")  # what a bad paste could carry
    w.document.push(SetAttribute("gpu0", "name", "lone \udc80 surrogate"))
    assert w.document.dirty
    seen = []
    answer_next_dialog(QMessageBox.StandardButton.Ok, seen)
    assert not w.save()
    assert seen and "The file on disk was not changed" in seen[0]
    assert w.document.dirty and "Not saved" in w.status.text()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["work.dgxs"]


def test_canvas_to_an_unwritable_place_is_an_error_not_a_success(make_window, tmp_path):
    w = make_window("dgx1-v100")
    folder = tmp_path / "canvas.png"
    folder.mkdir()
    seen = []
    answer_next_dialog(QMessageBox.StandardButton.Ok, seen)
    assert not w.export_canvas(str(folder))
    assert seen and "written" not in w.status.text().replace("not written", "")
    good = tmp_path / "ok.png"
    assert w.export_canvas(str(good))
    data = good.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    from PySide6.QtGui import QImage
    img = QImage(str(good))
    colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
    assert len(colours) > 2, "the PNG is blank"


def test_pdf_report_to_an_unwritable_path_fails(make_window, tmp_path):
    w = make_window("dgx1-v100")
    target = tmp_path / "missing-folder" / "r.pdf"
    seen = []
    answer_next_dialog(QMessageBox.StandardButton.Ok, seen)
    assert not w.export_report(str(target))
    assert seen and not target.exists()


def test_inspector_refuses_a_name_no_file_can_hold(make_window, qtbot):
    from PySide6.QtWidgets import QApplication

    w = make_window("dgx1-v100")
    w.scene.select_ids(["gpu1"])
    QApplication.processEvents()
    field = w.inspector.fields["name"]
    field.setText("GPU\x00one")
    field.editingFinished.emit()
    assert w.document.topology.devices["gpu1"].name != "GPU\x00one"
    assert not w.document.dirty and "control character" in field.toolTip()


def test_pasting_a_clip_with_infinite_numbers_changes_nothing(make_window, qtbot):
    from PySide6.QtCore import QMimeData
    from PySide6.QtWidgets import QApplication

    from dgxstudio.ui.main_window import MIME_CLIP

    w = make_window("dgx1-v100")
    mime = QMimeData()
    mime.setData(MIME_CLIP, b'{"format": "dgxstudio-clip", "devices": [{"id": "g", "kind": "gpu", '
                            b'"part": "tesla-v100-sxm2", "properties": {"x": 1e400}}], "links": []}')
    QApplication.clipboard().setMimeData(mime)
    before = fileio.dumps(w.document.topology)
    w.paste()
    assert fileio.dumps(w.document.topology) == before and not w.document.dirty
    QApplication.clipboard().clear()
