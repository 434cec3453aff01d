"""Live and result plots (pyqtgraph): throughput over time, link utilization, bus-bandwidth sweeps and
the pipeline Gantt chart. Every plot exports to PNG and SVG."""

from __future__ import annotations

import atexit
import math
import os
import weakref

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import numpy as np  # noqa: E402
import numpy.ma  # noqa: E402,F401 - imported on first use otherwise: 150 ms of GUI thread at the first result
import pyqtgraph as pg  # noqa: E402
import pyqtgraph.exporters  # noqa: E402,F401
from PySide6.QtCore import QEvent, QObject, Qt, Signal  # noqa: E402
from PySide6.QtGui import QColor, QFontMetricsF, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgGenerator  # noqa: E402
from PySide6.QtWidgets import QGraphicsWidget, QVBoxLayout, QWidget  # noqa: E402

from .first_frame import size_link_lists_when_shown  # noqa: E402
from .link_steps import UTIL_CURVES, busiest_steps  # noqa: E402
from .style import RING_COLORS  # noqa: E402
from ..units import counted  # noqa: E402

pg.setConfigOptions(antialias=True, background="w", foreground="k")


class _LaidOutWhenSeen:
    """A pyqtgraph view that lays its plots out for a new size only once it can be seen.

    Qt keeps a dock behind a tab "visible", moved off the window, so a window opening resized the
    live plots of the Plots dock (three plots, their axes and titles: 5-8 ms) inside its first frame
    although nobody sees them. The size is taken when the view is first painted (its tab raised) or
    exported, whichever comes first. The plots' first layout waits likewise: the layout requests
    their making posted were handled in the window's first frame (8-9% of it on a DGX preset, perf)."""

    _held = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._first = _LayoutHeld(self.centralWidget)   # None once the view has been seen
        _NEVER_SEEN.add(self)

    def resizeEvent(self, ev) -> None:
        if ev is not None and (self._first is not None or self.isVisible()
                               and self.viewport().visibleRegion().isEmpty()):
            self._held = True   # never painted, or behind a tab: laid out when painted (see paintEvent)
            return
        self._held = False
        super().resizeEvent(ev)

    def hold_too(self, *items) -> None:
        """Graphics widgets inside the central one that post layout requests of their own when made
        (plots, legends): they wait with it. The live plots' three and their legend were laid out in
        the window's first frame though their grid waited (8% of a DGX H100's, perf's stacks:
        QGraphicsGridLayout::setGeometry, QGraphicsWidget::updateGeometry)."""
        if self._first is not None:
            for item in items:
                self._first.hold(item)

    def lay_out_now(self) -> None:
        first, self._first = self._first, None
        if first is not None:
            first.release()
        if self._held:
            self._held = False
            super().resizeEvent(None)
        if first is not None:
            first.activate()

    def paintEvent(self, ev) -> None:
        self.lay_out_now()
        super().paintEvent(ev)

    def hideEvent(self, ev) -> None:
        """The window closing (or the dock): laid out now if never seen. Plots whose first layout never
        came were resized by Qt while their window was taken apart at the interpreter's exit, calling
        pyqtgraph's Python methods when Python was half gone (a crash in one exit of two)."""
        self.lay_out_now()
        super().hideEvent(ev)


_NEVER_SEEN: "weakref.WeakSet[_LaidOutWhenSeen]" = weakref.WeakSet()


@atexit.register
def _lay_out_before_exit() -> None:
    """Views still never seen at the interpreter's exit (a script that leaves its window open) are laid
    out while Python is whole: Qt would resize them as the window is taken apart, when it is not (a
    segfault at every exit of such a script; the app itself closes its window first, see hideEvent)."""
    for view in list(_NEVER_SEEN):
        try:
            view.lay_out_now()
        except RuntimeError:   # its Qt object is gone already
            pass


