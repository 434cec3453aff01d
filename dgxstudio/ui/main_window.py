"""The main window: canvas in the middle; palette, inspector, findings, history and minimap in docks."""

from __future__ import annotations

import json
import os

from PySide6.QtCore import QByteArray, QMimeData, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from shiboken6 import isValid
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QLabel, QLineEdit, QMainWindow, QMessageBox,
                               QSlider, QTabWidget, QToolBar, QUndoView)

from ..model import fileio
from ..model.catalog import default_catalog, user_config_dir
from ..model.clipboard import CLIP_FORMAT, copy_selection, paste_command
from ..model.commands import Move, RemoveItems, SetCollapsed, Macro
from ..model.layout import auto_layout
from ..model.presets import PRESETS, load_preset
from ..model.topology import Topology
from .canvas import CanvasView, TopologyScene
from .cluster_dialog import open_cluster_dialog
from .document import Document
from .findings import FindingsList
from .inspector import Inspector
from .animation import Replayer, RingOverlay
from .minimap import MiniMap
from .palette import Palette
from .plots import GanttPlot, LivePlots, SweepPlot, export_plot
from .sim_panel import ResultsPanel, SimulationPanel
from .style import icon

MIME_CLIP = "application/x-dgxstudio-clip"
FILE_FILTER = f"DGX Studio topology (*{fileio.FILE_EXTENSION});;All files (*)"
MAX_RECENT = 8
# Bump when the docks change: a dock layout saved by another version of the window is ignored
# rather than restored into a mangled layout.
WINDOW_STATE_VERSION = 2


def settings() -> QSettings:
    """Window layout and recent files, kept beside the user's catalog (tests point that elsewhere)."""
    folder = user_config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)


