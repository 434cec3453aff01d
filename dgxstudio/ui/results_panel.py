"""The Results dock: the latest run's figures and bottlenecks, and a table comparing every run of the
session (the Simulation dock, sim_panel.py, starts the runs)."""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (QFrame, QHeaderView, QLabel, QListWidget, QListWidgetItem, QScrollArea, QSizePolicy,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..sim.latency_bound import limit_words
from ..sim.results import capacity_words
from ..sim.ring_bound_note import rings_alone_words
from ..sim.tuning import PROTOCOL_LABELS
from ..sim.training_words import (breakdown_rows, critical_headline, critical_reason, data_parallel_words, memory_words,
                                  pipeline_words)
from ..units import counted, format_size, format_time
from .sim_panel import LINKS_ROLE, RunRequest, _figures

class _SummaryArea(QScrollArea):
    """The run's summary, and above it what a request that gave no result said: as tall as their text
    wants while the dock has room, scrolled beyond, so a long summary (a training run's ten lines) never
    makes the window taller than the screen (the lecture's A100 pair made its minimum height 883 px,
    more than a 1280x800 laptop's; the red line, outside the area, made it 811 after a refused run)."""

    def __init__(self, *labels: QLabel):
        super().__init__()
        texts = QWidget()
        column = QVBoxLayout(texts)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(3)
        for label in labels:
            column.addWidget(label)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setWidget(texts)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        # never taller than its text (a dock's spare height went here and the label centred its text
        # in it: an empty band above the summary); the bottleneck list takes the spare height
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

    def _text_height(self) -> int:
        return self.widget().heightForWidth(max(self.viewport().width(), 200)) + 2 * self.frameWidth()

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._text_height())

    def minimumSizeHint(self) -> QSize:
        """All of a short summary (a collective's three lines), at most MIN_LINES of a long one."""
        line = self.widget().fontMetrics().lineSpacing()
        return QSize(super().minimumSizeHint().width(), max(line, min(self._text_height(), self.MIN_LINES * line)))

    MIN_LINES = 4

    def resizeEvent(self, event) -> None:
        """Its hint is the text's height at its width: a new width, a new hint (the summary is set while
        the dock waits behind the Findings tab, at a width that wraps it to five lines: the area kept
        that height once the dock was raised, two blank lines under three of text)."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()


class _SummaryLabel(QLabel):
    """A label of the summary's area, whose hint follows its text, shown or hidden."""

    def setText(self, text: str) -> None:
        super().setText(text)
        self._area_follows()

    def setVisible(self, visible: bool) -> None:
        super().setVisible(visible)
        self._area_follows()

    def _area_follows(self) -> None:
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:
            area.updateGeometry()


class _Compact:
    """A list or table that asks for its first rows (``rows_height``), never less than its minimum
    height, not Qt's usual 192 px: the dock's layout takes the same amount from every part it must
    shrink, so those hints left the summary two lines."""

    def rows_height(self) -> int:
        """The height its first rows ask for (the subclass says which): the hint never falls below
        the minimum height."""
        return 0

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), max(self.rows_height(), self.minimumHeight()))

    def minimumSizeHint(self) -> QSize:
        """The minimum height set (a layout grows a hint to this: a scroll area's own is 70 px)."""
        return QSize(super().minimumSizeHint().width(), self.minimumHeight())


class _CompactList(_Compact, QListWidget):
    """Asks for up to ROWS of its rows, so a dock grown to the panel's hint (window_replay.py's
    _fit_results_dock) shows them; it takes the dock's spare height and scrolls beyond."""

    ROWS = 8

    def rows_height(self) -> int:
        rows = min(self.count(), self.ROWS)
        return rows * self.sizeHintForRow(0) + 2 * self.frameWidth() if rows else 0


class _CompactTable(_Compact, QTableWidget):
    """Asks for its header and up to ROWS of its rows; scrolls beyond."""

    ROWS = 3

    def rows_height(self) -> int:
        rows = min(self.rowCount(), self.ROWS)
        return (self.horizontalHeader().sizeHint().height() + sum(self.rowHeight(r) for r in range(rows))
                + 2 * self.frameWidth())


