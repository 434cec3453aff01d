"""The report an architect can send: one self-contained HTML file (pictures inline as SVG), or the
same content for the PDF writer with pictures as named images. Results also go to CSV and JSON.

Every name a user typed is escaped; nothing refers to anything outside the file.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from html import escape

from .. import __version__
from ..model.catalog import KIND_LABELS
from ..model.topology import Topology
from .svg import gantt_chart, line_chart, topology_svg

STYLE = """body{font-family:sans-serif;max-width:1000px;margin:24px auto;color:#1b1b1b}
h1{border-bottom:3px solid #76b900}h2{margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f0f0f0}.num{text-align:right}.small{color:#555;font-size:90%}"""


@dataclass
class ReportData:
    topology: Topology
    analysis: dict
    runs: list = field(default_factory=list)        # CollectiveResult
    sweeps: list = field(default_factory=list)      # lists of CollectiveResult
    pipelines: list = field(default_factory=list)   # PipelineResult


def _gbs(x: float) -> str:
    return f"{x / 1e9:,.2f}"


def _table(header: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{escape(str(c))}</td>" if i in numeric else f"<td>{escape(str(c))}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def build_html(data: ReportData, images: str = "inline") -> tuple[str, dict[str, str]]:
    """The report, and (when ``images="resources"``) the SVG of each picture by name."""
    topo = data.topology
    pictures: dict[str, str] = {}

    def picture(name: str, svg: str) -> str:
        if images == "inline":
            return f'<div class="picture">{svg}</div>'
        pictures[name] = svg
        return f'<p><img src="{name}"></p>'

    a = data.analysis
    parts: list[str] = [
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(topo.name)} — DGX Studio report</title>"
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(topo.name)}</h1>",
        f"<p class=\"small\">DGX Studio {escape(__version__)}, hardware catalog {escape(topo.catalog.version)}, "
        f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}</p>",
    ]
    if topo.description:
        parts.append(f"<p>{escape(topo.description)}</p>")
    parts.append("<h2>Topology</h2>")
    parts.append(picture("topology", topology_svg(topo)))

    kinds = Counter((d.kind, d.part) for d in topo.devices.values())
    rows = []
    for (kind, part_id), n in sorted(kinds.items()):
        part = topo.catalog.part(part_id)
        rows.append([KIND_LABELS.get(kind, kind), part.label if part else part_id, n])
    parts.append("<h2>Inventory</h2>" + _table(["kind", "part", "count"], rows, {2}))
    links = Counter()
    bw = Counter()
    for lk in topo.links.values():
        links[lk.type] += lk.count
        bw[lk.type] += topo.link_bandwidth_per_direction_Bps(lk)
    parts.append(_table(["link type", "physical links", "total GB/s per direction"],
                        [[t, n, _gbs(bw[t])] for t, n in sorted(links.items())], {1, 2}))

    r = a["rings"]
    lat = a["latency"]
    parts.append("<h2>Analysis</h2>" + _table(["figure", "value"], [
        ["GPUs", a["gpus"]],
        ["bisection bandwidth (bidirectional)", f"{_gbs(a['bisection']['bidir_Bps'])} GB/s"
         f" ({'exact' if a['bisection']['exact'] else 'upper bound'})"],
        ["rings", f"{r['count']} over {r['fabric']} ({r['method']})"],
        ["ring all-reduce bus-bandwidth bound", f"{_gbs(r['allreduce_busbw_bound_Bps'])} GB/s"],
        ["NVLink per GPU (bidirectional)", f"{_gbs(a['nvlink_bw_per_gpu_bidir_Bps'])} GB/s"],
        ["NVLink of all GPUs (bidirectional)", f"{_gbs(a['aggregate_nvlink_bw_bidir_Bps'])} GB/s"],
        ["PCIe per GPU (bidirectional)", f"{_gbs(a['pcie_bw_per_gpu_bidir_Bps'])} GB/s"],
        ["network per GPU (bidirectional)", f"{_gbs(a['network_bw_per_gpu_bidir_Bps'])} GB/s"],
        ["published power", f"{a['power']['published_W'] / 1e3:,.1f} kW" + (
            f" (no published figure: {', '.join(a['power']['without_published_figure'])})"
            if a["power"]["without_published_figure"] else "")],
        ["worst system-to-system latency", f"{lat['max_system_to_system_s'] * 1e6:.2f} us" if lat["max_system_to_system_s"]
         else "one system"],
    ]))
    if r["rings"]:
        ring_rows = [[i, " → ".join(ring) if len(ring) <= 16 else " → ".join(ring[:8]) + f" … ({len(ring)} GPUs)",
                      _gbs(r["ring_bidir_Bps"][i])] for i, ring in enumerate(r["rings"][:12])]
        parts.append(_table(["ring", "GPU order", "GB/s (both directions)"], ring_rows, {2}))

    for i, run in enumerate(data.runs):
        parts.append(f"<h2>Simulation {i + 1}: {escape(run.collective)} with {escape(run.algorithm)}</h2>")
        parts.append(_table(["parameter", "value"], [
            ["collective", run.collective], ["algorithm", f"{run.algorithm} ({run.reason})"], ["GPUs", len(run.gpus)],
            ["size", f"{run.size_bytes:,.0f} bytes"], ["chunk", f"{run.options.chunk:,.0f} bytes"],
            ["link figures", "achievable" if run.options.achievable else "peak"]]))
        parts.append(_table(["result", "value"], [
            ["time", f"{run.time_s * 1e3:.4f} ms"], ["algorithm bandwidth", f"{_gbs(run.algbw_Bps)} GB/s"],
            ["bus bandwidth", f"{_gbs(run.busbw_Bps)} GB/s"], ["topology bound", f"{_gbs(run.bound_busbw_Bps)} GB/s"],
            ["share of the bound", f"{100 * run.fraction_of_bound:.1f}%"]]))
        parts.append("<h3>Bottleneck links</h3>" + _table(
            ["links", "direction", "busy", "GB/s per direction"],
            [[", ".join(b["links"]), f"{b['from']} → {b['to']}", f"{100 * b['utilization']:.1f}%",
              _gbs(b["capacity_per_direction_Bps"])] for b in run.sim.bottlenecks(8)], {2, 3}))
        t = [p[0] * 1e3 for p in run.sim.delivered]
        parts.append(picture(f"delivered{i}", line_chart([("delivered", t, [p[1] / 1e9 for p in run.sim.delivered])],
                                                         "Bytes delivered over time", "simulated time (ms)", "GB")))
    for i, rows in enumerate(data.sweeps):
        first = rows[0]
        parts.append(f"<h2>Sweep {i + 1}: {escape(first.collective)}, {escape(first.requested_algorithm)}</h2>")
        parts.append(picture(f"sweep{i}", line_chart(
            [(first.requested_algorithm, [r.size_bytes for r in rows], [r.busbw_Bps / 1e9 for r in rows])],
            "Bus bandwidth vs message size", "bytes", "GB/s", log_x=True,
            hline=(f"bound {first.bound_busbw_Bps / 1e9:.1f} GB/s", first.bound_busbw_Bps / 1e9),
            x_format=lambda v: _size_label(v))))
        parts.append(_table(["size (bytes)", "algorithm", "time (us)", "algbw GB/s", "busbw GB/s"],
                            [[f"{r.size_bytes:,.0f}", r.algorithm, f"{r.time_s * 1e6:.2f}", _gbs(r.algbw_Bps),
                              _gbs(r.busbw_Bps)] for r in rows], {0, 2, 3, 4}))
    for i, p in enumerate(data.pipelines):
        parts.append(f"<h2>Pipeline {i + 1}: {escape(p.spec.schedule)}, {p.spec.stages} stages, "
                     f"{p.spec.microbatches} micro-batches</h2>")
        parts.append(_table(["figure", "value"], [["makespan", f"{p.makespan_s * 1e3:.3f} ms"],
                                                  ["bubble", f"{100 * p.bubble_fraction:.1f}%"],
                                                  ["activations held at most per stage", p.peak_inflight]]))
        parts.append(picture(f"gantt{i}", gantt_chart(p.timeline, f"{p.spec.schedule} schedule")))

    used_types = sorted({lk.type for lk in topo.links.values()})
    used_parts = sorted({d.part for d in topo.devices.values()})
    rows = []
    for t in used_types:
        lt = topo.catalog.link_type(t)
        if lt:
            rows.append([t, f"{lt.bandwidth_per_direction_Bps() / 1e9:.3f} GB/s per direction"
                            + (" per lane" if lt.per_lane else ""), f"{lt.latency_s * 1e6:.3f} us",
                         f"{lt.achievable_efficiency:.3f}", lt.source])
    parts.append("<h2>Assumptions</h2><p>Catalog figures used (peak unless a run says achievable):</p>"
                 + _table(["link type", "bandwidth", "latency", "achievable efficiency", "source"], rows))
    prow = [[p, topo.catalog.part(p).label, f"{topo.catalog.part(p).hop_latency_s * 1e6:.3f} us",
             topo.catalog.part(p).source] for p in used_parts if topo.catalog.part(p)]
    parts.append(_table(["part", "label", "traversal latency", "source"], prow))
    parts.append("<p class=\"small\">Flow-level simulation: max-min fair sharing of every link direction, latency paid "
                 "after transmission; reductions free unless a run says otherwise.</p></body></html>")
    return "\n".join(parts), pictures