class MainWindow(QMainWindow):
    def __init__(self, topology: Topology, path: str | None = None, preset: str | None = None):
        super().__init__()
        self.setWindowIcon(icon("dgxstudio"))
        self.document = Document(topology, path, self)
        from .autosave import Autosaver

        self.autosaver = Autosaver(self.document, parent=self)  # recovery copy while modified
        self.preset = preset
        self.scene = TopologyScene(self.document)
        self.view = CanvasView(self.scene)
        self.setCentralWidget(self.view)
        self.status = QLabel()
        self.statusBar().addWidget(self.status, 1)
        self.scene.statusMessage.connect(self.show_status)
        self._build_docks()
        self._build_actions()
        self.document.undo_stack.cleanChanged.connect(lambda _c: self._update_title())
        self.document.pathChanged.connect(lambda _p: self._update_title())
        self.document.topologyReplaced.connect(self._update_title)
        self.scene.selectionChanged.connect(self._selection_changed)
        self._update_title()
        self.resize(1400, 900)
        self._restore_settings()
        for message in default_catalog().messages:
            self.show_status(message)
        QTimer.singleShot(0, self.view.fit)

    # ---- layout ---------------------------------------------------------------------------------
    def _dock(self, title: str, widget, area, name: str) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        self.palette = Palette(self.document.topology.catalog)
        self.palette_dock = self._dock("Palette", self.palette, Qt.DockWidgetArea.LeftDockWidgetArea, "palette")
        self.inspector = Inspector(self.document)
        self.inspector_dock = self._dock("Inspector", self.inspector, Qt.DockWidgetArea.RightDockWidgetArea, "inspector")
        self.history = QUndoView(self.document.undo_stack)
        self.history.setEmptyLabel("<opened>")
        self.history_dock = self._dock("History", self.history, Qt.DockWidgetArea.RightDockWidgetArea, "history")
        self.minimap = MiniMap(self.view)
        self.minimap_dock = self._dock("Overview", self.minimap, Qt.DockWidgetArea.RightDockWidgetArea, "minimap")
        self.findings = FindingsList(self.document)
        self.findings.culpritRequested.connect(self.select_and_center)
        self.findings_dock = self._dock("Findings", self.findings, Qt.DockWidgetArea.BottomDockWidgetArea, "findings")
        self.sim_panel = SimulationPanel(self.document, self.scene.selected_device_ids)
        self.sim_dock = self._dock("Simulation", self.sim_panel, Qt.DockWidgetArea.LeftDockWidgetArea, "simulation")
        self.results = ResultsPanel()
        self.results_dock = self._dock("Results", self.results, Qt.DockWidgetArea.BottomDockWidgetArea, "results")
        self.live_plots, self.sweep_plot, self.gantt = LivePlots(), SweepPlot(), GanttPlot()
        self.plot_tabs = QTabWidget()
        self.plot_tabs.addTab(self.live_plots, "Live")
        self.plot_tabs.addTab(self.sweep_plot, "Sweep")
        self.plot_tabs.addTab(self.gantt, "Pipeline")
        self.plots_dock = self._dock("Plots", self.plot_tabs, Qt.DockWidgetArea.BottomDockWidgetArea, "plots")
        self.session = {"runs": [], "sweeps": [], "pipelines": []}
        self.replayer = Replayer(self.scene, self)
        self.rings_overlay = RingOverlay(self.scene)
        self.sim_panel.resultReady.connect(self._show_result)
        self.sim_panel.progressed.connect(self._show_progress)
        self.sim_panel.message.connect(self.show_status)
        self.sim_panel.runner.started.connect(lambda _l: (self.live_plots.clear(), self.replayer.clear()))
        self.results.linksClicked.connect(self.select_and_center)
        self.live_plots.pointClicked.connect(self.select_and_center)
        self.gantt.taskClicked.connect(lambda e: self.select_and_center([e["device"]]))


    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        bar = self.menuBar()
        f = bar.addMenu("&File")
        self._action(f, "&New", self.new_document, QKeySequence.StandardKey.New)
        presets = f.addMenu("New from &preset")
        for name, (desc, _) in PRESETS.items():
            self._action(presets, f"{name} — {desc}", lambda _c=False, n=name: self.open_preset(n))
        self._action(f, "New &cluster…", lambda: open_cluster_dialog(self), "Ctrl+Shift+N")
        self._action(f, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = f.addMenu("Open &recent")
        self._action(f, "&Save", self.save, QKeySequence.StandardKey.Save)
        self._action(f, "Save &as…", self.save_as, QKeySequence.StandardKey.SaveAs)
        f.addSeparator()
        self._action(f, "&Export topology…", self.export_dialog, "Ctrl+E")
        self._action(f, "&Import NCCL topology XML…", self.import_dialog)
        self._action(f, "Export &report…", self.report_dialog)
        self._action(f, "Export &canvas picture…", self.canvas_dialog)
        f.addSeparator()
        self._action(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        e = bar.addMenu("&Edit")
        undo = self.document.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.document.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        for a in (undo, redo):
            e.addAction(a)
            self.addAction(a)
        e.addSeparator()
        self._action(e, "Cu&t", self.cut, QKeySequence.StandardKey.Cut)
        self._action(e, "&Copy", self.copy, QKeySequence.StandardKey.Copy)
        self._action(e, "&Paste", self.paste, QKeySequence.StandardKey.Paste)
        self._action(e, "&Duplicate", self.duplicate, "Ctrl+D")
        self._action(e, "&Delete", self.delete, QKeySequence.StandardKey.Delete)
        self._action(e, "Select &all", self.select_all, QKeySequence.StandardKey.SelectAll)
        self._action(e, "&Find device…", self.focus_find, QKeySequence.StandardKey.Find)

        v = bar.addMenu("&View")
        self._action(v, "Zoom &in", lambda: self.view.zoom(1.25), QKeySequence.StandardKey.ZoomIn)
        self._action(v, "Zoom &out", lambda: self.view.zoom(0.8), QKeySequence.StandardKey.ZoomOut)
        self._action(v, "&Fit to view", self.view.fit, "F")
        self._action(v, "&Auto-layout", self.auto_layout, "Ctrl+L")
        self._action(v, "&Collapse all systems", lambda: self.set_all_collapsed(True))
        self._action(v, "&Expand all systems", lambda: self.set_all_collapsed(False))
        v.addSeparator()
        for dock in (self.palette_dock, self.inspector_dock, self.history_dock, self.minimap_dock, self.findings_dock):
            v.addAction(dock.toggleViewAction())

        sim = bar.addMenu("&Simulate")
        self._action(sim, "&Run", self.sim_panel.run, "Ctrl+R")
        self._action(sim, "&Cancel", self.sim_panel.runner.cancel, "Ctrl+.")
        sim.addSeparator()
        self._action(sim, "Export current &plot…", self.export_current_plot)
        v.addAction(self.sim_dock.toggleViewAction())
        v.addAction(self.results_dock.toggleViewAction())
        v.addAction(self.plots_dock.toggleViewAction())

        h = bar.addMenu("&Help")
        self._action(h, "&About DGX Studio", self.about)

        tools = QToolBar("Find")
        tools.setObjectName("findbar")
        self.find_edit = QLineEdit()
        self.find_edit.setPlaceholderText("Find a device by name or id (Ctrl+F)")
        self.find_edit.setMaximumWidth(320)
        self.find_edit.returnPressed.connect(lambda: self.find(self.find_edit.text()))
        tools.addWidget(self.find_edit)
        self.addToolBar(tools)
        self._build_replay_bar()
        self._refresh_recent()

    def _build_replay_bar(self) -> None:
        bar = QToolBar("Replay")
        bar.setObjectName("replaybar")
        self.play_action = bar.addAction("Play", self._toggle_play)
        bar.addAction("Step back", lambda: self.replayer.step(-1))
        bar.addAction("Step", lambda: self.replayer.step(+1))
        bar.addWidget(QLabel(" speed "))
        self.speed = QSlider(Qt.Orientation.Horizontal)
        self.speed.setRange(-30, 30)
        self.speed.setValue(0)
        self.speed.setMaximumWidth(120)
        self.speed.setToolTip("replay speed: the whole run in 8 s at the middle")
        bar.addWidget(self.speed)
        self.scrubber = QSlider(Qt.Orientation.Horizontal)
        self.scrubber.setObjectName("scrubber")
        self.scrubber.setRange(0, 1000)
        self.scrubber.setMinimumWidth(240)
        bar.addWidget(self.scrubber)
        self.time_label = QLabel(" no run ")
        bar.addWidget(self.time_label)
        self.addToolBar(bar)
        self.scrubber.sliderMoved.connect(self._scrub)
        self.scrubber.valueChanged.connect(lambda v: self.scrubber.isSliderDown() or self._scrub(v))
        self.speed.valueChanged.connect(self._speed)
        self.replayer.timeChanged.connect(self._replay_time)
        self.replayer.playingChanged.connect(lambda on: self.play_action.setText("Pause" if on else "Play"))

    def _toggle_play(self) -> None:
        if self.replayer.timer.isActive():
            self.replayer.pause()
        else:
            self.replayer.play()

    def _speed(self, value: int) -> None:
        if self.replayer.sim is not None:
            self.replayer.speed = self.replayer.duration / 8.0 * (10 ** (value / 10.0))

    def _scrub(self, value: int) -> None:
        if self.replayer.sim is not None and not self._syncing_scrubber:
            self.replayer.pause()
            self.replayer.set_time(self.replayer.duration * value / 1000.0)

    _syncing_scrubber = False
    _gantt_result = None
    _gantt_drawn_at = -1.0

    def _replay_time(self, t: float) -> None:
        from ..units import format_time

        self._syncing_scrubber = True
        self.scrubber.setValue(int(round(1000 * t / self.replayer.duration)) if self.replayer.sim else 0)
        self._syncing_scrubber = False
        self.time_label.setText(f" {format_time(t)} / {format_time(self.replayer.duration)} ")
        self.gantt.set_time(t)
        if self._gantt_result is None:
            return
        # While the replay plays, the chart fills in with it; paused, it shows the whole schedule.
        playing = self.replayer.timer.isActive() and t < self.replayer.duration
        if playing and abs(t - self._gantt_drawn_at) > self.replayer.duration / 40:
            self._gantt_drawn_at = t
            self.gantt.set_result(self._gantt_result, upto=t)
        elif not playing and self._gantt_drawn_at != -1.0:
            self._gantt_drawn_at = -1.0
            self.gantt.set_result(self._gantt_result)

    # ---- simulation results -------------------------------------------------------------------------
    def _show_progress(self, request, progress) -> None:
        if request is not None and request.kind == "collective" and hasattr(progress, "sim_time_s"):
            self.live_plots.add_progress(progress, request.total_bytes)

    def _show_result(self, request, result) -> None:
        name = self.document.topology.name
        self._gantt_result = None
        store = {"collective": "runs", "sweep": "sweeps", "pipeline": "pipelines"}.get(request.kind)
        if store:
            self.session[store].append(result)
        if request.kind == "collective":
            self.results.show_collective(request, result, name)
            self.live_plots.show_result(result.sim)
            self.replayer.load(result.sim)
            if self.sim_panel.show_rings.isChecked() and result.rings:
                self.rings_overlay.show(result.rings)
            else:
                self.rings_overlay.hide()
            self.plot_tabs.setCurrentWidget(self.live_plots)
        elif request.kind == "sweep":
            self.results.show_sweep(request, result, name)
            first = result[0]
            self.sweep_plot.add_curve(f"{name}: {first.collective} {first.requested_algorithm}",
                                      [r.size_bytes for r in result], [r.busbw_Bps for r in result], first.bound_busbw_Bps)
            self.replayer.load(result[-1].sim)
            self.plot_tabs.setCurrentWidget(self.sweep_plot)
        elif request.kind == "pipeline":
            self.results.show_pipeline(request, result, name)
            self._gantt_result = result
            self.gantt.set_result(result)
            self.replayer.load(result.sim)
            self.rings_overlay.show_stages(result.spec.stage_gpus)
            self.plot_tabs.setCurrentWidget(self.gantt)
        else:
            self.results.show_training(request, result, name)
        self.results_dock.raise_()
        self.show_status(f"Done: {request.label}")

    def export_current_plot(self, path: str | None = None) -> str | None:
        widget = self.plot_tabs.currentWidget()
        item, view = {id(self.live_plots): (self.live_plots.layout_widget.ci, self.live_plots.layout_widget),
                      id(self.sweep_plot): (self.sweep_plot.plot, self.sweep_plot.widget),
                      id(self.gantt): (self.gantt.plot, self.gantt.widget)}[id(widget)]
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export plot", "plot.png", "PNG image (*.png);;SVG drawing (*.svg)")
            if not path:
                return None
        try:
            export_plot(item, view, path)
        except OSError as exc:
            self.error("Cannot export the plot", f"{path}: {exc.strerror or exc}\nThe file on disk was not changed.")
            self.show_status(f"Plot not written: {exc.strerror or exc}")
            return None
        self.show_status(f"Exported {path}")
        return path

    # ---- title, status, settings ------------------------------------------------------------------
    def _update_title(self) -> None:
        doc = self.document
        where = doc.display_name if doc.path else (f"preset {self.preset}" if self.preset else "Untitled")
        self.setWindowTitle(f"{where}[*] — {doc.topology.name} — DGX Studio")
        self.setWindowModified(doc.dirty)

    def show_status(self, text: str) -> None:
        self.status.setText(text)

    def _restore_settings(self) -> None:
        s = settings()
        geometry = s.value("window/geometry")
        state = s.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        self._default_layout_pending = not (isinstance(state, QByteArray)
                                            and self.restoreState(state, WINDOW_STATE_VERSION))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._default_layout_pending:
            self._default_layout_pending = False
            QTimer.singleShot(0, self._default_layout)

    def _default_layout(self) -> None:
        """Tab groups and dock sizes when no saved layout exists. Done once the window is shown and
        laid out: Qt 6.11 leaves stale tab bars painted over the docks when docks are tabbed earlier."""
        for group in ((self.inspector_dock, self.history_dock), (self.palette_dock, self.sim_dock),
                      (self.findings_dock, self.results_dock, self.plots_dock)):
            for a, b in zip(group, group[1:]):
                self.tabifyDockWidget(a, b)
            group[0].raise_()
        self.resizeDocks([self.palette_dock, self.inspector_dock], [240, 280], Qt.Orientation.Horizontal)
        self.resizeDocks([self.findings_dock], [160], Qt.Orientation.Vertical)
        self.resizeDocks([self.minimap_dock], [220], Qt.Orientation.Vertical)

    def _save_settings(self) -> None:
        s = settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(WINDOW_STATE_VERSION))

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
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"{self.document.display_name} has unsaved changes. Save them?",
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

    def new_document(self) -> None:
        if self.maybe_save():
            self._replace(Topology("Untitled"), None)

    def open_preset(self, name: str) -> None:
        if self.maybe_save():
            self._replace(load_preset(name), None, name)

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
            self.autosaver.close()
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

        selected = [g for g in self.scene.selected_ids() if g in self.document.topology.groups]
        try:
            write_export(self.document.topology, fmt, path, system or (selected[0] if selected else None))
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
        path, _ = QFileDialog.getSaveFileName(self, "Export report", "report.html", "HTML report (*.html);;PDF report (*.pdf)")
        if path:
            self.export_report(path)

    def export_report(self, path: str) -> bool:
        from ..analysis.summary import analyze
        from ..report.html import ReportData, write_report

        topo = self.document.topology
        gpus = [g.id for g in topo.gpus()]
        if not gpus:
            self.error("Cannot export a report", "The topology has no GPUs.")
            return False
        data = ReportData(topo, analyze(topo, gpus), list(self.session["runs"]), list(self.session["sweeps"]),
                          list(self.session["pipelines"]))
        try:
            write_report(data, path)
        except OSError as exc:
            self.error("Cannot export the report", f"{path}: {exc.strerror or exc}")
            return False
        self.show_status(f"Report written to {path} (results beside it as .json and .csv)")
        return True

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

    # ---- editing ----------------------------------------------------------------------------------
    def _selection_changed(self) -> None:
        if isValid(self.scene) and isValid(self.inspector):  # the scene also signals while being destroyed
            self.inspector.show_ids(self.scene.selected_ids())

    def select_all(self) -> None:
        for item in self.scene.items():
            if item.flags() & item.GraphicsItemFlag.ItemIsSelectable:
                item.setSelected(True)

    def copy(self) -> dict | None:
        ids = self.scene.selected_device_ids()
        if not ids:
            self.show_status("Nothing to copy: select devices or groups")
            return None
        clip = copy_selection(self.document.topology, ids)
        data = QMimeData()
        data.setData(MIME_CLIP, json.dumps(clip).encode("utf-8"))
        data.setText(f"{len(ids)} DGX Studio devices")
        QApplication.clipboard().setMimeData(data)
        self.show_status(f"Copied {len(ids)} devices and {len(clip['links'])} links")
        return clip

    def _paste_clip(self, clip: dict, what: str) -> None:
        try:
            cmd, mapping = paste_command(self.document.topology, clip, (60.0, 60.0), text=what)
        except fileio.TopologyFileError as exc:
            self.show_status(f"Cannot paste: {exc}")
            return
        self.document.push(cmd)
        self.scene.select_ids(mapping.values())
        self.show_status(f"{what.capitalize()}d {len(clip['devices'])} devices and {len(clip['links'])} links")

    def paste(self) -> None:
        data = QApplication.clipboard().mimeData()
        if data is None or not data.hasFormat(MIME_CLIP):
            self.show_status("Nothing to paste")
            return
        try:
            clip = fileio.parse_json(bytes(data.data(MIME_CLIP)).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):  # the file rules: no inf, no endless numbers
            self.show_status("The clipboard holds no DGX Studio selection")
            return
        if not isinstance(clip, dict) or clip.get("format") != CLIP_FORMAT:
            self.show_status("The clipboard holds no DGX Studio selection")
            return
        self._paste_clip(clip, "paste")

    def duplicate(self) -> None:
        ids = self.scene.selected_device_ids()
        if not ids:
            self.show_status("Nothing to duplicate")
            return
        self._paste_clip(copy_selection(self.document.topology, ids), "duplicate")

    def delete(self) -> None:
        ids = self.scene.selected_ids()
        if not ids:
            return
        self.document.push(RemoveItems(ids, f"delete {len(ids)} item{'s' if len(ids) > 1 else ''}"))

    def cut(self) -> None:
        if self.copy() is not None:
            ids = self.scene.selected_ids()
            self.document.push(RemoveItems(ids, f"cut {len(ids)} items"))

    def auto_layout(self) -> None:
        topo = self.document.topology
        positions = auto_layout(topo)
        self.document.push(Move(positions, {k: topo.layout.positions.get(k) for k in positions}, "auto-layout"))
        QTimer.singleShot(0, self.view.fit)

    def set_all_collapsed(self, collapsed: bool) -> None:
        topo = self.document.topology
        cmds = [SetCollapsed(g.id, collapsed) for g in topo.groups.values()
                if g.kind == "system" and (g.id in topo.layout.collapsed) != collapsed]
        if cmds:
            self.document.push(Macro(cmds, ("collapse" if collapsed else "expand") + " all systems"))

    def focus_find(self) -> None:
        self.find_edit.setFocus()
        self.find_edit.selectAll()

    def find(self, text: str) -> str | None:
        needle = text.strip().lower()
        if not needle:
            return None
        topo = self.document.topology
        hit = next((d.id for d in topo.devices.values() if d.id.lower() == needle or d.name.lower() == needle), None)
        hit = hit or next((d.id for d in topo.devices.values() if needle in d.name.lower() or needle in d.id.lower()), None)
        if hit is None:
            self.show_status(f"No device matches {text!r}")
            return None
        self.select_and_center([hit])
        self.show_status(f"Found {topo.devices[hit].name} ({hit})")
        return hit

    def select_and_center(self, ids: list[str]) -> None:
        self.scene.select_ids(ids)
        item = next((self.scene.item_for(i) for i in ids if self.scene.item_for(i) is not None), None)
        if item is not None:
            if not item.isSelected():
                item.setSelected(True)
            if self.view.transform().m11() < 0.6:  # zoom in far enough to see what was found
                self.view.resetTransform()
                self.view.zoomChanged.emit(1.0)
            self.view.centerOn(item)
        self.inspector.show_ids([i for i in ids])

    def about(self) -> None:
        from .about import about_text

        QMessageBox.about(self, "About DGX Studio", about_text())
