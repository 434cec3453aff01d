"""The main window's file handling: new, open, save, recent files, imports and exports."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox

from ..model import fileio
from ..model.presets import load_preset
from ..model.topology import Topology
from .settings import MAX_RECENT, settings

# A document opened after start-up with more devices than this is settled (app.settle_heap) once drawn:
# left to the collector, a 512-system cluster's objects made the first zoom that opened systems pay a
# full collection (about 150 ms); a small one's is not worth a full collection of its own.
SETTLE_ABOVE = 5_000

FILE_FILTER = f"DGX Studio topology (*{fileio.FILE_EXTENSION});;All files (*)"


def with_extension(path: str, ext: str | None) -> str:
    """The format chosen in a save dialog decides the extension: ``plan`` with PDF chosen is ``plan.pdf``."""
    if not ext or path.lower().endswith(ext):
        return path
    root, current = os.path.splitext(path)
    return (root if current.lower() in (".html", ".htm", ".pdf") else path) + ext


class FileActions:
    """Mixed into MainWindow: everything that reads or writes files."""

    def recent_files(self) -> list[str]:
        value = settings().value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in (value or []) if isinstance(v, str)]

    def _remember(self, path: str) -> None:
        path = os.path.abspath(path)
        recent = [p for p in self.recent_files() if p != path]
        settings().setValue("recent", [path, *recent][:MAX_RECENT])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for p in self.recent_files():
            action = self.recent_menu.addAction(p)
            action.triggered.connect(lambda _c=False, path=p: self.open_path(path))
        self.recent_menu.setEnabled(bool(self.recent_files()))

    # ---- files ------------------------------------------------------------------------------------
    def error(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("errorBox")
        box.exec()

    def maybe_save(self) -> bool:
        """Ask about unsaved changes; False means the user cancelled."""
        if not self.document.dirty:
            return True
        doc = self.document   # named as the title bar names it: a preset's copy is not "Untitled"
        where = doc.display_name if doc.path else (f"The {self.preset} preset" if self.preset else "Untitled")
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"{where} ({doc.topology.name}) has unsaved changes. Save them?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("unsavedBox")
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _replace(self, topology: Topology, path: str | None, preset: str | None = None) -> None:
        self.preset = preset
        self.document.replace(topology, path)
        self.palette.populate(topology.catalog)
        QTimer.singleShot(0, self.view.fit)
        if len(topology.devices) > SETTLE_ABOVE:   # as at start-up (app.show_window), once it is drawn
            from .app import SETTLE_AFTER_MS, settle_heap

            QTimer.singleShot(SETTLE_AFTER_MS, lambda: settle_heap(again=True))

    def new_document(self) -> None:
        if self.maybe_save():
            self._replace(Topology("Untitled"), None)
            self.show_status("New empty design")   # (not the last design's message: a refusal naming its devices)

    def open_preset(self, name: str) -> None:
        if self.maybe_save():
            self._replace(load_preset(name), None, name)
            self.show_status(f"Opened the {name} preset ({self.document.topology.name})")

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open topology", "", FILE_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> bool:
        """Open a file; a file that cannot be read leaves the current document exactly as it was."""
        if not self.maybe_save():
            return False
        try:
            topo = fileio.load(path)
        except fileio.TopologyFileError as exc:
            self.error("Cannot open file", str(exc))
            self.show_status(f"Not opened: {exc}")
            return False
        self._replace(topo, path)
        self._remember(path)
        self.show_status(f"Opened {path}")
        return True

    def save(self) -> bool:
        if not self.document.path:
            return self.save_as()
        return self._save_to(self.document.path)

    def save_as(self) -> bool:
        suggested = self.document.path or f"{self.document.topology.name}{fileio.FILE_EXTENSION}"
        path, _ = QFileDialog.getSaveFileName(self, "Save topology", suggested, FILE_FILTER)
        if not path:
            return False
        if not os.path.splitext(path)[1]:
            path += fileio.FILE_EXTENSION
        return self._save_to(path)

    def _save_to(self, path: str) -> bool:
        try:
            self.document.save(path)
        except (OSError, ValueError) as exc:  # ValueError: TopologyFileError, content no file can hold
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.error("Cannot save", f"{path}: {detail}\nThe file on disk was not changed.")
            self.show_status(f"Not saved: {detail}")
            return False
        self.preset = None
        self._remember(path)
        self._update_title()
        self.show_status(f"Saved {path}")
        return True

    def closeEvent(self, event) -> None:
        if self.maybe_save():
            self.replayer.pause()
            self.sim_panel.runner.shutdown()
            self.autosaver.close()  # a clean close: no recovery copy to offer
            self._save_settings()
            event.accept()
        else:
            event.ignore()

    # ---- exports and imports ----------------------------------------------------------------------
    def export_dialog(self) -> None:
        from ..report.exports import EXPORT_FORMATS

        filters = [f"{label} (*{ext})" for label, ext in EXPORT_FORMATS.values()]
        path, chosen = QFileDialog.getSaveFileName(self, "Export topology", self.document.topology.name, ";;".join(filters))
        if path:
            fmt = list(EXPORT_FORMATS)[filters.index(chosen)] if chosen in filters else "native"
            self.export_topology(fmt, path)

    def export_topology(self, fmt: str, path: str, system: str | None = None) -> bool:
        from ..report.exports import write_export
        from ..report.formats import ExportError
        from ..report.nccl_xml import SystemNeeded

        selected = [g for g in self.scene.selected_ids() if g in self.document.topology.groups]
        try:
            write_export(self.document.topology, fmt, path, system or (selected[0] if selected else None))
        except SystemNeeded as exc:   # (the system exported is the one selected on the canvas)
            self.error("Cannot export", f"{fmt}: {exc}: select it on the canvas (click its frame), then export again")
            return False
        except (ExportError, OSError) as exc:
            self.error("Cannot export", f"{fmt}: {exc}")
            return False
        self.show_status(f"Exported {path}")
        return True

    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import NCCL topology XML", "", "NCCL topology (*.xml);;All files (*)")
        if path:
            self.import_nccl(path)

    def import_nccl(self, path: str) -> bool:
        from ..report.nccl_xml import NcclXmlError, from_nccl_xml

        if not self.maybe_save():
            return False
        try:
            with open(path, encoding="utf-8") as fh:
                topo, warnings = from_nccl_xml(fh.read(fileio.MAX_FILE_BYTES), name=os.path.basename(path))
        except (OSError, ValueError, NcclXmlError) as exc:  # ValueError: decoding, the shared file rules
            self.error("Cannot import", f"{path}: {exc}")
            return False
        self._replace(topo, None)
        self.auto_layout()  # an undoable step, so the unsaved import is marked as changed
        self.show_status(f"Imported {path}" + (f" — {len(warnings)} warning(s): " + "; ".join(warnings) if warnings else ""))
        return True

    def report_dialog(self) -> None:
        filters = {"PDF report (*.pdf)": ".pdf", "HTML report (*.html)": ".html"}
        path, chosen = QFileDialog.getSaveFileName(self, "Export report", f"{self.document.topology.name} report.pdf",
                                                   ";;".join(filters))
        if path:
            self.export_report(with_extension(path, filters.get(chosen)))

    def export_report(self, path: str) -> bool:
        from ..report.html import ReportData, write_report

        topo = self.document.topology
        gpus = [g.id for g in topo.gpus()]
        if not gpus:
            self.error("Cannot export a report", "The topology has no GPUs.")
            return False
        analysis = self.analyze_in_background(gpus, "the report")
        if analysis is None:
            self.show_status("Report not written: the analysis was cancelled")
            return False
        data = ReportData(topo, analysis, list(self.session["runs"]), list(self.session["sweeps"]),
                          list(self.session["pipelines"]), trainings=list(self.session["trainings"]))
        try:
            write_report(data, path)
        except OSError as exc:
            self.error("Cannot export the report", f"{path}: {exc.strerror or exc}")
            return False
        self.show_status(f"Report written to {path} (results beside it as .json and .csv)")
        return True

    def analyze_in_background(self, gpus: list[str], purpose: str) -> dict | None:
        """``analyze`` of the document on a worker thread, with a progress dialog and Cancel; the window
        keeps painting meanwhile. Returns None when cancelled. A large cluster's analysis takes minutes."""
        import threading

        from PySide6.QtCore import QEventLoop
        from PySide6.QtWidgets import QProgressDialog

        from ..analysis.summary import analyze
        from ..cancel import Cancelled, cancellable
        from ..heap import release_later

        # No deep copy on the GUI thread (8 s on a 59 MB cluster): a Run's frozen copy of this state if
        # there is one, else a shallow snapshot sharing the objects, which no edit can reach while the
        # window-modal dialog is up; the result is used only if the document did not move meanwhile.
        live = self.document.topology
        key = live.state_key()
        topo = live.current_frozen_copy() or live.shallow_snapshot()
        stop = threading.Event()
        state: dict = {"fraction": 0.0, "step": "bandwidth"}

        def work() -> None:
            try:
                with cancellable(stop):
                    state["result"] = analyze(topo, gpus, lambda f, step: state.update(fraction=f, step=step),
                                              stop.is_set)
            except Cancelled as exc:
                release_later(exc)  # its frames hold what the analysis built: freed elsewhere, this thread ends now
            except Exception as exc:  # noqa: BLE001 - raised again on the GUI thread
                state["error"] = exc

        worker = threading.Thread(target=work, name="dgxstudio-analysis", daemon=True)
        worker.start()
        worker.join(0.2)  # a small design is done before any dialog would show
        if worker.is_alive():
            dialog = QProgressDialog(f"Analyzing the topology for {purpose}…", "Cancel", 0, 1000, self)
            dialog.setWindowTitle("Analysis")
            dialog.setWindowModality(Qt.WindowModality.WindowModal)
            dialog.setMinimumDuration(0)
            loop = QEventLoop()
            dialog.canceled.connect(stop.set)
            dialog.canceled.connect(loop.quit)
            timer = QTimer()

            def poll() -> None:
                dialog.setValue(int(1000 * min(state["fraction"], 0.999)))
                dialog.setLabelText(f"Analyzing the topology for {purpose}: {state['step']}…")
                if not worker.is_alive():
                    loop.quit()
            timer.timeout.connect(poll)
            timer.start(50)
            poll()
            loop.exec()
            timer.stop()
            dialog.canceled.disconnect()
            dialog.reset()
            dialog.deleteLater()
        if stop.is_set():  # cancelled: the worker stops at its next check and its result is dropped
            return None
        worker.join()
        if self.document.topology is not live or live.state_key() != key:
            return None  # edited meanwhile: the analysis may have read a half-made edit
        if "error" in state:
            raise state["error"]
        return state.get("result")

    def canvas_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export canvas", "canvas.png", "PNG image (*.png);;SVG drawing (*.svg)")
        if path:
            self.export_canvas(path)

    def export_canvas(self, path: str) -> bool:
        from PySide6.QtCore import QRectF, QSize
        from PySide6.QtGui import QImage, QPainter
        from PySide6.QtSvg import QSvgGenerator

        from ..model.atomic import atomic_output

        rect = self.scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
        self.scene.release_text()   # a window not drawn yet holds its names for its second frame
        try:
            with atomic_output(path) as tmp:
                if path.lower().endswith(".svg"):
                    device = QSvgGenerator()
                    device.setFileName(tmp)
                    device.setSize(QSize(int(rect.width()), int(rect.height())))
                    device.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
                else:
                    scale = min(1.0, 4000 / max(rect.width(), rect.height(), 1))
                    device = QImage(int(rect.width() * scale), int(rect.height() * scale), QImage.Format.Format_ARGB32)
                    device.fill(Qt.GlobalColor.white)
                painter = QPainter(device)
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                self.scene.render(painter, QRectF(), rect)
                painter.end()
                if isinstance(device, QImage) and not device.save(tmp, "PNG"):
                    raise OSError(5, "the PNG writer failed (disk full or not writable?)", path)
                del device
        except OSError as exc:
            self.error("Cannot export the canvas", f"{path}: {exc.strerror or exc}\nThe file on disk was not changed.")
            self.show_status(f"Canvas not written: {exc.strerror or exc}")
            return False
        self.show_status(f"Canvas written to {path}")
        return True

