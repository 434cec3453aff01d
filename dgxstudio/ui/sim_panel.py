"""The Simulation dock: collective, pipeline and training tabs with Run, Cancel and progress (the
Results dock that shows what they ran is results_panel.py).

Runs use a frozen copy of the topology (taken at the first Run after an edit and shared until the
next), in a worker thread, so the user can keep editing while a run goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QSpinBox, QTabWidget, QVBoxLayout, QWidget)

from ..analysis.gpuset import GpuSetError, select_gpus
from ..report.provenance import document_ref
from ..sim.training import TrainingError
from ..sim.collectives import COLLECTIVES
from ..sim.engine import SimulationCancelled
from ..sim.pipeline import SCHEDULES, PipelineSpec, run_pipeline
from ..sim.run import (ALGORITHMS, DEFAULT_CHUNK, NCCL, SUPPORTED, SimOptions, Simulator, cuts_in_chunks,
                       sweep_sizes)
from ..sim.ring_bound_note import rings_alone_Bps
from ..sim.setup_steps import EngineBegins, Setup, of_run
from ..sim.training import ModelSpec, stage_times, train_iteration
from ..sim.tuning import PROTOCOL_LABELS, protocol_words
from ..units import counted, format_size, format_time, parse_size, parse_time
from .document import Document
from .nccl_settings import NcclSettings
from .replay_facts import Preparing, prepare as prepare_replay
from .workers import TaskRunner, refused

LINKS_ROLE = Qt.ItemDataRole.UserRole + 3


def _note(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


@dataclass
class RunRequest:
    kind: str  # "collective", "sweep", "pipeline", "train"
    label: str
    total_bytes: float = 0.0
    document: dict = field(default_factory=dict)  # the document it runs on: name and content hash


class SimulationPanel(QWidget):
    """Inputs and controls; emits the finished result for the results dock, plots and canvas."""

    resultReady = Signal(object, object)   # (RunRequest, result)
    progressed = Signal(object, object)    # (RunRequest, Progress)
    message = Signal(str)
    # a request that gave no result (refused, failed, cancelled): (its run's label, "" for a refused
    # form; the status bar's message), for the Results dock, which still shows the last run's
    unanswered = Signal(str, str)

    def __init__(self, document: Document, selected_gpus):
        super().__init__()
        self.document = document
        self.selected_gpus = selected_gpus  # callable: GPUs selected on the canvas
        self.runner = TaskRunner(self)
        self.request: RunRequest | None = None
        self._ran = False   # the current request's run got past its setup (a report from its engine)
        self.tabs = QTabWidget()
        common = QFormLayout()   # what every tab's run uses: which GPUs, and at which link figures
        self.gpu_set = QComboBox()
        self.gpu_set.setToolTip('Which GPUs take part: all, those selected on the canvas, or a group')
        self.figures = QComboBox()
        self.figures.addItems(["achievable", "peak"])
        self.figures.setToolTip("achievable: what nccl-tests measure on real links (default, as on the command line); "
                                "peak: the white-paper bound. Collectives, pipelines and training iterations alike")
        for combo in (self.gpu_set, self.figures):   # a long group name must not widen the dock (and shrink the canvas)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        common.addRow("GPUs", self.gpu_set)
        common.addRow("Link figures", self.figures)
        self.tabs.addTab(self._collective_tab(), "Collective")
        self.tabs.addTab(self._pipeline_tab(), "Pipeline")
        self.tabs.addTab(self._training_tab(), "Training")
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip('Run the simulation set up below on this design (Ctrl+R); a run in progress is replaced')
        self.run_button.setObjectName("runButton")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip('Stop the running simulation (Ctrl+.)')
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.state = QLabel("Ready")
        self.state.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        self.progress.setMinimumWidth(40)   # (its "100%" must not widen the dock)
        buttons.addWidget(self.progress, 1)   # beside the buttons: the row the common choices took (a 768-px screen)
        layout = QVBoxLayout(self)
        layout.addLayout(common)
        layout.addWidget(self.tabs)
        layout.addLayout(buttons)
        layout.addWidget(self.state)
        layout.addStretch(1)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self._on_cancelled)
        document.topologyReplaced.connect(self.refresh_groups)
        document.modelChanged.connect(lambda e: e.kind in ("group_added", "group_removed", "reset", "batch")
                                      and self.refresh_groups())
        self.refresh_groups()

    # ---- forms ------------------------------------------------------------------------------------
    def _collective_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.collective = QComboBox()
        self.collective.setToolTip('The collective operation, as nccl-tests names it')
        self.collective.addItems(COLLECTIVES)
        self.algorithm = QComboBox()
        self.algorithm.setToolTip("How the collective is carried out: auto lets NCCL's cost model pick; ring, tree, nvls and collnet are NCCL's algorithms")
        self.algorithm.addItems(ALGORITHMS)
        self.size = QLineEdit("256MiB")
        self.size.setToolTip('Bytes per GPU, e.g. 256MiB, 1GB, 4096')
        self.chunk = QLineEdit(format_size(DEFAULT_CHUNK).replace(" ", ""))
        self.chunk.setToolTip("Pipelining chunk of the textbook and lecture algorithms and of nvls; NCCL's ring, tree,"
                              " nvls-tree and collnet pipeline in NCCL's own slices (the box is off for them)")
        self.protocol = QComboBox()
        self.protocol.addItems(["auto", "ll", "ll128", "simple"])
        self.protocol.setToolTip(protocol_words())   # (`simulate --protocol`'s help, word for word)
        self.sweep = QCheckBox("size sweep")
        self.sweep.setToolTip('Run every power-of-two size in the range instead of one size')
        self.sweep_range = QLineEdit("1KiB:4GiB")
        self.sweep_range.setToolTip('Smallest and largest size of the sweep, e.g. 1KiB:4GiB')
        self.sweep_range.setEnabled(False)   # read only with "size sweep" ticked
        self.sweep.toggled.connect(self.sweep_range.setEnabled)
        self.show_rings = QCheckBox("show rings")
        self.show_rings.setToolTip("draw the rings used by the run over the canvas, one colour each")
        for label, widget in (("Collective", self.collective), ("Algorithm", self.algorithm), ("Size", self.size),
                              ("Protocol", self.protocol), ("Chunk", self.chunk), (self.sweep, self.sweep_range), ("", self.show_rings)):
            f.addRow(label, widget)
        self.nccl = NcclSettings()   # NVLink SHARP, PXN, GPUs per thread: `simulate`'s --no-nvls, --pxn, -g
        f.addRow(self.nccl)
        # NCCL's protocols only for NCCL's algorithms: the lecture's and all-to-all run without them
        # (the CLI refuses --protocol there), so the box says so instead of being read as used
        for box in (self.algorithm, self.collective):
            box.currentTextChanged.connect(self._protocol_applies)
        # the algorithms a collective cannot run are greyed out in the list, as `simulate` refuses them
        self._algorithm_wanted: str | None = None   # the user's pick set aside while the collective cannot run it
        self._algorithm_setting = False
        self.algorithm.currentTextChanged.connect(self._algorithm_picked)
        self.collective.currentTextChanged.connect(self._algorithms_apply)
        self._algorithms_apply()
        return w

    def _algorithms_apply(self) -> None:
        """Grey out what the collective cannot run; an algorithm so greyed out is not left selected (Run
        would refuse it): auto takes its place, and the user's pick comes back when a collective that
        runs it is chosen again, unless the user picked another one meanwhile."""
        runs = SUPPORTED.get(self.collective.currentText(), ())
        model = self.algorithm.model()
        for i in range(self.algorithm.count()):
            name = self.algorithm.itemText(i)
            model.item(i).setEnabled(name == "auto" or name in runs)
        current, wanted = self.algorithm.currentText(), self._algorithm_wanted
        if current != "auto" and current not in runs:
            self._algorithm_set("auto")
            self._algorithm_wanted = current
        elif wanted is not None and wanted in runs:
            self._algorithm_set(wanted)
            self._algorithm_wanted = None

    def _algorithm_set(self, name: str) -> None:
        """Select ``name`` for the user (not counted as the user's own pick)."""
        self._algorithm_setting = True
        try:
            self.algorithm.setCurrentText(name)
        finally:
            self._algorithm_setting = False

    def _algorithm_picked(self) -> None:
        """The user chose an algorithm: an earlier pick set aside for a collective is no longer wanted."""
        if not self._algorithm_setting:
            self._algorithm_wanted = None

    def _protocol_applies(self) -> None:
        algorithm = self.algorithm.currentText()
        self.protocol.setEnabled(algorithm in (*NCCL, "auto") and self.collective.currentText() != "all-to-all")
        # the chunk likewise: NCCL's ring, tree, nvls-tree and collnet ignore it (`simulate --chunk`'s help)
        self.chunk.setEnabled(algorithm == "auto" or self.collective.currentText() == "all-to-all"
                              or cuts_in_chunks(algorithm))

    def _pipeline_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.schedule = QComboBox()
        self.schedule.setToolTip('Pipeline schedule: GPipe (all forwards, then all backwards), 1F1B, interleaved, or the '
                                 'zero-bubble ones (backward split into input and weight gradients): ZB-H1 at 1F1B\'s '
                                 'memory, ZB-H2 with twice it, ZB-V with two model chunks per GPU in a V')
        self.schedule.addItems(SCHEDULES)
        self.stages = QSpinBox()
        self.stages.setToolTip('Pipeline stages, one GPU each, in the order of the GPU set')
        self.stages.setRange(1, 1024)
        self.stages.setValue(4)
        self.microbatches = QSpinBox()
        self.microbatches.setToolTip('Micro-batches per iteration')
        self.microbatches.setRange(1, 4096)
        self.microbatches.setValue(8)
        self.chunks = QSpinBox()
        self.chunks.setToolTip('Model chunks per GPU (interleaved schedule; ZB-V always uses 2)')
        self.chunks.setRange(1, 16)
        self.from_model = QCheckBox("from the model")
        self.from_model.setToolTip("times and boundary bytes from GPT-3 XL (24 layers, hidden 2048, sequence 2048),"
                                   " fp16 at 50% of the GPUs' catalog peak")
        self.fwd = QLineEdit("2ms")
        self.fwd.setToolTip("one time for every stage, or one per stage: 2ms,3ms,2ms,2ms")
        self.bwd = QLineEdit("4ms")
        self.bwd.setToolTip(self.fwd.toolTip())
        self.activation = QLineEdit("16MiB")
        self.activation.setToolTip('Bytes sent from one stage to the next per micro-batch (0: compute only)')
        self.from_model.toggled.connect(lambda on: [w.setEnabled(not on) for w in (self.fwd, self.bwd, self.activation)])
        for label, widget in (("Schedule", self.schedule), ("Stages", self.stages), ("Micro-batches", self.microbatches),
                              ("Model chunks", self.chunks), ("Times", self.from_model), ("Forward", self.fwd),
                              ("Backward", self.bwd), ("Boundary bytes", self.activation)):
            f.addRow(label, widget)
        f.addRow(_note("Stages go on the first GPUs of the GPU set (above), in order; "
                       "times are per micro-batch."))
        return w

    def _training_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.dp, self.tp, self.pp = QSpinBox(), QSpinBox(), QSpinBox()
        self.dp.setToolTip("Data-parallel replicas: each holds the whole model and all-reduces gradients")
        self.tp.setToolTip("Tensor-parallel GPUs per layer: all-reduce inside every layer (keep it inside a system)")
        self.pp.setToolTip("Pipeline stages: the layers split across GPUs, activations sent stage to stage")
        for s in (self.dp, self.tp, self.pp):
            s.setRange(1, 100_000)
        self.tp.setValue(8)
        self.train_micro = QSpinBox()
        self.train_micro.setToolTip('Micro-batches per training iteration')
        self.train_micro.setRange(1, 4096)
        self.train_micro.setValue(8)
        self.train_schedule = QComboBox()   # the schedules `train --schedule` takes
        self.train_schedule.addItems(SCHEDULES)
        self.train_schedule.setCurrentText("1f1b")
        self.train_schedule.setToolTip("Pipeline schedule of every lane (with pp > 1): GPipe, 1F1B, Megatron's interleaved "
                                       "1F1B, or the zero-bubble ones, which split the backward into input and weight "
                                       "gradients")
        self.train_chunks = QSpinBox()   # `train --chunks`, for the interleaved schedule
        self.train_chunks.setRange(2, 16)
        self.train_chunks.setPrefix("x")   # "interleaved x2": model chunks per stage (a narrow row: 800 px screens)
        self.train_chunks.setToolTip("Interleaved schedule: model chunks per stage, x2 = two (Megatron's virtual pipeline size); "
                                     "the 24 layers must divide into pp x chunks")
        self.train_chunks.setEnabled(False)
        self.train_schedule.currentTextChanged.connect(lambda s: self.train_chunks.setEnabled(s == "interleaved"))
        self.experts = QSpinBox()   # a mixture-of-experts model, as `train --experts N --ep E`
        self.experts.setRange(0, 4096)
        self.experts.setToolTip("Experts per MoE layer, tokens routed to their top 2 (0: a dense model)")
        self.ep = QSpinBox()
        self.ep.setRange(1, 100_000)
        self.ep.setPrefix("ep ")
        self.ep.setToolTip("Expert parallelism (Megatron's expert-model-parallel size): the experts are split over "
                           "groups of this many data-parallel replicas, which exchange tokens by all-to-all; divides dp")
        self.overlap = QCheckBox("overlap")   # the gradients' all-reduce with the backward pass
        self.overlap.setChecked(True)
        self.overlap.setToolTip("all-reduce the gradients in 25 MiB buckets during the backward pass (PyTorch DDP)")
        for label, widget in (("Data (dp)", self.dp), ("Tensor (tp)", self.tp), ("Pipeline (pp)", self.pp),
                              ("Micro-batches", _side_by_side(self.train_micro, self.overlap)),
                              ("Schedule", _side_by_side(self.train_schedule, self.train_chunks)),
                              ("Experts, ep", _side_by_side(self.experts, self.ep))):
            f.addRow(label, widget)
        f.addRow(_note("Model: GPT-3 XL (24 x 2048, sequence 2048), fp16 at 50% of peak; MoE: top-2."))
        return w

    def refresh_groups(self) -> None:
        current = self.gpu_set.currentData()
        self.gpu_set.blockSignals(True)
        self.gpu_set.clear()
        self.gpu_set.addItem("All GPUs", "all")
        self.gpu_set.addItem("GPUs selected on the canvas", "@selection")
        for g in self.document.topology.groups.values():
            self.gpu_set.addItem(f"group {g.name}", f"group:{g.id}")
        index = self.gpu_set.findData(current)
        self.gpu_set.setCurrentIndex(max(index, 0))
        self.gpu_set.blockSignals(False)

    def gpus(self, topo) -> list[str]:
        spec = self.gpu_set.currentData() or "all"
        if spec == "@selection":
            chosen = [g for g in self.selected_gpus() if g in topo.devices and topo.devices[g].kind == "gpu"]
            if not chosen:
                raise GpuSetError("no GPUs are selected on the canvas")
            return chosen
        return select_gpus(topo, spec)

    # ---- running ----------------------------------------------------------------------------------
    def run(self) -> None:
        """Start the run set up in the form. The GUI thread only checks the form against the live
        document and takes a shallow snapshot of it (tens of milliseconds on a 59 MB cluster); the
        frozen copy the run reads and the provenance hash its result carries (about 3 s there) are
        made on a thread of their own, once per state of the document, while the event loop runs."""
        live = self.document.topology
        try:
            job, request = self._job(live)
        except (ValueError, GpuSetError, TrainingError) as exc:
            self.progress.reset()   # the form was refused, nothing ran: not "failed at 100%" from the last run's bar
            message = _form_words(str(exc), TAB_KINDS[min(self.tabs.currentIndex(), len(TAB_KINDS) - 1)])
            # nothing failed: the input was not accepted (as the window's "Not opened: ..."), and a run
            # still going on goes on (the buttons stay as they are)
            self._not_run("", message)
            return
        pending = live.frozen_copy_later({"document": document_ref})
        self.request = request
        self._ran = False
        self.progress.setValue(0)
        self.state.setText(f"Running {request.label}…")
        self.state.setToolTip("")
        self.run_button.setText("Restart")
        self.cancel_button.setEnabled(True)
        self.runner.start(_on_frozen_copy(pending, job), request.label)

    def _job(self, topo):
        """The job for the form, as ``job(frozen_topology, progress, cancel)``, and its request;
        ``topo`` (the live document) serves only to check the form and pick the GPUs."""
        tab = self.tabs.currentIndex()
        gpus = self.gpus(topo)
        achievable = self.figures.currentText() == "achievable"
        figures = f"{self.figures.currentText()} figures"   # in every run's label: the runs table compares them
        if tab == 0:
            options = SimOptions(chunk=_read("Chunk", parse_size, self.chunk.text()), achievable=achievable,
                                 protocol=self.protocol.currentText(), **self.nccl.options())
            collective, algorithm = self.collective.currentText(), self.algorithm.currentText()
            # a forced protocol in the label (runs of ring with LL and with LL128 read alike in the runs table)
            algorithm_words = algorithm + (f"/{PROTOCOL_LABELS[options.protocol]}" if self.protocol.isEnabled()
                                           and options.protocol != "auto" else "")
            figures += self.nccl.words()   # (", NVLS off", ", PXN on", ", -g 8": the settings said after the figures)
            if self.sweep.isChecked():
                lo, colon, hi = self.sweep_range.text().partition(":")
                if not (colon and lo.strip() and hi.strip()):   # ("cannot read ''" for the missing end)
                    raise ValueError(f"Sweep range: expected LOW:HIGH, e.g. 1KiB:4GiB, not {self.sweep_range.text()!r}")
                sizes = _read("Sweep range", sweep_sizes, _read("Sweep range", parse_size, lo),
                              _read("Sweep range", parse_size, hi))   # "4GiB:1KiB" names the field too
                label = f"{collective} {algorithm_words} sweep {format_size(sizes[0])}..{format_size(sizes[-1])}, {figures}"

                def sweep_job(topo, progress, cancel):
                    sim = Simulator(topo, gpus, options, cancel=cancel)
                    out = []
                    for i, s in enumerate(sizes):
                        out.append(sim.run(collective, algorithm, s, cancel=cancel))
                        out[-1].rings_alone_Bps = rings_alone_Bps(sim, out[-1])
                        progress(_Fraction((i + 1) / len(sizes)))
                    prepare_replay(out[-1], progress, cancel)   # (the run the replay shows)
                    return out
                return sweep_job, RunRequest("sweep", label)
            size = _read("Size", parse_size, self.size.text())
            label = f"{collective} {algorithm_words} {format_size(size)} on {counted(len(gpus), 'GPU')}, {figures}"

            def collective_job(topo, progress, cancel):
                sim = Simulator(topo, gpus, options, cancel=cancel, progress=progress)
                result = sim.run(collective, algorithm, size, progress, cancel)
                result.rings_alone_Bps = rings_alone_Bps(sim, result)   # the CLI's "NCCL's rings alone allow"
                prepare_replay(result, progress, cancel)   # (here, not on the GUI thread when the result is shown)
                return result
            return collective_job, RunRequest("collective", label, size * len(gpus))
        if tab == 1:
            p = self.stages.value()
            if p > len(gpus):
                raise ValueError(f"{counted(p, 'stage')} need {counted(p, 'GPU')}; the GPU set has {len(gpus)}")
            if self.from_model.isChecked():
                model = ModelSpec()
                fwd, bwd = stage_times(topo, gpus[:p], model)
                act = model.activation_bytes()
            else:
                fwd = _read("Forward", _per_stage, self.fwd.text(), p)
                bwd = _read("Backward", _per_stage, self.bwd.text(), p)
                act = (_read("Boundary bytes", parse_size, self.activation.text())
                       if self.activation.text().strip() not in ("", "0") else 0.0)
            share = model.weight_gradient_share() if self.from_model.isChecked() else 0.5
            spec = PipelineSpec(self.schedule.currentText(), p, self.microbatches.value(), gpus[:p], fwd, bwd, act,
                                self.chunks.value(), share)
            spec.check()
            label = (f"{spec.schedule} pipeline, {counted(p, 'stage')} x {counted(spec.microbatches, 'micro-batch', 'micro-batches')}, "
                     f"{figures}")

            def pipeline_job(topo, progress, cancel):
                return run_pipeline(topo, spec, achievable, progress=progress, cancel=cancel)
            return pipeline_job, RunRequest("pipeline", label)
        dp, tp, pp = self.dp.value(), self.tp.value(), self.pp.value()
        schedule, micro, overlap = self.train_schedule.currentText(), self.train_micro.value(), self.overlap.isChecked()
        experts, ep = self.experts.value(), self.ep.value()
        chunks = self.train_chunks.value() if schedule == "interleaved" and pp > 1 else 1
        label = (f"training iteration dp={dp} tp={tp} pp={pp}" + (f" ep={ep}" if ep > 1 else "")
                 + (f", {experts} experts" if experts else "")
                 + (f", {schedule}" + (f" x{chunks} chunks" if chunks > 1 else "") if pp > 1 else "") + f", {figures}")

        def train_job(topo, progress, cancel):
            return train_iteration(topo, gpus, dp, tp, pp, ModelSpec(experts=experts), micro, schedule, overlap=overlap,
                                   achievable=achievable, ep=ep, progress=lambda f, step: progress(_Fraction(f)),
                                   chunks=chunks)
        return train_job, RunRequest("train", label)

    def reset(self) -> None:
        """Back to idle for a new document: no run, no message from the last one."""
        self._idle()
        self.request = None
        self.progress.setValue(0)
        self.state.setText("Ready")
        self.refresh_groups()

    def _on_progress(self, p) -> None:
        if isinstance(p, Preparing):   # after the run (the bar stays full): its replay being prepared
            self.state.setText(f"Preparing the replay of {self.runner.label}: {p.step}… {p.fraction:.0%}")
            self.progressed.emit(self.request, p)
            return
        if isinstance(p, Setup):   # before the engine's first report: seconds on thousands of GPUs
            self.state.setText(f"Running {self.runner.label}… {p.step}")
        else:   # the engine's report (a sweep's, a pipeline's, a training run's: their runs'): past the setup
            self._ran = True
        if isinstance(p, EngineBegins):   # (no longer the last setup step's words, until the engine's first report)
            self.state.setText(f"Running {self.runner.label}… simulating")
        # a collective's bar: its setup's steps, then the engine's share (sim/setup_steps.py)
        collective = getattr(self.request, "kind", None) == "collective"
        self.progress.setValue(int(1000 * min(max(of_run(p) if collective else p.fraction, 0.0), 1.0)))
        if hasattr(p, "sim_time_s"):
            self.state.setText(f"Running {self.runner.label}… simulated {format_time(p.sim_time_s)}")
        self.progressed.emit(self.request, p)

    def _idle(self) -> None:
        self.run_button.setText("Run")
        self.cancel_button.setEnabled(False)

    def _on_finished(self, ran) -> None:
        self.request.document = dict(ran.document)
        result = ran.result
        self._idle()
        self.progress.setValue(1000)
        self.state.setText(f"Done: {self.request.label}")
        self.resultReady.emit(self.request, result)

    def _stopped_at(self, engine_only: bool = False) -> str:
        """How far a run got before it ended without a result; the bar is emptied (reset shows no
        figure: a bar left at 33% after a refusal read as a run still under way). ``engine_only``:
        nothing while the run was still setting up (a refusal there, e.g. nvls with NVLS off, did not
        fail part way through a run), as its reports tell (sim/setup_steps.py: the engine says when it
        begins; a sweep's, a pipeline's and a training run's reports are their runs')."""
        value = self.progress.value()
        self.progress.reset()
        if engine_only and not self._ran:
            return ""
        return f" at {value / 10:.0f}%" if value > 0 else ""

    def _tell(self, label: str, message: str) -> None:
        """A request that ended without a result: the status bar and the Results dock say it, and the
        state line's tip in full (a low window's dock cuts the line off)."""
        self.state.setToolTip(message)
        self.message.emit(message)
        self.unanswered.emit(label, message)

    def _not_run(self, label: str, message: str) -> None:
        """A request refused before anything ran (a form's input, or the core before its engine began)."""
        self.state.setText(f"Not run: {message}")
        self._tell(label, f"Not run: {message}")

    def _on_failed(self, message: str) -> None:
        message = _form_words(message, getattr(self.request, "kind", None))
        self._idle()
        where = self._stopped_at(engine_only=True)
        if not where and refused(message):
            # refused before the engine began (LL128 on sm60, nvls with NVLS off): nothing ran, nothing
            # failed, as a refused form; a run's label still says which request it was
            self._not_run(self.runner.label, message)
            return
        self.state.setText(f"Error: {message}")
        self._tell(self.runner.label, f"Simulation failed{where}, no result: {message}")

    def _on_cancelled(self) -> None:
        self._idle()
        where = self._stopped_at()
        self.state.setText("Cancelled")
        self._tell(self.runner.label, f"Simulation cancelled{where} (Cancel pressed), no result")


TAB_KINDS = ("collective", "pipeline", "train")   # what a run from each tab of the panel is (RunRequest.kind)
# the fields that stand for `--chunks` (model chunks per stage): the Pipeline tab's "Model chunks" box and
# the Training tab's count beside its Schedule ("interleaved x2")
_CHUNKS_FIELD = {"pipeline": ("the Model chunks box", r"Model chunks \1"),
                 "train": ("the chunks box beside Schedule", r"Schedule x\1")}
# the Training tab's fields for the other options a training run's refusal names ("--ep 3 must divide the
# data-parallel size 1" read as an option the panel does not have)
_TRAIN_FIELDS = ((r"--ep (\d+)", r"ep \1"), (r"--experts N\b", "Experts"),
                 (r"--experts (\d+)", r"Experts \1"), (r"--microbatches (\d+)", r"Micro-batches \1"),
                 (r"--(dp|tp|pp)\b", lambda m: {"dp": "Data (dp)", "tp": "Tensor (tp)", "pp": "Pipeline (pp)"}[m[1]]))


def _form_words(message: str, kind: str | None = None) -> str:
    """The core's refusals name the CLI's options; here the form's fields stand for them (the engine's
    "--chunk sets the pieces of the others" means this panel's Chunk box; a pipeline's "--chunks 3"
    its Model chunks box set to 3, a training run's the "x3" beside its Schedule); a refusal for the
    design's errors points at the Findings tab, as the CLI's points at `validate`."""
    message = message.replace("the topology has errors; fix them first: ",
                              "the topology has errors; fix them first (the Findings tab lists them): ")
    if kind in _CHUNKS_FIELD:
        box, valued = _CHUNKS_FIELD[kind]
        message = re.sub(r"--chunks (\d+)", valued, message)
        message = re.sub(r"--chunks\b", box, message)
    if kind == "train":
        for pattern, words in _TRAIN_FIELDS:
            message = re.sub(pattern, words, message)
    return re.sub(r"--chunk\b", "the Chunk box", message)


def _side_by_side(*widgets: QWidget) -> QWidget:
    """Several fields on one form row (the Training tab keeps the window within a 1280x800 screen)."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        row.addWidget(w)
    return box


def _figures(result) -> str:
    return "achievable" if result.options.achievable else "peak"


@dataclass
class _Ran:
    result: object
    document: dict  # name and content hash of the frozen copy it ran on


def _on_frozen_copy(pending, job):
    """The runner's job: wait (cancellably) for the frozen copy, then run ``job`` on it; the result
    comes back with the provenance of that copy."""
    def run(progress, cancel):
        topo = None
        while topo is None:
            if cancel.is_set():
                raise SimulationCancelled()
            topo = pending.wait(0.02)
        return _Ran(job(topo, progress, cancel), pending.derived.get("document") or document_ref(topo))
    return run


def _read(field: str, parse, *args):
    """A form field read by ``parse``; a refusal names the field ("Backward: cannot read time '-4ms'")."""
    try:
        return parse(*args)
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from None


def _per_stage(text: str, stages: int) -> list[float]:
    """'2ms' for every stage, or '2ms,3ms,...' one per stage."""
    values = [parse_time(x) for x in text.split(",") if x.strip()]
    if len(values) == 1:
        return values * stages
    if len(values) != stages:
        raise ValueError(f"give one time or {stages} (one per stage), not {len(values)}")
    return values


@dataclass
class _Fraction:
    fraction: float
