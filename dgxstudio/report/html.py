"""The report an architect can send: one self-contained HTML file (pictures inline as SVG), or the
same content for the PDF writer with pictures as named images. Results also go to CSV and JSON.

Every name a user typed is escaped; nothing refers to anything outside the file.
"""

from __future__ import annotations

import csv
import io
import json
from html import escape

from .. import __version__
from .content import (Heading, Para, Picture, ReportData, Table, build_blocks, byline, protocol_label,  # noqa: F401  (ReportData
                      left_out_note, summary, training_grid)                                          # is importable from here)
from .provenance import ran_on

STYLE = """body{font-family:sans-serif;max-width:1000px;margin:24px auto;color:#1b1b1b}
h1{border-bottom:3px solid #76b900}h2{margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f0f0f0}.num{text-align:right}.small{color:#555;font-size:90%}"""


def _table(header: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{escape(str(c))}</td>" if i in numeric else f"<td>{escape(str(c))}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def build_html(data: ReportData, images: str = "inline") -> tuple[str, dict[str, str]]:
    """The report, and (when ``images="resources"``) the SVG of each picture by name."""
    topo = data.topology
    pictures: dict[str, str] = {}
    blocks = build_blocks(data)
    parts: list[str] = [
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(topo.name)} — DGX Studio report</title>"
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(topo.name)}</h1>",
        f"<p class=\"small\">{escape(byline(data))}</p>",
    ]
    if topo.description:
        parts.append(f"<p>{escape(topo.description)}</p>")
    parts.append(f"<h2>Summary</h2><p>{escape(summary(data))}</p>")
    note = left_out_note(data)
    if note:
        parts.append(f"<p class=\"small\">{escape(note)}</p>")
    toc = [b.text for b in blocks if isinstance(b, Heading) and b.level == 2]
    parts.append("<h2>Contents</h2><ol class=\"toc\">" + "".join(f"<li>{escape(t)}</li>" for t in toc) + "</ol>")
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{escape(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            parts.append(f"<p class=\"small\">{escape(b.text)}</p>" if b.small else f"<p>{escape(b.text)}</p>")
        elif isinstance(b, Table):
            parts.append(_table(b.header, b.rows, b.numeric))
        elif isinstance(b, Picture):
            if images == "inline":
                parts.append(f'<div class="picture">{b.svg}</div>')
            else:
                pictures[b.name] = b.svg
                parts.append(f'<p><img src="{b.name}"></p>')
    parts.append("</body></html>")
    return "\n".join(parts), pictures


def _with_document(entry: dict, result, data: ReportData) -> dict:
    entry["document"] = ran_on(result) or data.document
    return entry


def results_json(data: ReportData) -> str:
    out = {"topology": data.topology.name, "document": data.document, "tool_version": __version__,
           "catalog_version": data.topology.catalog.version, "analysis": data.analysis,
           "runs": [_with_document(r.as_dict(), r, data) for r in data.runs],
           "sweeps": [[_with_document(r.as_dict(3), r, data) for r in rows] for rows in data.sweeps],
           "pipelines": [_with_document(p.as_dict(with_timeline=True), p, data) for p in data.pipelines],
           "trainings": [_with_document(t.as_dict(), t, data) for t in data.trainings],
           "runs_left_out": data.left_out}
    return json.dumps(out, indent=1, default=float)


def results_csv(data: ReportData) -> str:
    """One row per run, each naming the document (name and content hash) it ran on."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["kind", "collective", "algorithm", "gpus", "size_bytes", "time_s", "algbw_Bps", "busbw_Bps",
                "bound_busbw_Bps", "topology", "document_sha256", "protocol", "channels"])

    def doc(result) -> list[str]:
        ref = ran_on(result) or data.document
        return [ref["name"], ref["sha256"]]
    def nccl(result) -> list[str]:
        """NCCL's protocol and channel count (appended last: columns before them keep their places)."""
        return [protocol_label(result) if result.protocol else "", result.channels or ""]
    for r in data.runs:
        w.writerow(["run", r.collective, r.algorithm, len(r.gpus), r.size_bytes, r.time_s, r.algbw_Bps, r.busbw_Bps,
                    r.bound_busbw_Bps, *doc(r), *nccl(r)])
    for rows in data.sweeps:
        for r in rows:
            w.writerow(["sweep", r.collective, r.algorithm, len(r.gpus), r.size_bytes, r.time_s, r.algbw_Bps, r.busbw_Bps,
                        r.bound_busbw_Bps, *doc(r), *nccl(r)])
    for p in data.pipelines:
        w.writerow(["pipeline", p.spec.schedule, "", p.spec.stages, "", p.makespan_s, "", "", "", *doc(p), "", ""])
    for t in data.trainings:   # (the collective column: the grid; the time: one iteration)
        w.writerow(["training", training_grid(t), "", t.details["gpus_used"], "", t.iteration_s, "", "", "", *doc(t), "", ""])
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
