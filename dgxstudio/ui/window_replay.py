"""The main window's replay toolbar and what the simulation results show in the window."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel, QSlider, QToolBar

from .plots import export_plot


class ReplayActions:
    """Mixed into MainWindow: the replay bar, and showing a finished run in results, plots and replay."""

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
        export_plot(item, view, path)
        self.show_status(f"Exported {path}")
        return path