class _LayoutHeld(QObject):
    """Holds graphics widgets' layout requests until released, then lays them out when told."""

    def __init__(self, item) -> None:
        super().__init__()
        self.items: list = []
        self.hold(item)

    def hold(self, item) -> None:
        if not any(i is item for i in self.items):
            item.installEventFilter(self)
            self.items.append(item)

    def eventFilter(self, obj, event) -> bool:
        return event.type() == QEvent.Type.LayoutRequest

    def release(self) -> None:
        for item in self.items:
            item.removeEventFilter(self)

    def activate(self) -> None:
        """Outermost first: laying out the central widget sizes the plots inside, which lays them out;
        any left with a request dropped are laid out after it."""
        for item in self.items:
            layout = QGraphicsWidget.layout(item)   # (pyqtgraph's layouts hide the method with an attribute)
            if layout is not None:
                layout.activate()


class LayoutView(_LaidOutWhenSeen, pg.GraphicsLayoutWidget):
    pass


class PlotView(_LaidOutWhenSeen, pg.PlotWidget):
    pass


def export_plot(plot: pg.PlotItem | pg.GraphicsLayout, view: QWidget, path: str) -> None:
    """PNG (pyqtgraph, 1200 px wide) or SVG (Qt's own generator: pyqtgraph's SVG exporter cannot read
    the path syntax this Qt writes) by the file's extension."""
    from ..model.atomic import atomic_output  # a temporary file renamed over ``path``: never half a file

    if isinstance(view, _LaidOutWhenSeen):
        view.lay_out_now()   # a plot behind a tab may not have its size yet
    with atomic_output(path) as tmp:
        if path.lower().endswith(".svg"):
            generator = QSvgGenerator()
            generator.setFileName(tmp)
            generator.setSize(view.size())
            generator.setViewBox(view.rect())
            generator.setTitle("DGX Studio plot")
            painter = QPainter(generator)
            view.render(painter)
            painter.end()
            del painter, generator  # the SVG is complete once its generator is gone
            return
        exporter = pg.exporters.ImageExporter(plot)
        exporter.parameters()["width"] = 1200
        if not exporter.export(toBytes=True).save(tmp, "PNG"):
            raise OSError(5, "the PNG writer failed (disk full or not writable?)", path)


LEGEND_INSET = 10  # px between the busiest links' legend and the plot's top right corner