class ResultsPanel(QWidget):
    """The latest run's figures and bottlenecks, and a table comparing every run of the session."""

    linksClicked = Signal(list)
    COLUMNS = ["this session's runs", "topology", "GPUs", "time", "algbw GB/s", "busbw GB/s", "% of bound"]

    def __init__(self):
        super().__init__()
        self.summary = _SummaryLabel("No run yet")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bottlenecks = _CompactList()
        # four rows however short the dock (the table shrinks to its header and a row first)
        self.bottlenecks.setMinimumHeight(4 * self.bottlenecks.fontMetrics().height() + 2 * self.bottlenecks.frameWidth())
        self.table = _CompactTable(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(50)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)   # the list takes the rest
        # a request that gave no result, above the last run's summary, which stays (show_unanswered)
        self.unanswered = _SummaryLabel()
        self.unanswered.setWordWrap(True)
        self.unanswered.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.unanswered.hide()
        self.summary_area = _SummaryArea(self.unanswered, self.summary)
        self.bottlenecks_label = QLabel("Bottleneck links (click to select on the canvas):")
        self.bottlenecks_label.setWordWrap(True)   # the latency-bound form is longer than a narrow dock
        layout = QVBoxLayout(self)
        # tight margins, no "Runs this session:" line (the table's header says it): at 1280x768 the
        # dock is 214 px whatever it holds (the Simulation dock above needs 428), and what they took
        # left the bottleneck list two rows
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(3)
        layout.addWidget(self.summary_area)
        layout.addWidget(self.bottlenecks_label)
        layout.addWidget(self.bottlenecks, 1)   # the dock's spare height
        layout.addWidget(self.table)
        self.bottlenecks.itemClicked.connect(lambda item: self.linksClicked.emit(item.data(LINKS_ROLE) or []))

    @staticmethod
    def namer(obj_id: str) -> str:
        """The name shown for a device id (the window sets this to the document's names)."""
        return obj_id

    def show_unanswered(self, label: str, message: str) -> None:
        """A request that ended without a result (``message``, the status bar's words, in full; ``label``
        the run's, "" for a form the panel refused), in red above the summary, which is of the last run
        that finished and says so: a refused run left that run's figures under nothing saying they
        were not the answer (the refusal only in a status bar that cut it off)."""
        rows = self.table.rowCount()
        last = self.table.item(rows - 1, 0).text() if rows else ""
        self.unanswered.setText(
            f'<b style="color:#c0392b">{html.escape(message, quote=False)}</b>'
            + (f"<br>Request: {html.escape(label, quote=False)}" if label else "")
            + (f"<br><i>Below: the last run that finished ({html.escape(last, quote=False)})</i>" if last else ""))
        self.unanswered.show()

    def forget_unanswered(self) -> None:
        """A run started or a result shown: the last request is no longer one without a result."""
        self.unanswered.hide()
        self.unanswered.clear()

    def clear(self) -> None:
        """Forget every run (another document was opened)."""
        self.forget_unanswered()
        self.summary.setText("No run yet")
        self._bottlenecks([])
        self.table.setRowCount(0)

    def _bottlenecks(self, items: list[dict] | None, why: str | None = None, run=None, at: str = "") -> None:
        """The run's bottleneck links; None hides the list (a training run names link classes instead).
        ``why`` no link limited the run (sim/latency_bound.py): its busiest links, not called that.
        ``at``: the size they are of, for a sweep (" at 4 GiB"), whose rows are of every size."""
        self.bottlenecks.setVisible(items is not None)
        self.bottlenecks_label.setVisible(items is not None)
        self.bottlenecks_label.setText(
            f"Busiest links{at}, none a bottleneck: the run is {why.split(':')[0]} (click to select on the canvas):"
            if why is not None else f"Bottleneck links{at} (click to select on the canvas):")
        self.bottlenecks.clear()
        for b in items or []:
            item = QListWidgetItem(f"{self.namer(b['from'])} → {self.namer(b['to'])}: {100 * b['utilization']:.1f}% busy,"
                                   f" {capacity_words(b, run)}")
            item.setData(LINKS_ROLE, b["links"])
            item.setToolTip(f"links {', '.join(b['links'])}; click to select them on the canvas")
            self.bottlenecks.addItem(item)
        self.bottlenecks.updateGeometry()   # its hint follows its rows

    def _row(self, cells: list[str]) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, text in enumerate(cells):
            self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.updateGeometry()   # its hint follows its rows

    def show_collective(self, request: RunRequest, r, topology_name: str) -> None:
        nccl = ""
        if getattr(r, "protocol", None):
            label = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}.get(r.protocol, r.protocol)
            nccl = f" ({label}, {counted(r.channels, 'channel')})"
        self.summary.setText(
            f"<b>{r.collective}</b> with <b>{r.algorithm}</b>{nccl} on {counted(len(r.gpus), 'GPU')}, {format_size(r.size_bytes)}<br>"
            f"time {format_time(r.time_s)} — algorithm bandwidth {r.algbw_Bps / 1e9:.2f} GB/s — bus bandwidth "
            f"<b>{r.busbw_Bps / 1e9:.2f} GB/s</b> = {100 * r.fraction_of_bound:.1f}% of the topology's "
            f"{r.bound_busbw_Bps / 1e9:.2f} GB/s{rings_alone_words(r.rings_alone_Bps)}, "
            f"at {_figures(r)} link figures"
            + (f"<br><b>{why[0].upper()}{why[1:]}</b>" if (why := limit_words(r.sim)) is not None else "")
            + f"<br><i>{r.reason}</i>")
        self._bottlenecks(r.sim.bottlenecks(10), why, r)
        self._row([request.label + _chosen(r), topology_name, str(len(r.gpus)), format_time(r.time_s), f"{r.algbw_Bps / 1e9:.2f}",
                   f"{r.busbw_Bps / 1e9:.2f}", f"{100 * r.fraction_of_bound:.1f}"])

    def show_pipeline(self, request: RunRequest, r, topology_name: str) -> None:
        per_stage = (f" ({100 * r.stage_bubble_fraction:.1f}% of the worst stage's span, the zero-bubble paper's measure)"
                     if r.spec.schedule.startswith("zb") else "")
        self.summary.setText(f"<b>{r.spec.schedule}</b> pipeline: makespan {format_time(r.makespan_s)}, bubble "
                             f"{100 * r.bubble_fraction:.1f}%{per_stage}, micro-batches whose activations a stage holds at most "
                             f"{r.peak_inflight}")
        self._bottlenecks(r.sim.bottlenecks(10))
        self._row([request.label, topology_name, str(r.spec.stages), format_time(r.makespan_s), "", "", ""])

    def show_training(self, request: RunRequest, r, topology_name: str) -> None:
        parts = "<br>".join(f"{what}: {t}" + (f" (bottleneck: {neck})" if neck else "") for what, t, neck in breakdown_rows(r))
        critical = critical_reason(r) if r.details.get("critical_resource_words") else None
        headline = critical_headline(r)
        verdicts = r.details.get("verdicts") or {}
        lines = [f"{key}: {v['limit']} limits (NVLink offers {v['offered_ratio']:.2f}x the network, needs "
                 f"{v['required_ratio']:.2f}x)" for key, v in verdicts.items() if isinstance(v, dict)]
        if "why_they_differ" in verdicts:
            lines.append(f"why: {verdicts['why_they_differ']}")
        busy = ", ".join(f"{k} {100 * v:.1f}%" for k, v in (r.details.get("busy_fraction") or {}).items())
        # The headline first (the time, the critical resource and how busy each class was, as the CLI
        # gives them), the breakdown and the verdicts after: the summary scrolls past its first lines.
        self.summary.setText(f"<b>Iteration</b> {format_time(r.iteration_s)}, {r.samples_per_s:,.1f} samples/s"
                             + (f"<br><b>{headline[:1].upper() + headline[1:]}</b> - {critical}" if critical else "")
                             + (f"<br><b>Busy fraction per link class:</b> {busy}" if busy else "")
                             + _memory_line(r)
                             + f"<br>{parts}"
                             + (f"<br>pipeline: {pipeline_words(r)}" if pipeline_words(r) else "")
                             + (f"<br>data-parallel: {data_parallel_words(r)}" if data_parallel_words(r) else "")
                             + ("<br><b>Verdicts</b> " + "<br>".join(lines) if lines else ""))
        self._bottlenecks(None)
        self._row([request.label, topology_name, str(r.dp * r.tp * r.pp), format_time(r.iteration_s), "", "", ""])

    def show_sweep(self, request: RunRequest, rows, topology_name: str) -> None:
        last = rows[-1]
        # the label says "sweep" already ("all-reduce auto sweep 1 KiB..1 GiB"): no "Sweep" before it
        self.summary.setText(f"<b>{request.label}</b>: {len(rows)} sizes; at {format_size(last.size_bytes)} bus "
                             f"bandwidth {last.busbw_Bps / 1e9:.2f} GB/s ({100 * last.fraction_of_bound:.1f}% of the bound "
                             f"{last.bound_busbw_Bps / 1e9:.2f} GB/s{rings_alone_words(last.rings_alone_Bps)}, "
                             f"at {_figures(last)} link figures)"
                             + (f"<br>at {format_size(last.size_bytes)}: {why}"
                                if (why := limit_words(last.sim)) is not None else ""))
        self._bottlenecks(last.sim.bottlenecks(10), why, last, f" at {format_size(last.size_bytes)}")
        for r in rows:
            self._row([f"{request.label} @ {format_size(r.size_bytes)}{_chosen(r)}", topology_name, str(len(r.gpus)),
                       format_time(r.time_s), f"{r.algbw_Bps / 1e9:.2f}", f"{r.busbw_Bps / 1e9:.2f}",
                       f"{100 * r.fraction_of_bound:.1f}"])


def _chosen(r) -> str:
    """What NCCL's choice made of a run's request, for its row in the runs table (the CLI's table has
    algorithm and protocol columns): " → tree/LL128" after auto, " → LL128" after a forced algorithm
    with the protocol left to auto, nothing when the label says both (the protocol forced)."""
    proto = PROTOCOL_LABELS.get(r.protocol or "")
    if r.requested_algorithm == "auto":
        return f" → {r.algorithm}" + (f"/{proto}" if proto else "")
    return f" → {proto}" if proto and r.options.protocol == "auto" else ""


def _memory_line(r) -> str:
    """The training run's GPU memory line; a stage that does not fit in red, before the breakdown
    (a run whose model cannot be held is not a run to read times from)."""
    words = memory_words(r, "split the model over more GPUs (Tensor (tp), Pipeline (pp))")
    if not words:
        return ""
    if r.details["memory"].get("fits") is False:
        return f'<br><b style="color:#c0392b">Memory:</b> <span style="color:#c0392b">{html.escape(words)}</span>'
    return f"<br><b>Memory:</b> {html.escape(words)}"