def _size_label(v: float) -> str:
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if v >= f:
            return f"{v / f:g}{unit}"
    return f"{v:g}B"


def results_json(data: ReportData) -> str:
    out = {"topology": data.topology.name, "tool_version": __version__, "catalog_version": data.topology.catalog.version,
           "analysis": data.analysis, "runs": [r.as_dict() for r in data.runs],
           "sweeps": [[r.as_dict(3) for r in rows] for rows in data.sweeps],
           "pipelines": [p.as_dict(with_timeline=True) for p in data.pipelines]}
    return json.dumps(out, indent=1, default=float)


def results_csv(data: ReportData) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["kind", "collective", "algorithm", "gpus", "size_bytes", "time_s", "algbw_Bps", "busbw_Bps",
                "bound_busbw_Bps"])
    for r in data.runs:
        w.writerow(["run", r.collective, r.algorithm, len(r.gpus), r.size_bytes, r.time_s, r.algbw_Bps, r.busbw_Bps,
                    r.bound_busbw_Bps])
    for rows in data.sweeps:
        for r in rows:
            w.writerow(["sweep", r.collective, r.algorithm, len(r.gpus), r.size_bytes, r.time_s, r.algbw_Bps, r.busbw_Bps,
                        r.bound_busbw_Bps])
    for p in data.pipelines:
        w.writerow(["pipeline", p.spec.schedule, "", p.spec.stages, "", p.makespan_s, "", "", ""])
    return buf.getvalue()


def write_report(data: ReportData, path: str) -> int | None:
    """The report as HTML or PDF (by extension), with ``.json`` and ``.csv`` results beside it.
    Returns the PDF's page count (None for HTML). Each file is written atomically."""
    import os

    from ..model.fileio import atomic_write_text

    pages = None
    if path.lower().endswith(".pdf"):
        from .pdf import write_pdf  # the one part of report/ that needs Qt

        pages = write_pdf(data, path)
    else:
        atomic_write_text(path, build_html(data)[0])
    stem = os.path.splitext(path)[0]
    atomic_write_text(stem + ".json", results_json(data))
    atomic_write_text(stem + ".csv", results_csv(data))
    return pages