class LivePlots(QWidget):
    """Bytes delivered and throughput against simulated time; utilization of the busiest links."""

    pointClicked = Signal(list)  # link ids of a clicked utilization curve

    def __init__(self):
        super().__init__()
        self.layout_widget = LayoutView()
        QVBoxLayout(self).addWidget(self.layout_widget)
        # the plots' titles, bottom axes and view boxes 36 px tall: the Results dock, tabbed with this
        # one, kept the pair that tall by its own minimum until s34 (without this, 24 px at 1300x850)
        self.setMinimumHeight(140)
        self.delivered_plot = self.layout_widget.addPlot(row=0, col=0, title="Bytes delivered and throughput")
        self.delivered_plot.setLabel("bottom", "simulated time", units="s")
        self.delivered_plot.setLabel("left", "delivered", units="B")
        self.delivered_curve = self.delivered_plot.plot(pen=pg.mkPen("#1e6fd9", width=2), name="delivered")
        self.rate_plot = self.layout_widget.addPlot(row=0, col=1, title="Throughput (all transfers)")
        self.rate_plot.setLabel("bottom", "simulated time", units="s")
        self.rate_plot.setLabel("left", "throughput", units="B/s")
        self.rate_curve = self.rate_plot.plot(pen=pg.mkPen("#76b900", width=2), stepMode="right")
        self.util_plot = self.layout_widget.addPlot(row=0, col=2, title="Busiest links: utilization")
        self.util_plot.setLabel("bottom", "simulated time", units="s")
        self.util_plot.setLabel("left", "busy fraction")
        self.util_plot.setYRange(0, 1.05)
        # five rows in one column do not fit the dock: three columns, on a light backing over the curves
        self.util_plot.addLegend(offset=(-LEGEND_INSET, LEGEND_INSET), colCount=3, brush=pg.mkBrush(255, 255, 255, 210))
        self.util_plot.getViewBox().sigResized.connect(lambda _vb: self._fit_legend())
        self.util_curves: list[pg.PlotDataItem] = []  # the curves of the run shown
        self._util_pool: list[pg.PlotDataItem] = []   # made once and reused: building a pyqtgraph curve
        # and its legend row costs ~15 ms of GUI thread each, 5 of them per run shown
        for i in range(UTIL_CURVES):  # at start-up, not when the first result arrives
            self._util_curve(i, "").hide()
            self._legend_row(self._util_pool[i], False)
        self.layout_widget.hold_too(self.delivered_plot, self.rate_plot, self.util_plot, self.util_plot.legend)
        size_link_lists_when_shown(self.delivered_plot, self.rate_plot, self.util_plot)
        self._t: list[float] = []
        self._bytes: list[float] = []
        self._rate: list[float] = []
        self.updates = 0

    @staticmethod
    def namer(obj_id: str) -> str:
        """The name shown for a device id (the window sets this to the document's names)."""
        return obj_id

    def clear(self) -> None:
        self._t, self._bytes, self._rate = [], [], []
        self.delivered_curve.setData([], [])
        self.rate_curve.setData([], [])
        for c in self.util_curves:
            c.setData([], [])
            c.hide()
            self._legend_row(c, False)
        if self.util_curves:
            self.util_plot.legend.updateSize()
        self.util_curves = []
        self.updates = 0

    def _legend_row(self, curve, visible: bool, name: str | None = None) -> None:
        legend = self.util_plot.legend
        for sample, label in legend.items:
            if sample.item is curve:
                sample.setVisible(visible)
                label.setVisible(visible)
                if name is not None:
                    label.setText(name)
                    label.whole = name   # (what _fit_legend elides from)

    def _util_curve(self, i: int, name: str) -> pg.PlotDataItem:
        if i < len(self._util_pool):
            curve = self._util_pool[i]
            curve.show()
            self._legend_row(curve, True, name)
            return curve
        curve = self.util_plot.plot([], [], pen=pg.mkPen(RING_COLORS[i % len(RING_COLORS)], width=2), name=name)
        curve.setCurveClickable(True, width=8)
        curve.sigClicked.connect(lambda c, _ev=None: self.pointClicked.emit(list(c.link_ids)))
        self._util_pool.append(curve)
        return curve

    def add_progress(self, progress, total_bytes: float) -> None:
        """Feed one progress report from a running simulation."""
        self._t.append(progress.sim_time_s)
        self._bytes.append(progress.fraction * total_bytes)
        self.delivered_curve.setData(self._t, self._bytes)
        if len(self._t) > 1:  # throughput fills in with it: bytes delivered between two reports
            dt = max(self._t[-1] - self._t[-2], 1e-30)
            self._rate.append((self._bytes[-1] - self._bytes[-2]) / dt)
            self.rate_curve.setData(self._t, self._rate + self._rate[-1:])
        self.updates += 1

    def show_result(self, sim, top: int = UTIL_CURVES, steps: list | None = None) -> None:
        """Replace the live approximation with the run's exact record; ``steps``: the busiest links'
        utilization steps (``link_steps.busiest_steps``) when the worker made them with the run."""
        self.clear()
        if not sim.delivered:
            return
        t = np.array([p[0] for p in sim.delivered])
        b = np.array([p[1] for p in sim.delivered])
        self.delivered_curve.setData(t, b)
        if len(t) > 1:
            rate = np.diff(b) / np.maximum(np.diff(t), 1e-30)
            self.rate_curve.setData(t, np.append(rate, 0.0))
        steps = steps if steps is not None else busiest_steps(sim, top)
        if not steps:
            return
        for bneck, xs, ys in steps:
            curve = self._util_curve(len(self.util_curves),
                                     f"{', '.join(bneck['links'])} {self.namer(bneck['from'])}→{self.namer(bneck['to'])}")
            curve.setData(xs, ys)
            curve.link_ids = bneck["links"]
            self.util_curves.append(curve)
        self._fit_legend()

    def _fit_legend(self) -> None:
        """The busiest links' legend in as many columns (three at most) as the plot's width holds, its
        names elided in the middle when even one column is too narrow. The legend stands in the plot's
        top right corner and grows to the left, where the plot cut off what stuck out: on the 124-system
        tree's hierarchical run the names ('s001.l17 s001.pcie0→s001.gpu0') lost their first words."""
        legend = self.util_plot.legend
        shown = [(sample, label) for sample, label in legend.items if label.isVisible()]
        room = self.util_plot.getViewBox().width() - 2 * LEGEND_INSET
        if not shown or room <= 0:
            legend.updateSize()
            return
        for _sample, label in shown:
            whole = getattr(label, "whole", None)
            if whole is not None and label.text != whole:
                label.setText(whole)
        widths = [sample.boundingRect().width() + label.item.boundingRect().width() + 6 for sample, label in shown]
        # (no more columns than entries: a two-GPU run's legend has two)
        cols = next((n for n in (3, 2) if n <= len(widths) and sum(max(widths[c::n]) for c in range(n)) <= room), 1)
        if cols == 1 and max(widths) > room:
            for (sample, label), w in zip(shown, widths):
                if w > room:
                    fm = QFontMetricsF(label.item.font())
                    keep = room - sample.boundingRect().width() - 6 - (label.item.boundingRect().width() - fm.horizontalAdvance(label.text))
                    label.setText(fm.elidedText(label.text, Qt.TextElideMode.ElideMiddle, max(keep, 0.0)))
        if cols != legend.columnCount:
            legend.setColumnCount(cols)
        legend.updateSize()


