"""The main window: canvas in the middle; palette, inspector, findings, history and minimap in docks."""

from __future__ import annotations

import sys

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QLineEdit, QMainWindow, QTabWidget, QToolBar, QUndoView

from ..model.catalog import default_catalog
from ..model.names import device_words
from ..model.presets import PRESETS
from ..model.topology import Topology
from .animation import Replayer, RingOverlay
from .canvas import CanvasView, TopologyScene
from .cluster_dialog import open_cluster_dialog
from .document import Document
from .findings import FindingsList
from .history_status import HistoryStatus, history_words
from .inspector import Inspector, InspectorScroll
from .empty_hint import EmptyHint
from .minimap import MiniMap
from .palette import Palette
from .replay_legend import ReplayLegend
from .first_frame import (drop_polish_requests, hold_contents_until_tabbed, polish_scenes_before_show,
                          show_contents_when_raised)
from .plots import GanttPlot, LivePlots, SweepPlot
from .qt_style import install_style
from .settings import MAX_RECENT, WINDOW_STATE_VERSION, settings  # noqa: F401  (importable from here)
from .results_panel import ResultsPanel
from .sim_panel import SimulationPanel
from .style import icon
from .undo_selection import SelectionMemory
from .window_editing import MIME_CLIP, EditActions  # noqa: F401
from .window_files import FILE_FILTER, FileActions  # noqa: F401
from .window_habits import HabitActions
from .window_replay import ReplayActions, new_session
from .workers import JOB_SWITCH_INTERVAL_S


