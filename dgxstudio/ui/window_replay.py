"""The main window's replay toolbar and what the simulation results show in the window."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QSlider, QToolBar

from ..model.names import device_words
from ..report.provenance import stamp
from ..sim.run import compact
from ..units import counted, format_size
from .animation import MAX_TREES_DRAWN, STATE_COLORS
from .plots import export_plot
from .replay_structure import ring_words, structures
from .style import RING_COLORS


# The runs of a session that go into its report, by kind (a run request's kind: its list here)
SESSION_STORES = {"collective": "runs", "sweep": "sweeps", "pipeline": "pipelines", "train": "trainings"}


def new_session() -> dict:
    """No runs yet: one list per kind of run the report takes."""
    return {store: [] for store in SESSION_STORES.values()}


class ReplayActions:
    """Mixed into MainWindow: the replay bar, and showing a finished run in results, plots and replay."""

    def _build_replay_bar(self) -> None:
        bar = QToolBar("Replay")
        bar.setObjectName("replaybar")
        self.play_action = bar.addAction("Play", self._toggle_play)
        self.play_action.setToolTip("Play or pause the replay of the last run on the canvas")
        bar.addAction("Step back", lambda: self.replayer.step(-1)).setToolTip(
            "Back to the previous event: a transfer or task starting, leaving or arriving")
        bar.addAction("Step", lambda: self.replayer.step(+1)).setToolTip("On to the next event")
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
        self.scrubber.setMinimumWidth(160)
        self.scrubber.setToolTip("Simulated time of the replay: drag to any moment of the run")
        bar.addWidget(self.scrubber)
        self.time_label = QLabel(" no run ")
        # as wide as the longest time it shows, so a replay frame redraws the text, not the toolbar's layout
        self.time_label.setMinimumWidth(self.time_label.fontMetrics().horizontalAdvance(" 888.888 ms / 888.888 ms ") + 8)
        self.time_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        bar.addWidget(self.time_label)
        self.tree_pair = QComboBox()
        self.tree_pair.setObjectName("treePair")
        self.tree_pair.setToolTip("NCCL runs a double binary tree per NIC rail (or channel): the pair of "
                                  "trees the canvas draws, or all of them")
        self.tree_pair_action = bar.addWidget(self.tree_pair)
        self.tree_pair_action.setVisible(False)
        self.tree_pair.activated.connect(self._draw_tree_pair)
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

    def _run_started(self, label: str) -> None:
        """A new run replaces what the last one left on the canvas and in the plots."""
        self.live_plots.clear()
        self.replayer.clear()
        self.rings_overlay.hide()
        self.legend.clear()
        self._gantt_result = None
        self._structs = []
        self.tree_pair.clear()
        self.tree_pair_action.setVisible(False)
        self.time_label.setText(" running… ")
        self.results.forget_unanswered()
        self.show_status(f"Running {label}…")

    def _run_ended_without_result(self) -> None:
        """A run refused or cancelled: it cleared the last replay when it started, so there is none."""
        self.time_label.setText(" no run ")

    def _document_replaced(self) -> None:
        """Runs, replay, overlays, results and plots belong to the document they ran on: all go when
        another document opens (or New)."""
        self.sim_panel.runner.shutdown()
        self.sim_panel.reset()
        self.replayer.clear()
        self.rings_overlay.hide()
        self.legend.clear()
        self.session = new_session()
        self._gantt_result = None
        self._structs = []
        self.tree_pair.clear()
        self.tree_pair_action.setVisible(False)
        self.results.clear()
        self.live_plots.clear()
        self.sweep_plot.clear()
        self.gantt.clear()
        self.scrubber.setValue(0)
        self.time_label.setText(" no run ")

    def _show_result(self, request, result) -> None:
        if request.document:
            stamp(result, request.document)
        name = request.document.get("name") or self.document.topology.name
        self._gantt_result = None
        self.rings_overlay.hide()
        self.results.forget_unanswered()
        shown = result[-1] if request.kind == "sweep" else result
        # what the worker read of the run for the replay (replay_facts.prepare) goes to the replay, not
        # into the session with the run (compact keeps what was set on a result)
        facts = vars(shown).pop("replay_facts", None) if hasattr(shown, "__dict__") else None
        store = SESSION_STORES.get(request.kind)
        if store:
            # Runs that are no longer on screen keep what the report needs, not their replay record:
            # a long session would otherwise hold every transfer of every run.
            self.session["runs"] = [compact(r) for r in self.session["runs"]]
            self.session["sweeps"] = [[compact(r) for r in sw] for sw in self.session["sweeps"]]
            if request.kind == "sweep":
                result = [*(compact(r) for r in result[:-1]), result[-1]]
            self.session[store].append(result)
        if request.kind == "collective":
            self.results.show_collective(request, result, name)
            self.live_plots.show_result(result.sim, steps=facts.link_steps if facts is not None else None)
            self.replayer.load(result.sim, facts)
            self._show_structure(result, f"{result.collective} with {result.algorithm}")
            self.plot_tabs.setCurrentWidget(self.live_plots)
        elif request.kind == "sweep":
            self.results.show_sweep(request, result, name)
            first = result[0]
            # the bound is the topology's for the collective, whichever algorithm (the CLI's "any algorithm")
            self.sweep_plot.add_curve(f"{name}: {first.collective} {first.requested_algorithm}",
                                      [r.size_bytes for r in result], [r.busbw_Bps for r in result], first.bound_busbw_Bps,
                                      f"{name}: {first.collective}",
                                      "" if first.collective == "all-to-all" else " (any algorithm)")
            self.replayer.load(result[-1].sim, facts)
            self._show_structure(result[-1], f"{first.collective} with {result[-1].algorithm} "
                                             f"at {format_size(result[-1].size_bytes)}")
            self.plot_tabs.setCurrentWidget(self.sweep_plot)
        elif request.kind == "pipeline":
            self.results.show_pipeline(request, result, name)
            self._gantt_result = result
            self.gantt.row_names = {d: device_words(self.document.topology, d)  # as the canvas names them
                                    for d in dict.fromkeys(e["device"] for e in result.timeline)}
            self.gantt.set_result(result)
            self.replayer.load(result.sim)
            self.rings_overlay.show_stages(result.spec.stage_gpus)
            self.legend.show_run(f"{result.spec.schedule} pipeline", [("stage order", QColor(RING_COLORS[0]), "line")],
                                 {k: v for k, v in STATE_COLORS.items() if k in ("sending", "computing")})
            self.plot_tabs.setCurrentWidget(self.gantt)
        else:
            self.results.show_training(request, result, name)
            self.time_label.setText(" training: no replay ")   # not " running… " for good
        self.results_dock.raise_()
        self._fit_results_dock()
        self.show_status(f"Done: {request.label}")

    def _show_unanswered(self, label: str, message: str) -> None:
        """A request that gave no result: its red line in the Results dock, brought forward as a
        result is (behind the Findings tab, as a first start leaves it, the line went unseen)."""
        self.results.show_unanswered(label, message)
        self.results_dock.raise_()
        self._fit_results_dock()

    def _fit_results_dock(self) -> None:
        """Grow the Results dock to show the whole summary, up to half the window (it scrolls beyond,
        so the window never outgrows the screen); a dock the user made taller stays so."""
        want = min(self.results.sizeHint().height() + 48, self.height() // 2)   # + the title bar and margins
        if self.results_dock.height() < want:
            self.resizeDocks([self.results_dock], [want], Qt.Orientation.Vertical)

    def _show_structure(self, result, title: str) -> None:
        """Draw the run's rings, trees or fans on the canvas and explain them in the legend."""
        classes = result.schedule.meta.get("classes") if getattr(result, "schedule", None) is not None else None
        structs = structures(result.sim, result.rings, classes.flows if classes is not None else None,
                             dict(zip(classes.pairs, classes.count.tolist())) if classes is not None else None,
                             self.replayer.facts if self.replayer.sim is result.sim else None)   # (read once, by the replay)
        trees = [st for st in structs if st.kind == "tree"]
        pairs = (len(trees) + MAX_TREES_DRAWN - 1) // MAX_TREES_DRAWN
        self._structs = structs
        self.tree_pair.clear()
        double = all(t.label.startswith("tree ") for t in trees)   # NCCL's double binary trees, in pairs
        for k in range(pairs):
            shown = trees[MAX_TREES_DRAWN * k:MAX_TREES_DRAWN * (k + 1)]
            roots = ", ".join(self._device_name(t.root) for t in shown)
            # CollNet's trees are one per rail, not pairs: named by their own labels, as the legend does
            what = f"tree pair {k}" if double else " and ".join(t.label for t in shown)
            self.tree_pair.addItem(f"{what} (roots {roots})", k)
        if pairs > 1:
            self.tree_pair.addItem(f"all {len(trees)} trees", None)
        self.tree_pair_action.setVisible(pairs > 1)
        if self.sim_panel.show_rings.isChecked():
            self.rings_overlay.show_structures(structs, self.replayer.color_for, 0)
        names = self.document.topology.devices
        series = []
        ring_names, channels = ring_words(structs, getattr(result, "channels", None) if getattr(result, "protocol", None) else None)
        for st in structs:
            color = self.replayer.color_for(st.label)
            if st.kind == "ring":
                series.append((ring_names.get(st.label) or f"{st.label}: {counted(len(st.order), 'GPU')}", color, "line"))
            elif st.kind == "tree":
                root = names[st.root].name if st.root in names else st.root
                series.append((f"{st.label}: root {root}, {max(st.depth.values(), default=0)} levels", color, "line"))
            elif st.hubs:   # the dashed rings round the switches are drawn with "show rings" only
                drawn = "dashed ring" if self.sim_panel.show_rings.isChecked() else "a dashed ring with show rings"
                series.append((f"{st.label} in {len(st.hubs)} switch{'es' if len(st.hubs) > 1 else ''} ({drawn})",
                               color, "line"))
            else:
                count = f"over {st.transfers:,}" if st.more else f"{st.transfers:,}"
                what = f"{count} transfer{'s' if st.transfers != 1 else ''}"
                series.append((what if st.label == "transfers" else f"{st.label}: {what}", color, "line"))
        states = {k: v for k, v in STATE_COLORS.items() if k in ("sending", "reducing", "idle")}
        self.legend.show_run(title, series, states, trees=bool(trees), note=channels)

    _structs: list = []

    def _device_name(self, dev_id: str | None) -> str:
        devices = self.document.topology.devices
        return devices[dev_id].name if dev_id in devices else str(dev_id)

    def _draw_tree_pair(self, index: int) -> None:
        """Draw the pair of trees chosen in the replay bar (or all of them) over the canvas."""
        if not self._structs or not self.sim_panel.show_rings.isChecked():
            return
        self.rings_overlay.show_structures(self._structs, self.replayer.color_for, self.tree_pair.itemData(index))
        self.show_status(f"Drawing {self.tree_pair.itemText(index)}")

    def export_current_plot(self, path: str | None = None) -> str | None:
        if not isinstance(path, str):  # a menu action passes its checked state
            path = None
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