class SizeAxis(pg.AxisItem):
    """A log axis of message sizes with ticks at powers of two, labelled 1 KiB, 32 KiB, 1 MiB ...
    (not decades of bytes, and no "x1e+09" scale: the labels carry their unit)."""

    LOG2 = math.log10(2)
    LABEL_PX = 80  # room a label needs along the axis

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal, maxVal, size):
        lo, hi = math.ceil(minVal / self.LOG2 - 1e-9), math.floor(maxVal / self.LOG2 + 1e-9)
        if hi < lo:
            return super().tickValues(minVal, maxVal, size)
        fit = max(3, int(size // self.LABEL_PX))
        step = next((s for s in (1, 2, 5, 10, 20) if hi // s - -(-lo // s) + 1 <= fit), 30)
        majors = [k * self.LOG2 for k in range(lo, hi + 1) if k % step == 0]
        minors = [k * self.LOG2 for k in range(lo, hi + 1) if k % step] if step <= 10 else []
        return [(step * self.LOG2, majors), (self.LOG2, minors)]

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            k = round(v / self.LOG2)
            size = 2.0 ** k if abs(v - k * self.LOG2) < 1e-6 else 10 ** v
            for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
                if size >= f:
                    out.append(f"{size / f:.3g} {unit}")
                    break
            else:
                out.append(f"{size:.3g} B")
        return out


class SweepPlot(QWidget):
    """Bus bandwidth against message size (log axis), one curve per algorithm or topology."""

    def __init__(self):
        super().__init__()
        self.widget = PlotView(title="Bus bandwidth vs message size", axisItems={"bottom": SizeAxis("bottom")})
        QVBoxLayout(self).addWidget(self.widget)
        self.plot = self.widget.getPlotItem()
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "message size")
        self.plot.setLabel("left", "busbw", units="B/s")  # "bus bandwidth" did not fit the dock's height
        self.plot.addLegend(offset=(-10, -10))  # bottom right, under the curves, clear of the bound labels
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.widget.hold_too(self.plot.legend)
        size_link_lists_when_shown(self.plot)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.bounds: dict[str, tuple[str, pg.InfiniteLine]] = {}   # each curve's bound (text, line), by its label

    def add_curve(self, label: str, sizes: list[float], busbw: list[float], bound: float | None = None,
                  bound_name: str | None = None, bound_note: str = "") -> None:
        """A sweep's curve, and its bound as a dashed line named ``bound_name`` (the curve's label unless
        given: a bound no algorithm of the curve's own reaches must not read as that algorithm's)."""
        color = RING_COLORS[len(self.curves) % len(RING_COLORS)]
        if label in self.curves:   # the same sweep again: its curve and its bound line replaced, not piled up
            self.plot.removeItem(self.curves.pop(label))
            if label in self.bounds:
                self.plot.removeItem(self.bounds.pop(label)[1])
        self.curves[label] = self.plot.plot(sizes, busbw, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=5,
                                            symbolBrush=color, name=label)
        text = f"{bound_name or label} bound {bound / 1e9:.1f} GB/s{bound_note}" if bound else None
        # a bound another curve draws already (one topology's 'any algorithm' bound): drawn once
        if text and text not in (t for t, _ in self.bounds.values()):
            line = pg.InfiniteLine(pos=bound, angle=0, pen=pg.mkPen(color, style=pg.QtCore.Qt.PenStyle.DashLine),
                                   label=text, labelOpts={"position": 0.3, "color": color})
            self.plot.addItem(line)
            self.bounds[label] = (text, line)

    def clear(self) -> None:
        self.plot.clear()
        self.curves.clear()
        self.bounds.clear()


class GanttPlot(QWidget):
    """One row per GPU, forward and backward boxes by micro-batch; bubbles are the gaps."""

    taskClicked = Signal(dict)

    COLORS = {"F": QColor("#4a90d9"), "B": QColor("#e8a33d"), "W": QColor("#5fb36a")}  # W: weight gradient (zero-bubble)
    LABEL_PX = 26  # a box narrower than this on screen is drawn without its "F12" label

    @classmethod
    def chunk_color(cls, kind: str, chunk: int) -> QColor:
        return cls.COLORS[kind].lighter(100 + 35 * chunk)

    def __init__(self):
        super().__init__()
        self.widget = PlotView(title="Pipeline schedule")
        QVBoxLayout(self).addWidget(self.widget)
        self.plot = self.widget.getPlotItem()
        self.plot.setLabel("bottom", "time", units="s")
        self.plot.invertY(True)
        self.plot.getAxis("left").setWidth(70)
        size_link_lists_when_shown(self.plot)
        self.bars: dict[str, pg.BarGraphItem] = {}
        self.timeline: list[dict] = []
        self.rows: list[str] = []
        self.row_names: dict[str, str] = {}   # device id -> the name the canvas shows (set by the window)
        self.cursor = pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen("#d00000", width=1.5))
        self.labels: list[tuple[pg.TextItem, float]] = []
        self.plot.vb.sigRangeChanged.connect(self._fit_labels)
        self.plot.vb.sigResized.connect(self._fit_labels)
        self.widget.scene().sigMouseClicked.connect(self._clicked)

    def set_result(self, result, upto: float | None = None) -> None:
        """Draw the schedule, or only what has happened by time ``upto`` (the chart fills in)."""
        self.plot.clear()
        self.timeline = [e for e in result.timeline if upto is None or e["start_s"] <= upto]
        self.rows = list(dict.fromkeys(e["device"] for e in result.timeline))
        row = {d: i for i, d in enumerate(self.rows)}
        # One bar set per pass kind and model chunk: later chunks (interleaved, ZB-V's way back up) are
        # drawn lighter with dark labels, as the zero-bubble paper draws its second chunk.
        for kind in ("F", "B", "W"):
            for chunk in sorted({e["chunk"] for e in self.timeline if e["kind"] == kind}):
                es = [e for e in self.timeline if e["kind"] == kind and e["chunk"] == chunk]
                ends = [min(e["end_s"], upto) if upto is not None else e["end_s"] for e in es]
                bar = pg.BarGraphItem(x0=[e["start_s"] for e in es], x1=ends, y=[row[e["device"]] for e in es],
                                      height=0.8, brush=self.chunk_color(kind, chunk), pen=pg.mkPen("#ffffff", width=0.5))
                self.plot.addItem(bar)
                self.bars[kind if chunk == 0 else f"{kind}{chunk}"] = bar
        self.labels = []
        if len(self.timeline) <= 400:
            for e in self.timeline:
                label = pg.TextItem(f"{e['kind']}{e['microbatch']}", color="w" if e["chunk"] == 0 else "#202020",
                                    anchor=(0.5, 0.5))
                label.setPos((e["start_s"] + e["end_s"]) / 2, row[e["device"]])
                self.plot.addItem(label)
                self.labels.append((label, e["end_s"] - e["start_s"]))
        ticks = [(float(i), self.row_names.get(d, d)) for i, d in enumerate(self.rows)]
        axis = self.plot.getAxis("left")
        axis.setTicks([ticks, []])
        metrics = QFontMetricsF(axis.style.get("tickFont") or self.font())
        axis.setWidth(max(70, 12 + math.ceil(max((metrics.horizontalAdvance(t) for _, t in ticks), default=0))))
        self.plot.setYRange(-0.6, len(self.rows) - 0.4, padding=0)
        title = (f"{result.spec.schedule}: {counted(result.spec.stages, 'stage')}, "
                 f"{counted(result.spec.microbatches, 'micro-batch', 'micro-batches')},"
                 f" bubble {100 * result.bubble_fraction:.1f}%")
        split = any(e["kind"] == "W" for e in result.timeline)
        if result.spec.schedule.startswith("zb"):
            # the zero-bubble paper counts a stage's idle time between its first and last pass
            title += f" ({100 * result.stage_bubble_fraction:.1f}% per stage)"
        # the colour key in the title: boxes too narrow for their "F12" labels still say what they are
        words = {"F": "forward", "B": "input gradient" if split else "backward", "W": "weight gradient"}
        title += ";&nbsp; " + "&nbsp; ".join(
            f'<span style="color:{self.COLORS[k].name()}">&#9632;</span>&nbsp;{k} {words[k]}'
            for k in ("F", "B", "W") if k != "W" or split)
        if result.spec.chunks > 1:
            title += "; lighter: later model chunk"
        self.plot.setTitle(title)
        self.plot.addItem(self.cursor)
        self._fit_labels()

    def _fit_labels(self, *_args) -> None:
        """Show a box's label only where the box is wide and tall enough on screen to hold it."""
        vb = self.plot.vb
        (x0, x1), (y0, y1) = vb.viewRange()
        if x1 <= x0 or y1 <= y0:
            return
        px_per_s = vb.width() / (x1 - x0)
        row_px = vb.height() / (y1 - y0)
        for label, width in self.labels:
            label.setVisible(width * px_per_s >= self.LABEL_PX and row_px >= 14)

    def clear(self) -> None:
        self.plot.clear()
        self.labels = []
        self.bars.clear()
        self.timeline, self.rows = [], []
        self.plot.setTitle("Pipeline schedule")

    def set_time(self, t: float) -> None:
        self.cursor.setPos(t)

    def box_count(self) -> int:
        return len(self.timeline)

    def _clicked(self, event) -> None:
        pos = self.plot.vb.mapSceneToView(event.scenePos())
        row = int(round(pos.y()))
        if not 0 <= row < len(self.rows):
            return
        for e in self.timeline:
            if e["device"] == self.rows[row] and e["start_s"] <= pos.x() <= e["end_s"]:
                self.taskClicked.emit(e)
                return