class MainWindow(FileActions, EditActions, ReplayActions, HabitActions, QMainWindow):
    def __init__(self, topology: Topology, path: str | None = None, preset: str | None = None):
        install_style()   # before the first widget is made (see qt_style)
        super().__init__()
        # Threads work beside the GUI thread at any time (a Run's frozen copy, the checks of a large
        # design, autosave), not only while a job runs: switch often enough that each Python callback
        # Qt makes on this thread waits a fraction of a millisecond for the interpreter lock, not 5 ms.
        sys.setswitchinterval(JOB_SWITCH_INTERVAL_S)
        self.setWindowIcon(icon("dgxstudio"))
        self.document = Document(topology, path, self)
        from .autosave import Autosaver

        self.autosaver = Autosaver(self.document, parent=self)  # recovery copy while modified
        self.preset = preset
        self.scene = TopologyScene(self.document)
        self.view = CanvasView(self.scene)
        self.empty_hint = EmptyHint(self.view)   # how to start, while the design has no device
        self.document.selection_memory = SelectionMemory(self.scene)
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
        self.fit_to_screen()
        for message in default_catalog().messages:
            self.show_status(message)
        QTimer.singleShot(0, self.view.fit)
        if self.scene.lod is None:   # (an overview's labels are its structure: drawn at once)
            self.scene.hold_text()
        drop_polish_requests()
        polish_scenes_before_show((self.live_plots.layout_widget, self.sweep_plot.widget, self.gantt.widget))
        # (the Plots dock waits in its own way: plots.py)
        show_contents_when_raised(self, (self.palette_dock, self.sim_dock, self.inspector_dock, self.history_dock,
                                         self.findings_dock, self.results_dock))
        if self._default_layout_pending:   # a first start: the docks the default layout puts behind a tab
            hold_contents_until_tabbed(self._behind_tabs())

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
        self.inspector_dock = self._dock("Inspector", InspectorScroll(self.inspector), Qt.DockWidgetArea.RightDockWidgetArea,
                                         "inspector")
        self.inspector.refused.connect(self.show_status)
        self.history = QUndoView(self.document.undo_stack)
        self.history.setEmptyLabel("<opened>")
        self.history_dock = self._dock("History", self.history, Qt.DockWidgetArea.RightDockWidgetArea, "history")
        HistoryStatus(self.history, self.show_status)
        self.minimap = MiniMap(self.view)
        self.minimap_dock = self._dock("Overview", self.minimap, Qt.DockWidgetArea.RightDockWidgetArea, "minimap")
        self.findings = FindingsList(self.document)
        self.findings.culpritRequested.connect(self.select_and_center)
        self.view.zoomChanged.connect(lambda _z: self.findings.view_moved())
        self.view.horizontalScrollBar().valueChanged.connect(lambda _v: self.findings.view_moved())
        self.view.verticalScrollBar().valueChanged.connect(lambda _v: self.findings.view_moved())
        self.findings_dock = self._dock("Findings", self.findings, Qt.DockWidgetArea.BottomDockWidgetArea, "findings")
        self.sim_panel = SimulationPanel(self.document, self.scene.selected_device_ids)
        self.sim_dock = self._dock("Simulation", self.sim_panel, Qt.DockWidgetArea.LeftDockWidgetArea, "simulation")
        self.results = ResultsPanel()
        self.results.namer = self._name_of
        self.results_dock = self._dock("Results", self.results, Qt.DockWidgetArea.BottomDockWidgetArea, "results")
        self.live_plots, self.sweep_plot, self.gantt = LivePlots(), SweepPlot(), GanttPlot()
        self.live_plots.namer = self._name_of
        self.plot_tabs = QTabWidget()
        self.plot_tabs.addTab(self.live_plots, "Live")
        self.plot_tabs.addTab(self.sweep_plot, "Sweep")
        self.plot_tabs.addTab(self.gantt, "Pipeline")
        self.plots_dock = self._dock("Plots", self.plot_tabs, Qt.DockWidgetArea.BottomDockWidgetArea, "plots")
        self.session = new_session()
        self.replayer = Replayer(self.scene, self)
        self.rings_overlay = RingOverlay(self.scene)
        self.sim_panel.resultReady.connect(self._show_result)
        self.sim_panel.progressed.connect(self._show_progress)
        self.sim_panel.message.connect(self.show_status)
        self.sim_panel.unanswered.connect(self._show_unanswered)
        self.legend = ReplayLegend(self.view)
        self.view.resized.connect(self.legend.place)
        self.sim_panel.runner.started.connect(self._run_started)
        self.sim_panel.runner.failed.connect(lambda _m: self._run_ended_without_result())
        self.sim_panel.runner.cancelled.connect(self._run_ended_without_result)
        self.document.topologyReplaced.connect(self._document_replaced)
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
        # the status bar says what the key undid or redid, as the History panel names it (it kept the
        # edit's own message, "Added ...", after Ctrl+Z); these run after the stack's own undo/redo
        stack = self.document.undo_stack
        undo.triggered.connect(lambda: self.show_status(history_words(stack, stack.index() + 1, stack.index())))
        redo.triggered.connect(lambda: self.show_status(history_words(stack, stack.index() - 1, stack.index())))
        e.addSeparator()
        self._action(e, "Cu&t", self.cut, QKeySequence.StandardKey.Cut)
        self._action(e, "&Copy", self.copy, QKeySequence.StandardKey.Copy)
        self._action(e, "&Paste", self.paste, QKeySequence.StandardKey.Paste)
        self._action(e, "&Duplicate", self.duplicate, "Ctrl+D")
        self._action(e, "&Delete", self.delete, QKeySequence.StandardKey.Delete)
        self._action(e, "Select &all", self.select_all, QKeySequence.StandardKey.SelectAll)
        self._action(e, "&Find device…", self.focus_find, QKeySequence.StandardKey.Find)

        v = bar.addMenu("&View")
        zoom_in = self._action(v, "Zoom &in", lambda: self.view.zoom(1.25), QKeySequence.StandardKey.ZoomIn)
        zoom_in.setShortcuts([*zoom_in.shortcuts(), QKeySequence("Ctrl+=")])
        self._action(v, "Zoom &out", lambda: self.view.zoom(0.8), QKeySequence.StandardKey.ZoomOut)
        self._action(v, "&Fit to view", self.view.fit, "F")
        self._action(v, "&Auto-layout", self.auto_layout, "Ctrl+L")
        self._action(v, "&Collapse all systems", lambda: self.set_all_collapsed(True))
        self._action(v, "&Expand all systems", lambda: self.set_all_collapsed(False))
        self._build_habits(e, v)
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
        self._action(h, "&User guide", self.user_guide, QKeySequence.StandardKey.HelpContents,
                     "a short tour of DGX Studio, with pictures")
        self._action(h, "&Keyboard shortcuts", self.shortcut_list, "Ctrl+/", "every shortcut in one list")
        h.addSeparator()
        self._action(h, "&About DGX Studio", self.about)

        tools = QToolBar("Find")
        tools.setObjectName("findbar")
        self.find_edit = QLineEdit()
        self.find_edit.setPlaceholderText("Find a device by name or id (Ctrl+F)")
        self.find_edit.setMaximumWidth(320)
        self.find_edit.setToolTip("Type part of a device's name or id and press Enter; F3 and Shift+F3 step through "
                                  "every match")
        self.find_edit.returnPressed.connect(lambda: self.find(self.find_edit.text()))
        tools.addWidget(self.find_edit)
        self.addToolBar(tools)
        self._build_replay_bar()
        self._refresh_recent()

    def _name_of(self, obj_id: str) -> str:
        """A device as the canvas names it, with its system in a design of several (model/names.py)."""
        return device_words(self.document.topology, obj_id)

    def fit_to_screen(self) -> None:
        """Never larger than the screen's free area (a 1280x800 laptop included), so the status bar that
        explains refused links stays on screen; a restored geometry from a larger screen is shrunk too."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        avail = screen.availableGeometry()
        frame = 32  # the title bar the window manager adds
        width, height = min(self.width(), avail.width()), min(self.height(), avail.height() - frame)
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
            self.move(avail.left() + (avail.width() - width) // 2, avail.top() + (avail.height() - height - frame) // 2)

    # ---- title, status, settings ------------------------------------------------------------------
    def _update_title(self) -> None:
        doc = self.document
        where = doc.display_name if doc.path else (f"preset {self.preset}" if self.preset else "Untitled")
        self.setWindowTitle(f"{where}[*] — {doc.topology.name} — DGX Studio")
        self.setWindowModified(doc.dirty)

    def show_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)   # in full: the bar cuts a long message (a refusal's reason) off

    def _restore_settings(self) -> None:
        s = settings()
        geometry = s.value("window/geometry")
        state = s.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        self._default_layout_pending = not (isinstance(state, QByteArray)
                                            and self.restoreState(state, WINDOW_STATE_VERSION))

    def setVisible(self, visible: bool) -> None:
        if visible and getattr(self, "_default_layout_pending", False) and not self.isVisible():
            # the docks stacked before they are tabbed ask for more height than the tabbed layout
            # (815 px against 743 with an empty design), and showing grows the window to it
            self._size_asked = self.size()
        super().setVisible(visible)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._default_layout_pending:
            self._default_layout_pending = False
            QTimer.singleShot(0, self._default_layout)

    def _tab_groups(self) -> tuple:
        """The docks a first start tabs together, the first of each on top (see _default_layout)."""
        return ((self.inspector_dock, self.history_dock), (self.palette_dock, self.sim_dock),
                (self.findings_dock, self.results_dock, self.plots_dock))

    def _behind_tabs(self) -> list:
        """The docks a first start puts behind a tab, whose contents wait until raised (the Plots dock
        waits in its own way: plots.py)."""
        return [d for group in self._tab_groups() for d in group[1:] if d is not self.plots_dock]

    def _default_layout(self) -> None:
        """Tab groups and dock sizes when no saved layout exists. Done once the window is shown and
        laid out: Qt 6.11 leaves stale tab bars painted over the docks when docks are tabbed earlier."""
        for group in self._tab_groups():
            for a, b in zip(group, group[1:]):
                self.tabifyDockWidget(a, b)
            group[0].raise_()
        show_contents_when_raised(self, self._behind_tabs())   # (held since __init__: hold_contents_until_tabbed)
        # side docks narrower in a narrow window (a 800 px screen left the canvas 247 px of it)
        self.resizeDocks([self.palette_dock, self.inspector_dock],
                         [min(240, self.width() // 5), min(280, self.width() // 5)], Qt.Orientation.Horizontal)
        self.resizeDocks([self.findings_dock], [160], Qt.Orientation.Vertical)
        self.resizeDocks([self.minimap_dock], [220], Qt.Orientation.Vertical)
        asked = getattr(self, "_size_asked", None)
        managed = Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen
        if asked is not None and not self.windowState() & managed:
            self.resize(asked.expandedTo(self.minimumSizeHint()))   # the size it was shown at (a 1280x800 screen)
        # the view was fitted before the docks took their height: the design's bottom row stood below
        # its edge. Fitted again here, with the layout applied now: a fit left for later undid a zoom
        # made in between
        self.layout().activate()
        self.view.fit()

    def _save_settings(self) -> None:
        s = settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(WINDOW_STATE_VERSION))

